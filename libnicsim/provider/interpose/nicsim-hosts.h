/* The node's interface ib0 to ioctl (nicsim-hosts.c), as getifaddrs lists it. */
#ifndef NICSIM_HOSTS_H
#define NICSIM_HOSTS_H

/* 1 when req is an address query (SIOCGIFADDR...) of "ib0" it answered in arg (a struct ifreq), else 0. */
int nicsim_hosts_ioctl(unsigned long req, void *arg);

#endif
