/*
 * The objects events name, by the simulator's handle of each (the context's registry, nicsim-provider.h):
 * an event for one destroyed meanwhile is dropped, as the kernel drops a destroyed object's unread events,
 * and a destroy waits until the events given out for its object are acknowledged. The event files
 * themselves are interposed: interpose/nicsim-channels.c.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>

#include "nicsim-backend.h"

void nicsim_name(struct nicsim_context *ctx, uint32_t handle, void *obj) {
	struct nicsim_registry *r = &ctx->named;
	pthread_mutex_lock(&r->lock);
	if (handle >= r->cap && obj) {
		uint32_t cap = r->cap ? r->cap : 64;
		while (cap <= handle) cap *= 2;
		void **at = realloc(r->at, cap * sizeof(*at));
		if (at) {
			memset(at + r->cap, 0, (cap - r->cap) * sizeof(*at));
			r->at = at;
			r->cap = cap;
		}
	}
	if (handle < r->cap) r->at[handle] = obj;
	pthread_mutex_unlock(&r->lock);
}

void *nicsim_named(struct nicsim_context *ctx, uint32_t handle) {
	return handle < ctx->named.cap ? ctx->named.at[handle] : NULL;
}

struct ibv_qp *nicsim_named_qp(struct nicsim_context *ctx, uint32_t handle) { return nicsim_named(ctx, handle); }

struct ibv_srq *nicsim_named_srq(struct nicsim_context *ctx, uint32_t handle) { return nicsim_named(ctx, handle); }

void nicsim_await_acks(pthread_mutex_t *mu, pthread_cond_t *cv, const unsigned int *completed, uint32_t returned) {
	pthread_mutex_lock(mu);
	while (*completed != returned) pthread_cond_wait(cv, mu);
	pthread_mutex_unlock(mu);
}
