/*
 * The kern back end's CQs (nicsim-kern.c): CREATE_CQ through the kernel driver, the ring and its
 * doorbell record mapped by the key its udata returns; polled and armed by the hw back end's code.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "nicsim-kern.h"

struct nicsim_ibv_cq *nicsim_kern_create_cq(struct ibv_context *c, int cqe, struct ibv_comp_channel *channel) {
	struct nicsim_ibv_cq *cq = calloc(1, sizeof(*cq));
	struct nicsim_hw_cq *h = calloc(1, sizeof(*h));
	struct ibv_create_cq cmd;
	struct { struct ib_uverbs_create_cq_resp ibv; struct nicsim_ibv_create_cq_resp drv; } resp;
	if (!cq || !h) { free(cq); free(h); errno = ENOMEM; return NULL; }
	memset(&resp, 0, sizeof(resp));
	int rc = ibv_cmd_create_cq(c, cqe, channel, 0, &cq->cq, &cmd, sizeof(cmd), &resp.ibv, sizeof(resp));
	if (rc) { free(cq); free(h); errno = rc; return NULL; }
	uint8_t *ring = kern_map(c, resp.drv.mmap_key, resp.drv.mmap_size);
	if (!ring) {
		rc = errno;
		ibv_cmd_destroy_cq(&cq->cq);
		free(cq); free(h); errno = rc; return NULL;
	}
	h->map_len = resp.drv.mmap_size;
	h->map = ring;
	h->q.cqn = resp.drv.cqn;
	h->q.log_size = resp.drv.log_size;
	h->q.ring = ring;
	h->q.db = ring + resp.drv.dbrec_offset;
	h->q.uar_map = kern_of(c)->uar_map;
	cq->hw = h;
	cq->handle = h->q.cqn; /* the CQ's number, as CQEs and events name it; cq->cq.handle is the kernel's */
	return cq;
}

int nicsim_kern_destroy_cq(struct ibv_cq *cq) {
	struct nicsim_ibv_cq *c = to_ncq(cq);
	int rc = ibv_cmd_destroy_cq(cq);
	if (rc)
		return rc;
	if (c->hw->ring_len)
		munmap(c->hw->q.ring, c->hw->ring_len);
	munmap(c->hw->map, c->hw->map_len);
	free(c->hw);
	free(c);
	return 0;
}

/*
 * ibv_resize_cq: the driver's RESIZE_CQ (the adapter moves what was not polled to the new ring's
 * first entries), then the new ring mapped; the record stays in the first mapping. Polling holds
 * the context's lock, so none runs while the ring moves. A ring the kernel moved but this process
 * cannot map leaves the CQ unusable (ENOMEM).
 */
int nicsim_kern_resize_cq(struct nicsim_ibv_cq *cq, int cqe) {
	struct ibv_context *c = cq->cq.context;
	struct nicsim_hw *hw = to_nctx(c)->hw;
	struct nicsim_hw_cq *h = cq->hw;
	struct ibv_resize_cq cmd;
	struct { struct ib_uverbs_resize_cq_resp ibv; struct nicsim_ibv_resize_cq_resp drv; } resp;
	if (cqe < 1)
		return EINVAL;
	memset(&resp, 0, sizeof(resp));
	pthread_mutex_lock(&hw->lock);
	nicsim_put32(h->q.db, h->q.ci & 0xffffff); /* what was taken: the adapter moves the rest */
	int rc = ibv_cmd_resize_cq(&cq->cq, cqe, &cmd, sizeof(cmd), &resp.ibv, sizeof(resp));
	uint8_t *ring = rc ? NULL : kern_map(c, resp.drv.mmap_key, resp.drv.mmap_size);
	if (!rc && !ring)
		rc = ENOMEM;
	if (ring) {
		if (h->ring_len)
			munmap(h->q.ring, h->ring_len);
		h->q.ring = ring;
		h->ring_len = resp.drv.mmap_size;
		h->q.log_size = resp.drv.log_size;
		h->q.ci = 0;
	}
	pthread_mutex_unlock(&hw->lock);
	return rc;
}
