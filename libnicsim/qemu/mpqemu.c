/* Reading and answering mpqemu messages (mpqemu.h) on the socket QEMU's proxy holds the other end of. */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "mpqemu.h"

/* Closes what fds came with a message we refuse, so none leaks. */
static void drop_fds(struct mpqemu_msg *m) {
	for (int i = 0; i < m->nfds; i++)
		close(m->fds[i]);
	m->nfds = 0;
}

/* Takes the descriptors of one control message into m (beyond MPQEMU_MAX_FDS: closed, and -1). */
static int take_fds(struct msghdr *h, struct mpqemu_msg *m) {
	int over = 0;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(h); c; c = CMSG_NXTHDR(h, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		int n = (int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
		int fds[MPQEMU_MAX_FDS * 2];
		if (n > (int)(sizeof(fds) / sizeof(fds[0])))
			n = (int)(sizeof(fds) / sizeof(fds[0]));
		memcpy(fds, CMSG_DATA(c), (size_t)n * sizeof(int));
		for (int i = 0; i < n; i++) {
			if (m->nfds < MPQEMU_MAX_FDS)
				m->fds[m->nfds++] = fds[i];
			else {
				close(fds[i]);
				over = 1;
			}
		}
	}
	return over ? -1 : 0;
}

/* Reads exactly n bytes (the descriptors on any of them go to m): 1, 0 at a clean end, -1 on an error. */
static int read_all(int fd, void *buf, size_t n, struct mpqemu_msg *m, int at_start) {
	uint8_t *b = buf;
	size_t got = 0;
	while (got < n) {
		union {
			char buf[CMSG_SPACE(sizeof(int) * MPQEMU_MAX_FDS * 2)];
			struct cmsghdr align;
		} control;
		struct iovec iov = {.iov_base = b + got, .iov_len = n - got};
		struct msghdr h = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = control.buf,
				   .msg_controllen = sizeof(control.buf)};
		ssize_t r = recvmsg(fd, &h, MSG_CMSG_CLOEXEC);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -1;
		if (take_fds(&h, m) || (h.msg_flags & MSG_CTRUNC)) {
			errno = EPROTO;
			return -1;
		}
		if (r == 0) {
			if (at_start && got == 0)
				return 0;
			errno = EPROTO; /* the stream ended inside a message */
			return -1;
		}
		got += (size_t)r;
	}
	return 1;
}

int mpqemu_recv(int fd, struct mpqemu_msg *m) {
	memset(m, 0, sizeof(*m));
	int rc = read_all(fd, m, MPQEMU_HEADER, m, 1);
	if (rc <= 0)
		goto fail;
	if (m->size > sizeof(m->data)) {
		errno = EPROTO;
		rc = -1;
		goto fail;
	}
	if (m->size && (rc = read_all(fd, &m->data, m->size, m, 0)) <= 0) {
		rc = -1;
		goto fail;
	}
	return 1;
fail:
	drop_fds(m);
	return rc;
}

int mpqemu_ret(int fd, uint64_t value) {
	struct {
		int32_t cmd;
		uint32_t pad;
		uint64_t size;
		uint64_t value;
	} r = {.cmd = MPQEMU_RET, .size = 8, .value = value};
	const uint8_t *b = (const uint8_t *)&r;
	size_t left = sizeof(r);
	while (left > 0) {
		ssize_t w = write(fd, b, left);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		b += w;
		left -= (size_t)w;
	}
	return 0;
}

const char *mpqemu_name(int cmd) {
	static const char *const names[] = {"SYNC_SYSMEM", "RET", "PCI_CFGWRITE", "PCI_CFGREAD",
					    "BAR_WRITE", "BAR_READ", "SET_IRQFD", "DEVICE_RESET"};
	return cmd >= 0 && cmd < (int)(sizeof(names) / sizeof(names[0])) ? names[cmd] : "an unknown command";
}
