/*
 * Interrupts into the guest through a stock ivshmem-doorbell device whose server is this program.
 * QEMU's remote PCI proxy delivers none under TCG, so the adapter's MSI-X messages (the data words
 * serve's PCI_WAIT returns) become writes to the eventfds of the doorbell device's MSI-X vectors:
 * the adapter's message with data d raises the doorbell function's vector d. A guest driver binds
 * both functions and programs each of the adapter's MSI-X entries with the platform's MSI address
 * and, as data, the doorbell vector it wants that interrupt on.
 *
 * The ivshmem server protocol (QEMU's docs/specs/ivshmem-spec.rst): the server speaks only, each
 * message a little-endian int64, some with one fd by SCM_RIGHTS: the version (0), the client's ID,
 * -1 with the shared memory's fd, then the client's own ID once per vector with the eventfd that
 * interrupts it on that vector. The bridge is peer 0 and gives the guest no eventfd of its own: the
 * guest's doorbell register interrupts no one.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "bridge.h"

#define GUEST_ID 1
#define SHM_BYTES 4096 /* the doorbell device's BAR2: a power of two; nothing uses it */

int doorbell_listen(struct bridge *b, int vectors) {
	char dir[] = "/tmp/nicsim-qemu-XXXXXX";
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	if (!mkdtemp(dir))
		return -1;
	snprintf(b->doorbell_path, sizeof(b->doorbell_path), "%s/doorbell.sock", dir);
	strcpy(a.sun_path, b->doorbell_path);
	b->doorbell_listen = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (b->doorbell_listen < 0 || bind(b->doorbell_listen, (struct sockaddr *)&a, sizeof(a)) ||
	    listen(b->doorbell_listen, 1))
		return -1;
	b->doorbell_vectors = vectors;
	b->doorbell_client = -1;
	return 0;
}

/* One message: value, with `fd` if not negative. */
static int send_msg(int sock, int64_t value, int fd) {
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} control;
	struct iovec iov = {.iov_base = &value, .iov_len = sizeof(value)};
	struct msghdr h = {.msg_iov = &iov, .msg_iovlen = 1};
	if (fd >= 0) {
		h.msg_control = control.buf;
		h.msg_controllen = sizeof(control.buf);
		struct cmsghdr *c = CMSG_FIRSTHDR(&h);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &fd, sizeof(int));
	}
	ssize_t w;
	while ((w = sendmsg(sock, &h, MSG_NOSIGNAL)) < 0 && errno == EINTR)
		;
	return w == (ssize_t)sizeof(value) ? 0 : -1;
}

int doorbell_accept(struct bridge *b) {
	int c = accept4(b->doorbell_listen, NULL, NULL, SOCK_CLOEXEC);
	if (c < 0)
		return -1;
	if (b->doorbell_client >= 0) { /* one guest per bridge */
		close(c);
		return 0;
	}
	int shm = memfd_create("nicsim-doorbell", MFD_CLOEXEC);
	if (shm < 0 || ftruncate(shm, SHM_BYTES) || send_msg(c, 0, -1) || send_msg(c, GUEST_ID, -1) ||
	    send_msg(c, -1, shm))
		goto fail;
	close(shm);
	shm = -1;
	b->eventfds = calloc((size_t)b->doorbell_vectors, sizeof(int));
	if (!b->eventfds)
		goto fail;
	for (int v = 0; v < b->doorbell_vectors; v++) {
		int e = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		if (e < 0 || send_msg(c, GUEST_ID, e)) {
			if (e >= 0)
				close(e);
			goto fail;
		}
		b->eventfds[b->neventfds++] = e;
	}
	b->doorbell_client = c;
	return 0;
fail:
	fprintf(stderr, "nicsim-qemu-remote: setting up the guest's doorbell device: %s\n", strerror(errno));
	if (shm >= 0)
		close(shm);
	close(c);
	return -1;
}

void doorbell_ring(struct bridge *b, uint32_t data) {
	uint64_t one = 1;
	if (data < (uint32_t)b->neventfds && write(b->eventfds[data], &one, sizeof(one)) == (ssize_t)sizeof(one)) {
		b->delivered++;
		return;
	}
	if (b->dropped++ == 0)
		fprintf(stderr, "nicsim-qemu-remote: an MSI-X message with data %u: the doorbell device has %d vectors "
			"connected; dropped (the bridge's summary counts such)\n", data, b->neventfds);
}

void doorbell_close(struct bridge *b) {
	for (int v = 0; v < b->neventfds; v++)
		close(b->eventfds[v]);
	free(b->eventfds);
	b->eventfds = NULL;
	b->neventfds = 0;
	if (b->doorbell_client >= 0)
		close(b->doorbell_client);
	if (b->doorbell_listen >= 0)
		close(b->doorbell_listen);
	if (b->doorbell_path[0]) {
		unlink(b->doorbell_path);
		*strrchr(b->doorbell_path, '/') = 0;
		rmdir(b->doorbell_path);
	}
}
