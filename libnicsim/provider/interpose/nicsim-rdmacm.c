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
#include <stdarg.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nicsim-sock.h"
#include "interpose/nicsim-serve-file.h"
#include "interpose/nicsim-umad.h"

#define CM_PATH "/dev/infiniband/rdma_cm"
#define CM_GET_EVENT 12
#define CM_SET_OPTION 14
#define CM_MIGRATE_ID 18

/* The rdma_cm file fd is, or NULL. */
static struct nicsim_serve_file *cm_of(int fd) { return nicsim_serve_file_of(fd, NICSIM_FILE_RDMA_CM); }

static int cm_open(int flags) {
	/* the simulator tells a thread waiting for an event by /proc/<pid>/task/<tid>/syscall */
	prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
	prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
	return nicsim_serve_file_open(NICSIM_FILE_RDMA_CM, sizeof(struct nicsim_serve_file), NICSIM_OP_CM_OPEN, NULL, 0,
				      NICSIM_OP_CM_EVENTS, flags);
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

/* Where a command's response pointer is (its first field, but for CREATE_ID's), or -1 for none. */
static int response_at(uint32_t cmd) {
	switch (cmd) {
	case 0: return 8;                                        /* CREATE_ID: uid, then response */
	case 1: case 5: case 11: case 12: case 16: case 17: case 18: case 19: case 22: return 0;
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
	if (cmd == CM_SET_OPTION && in >= 24) { /* the option's value, from the program's memory */
		uint64_t optval;
		uint32_t optlen;
		memcpy(&optval, body, 8);
		memcpy(&optlen, body + 20, 4);
		if (optlen > 256 || (optlen && !optval)) { errno = EINVAL; return -1; }
		put32(m, optlen);
		put(m, (const void *)(uintptr_t)optval, optlen);
	}
	/* the file the identifier moves from (the command is written to the one it moves to) */
	if (cmd == CM_MIGRATE_ID && in >= 16) {
		uint32_t to;
		struct nicsim_serve_file *t;
		memcpy(&to, body + 12, 4);
		t = cm_of((int)to);
		if (!t) { errno = EBADF; return -1; }
		put32(m, t->number);
	}
	return 0;
}

static ssize_t cm_command(int fd, struct nicsim_serve_file *f, const uint8_t *buf, size_t n) {
	struct { uint32_t cmd; uint16_t in, out; } h;
	uint64_t response = 0;
	struct msg m;
	int rc, at;
	if (n < sizeof h) { errno = EINVAL; return -1; }
	memcpy(&h, buf, sizeof h);
	if (h.in + sizeof h > n) { errno = EINVAL; return -1; }
	at = response_at(h.cmd);
	if (at >= 0 && h.in >= (size_t)at + 8) memcpy(&response, buf + sizeof h + at, 8);
	for (;;) {
		if (h.cmd == CM_GET_EVENT && await_event(fd, f) < 0) return -1;
		m = request(NICSIM_OP_CM_CMD);
		put32(&m, h.cmd);
		put32(&m, h.out);
		put32(&m, h.in);
		put(&m, buf + sizeof h, h.in);
		if (put_extras(&m, h.cmd, h.in, buf + sizeof h) < 0) { done(&m); return -1; }
		if (m.failed) { done(&m); errno = ENOMEM; return -1; }
		rc = nicsim_serve_file_call(f, &m);
		if (rc < 0) { done(&m); errno = EIO; return -1; }
		if (rc == EAGAIN && h.cmd == CM_GET_EVENT) { done(&m); continue; } /* its identifier went meanwhile */
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
