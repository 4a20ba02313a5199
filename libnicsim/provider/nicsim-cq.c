/*
 * Completion queues: libibverbs' CQ verbs, each checked as the kernel checks it and then handed
 * to the context's back end (nicsim-backend.h), which makes, polls and destroys the CQ.
 */
#include <errno.h>

#include "nicsim-backend.h"

static const struct nicsim_backend_ops *ops_of(struct ibv_context *c) { return to_nctx(c)->ops; }

struct nicsim_ibv_cq *nicsim_create_cq(struct ibv_context *c, int cqe, struct ibv_comp_channel *channel) {
	return ops_of(c)->create_cq(c, cqe, channel);
}

int nicsim_poll(struct ibv_cq *cq, int max, struct ibv_wc *wc, struct nicsim_wc_extra *x) {
	return ops_of(cq->context)->poll_cq(cq, max, wc, x);
}

static struct ibv_cq *create_cq(struct ibv_context *c, int cqe, struct ibv_comp_channel *channel, int vector) {
	struct nicsim_ibv_cq *cq;
	if (vector < 0 || vector >= c->num_comp_vectors) { errno = EINVAL; return NULL; } /* as the kernel's create_cq */
	cq = nicsim_create_cq(c, cqe, channel);
	return cq ? &cq->cq : NULL;
}

static int destroy_cq(struct ibv_cq *cq) { return ops_of(cq->context)->destroy_cq(cq); }

/* ibv_resize_cq: at least cqe entries, the completions not yet polled kept; cq->cqe tells how many it got. */
static int resize_cq(struct ibv_cq *cq, int cqe) { return ops_of(cq->context)->resize_cq(to_ncq(cq), cqe); }

static int poll_cq(struct ibv_cq *cq, int max, struct ibv_wc *wc) { return nicsim_poll(cq, max, wc, NULL); }

static int req_notify_cq(struct ibv_cq *cq, int solicited_only) {
	return ops_of(cq->context)->req_notify_cq(cq, solicited_only);
}

/*
 * libibverbs' own ibv_get_cq_event calls this once it read an event of cq from the kernel's channel (the
 * kern back end); under attach nicsim's (nicsim-events.c) stands in for that function and counts the
 * event itself.
 */
static void cq_event(struct ibv_cq *cq) {
	struct nicsim_context *ctx = to_nctx(cq->context);
	pthread_mutex_lock(&ctx->named.lock);
	ctx->ops->cq_event_taken(to_ncq(cq));
	pthread_mutex_unlock(&ctx->named.lock);
}

const struct verbs_context_ops nicsim_cq_ops = {
	.cq_event = cq_event,
	.create_cq = create_cq,
	.destroy_cq = destroy_cq,
	.poll_cq = poll_cq,
	.req_notify_cq = req_notify_cq,
	.resize_cq = resize_cq,
};
