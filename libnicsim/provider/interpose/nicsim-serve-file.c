/* The files serve stands in for, as the interposers keep them (nicsim-serve-file.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "nicsim-sock.h"
#include "interpose/nicsim-serve-file.h"

/* Descriptors past this many are never such a file (open says ENODEV). */
#define SERVE_FILES 4096

static struct nicsim_serve_file *files[SERVE_FILES];

/* The program's name, as serve shows whose file it is. */
static void put_program_name(struct msg *m) {
	char name[256] = "";
	if (readlink("/proc/self/exe", name, sizeof(name) - 1) < 0) strcpy(name, "?");
	put32(m, (uint32_t)strlen(name));
	put(m, name, strlen(name));
}

/* Sends m on fd and reads the reply's length and status: 0 if it is a success, or -1. */
static int ask(int fd, struct msg *m) {
	uint32_t reply[2]; /* length, status */
	int rc = send_only(fd, m) || io(fd, reply, sizeof reply, 0) || reply[1] ? -1 : 0;
	done(m);
	return rc;
}

int nicsim_serve_file_open(enum nicsim_serve_file_kind kind, size_t size, const struct nicsim_serve_file_opening *how,
			   int flags) {
	const char *node = getenv("NICSIM_NODE");
	struct nicsim_serve_file *f = calloc(1, size);
	struct nicsim_wire_opened opened;
	struct stat st;
	struct msg m;
	int events = -1;
	if (!f) { errno = ENOMEM; return -1; }
	f->kind = kind;
	f->commands = connect_simulator();
	if (f->commands < 0) goto fail;
	events = connect_simulator();
	if (events < 0 || events >= SERVE_FILES) goto fail;
	m = request(how->open_op);
	how->put_open(&m, node ? (uint32_t)atoi(node) : 0, (uint32_t)getpid(), (uint32_t)events, (uint32_t)f->commands);
	put_program_name(&m);
	if (ask(f->commands, &m) || io(f->commands, &opened, sizeof opened, 0)) goto fail;
	f->number = opened.number;
	m = request(how->events_op);
	how->put_events(&m, f->number, (uint32_t)getpid());
	if (ask(events, &m)) goto fail;
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

struct nicsim_serve_file *nicsim_serve_file_of(int fd, enum nicsim_serve_file_kind kind) {
	struct nicsim_serve_file *f =
		fd >= 0 && fd < SERVE_FILES ? __atomic_load_n(&files[fd], __ATOMIC_ACQUIRE) : NULL;
	struct stat st;
	if (!f || f->kind != kind) return NULL; /* no system call for a descriptor that never was one */
	if (real_fstat(fd, &st) || st.st_dev != f->dev || st.st_ino != f->ino) return NULL;
	return f;
}

int nicsim_serve_file_still(int fd, const struct nicsim_serve_file *f) {
	return fd >= 0 && fd < SERVE_FILES && __atomic_load_n(&files[fd], __ATOMIC_ACQUIRE) == f;
}

int nicsim_serve_file_close(int fd, enum nicsim_serve_file_kind kind) {
	struct nicsim_serve_file *f = nicsim_serve_file_of(fd, kind);
	if (!f) return 0;
	__atomic_store_n(&files[fd], NULL, __ATOMIC_RELEASE);
	real_close(f->commands);
	pthread_mutex_destroy(&f->lock);
	free(f);
	return 1;
}

int nicsim_serve_file_call(struct nicsim_serve_file *f, struct msg *m) {
	pthread_mutex_lock(&f->lock);
	int rc = nicsim_exchange(f->commands, m);
	pthread_mutex_unlock(&f->lock);
	return rc;
}

void nicsim_serve_file_stat(struct stat *st, unsigned major, unsigned minor) {
	memset(st, 0, sizeof(*st));
	st->st_mode = S_IFCHR | 0666;
	st->st_rdev = makedev(major, minor);
	st->st_blksize = 4096;
}
