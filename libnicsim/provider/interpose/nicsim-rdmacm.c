/*
 * RDMA CM for unmodified librdmacm: the kernel's /dev/infiniband/rdma_cm file (ucma, ABI version 4),
 * interposed (LD_PRELOAD) at the C library's open, fstat, write and close:
 *   open   of /dev/infiniband/rdma_cm gives a socket to the simulator, the file's events: the
 *          simulator writes one byte per event queued, so poll/epoll/select see it readable exactly
 *          when an event waits, O_NONBLOCK gives EAGAIN and a signal interrupts a blocked wait;
 *          a second connection of its own carries the commands (the file: nicsim-serve-file.c);
 *   fstat  says it is a character device, as librdmacm checks;
 *   write  of a command goes to the simulator, which answers as the kernel would; what the kernel
 *          copies out lands at the command's response pointer; GET_EVENT first takes a byte from
 *          the event socket (so it blocks, or fails with EAGAIN, as the kernel's does);
 *   close  closes both connections; the simulator then destroys the file's identifiers.
 * Any other file goes to the C library's own functions.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h> /* before the uapi header: glibc's in6_addr, not the kernel's */
#include <rdma/rdma_user_cm.h> /* the commands' structs, as the kernel's rdma_cm file takes them */
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nicsim-sock.h"
#include "interpose/nicsim-serve-file.h"
#include "interpose/nicsim-umad.h"

#define CM_PATH "/dev/infiniband/rdma_cm"

/* The rdma_cm file fd is, or NULL. */
static struct nicsim_serve_file *cm_of(int fd) { return nicsim_serve_file_of(fd, NICSIM_FILE_RDMA_CM); }

/* CM_OPEN's fixed part: the node, the program, its event file and its commands' connection. */
static void put_open(struct msg *m, uint32_t node, uint32_t pid, uint32_t events, uint32_t commands) {
	struct nicsim_wire_cm_open_request q = { .node = node, .pid = pid, .event_file = events,
						 .command_file = commands };
	PUT(m, q);
}

static void put_events(struct msg *m, uint32_t number, uint32_t pid) {
	struct nicsim_wire_cm_events_request q = { .channel = number, .pid = pid };
	PUT(m, q);
}

static int cm_open(int flags) {
	static const struct nicsim_serve_file_opening how = {
		.open_op = NICSIM_OP_CM_OPEN, .events_op = NICSIM_OP_CM_EVENTS,
		.put_open = put_open, .put_events = put_events,
	};
	/* the simulator tells a thread waiting for an event by /proc/<pid>/task/<tid>/syscall */
	prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
	prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
	return nicsim_serve_file_open(NICSIM_FILE_RDMA_CM, sizeof(struct nicsim_serve_file), &how, flags);
}

__attribute__((visibility("default")))
int open(const char *path, int flags, ...) {
	static int (*f)(const char *, int, ...);
	mode_t mode = 0;
	if ((flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE) {
		va_list ap;
		va_start(ap, flags);
		mode = va_arg(ap, mode_t);
		va_end(ap);
	}
	if (!strcmp(path, CM_PATH) && getenv("NICSIM_SOCKET")) return cm_open(flags);
	if (nicsim_umad_path(path)) return nicsim_umad_open(flags);
	if (!f) f = (int (*)(const char *, int, ...))dlvsym(RTLD_NEXT, "open", "GLIBC_2.2.5");
	return f(path, flags, mode);
}

__attribute__((visibility("default")))
int fstat(int fd, struct stat *st) {
	if (cm_of(fd)) {
		nicsim_serve_file_stat(st, 10, 58);
		return 0;
	}
	if (nicsim_umad_fstat(fd, st) == 0) return 0;
	return real_fstat(fd, st);
}

__attribute__((visibility("default")))
int close(int fd) {
	if (!nicsim_serve_file_close(fd, NICSIM_FILE_RDMA_CM)) nicsim_serve_file_close(fd, NICSIM_FILE_UMAD);
	return real_close(fd);
}

/* Where a command's response pointer is, or -1 for none. */
static int response_at(uint32_t cmd) {
	switch (cmd) {
	case RDMA_USER_CM_CMD_CREATE_ID: return offsetof(struct rdma_ucm_create_id, response);
	case RDMA_USER_CM_CMD_DESTROY_ID: return offsetof(struct rdma_ucm_destroy_id, response);
	case RDMA_USER_CM_CMD_QUERY_ROUTE:
	case RDMA_USER_CM_CMD_QUERY: return offsetof(struct rdma_ucm_query, response);
	case RDMA_USER_CM_CMD_INIT_QP_ATTR: return offsetof(struct rdma_ucm_init_qp_attr, response);
	case RDMA_USER_CM_CMD_GET_EVENT: return offsetof(struct rdma_ucm_get_event, response);
	case RDMA_USER_CM_CMD_JOIN_IP_MCAST: return offsetof(struct rdma_ucm_join_ip_mcast, response);
	case RDMA_USER_CM_CMD_LEAVE_MCAST: return offsetof(struct rdma_ucm_destroy_id, response);
	case RDMA_USER_CM_CMD_MIGRATE_ID: return offsetof(struct rdma_ucm_migrate_id, response);
	case RDMA_USER_CM_CMD_JOIN_MCAST: return offsetof(struct rdma_ucm_join_mcast, response);
	default: return -1;
	}
}

/* Waits, as the kernel's file does, until an event may be read: 0, or -1 with errno (EIO: the simulator is gone). */
static int await_event(int fd, struct nicsim_serve_file *f) {
	uint8_t token;
	ssize_t k = read(fd, &token, 1); /* blocking, EAGAIN or EINTR */
	if (k < 0) return -1;
	if (k == 0 && !nicsim_serve_file_still(fd, f)) {
		/* another thread closed the file under this wait: the kernel's wait holds the file,
		 * so it never wakes (rping's event thread, blocked here, ends with the process) */
		for (;;) pause();
	}
	if (k == 0) { errno = EIO; return -1; } /* the simulator is gone */
	return 0;
}

/* What a command carries beyond its input: a SET_OPTION's value, a MIGRATE_ID's source file. 0, or -1 with errno. */
static int put_extras(struct msg *m, uint32_t cmd, uint16_t in, const uint8_t *body) {
	if (cmd == RDMA_USER_CM_CMD_SET_OPTION && in >= sizeof(struct rdma_ucm_set_option)) {
		struct rdma_ucm_set_option o; /* the option's value, from the program's memory */
		memcpy(&o, body, sizeof(o));
		if (o.optlen > 256 || (o.optlen && !o.optval)) { errno = EINVAL; return -1; }
		struct nicsim_wire_option_length len = { .optlen = o.optlen };
		PUT(m, len);
		put(m, (const void *)(uintptr_t)o.optval, o.optlen);
	}
	/* the file the identifier moves from (the command is written to the one it moves to) */
	if (cmd == RDMA_USER_CM_CMD_MIGRATE_ID && in >= sizeof(struct rdma_ucm_migrate_id)) {
		struct rdma_ucm_migrate_id mig;
		struct nicsim_serve_file *t;
		memcpy(&mig, body, sizeof(mig));
		t = cm_of((int)mig.fd);
		if (!t) { errno = EBADF; return -1; }
		struct nicsim_wire_channel_number from = { .channel = t->number };
		PUT(m, from);
	}
	return 0;
}

static ssize_t cm_command(int fd, struct nicsim_serve_file *f, const uint8_t *buf, size_t n) {
	struct rdma_ucm_cmd_hdr h;
	uint64_t response = 0;
	struct msg m;
	int rc, at;
	if (n < sizeof h) { errno = EINVAL; return -1; }
	memcpy(&h, buf, sizeof h);
	if (h.in + sizeof h > n) { errno = EINVAL; return -1; }
	at = response_at(h.cmd);
	if (at >= 0 && h.in >= (size_t)at + 8) memcpy(&response, buf + sizeof h + at, 8);
	for (;;) {
		if (h.cmd == RDMA_USER_CM_CMD_GET_EVENT && await_event(fd, f) < 0) return -1;
		struct nicsim_wire_cm_command c = { .command = h.cmd, .out = h.out, .in = h.in };
		m = request(NICSIM_OP_CM_CMD);
		PUT(&m, c);
		put(&m, buf + sizeof h, h.in);
		if (put_extras(&m, h.cmd, h.in, buf + sizeof h) < 0) { done(&m); return -1; }
		if (m.failed) { done(&m); errno = ENOMEM; return -1; }
		rc = nicsim_serve_file_call(f, &m);
		if (rc < 0) { done(&m); errno = EIO; return -1; }
		/* its identifier went meanwhile */
		if (rc == EAGAIN && h.cmd == RDMA_USER_CM_CMD_GET_EVENT) { done(&m); continue; }
		break;
	}
	if (rc) { done(&m); errno = rc; return -1; }
	if (response && h.out) {
		size_t k = m.len - m.pos < h.out ? m.len - m.pos : h.out;
		memcpy((void *)(uintptr_t)response, m.buf + m.pos, k);
	}
	done(&m);
	return (ssize_t)n;
}

__attribute__((visibility("default")))
ssize_t write(int fd, const void *buf, size_t n) {
	struct nicsim_serve_file *f = cm_of(fd);
	ssize_t u;
	if (f) return cm_command(fd, f, buf, n);
	u = nicsim_umad_write(fd, buf, n);
	return u == -2 ? real_write(fd, buf, n) : u;
}
