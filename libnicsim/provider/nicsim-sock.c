/*
 * The provider's sockets (nicsim-sock.h, nicsim-msg.h): the C library's own calls past this
 * library's interposers, whole reads and writes, and a connection to the simulator.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/un.h>
#include <unistd.h>

#include "nicsim-msg.h"
#include "nicsim-sock.h"

ssize_t real_read(int fd, void *b, size_t n) {
	static ssize_t (*f)(int, void *, size_t);
	if (!f) f = (ssize_t (*)(int, void *, size_t))dlvsym(RTLD_NEXT, "read", "GLIBC_2.2.5");
	return f(fd, b, n);
}

int real_fstat(int fd, struct stat *st) {
	static int (*f)(int, struct stat *);
	if (!f) f = (int (*)(int, struct stat *))dlvsym(RTLD_NEXT, "fstat", "GLIBC_2.33");
	return f(fd, st);
}

int real_socket(int domain, int type, int protocol) {
	static int (*f)(int, int, int);
	if (!f) f = (int (*)(int, int, int))dlvsym(RTLD_NEXT, "socket", "GLIBC_2.2.5");
	return f(domain, type, protocol);
}

int real_connect(int fd, const struct sockaddr *a, socklen_t n) {
	static int (*f)(int, const struct sockaddr *, socklen_t);
	if (!f) f = (int (*)(int, const struct sockaddr *, socklen_t))dlvsym(RTLD_NEXT, "connect", "GLIBC_2.2.5");
	return f(fd, a, n);
}

ssize_t real_sendto(int fd, const void *b, size_t n, int flags, const struct sockaddr *to, socklen_t len) {
	static ssize_t (*f)(int, const void *, size_t, int, const struct sockaddr *, socklen_t);
	if (!f) f = (ssize_t (*)(int, const void *, size_t, int, const struct sockaddr *, socklen_t))dlvsym(RTLD_NEXT,
		"sendto", "GLIBC_2.2.5");
	return f(fd, b, n, flags, to, len);
}

ssize_t real_write(int fd, const void *b, size_t n) {
	static ssize_t (*f)(int, const void *, size_t);
	if (!f) f = (ssize_t (*)(int, const void *, size_t))dlvsym(RTLD_NEXT, "write", "GLIBC_2.2.5");
	return f(fd, b, n);
}

int real_close(int fd) {
	static int (*f)(int);
	if (!f) f = (int (*)(int))dlvsym(RTLD_NEXT, "close", "GLIBC_2.2.5");
	return f(fd);
}

int io(int fd, void *p, size_t n, int writing) {
	uint8_t *b = p;
	while (n) {
		ssize_t k = writing ? real_write(fd, b, n) : real_read(fd, b, n);
		if (k < 0 && errno == EINTR) continue;
		if (k <= 0) return -1;
		b += k;
		n -= (size_t)k;
	}
	return 0;
}

int connect_simulator(void) {
	const char *path = getenv("NICSIM_SOCKET");
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int fd;
	if (!path || strlen(path) >= sizeof(a.sun_path)) {
		fprintf(stderr, "nicsim: NICSIM_SOCKET is not set (run the program with ./nicsim attach)\n");
		return -1;
	}
	strcpy(a.sun_path, path);
	fd = real_socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) return -1;
	if (real_connect(fd, (struct sockaddr *)&a, sizeof(a))) {
		fprintf(stderr, "nicsim: cannot reach the simulator at %s: %s (is ./nicsim serve running?)\n", path,
			strerror(errno));
		real_close(fd);
		return -1;
	}
	return fd;
}
