/*
 * RDMA CM for unmodified librdmacm: the kernel's /dev/infiniband/rdma_cm file (ucma, ABI version 4),
 * interposed (LD_PRELOAD) at the C library's open, fstat, write and close:
 *   open   of /dev/infiniband/rdma_cm gives a socket to the simulator, the file's events: the
 *          simulator writes one byte per event queued, so poll/epoll/select see it readable exactly
 *          when an event waits, O_NONBLOCK gives EAGAIN and a signal interrupts a blocked wait;
 *          a second connection of its own carries the commands;
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
#include <pthread.h>
#include <rdma/rdma_user_cm.h> /* the commands' structs, as the kernel's rdma_cm file takes them */
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "nicsim-provider.h"
#include "interpose/nicsim-umad.h"

#define CM_PATH "/dev/infiniband/rdma_cm"
#define CM_FILES 4096

struct cm_file {
	int commands;
	uint32_t channel;
	dev_t dev;
	ino_t ino;
	pthread_mutex_t lock;
};

static struct cm_file *files[CM_FILES];

static void *libc(const char *name, const char *version) { return dlvsym(RTLD_NEXT, name, version); }

static int real_fstat(int fd, struct stat *st) {
	static int (*f)(int, struct stat *);
	if (!f) f = (int (*)(int, struct stat *))libc("fstat", "GLIBC_2.33");
	return f(fd, st);
}

/* The rdma_cm file fd is, or NULL (a number reused since, closed behind our back, is not). */
static struct cm_file *cm_of(int fd) {
	struct cm_file *f = fd >= 0 && fd < CM_FILES ? __atomic_load_n(&files[fd], __ATOMIC_ACQUIRE) : NULL;
	struct stat st;
	if (!f) return NULL;
	if (real_fstat(fd, &st) || st.st_dev != f->dev || st.st_ino != f->ino) return NULL;
	return f;
}

static int program_name(struct msg *m) {
	char name[256] = "";
	if (readlink("/proc/self/exe", name, sizeof(name) - 1) < 0) strcpy(name, "?");
	put32(m, (uint32_t)strlen(name));
	put(m, name, strlen(name));
	return 0;
}

static int cm_open(int flags) {
	const char *node = getenv("NICSIM_NODE");
	struct cm_file *f = calloc(1, sizeof(*f));
	uint32_t reply[2]; /* length, status */
	struct nicsim_wire_opened opened;
	struct stat st;
	struct msg m;
	int events = -1;
	if (!f) { errno = ENOMEM; return -1; }
	/* the simulator tells a thread waiting for an event by /proc/<pid>/task/<tid>/syscall */
	prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
	prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
	f->commands = connect_simulator();
	if (f->commands < 0) goto fail;
	events = connect_simulator();
	if (events < 0 || events >= CM_FILES) goto fail;
	struct nicsim_wire_cm_open_request q = {
		.node = node ? (uint32_t)atoi(node) : 0, .pid = (uint32_t)getpid(), .event_file = (uint32_t)events,
	};
	m = request(NICSIM_OP_CM_OPEN);
	PUT(&m, q);
	program_name(&m);
	if (send_only(f->commands, &m) || io(f->commands, reply, sizeof reply, 0) || reply[1]
	    || io(f->commands, &opened, sizeof opened, 0)) { done(&m); goto fail; }
	done(&m);
	f->channel = opened.number;
	struct nicsim_wire_cm_events_request ev = { .channel = f->channel, .pid = (uint32_t)getpid() };
	m = request(NICSIM_OP_CM_EVENTS);
	PUT(&m, ev);
	if (send_only(events, &m) || io(events, reply, 2 * sizeof(uint32_t), 0) || reply[1]) { done(&m); goto fail; }
	done(&m);
	if (!(flags & O_CLOEXEC)) fcntl(events, F_SETFD, 0);
	if (flags & O_NONBLOCK) fcntl(events, F_SETFL, fcntl(events, F_GETFL) | O_NONBLOCK);
	if (real_fstat(events, &st)) goto fail;
	f->dev = st.st_dev;
	f->ino = st.st_ino;
	pthread_mutex_init(&f->lock, NULL);
	__atomic_store_n(&files[events], f, __ATOMIC_RELEASE);
	return events;
fail:
	if (events >= 0) real_close(events);
	if (f->commands >= 0) real_close(f->commands);
	free(f);
	errno = ENODEV;
	return -1;
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
	if (!f) f = (int (*)(const char *, int, ...))libc("open", "GLIBC_2.2.5");
	return f(path, flags, mode);
}

__attribute__((visibility("default")))
int fstat(int fd, struct stat *st) {
	if (cm_of(fd)) {
		memset(st, 0, sizeof(*st));
		st->st_mode = S_IFCHR | 0666;
		st->st_rdev = makedev(10, 58);
		st->st_blksize = 4096;
		return 0;
	}
	if (nicsim_umad_fstat(fd, st) == 0) return 0;
	return real_fstat(fd, st);
}

__attribute__((visibility("default")))
int close(int fd) {
	struct cm_file *f = cm_of(fd);
	if (f) {
		__atomic_store_n(&files[fd], NULL, __ATOMIC_RELEASE);
		real_close(f->commands);
		pthread_mutex_destroy(&f->lock);
		free(f);
	}
	nicsim_umad_close(fd);
	return real_close(fd);
}

/* Where a command's response pointer is, or -1 for none. */
static int response_at(uint32_t cmd) {
	switch (cmd) {
	case RDMA_USER_CM_CMD_CREATE_ID: return offsetof(struct rdma_ucm_create_id, response);
	case RDMA_USER_CM_CMD_DESTROY_ID: return offsetof(struct rdma_ucm_destroy_id, response);
	case RDMA_USER_CM_CMD_QUERY_ROUTE: case RDMA_USER_CM_CMD_QUERY: return offsetof(struct rdma_ucm_query, response);
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
static int await_event(int fd, struct cm_file *f) {
	uint8_t token;
	ssize_t k = read(fd, &token, 1); /* blocking, EAGAIN or EINTR */
	if (k < 0) return -1;
	if (k == 0 && __atomic_load_n(&files[fd], __ATOMIC_ACQUIRE) != f) {
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
		struct cm_file *t;
		memcpy(&mig, body, sizeof(mig));
		t = cm_of((int)mig.fd);
		if (!t) { errno = EBADF; return -1; }
		struct nicsim_wire_channel_number from = { .channel = t->channel };
		PUT(m, from);
	}
	return 0;
}

static ssize_t cm_command(int fd, struct cm_file *f, const uint8_t *buf, size_t n) {
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
		pthread_mutex_lock(&f->lock);
		rc = nicsim_exchange(f->commands, &m);
		pthread_mutex_unlock(&f->lock);
		if (rc < 0) { done(&m); errno = EIO; return -1; }
		if (rc == EAGAIN && h.cmd == RDMA_USER_CM_CMD_GET_EVENT) { done(&m); continue; } /* its identifier went meanwhile */
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
	struct cm_file *f = fd >= 0 && fd < CM_FILES ? __atomic_load_n(&files[fd], __ATOMIC_ACQUIRE) : NULL;
	ssize_t u;
	if (f && (f = cm_of(fd))) return cm_command(fd, f, buf, n);
	u = nicsim_umad_write(fd, buf, n);
	return u == -2 ? real_write(fd, buf, n) : u;
}
