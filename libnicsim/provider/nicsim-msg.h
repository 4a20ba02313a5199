/*
 * The provider's side of the simulator's protocol: a request is u32 length (of what follows), u32
 * op, then the op's fields; a reply is u32 length, u32 status (0 or an errno), then its fields;
 * little-endian (x86-64 and aarch64 are). The op numbers come from nicsim-wire.h, generated from
 * the simulator's definition (nicsim.serve.Wire).
 */
#ifndef NICSIM_MSG_H
#define NICSIM_MSG_H

#include <stdint.h>
#include <stdlib.h>
#include <sys/types.h>
#include <string.h>

#include "nicsim-wire.h"

struct msg {
	uint8_t *buf;
	size_t len, cap, pos; /* pos: read position in a reply */
	int failed;           /* out of memory building it, or the reply was shorter than what was read from it */
};

static inline void put(struct msg *m, const void *p, size_t n) {
	if (m->len + n > m->cap) {
		size_t cap = m->cap ? m->cap : 256;
		while (cap < m->len + n) cap *= 2;
		uint8_t *b = realloc(m->buf, cap);
		if (!b) { m->failed = 1; return; }
		m->buf = b;
		m->cap = cap;
	}
	memcpy(m->buf + m->len, p, n);
	m->len += n;
}
static inline void put32(struct msg *m, uint32_t v) { put(m, &v, 4); }
static inline void put64(struct msg *m, uint64_t v) { put(m, &v, 8); }

static inline void get(struct msg *m, void *p, size_t n) {
	if (m->pos + n > m->len) { m->failed = 1; memset(p, 0, n); return; }
	memcpy(p, m->buf + m->pos, n);
	m->pos += n;
}
static inline uint32_t get32(struct msg *m) { uint32_t v; get(m, &v, 4); return v; }
static inline uint64_t get64(struct msg *m) { uint64_t v; get(m, &v, 8); return v; }

/*
 * A message's fixed part, a struct nicsim_wire_* generated from the simulator's declaration of it
 * (nicsim.serve.WireLayout), put whole onto a request or got whole off a reply (zeroed if short).
 */
#define PUT(m, s) put((m), &(s), sizeof(s))
#define GET(m, s) get((m), &(s), sizeof(s))

static inline struct msg request(uint32_t op) {
	struct msg m = {0};
	put32(&m, 0); /* length, filled in when sent */
	put32(&m, op);
	return m;
}

static inline void done(struct msg *m) { free(m->buf); m->buf = NULL; }

struct nicsim_context;

/*
 * Sends a request on ctx's socket and waits for its reply, which replaces the request in *m (read
 * it with get*). Returns the reply's status: 0, or an errno (EIO when the simulator cannot be reached).
 */
int call(struct nicsim_context *ctx, struct msg *m);

/*
 * Sends m on connection fd and reads the reply into m (as call does, without a context): the
 * reply's status, ENOMEM, or -1 if the connection failed before the reply's length, -2 after.
 */
int nicsim_exchange(int fd, struct msg *m);

/* Sends m, whole, on socket fd, expecting no reply: 0, or -1. */
int send_only(int fd, struct msg *m);

/*
 * The C library's own write and close, past the rdma_cm file's interposers (interpose/nicsim-rdmacm.c),
 * which sit above the provider and call down into it: the provider's connections are never that file.
 */
ssize_t real_write(int fd, const void *b, size_t n);
int real_close(int fd);

/* Reads or writes exactly n bytes of fd, going on after a signal: 0, or -1. */
int io(int fd, void *p, size_t n, int writing);

/* A new connection to the simulator (NICSIM_SOCKET), or -1 after saying why on stderr. */
int connect_simulator(void);

#endif
