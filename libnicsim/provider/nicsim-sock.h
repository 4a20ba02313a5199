/*
 * The C library's own calls, past this library's interposers (interpose/), which sit above the
 * provider and call down into it: the provider's and the interposers' own descriptors (connections
 * to the simulator, event sockets) are never the files those stand in for. nicsim-msg.h declares
 * the rest of nicsim-sock.c: real_write, real_close, io and connect_simulator.
 */
#ifndef NICSIM_SOCK_H
#define NICSIM_SOCK_H

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>

ssize_t real_read(int fd, void *b, size_t n);
int real_fstat(int fd, struct stat *st);
int real_socket(int domain, int type, int protocol);
int real_connect(int fd, const struct sockaddr *a, socklen_t n);
ssize_t real_sendto(int fd, const void *b, size_t n, int flags, const struct sockaddr *to, socklen_t len);

#endif
