/*
 * libibumad's file, /dev/infiniband/umad0 (the kernel's ib_umad, ABI version 5), for unmodified
 * infiniband-diags, ibacm and srptools: interposed (LD_PRELOAD) at the C library's open, fstat,
 * ioctl, read, write and close, the way nicsim-rdmacm.c stands in for rdma_cm:
 *   open   gives a socket to the simulator that is the file: serve writes each MAD the node's
 *          adapter passes up for one of the file's agents as a frame (u32 length, u32 0, then the
 *          struct ib_user_mad), so poll/epoll/select see it readable exactly when a MAD waits;
 *          a second connection of its own carries the file's ioctls and writes (nicsim-serve-file.c);
 *   ioctl  IB_USER_MAD_REGISTER_AGENT(2), UNREGISTER_AGENT and ENABLE_PKEY, answered by serve (Umad.java);
 *   write  of a struct ib_user_mad sends its MAD from the node adapter's QP0 or QP1;
 *   read   takes one frame: the struct ib_user_mad and its MAD, ENOSPC (with the header, the MAD kept
 *          for the next read) when the buffer is too small, EAGAIN when none waits and O_NONBLOCK;
 *   close  closes both connections; serve then drops the file's agents.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <arpa/inet.h>
#include <rdma/ib_user_mad.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nicsim-sock.h"
#include "interpose/nicsim-serve-file.h"
#include "interpose/nicsim-umad.h"
#include "interpose/nicsim-hosts.h"


/* A umad file: serve's, and which header its MADs carry. */
struct umad_file {
	struct nicsim_serve_file file;
	int pkey; /* ENABLE_PKEY ran: the 64-byte header, else the 56-byte one */
};

/* The umad file fd is, or NULL. */
static struct umad_file *umad_of(int fd) {
	return (struct umad_file *)nicsim_serve_file_of(fd, NICSIM_FILE_UMAD);
}

int nicsim_umad_path(const char *path) {
	return !strcmp(path, "/dev/infiniband/umad0") && getenv("NICSIM_SOCKET") != NULL;
}

/* UMAD_OPEN's fixed part: the node's port 1, the program and its event file. */
static void put_open(struct msg *m, uint32_t node, uint32_t pid, uint32_t events, uint32_t commands) {
	(void)commands;
	struct nicsim_wire_umad_open_request q = { .node = node, .port = 1, .pid = pid, .file = events };
	PUT(m, q);
}

static void put_events(struct msg *m, uint32_t number, uint32_t pid) {
	struct nicsim_wire_umad_events_request q = { .file = number, .pid = pid };
	PUT(m, q);
}

int nicsim_umad_open(int flags) {
	static const struct nicsim_serve_file_opening how = {
		.open_op = NICSIM_OP_UMAD_OPEN, .events_op = NICSIM_OP_UMAD_EVENTS,
		.put_open = put_open, .put_events = put_events,
	};
	return nicsim_serve_file_open(NICSIM_FILE_UMAD, sizeof(struct umad_file), &how, flags);
}

int nicsim_umad_fstat(int fd, struct stat *st) {
	if (!umad_of(fd)) return -2;
	nicsim_serve_file_stat(st, 231, 0);
	return 0;
}

/* A UMAD_CMD of kind (NICSIM_UMAD_*): its fields follow. */
static struct msg umad_request(uint32_t kind) {
	struct msg m = request(NICSIM_OP_UMAD_CMD);
	struct nicsim_wire_umad_command c = { .kind = kind };
	PUT(&m, c);
	return m;
}

/* One UMAD_CMD: 0 with the reply (an agent, if asked) in *out, or -1 with errno. */
static int command(struct umad_file *f, struct msg *m, uint32_t *out) {
	struct nicsim_wire_umad_agent a;
	int rc;
	if (m->failed) { done(m); errno = ENOMEM; return -1; }
	rc = nicsim_serve_file_call(&f->file, m);
	if (rc < 0) { done(m); errno = EIO; return -1; }
	if (rc) { done(m); errno = rc; return -1; }
	if (out) {
		GET(m, a);
		*out = a.agent;
	}
	done(m);
	return 0;
}

static int do_register(struct umad_file *f, uint32_t qpn, uint32_t cls, uint32_t version, const uint64_t mask[2],
		       uint32_t rmpp, uint32_t *id) {
	struct msg m = umad_request(NICSIM_UMAD_REGISTER);
	struct nicsim_wire_umad_register q = {
		.qpn = qpn, .mgmt_class = cls, .class_version = version, .methods_lo = mask[0], .methods_hi = mask[1],
		.rmpp_version = rmpp,
	};
	PUT(&m, q);
	return command(f, &m, id);
}

static int umad_ioctl(struct umad_file *f, unsigned long req, void *arg) {
	struct msg m;
	if (req == IB_USER_MAD_ENABLE_PKEY) {
		m = umad_request(NICSIM_UMAD_ENABLE_PKEY);
		if (command(f, &m, NULL)) return -1;
		f->pkey = 1;
		return 0;
	}
	if (req == IB_USER_MAD_REGISTER_AGENT) {
		struct ib_user_mad_reg_req r;
		uint64_t mask[2];
		memcpy(&r, arg, sizeof r);
		memcpy(mask, r.method_mask, sizeof mask);
		if (do_register(f, r.qpn, r.mgmt_class, r.mgmt_class_version, mask, r.rmpp_version, &r.id)) return -1;
		memcpy(arg, &r, sizeof r);
		return 0;
	}
	if (req == IB_USER_MAD_REGISTER_AGENT2) {
		struct ib_user_mad_reg_req2 r;
		memcpy(&r, arg, sizeof r);
		if (r.flags & ~IB_USER_MAD_REG_FLAGS_CAP) { /* as the kernel: say which flags it knows */
			r.flags = IB_USER_MAD_REG_FLAGS_CAP;
			memcpy(arg, &r, sizeof r);
			errno = EINVAL;
			return -1;
		}
		if (do_register(f, r.qpn, r.mgmt_class, r.mgmt_class_version, (const uint64_t *)r.method_mask,
				r.rmpp_version, &r.id)) return -1;
		memcpy(arg, &r, sizeof r);
		return 0;
	}
	if (req == IB_USER_MAD_UNREGISTER_AGENT) {
		struct nicsim_wire_umad_agent a;
		memcpy(&a.agent, arg, sizeof(a.agent));
		m = umad_request(NICSIM_UMAD_UNREGISTER);
		PUT(&m, a);
		return command(f, &m, NULL);
	}
	errno = ENOTTY;
	return -1;
}

__attribute__((visibility("default")))
int ioctl(int fd, unsigned long req, ...) {
	static int (*real)(int, unsigned long, ...);
	struct umad_file *f;
	va_list ap;
	void *arg;
	va_start(ap, req);
	arg = va_arg(ap, void *);
	va_end(ap);
	f = umad_of(fd);
	if (f) return umad_ioctl(f, req, arg);
	if (nicsim_hosts_ioctl(req, arg)) return 0; /* the node's ib0 */
	if (!real) real = (int (*)(int, unsigned long, ...))dlvsym(RTLD_NEXT, "ioctl", "GLIBC_2.2.5");
	return real(fd, req, arg);
}

ssize_t nicsim_umad_write(int fd, const void *buf, size_t n) {
	struct umad_file *f = umad_of(fd);
	struct ib_user_mad_hdr h;
	size_t hdr = f && f->pkey ? sizeof(struct ib_user_mad_hdr) : sizeof(struct ib_user_mad_hdr_old);
	struct msg m;
	if (!f) return -2;
	if (n < hdr + 24) { errno = EINVAL; return -1; }
	memset(&h, 0, sizeof h);
	memcpy(&h, buf, hdr);
	struct nicsim_wire_umad_send q = {
		.agent = h.id, .timeout_ms = h.timeout_ms, .retries = h.retries, .lid = ntohs(h.lid),
		.qpn = ntohl(h.qpn), .qkey = ntohl(h.qkey), .length = (uint32_t)(n - hdr),
	};
	m = umad_request(NICSIM_UMAD_SEND);
	PUT(&m, q);
	put(&m, (const uint8_t *)buf + hdr, n - hdr);
	if (command(f, &m, NULL)) return -1;
	return (ssize_t)n;
}

/* Reads n bytes of a frame serve is writing: it comes whole, soon; waits even on an O_NONBLOCK file. */
static int rest(int fd, uint8_t *p, size_t n) {
	while (n) {
		ssize_t k = real_read(fd, p, n);
		if (k > 0) { p += k; n -= (size_t)k; continue; }
		if (k == 0) { errno = EIO; return -1; }
		if (errno == EAGAIN) {
			struct pollfd w = { .fd = fd, .events = POLLIN };
			poll(&w, 1, -1);
		} else if (errno != EINTR) return -1;
	}
	return 0;
}

/* Peeks at the first n bytes of the next frame, waiting for them (serve writes a frame whole): 0, or -1. */
static int peek(int fd, uint8_t *p, size_t n) {
	for (;;) {
		ssize_t k = recv(fd, p, n, MSG_PEEK | MSG_DONTWAIT);
		if ((size_t)k == n) return 0;
		if (k == 0) { errno = EIO; return -1; }
		if (k < 0 && errno != EAGAIN && errno != EINTR) return -1;
		struct pollfd w = { .fd = fd, .events = POLLIN };
		poll(&w, 1, 10);
	}
}

/*
 * One MAD of the file. A buffer too small for it gets its header and ENOSPC, and the MAD stays in the
 * socket (as ib_umad keeps it queued), so poll still sees the file readable for the next read.
 */
static ssize_t umad_read(int fd, struct umad_file *f, void *buf, size_t n) {
	size_t hdr = f->pkey ? sizeof(struct ib_user_mad_hdr) : sizeof(struct ib_user_mad_hdr_old);
	uint8_t head[8 + sizeof(struct ib_user_mad_hdr)];
	uint32_t len;
	ssize_t k;
	if (n < hdr) { errno = EINVAL; return -1; }
	k = recv(fd, head, 8, MSG_PEEK);
	if (k < 0) return -1; /* EAGAIN on an O_NONBLOCK file with nothing to read, or EINTR */
	if (k == 0) { errno = EIO; return -1; } /* the simulator is gone */
	if (peek(fd, head, 8 + hdr)) return -1;
	memcpy(&len, head, 4);
	if (len < 4 + hdr || len > (1u << 24)) { errno = EIO; return -1; }
	len -= 4;
	if (n < len) {
		memcpy(buf, head + 8, hdr);
		errno = ENOSPC;
		return -1;
	}
	if (rest(fd, head, 8) || rest(fd, buf, len)) return -1;
	return (ssize_t)len;
}

__attribute__((visibility("default")))
ssize_t read(int fd, void *buf, size_t n) {
	struct umad_file *f = umad_of(fd);
	if (f) {
		ssize_t r;
		pthread_mutex_lock(&f->file.lock);
		r = umad_read(fd, f, buf, n);
		pthread_mutex_unlock(&f->file.lock);
		return r;
	}
	return real_read(fd, buf, n);
}
