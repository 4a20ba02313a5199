/* The provider's connections to the simulator: requests out, replies in (nicsim-msg.h; the sockets: nicsim-sock.c). */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

#include "nicsim-provider.h"

int send_only(int fd, struct msg *m) {
	uint32_t len = (uint32_t)(m->len - 4);
	if (m->failed) return -1;
	memcpy(m->buf, &len, 4);
	return io(fd, m->buf, m->len, 1);
}

/*
 * A child forked after the context was opened (as the kernel's uverbs file, the context is shared
 * with it), or a context imported (ctx->pid is then its opener's, ctx->sock -1): its requests go on
 * a connection of its own, which JOIN ties to the same session, so they never interleave with the
 * opener's. Under ctx's lock.
 */
int nicsim_rejoin(struct nicsim_context *ctx) {
	char name[256] = "";
	struct msg m = request(NICSIM_OP_JOIN);
	uint32_t reply[2];
	int fd = connect_simulator();
	if (fd < 0) { done(&m); return -1; }
	if (readlink("/proc/self/exe", name, sizeof(name) - 1) < 0) strcpy(name, "?");
	struct nicsim_wire_join_request q = {
		.session = ctx->session, .parent_pid = (uint32_t)ctx->pid, .pid = (uint32_t)getpid(),
		.socket_fd = (uint32_t)fd,
	};
	PUT(&m, q);
	put32(&m, (uint32_t)strlen(name));
	put(&m, name, strlen(name));
	if (send_only(fd, &m) || io(fd, reply, sizeof reply, 0) || reply[1]) {
		done(&m);
		real_close(fd);
		return -1;
	}
	done(&m);
	real_close(ctx->sock); /* the parent's, which stays open in the parent */
	ctx->sock = fd;
	ctx->pid = getpid();
	return 0;
}

int nicsim_exchange(int fd, struct msg *m) {
	uint32_t len;
	if (send_only(fd, m) || io(fd, &len, 4, 0) || len < 4 || len > (64u << 20)) {
		m->len = m->pos = 0;
		return -1;
	}
	m->len = m->pos = 0;
	if (m->cap < len) {
		uint8_t *b = realloc(m->buf, len);
		if (!b) return ENOMEM; /* the connection is out of step from here: EIO next */
		m->buf = b;
		m->cap = len;
	}
	if (io(fd, m->buf, len, 0)) return -2;
	m->len = len;
	return (int)get32(m);
}

int call(struct nicsim_context *ctx, struct msg *m) {
	int rc;
	if (m->failed) { free(m->buf); m->buf = NULL; return ENOMEM; }
	pthread_mutex_lock(&ctx->lock);
	if (ctx->pid != getpid() && nicsim_rejoin(ctx)) {
		pthread_mutex_unlock(&ctx->lock);
		fprintf(stderr, "nicsim: a forked process could not reach its parent's context in the simulator\n");
		m->len = m->pos = 0;
		return EIO;
	}
	rc = nicsim_exchange(ctx->sock, m);
	pthread_mutex_unlock(&ctx->lock);
	if (rc == -1) fprintf(stderr, "nicsim: lost the simulator (NICSIM_SOCKET)\n");
	return rc < 0 ? EIO : rc;
}

int simple(struct ibv_context *c, uint32_t op, uint32_t handle) {
	struct msg m = request(op);
	struct nicsim_wire_handle q = { .handle = handle };
	int rc;
	PUT(&m, q);
	rc = call(to_nctx(c), &m);
	done(&m);
	return rc;
}
