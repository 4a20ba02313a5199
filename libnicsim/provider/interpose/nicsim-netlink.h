/*
 * The RDMA netlink (NETLINK_RDMA) as an attached program sees it: interpose/nicsim-netlink.c answers
 * its requests, interpose/nicsim-netlink-res.c the resource views from serve's RDMA_RES and the port's
 * counters, interpose/nicsim-netlink-qstat.c the QP counters (RDMA_QSTAT), all with the replies
 * interpose/nicsim-netlink-msg.c builds.
 */
#ifndef NICSIM_NETLINK_H
#define NICSIM_NETLINK_H

#include <linux/netlink.h>
#include <rdma/rdma_netlink.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Whether fd is an RDMA netlink socket this interposer answers (sendto in nicsim-hosts.c asks). */
int nicsim_netlink_owns(int fd);
/* Answers the requests in buf (whole netlink messages) sent on such a socket: n, or -1 with errno. */
ssize_t nicsim_netlink_send(int fd, const void *buf, size_t n);

/*
 * One reply message being built. Each is sent as a datagram of its own, kept under a page: iproute2's
 * rdma reads with a buffer of MNL_SOCKET_BUFFER_SIZE (a page at most), and a longer datagram would be
 * cut, so a dump is many messages (one resource each), as the kernel splits its dumps.
 */
struct nl_reply {
	uint8_t buf[4096];
	size_t len;
	int overflow;
};

/* The request being answered: where replies go and what they echo. */
struct nl_request {
	int fd;
	uint32_t port, seq;
	uint16_t type, flags;
	struct nlattr *attrs[RDMA_NLDEV_ATTR_MAX]; /* the request's attributes, by type (NULL: absent) */
};

void nl_begin(struct nl_reply *r, const struct nl_request *q, uint16_t flags);
void nl_put(struct nl_reply *r, uint16_t type, const void *p, size_t n);
void nl_u8(struct nl_reply *r, uint16_t type, uint8_t v);
void nl_u32(struct nl_reply *r, uint16_t type, uint32_t v);
void nl_u64(struct nl_reply *r, uint16_t type, uint64_t v);
void nl_str(struct nl_reply *r, uint16_t type, const char *s);
/* A nested attribute: nl_nest returns where it starts, nl_nest_end closes it there. */
size_t nl_nest(struct nl_reply *r, uint16_t type);
void nl_nest_end(struct nl_reply *r, size_t at);
/* Sends the message to the requesting socket: 0, or an errno. */
int nl_send(const struct nl_request *q, struct nl_reply *r);
/* A request attribute's u32 value, or `otherwise` if the request has none. */
uint32_t nl_arg32(const struct nl_request *q, int type, uint32_t otherwise);

/* File `rel` of the node's sysfs tree (SYSFS_PATH), its first line, into out: out (empty if unread). */
const char *nicsim_sysfs_line(const char *rel, char *out, size_t n);

/* The one device attach shows: its index, name, and its netlink header fields (DEV_INDEX, DEV_NAME). */
#define NICSIM_DEV_INDEX 0u
const char *nicsim_dev_name(void);
void nl_dev_handle(struct nl_reply *r);

/*
 * A resource request (RES_GET and RES_{QP,CQ,MR,PD}_GET): answers it, dump or one object, and returns
 * 0 or a positive errno for the error message; *multi: whether the answer was a dump (ends in DONE).
 */
int nicsim_netlink_res(const struct nl_request *q, int *multi);
/* STAT_GET of the port's counters: 0 or a positive errno. */
int nicsim_netlink_stat(const struct nl_request *q);
/* STAT_GET_STATUS: the port's optional counters (none); 0 or a positive errno. */
int nicsim_netlink_stat_status(const struct nl_request *q);
/* STAT_GET of MRs' counters (RES_MR): 0 or a positive errno; *multi as above. */
int nicsim_netlink_stat_mr(const struct nl_request *q, int *multi);
/* STAT_GET, STAT_SET and STAT_DEL of the port's QP counters (RES_QP): 0 or a positive errno; *multi as above. */
int nicsim_netlink_qstat(const struct nl_request *q, int *multi);

#endif
