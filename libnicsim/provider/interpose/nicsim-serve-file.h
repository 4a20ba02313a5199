/*
 * A kernel file serve stands in for (rdma_cm: nicsim-rdmacm.c; umad: nicsim-umad.c), as the
 * interposers keep one: the descriptor the program holds is a connection of serve's that carries
 * the file's events (poll, epoll and select see it readable when one waits), and a second
 * connection carries the file's commands, one at a time. A descriptor is the file only while it
 * names the same socket it did when opened (its device and inode): a number reused since, or
 * closed behind the interposer's back, is not.
 */
#ifndef NICSIM_SERVE_FILE_H
#define NICSIM_SERVE_FILE_H

#include <pthread.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "nicsim-provider.h"

/* The kinds of file: a descriptor is looked up as one kind only. */
enum nicsim_serve_file_kind { NICSIM_FILE_RDMA_CM = 1, NICSIM_FILE_UMAD };

/* What every such file keeps; a kind's own struct begins with it. */
struct nicsim_serve_file {
	enum nicsim_serve_file_kind kind;
	int commands;    /* the connection its commands go on, under lock */
	uint32_t number; /* serve's number of the file (its channel) */
	dev_t dev;       /* the event connection's identity */
	ino_t ino;
	pthread_mutex_t lock;
};

/*
 * How a kind of file is opened: open_op's request, whose fixed part (a struct nicsim_wire_*_open_request)
 * put_open writes from the node, the pid and the event and command connections' numbers, the program's name
 * following; and events_op's on the event connection (a struct nicsim_wire_*_events_request), which
 * put_events writes from the file's number and the pid.
 */
struct nicsim_serve_file_opening {
	uint32_t open_op, events_op;
	void (*put_open)(struct msg *m, uint32_t node, uint32_t pid, uint32_t events, uint32_t commands);
	void (*put_events)(struct msg *m, uint32_t number, uint32_t pid);
};

/*
 * Opens a file of `size` bytes' struct (at least a struct nicsim_serve_file): the commands'
 * connection, then the events', then the opening's request, whose reply (struct nicsim_wire_opened)
 * numbers the file, and its events request on the event connection. flags: open(2)'s (O_CLOEXEC,
 * O_NONBLOCK) for the descriptor. The descriptor, or -1 with errno ENODEV (ENOMEM).
 */
int nicsim_serve_file_open(enum nicsim_serve_file_kind kind, size_t size, const struct nicsim_serve_file_opening *how,
			   int flags);

/* The file of kind fd is, or NULL. */
struct nicsim_serve_file *nicsim_serve_file_of(int fd, enum nicsim_serve_file_kind kind);

/* Whether fd is still the descriptor of f (another thread may have closed it meanwhile). */
int nicsim_serve_file_still(int fd, const struct nicsim_serve_file *f);

/* Forgets the file of kind fd is, if it is one, and closes its commands' connection: 1 if it was one, else 0. */
int nicsim_serve_file_close(int fd, enum nicsim_serve_file_kind kind);

/* Runs command m on f's commands' connection: as nicsim_exchange (the reply in m; < 0: serve is gone). */
int nicsim_serve_file_call(struct nicsim_serve_file *f, struct msg *m);

/* fstat of such a file: a character device of the kernel's numbers major:minor. */
void nicsim_serve_file_stat(struct stat *st, unsigned major, unsigned minor);

#endif
