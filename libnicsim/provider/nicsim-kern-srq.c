/*
 * The kern back end's SRQs (nicsim-kern.c): basic ones, made through the kernel driver and mapped by
 * the key its udata returns; their receives are posted by the hw back end's code (nicsim-hw-srq.c).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "nicsim-kern.h"

int nicsim_kern_create_srq(struct ibv_pd *pd, struct ibv_srq_attr *attr, enum ibv_srq_type type, struct ibv_xrcd *xrcd,
			   struct ibv_cq *cq, const struct ibv_tm_cap *tm, struct nicsim_ibv_srq *srq) {
	struct nicsim_hw *hw = to_nctx(pd->context)->hw;
	struct ibv_srq_init_attr init = {.srq_context = srq->vsrq.srq.srq_context, .attr = *attr};
	struct ibv_create_srq cmd;
	struct { struct ib_uverbs_create_srq_resp ibv; struct nicsim_ibv_create_srq_resp drv; } resp;
	(void)xrcd; (void)cq; (void)tm;
	if (type != IBV_SRQT_BASIC)
		return EOPNOTSUPP; /* XRC and tag-matching SRQs: not through the kernel driver yet */
	struct nicsim_hw_srq *h = calloc(1, sizeof(*h));
	if (!h)
		return ENOMEM;
	memset(&resp, 0, sizeof(resp));
	int rc = ibv_cmd_create_srq(pd, &srq->vsrq.srq, &init, &cmd, sizeof(cmd), &resp.ibv, sizeof(resp));
	if (rc) { free(h); return rc; }
	*attr = init.attr; /* as the kernel gave it back */
	h->size = 1u << resp.drv.log_size;
	h->max_wr = attr->max_wr < h->size ? attr->max_wr : h->size;
	h->wrid = calloc(h->size, sizeof(*h->wrid));
	uint8_t *ring = h->wrid ? kern_map(pd->context, resp.drv.mmap_key, resp.drv.mmap_size) : NULL;
	pthread_mutex_lock(&hw->lock);
	struct nicsim_ibv_srq **grown = ring ? realloc(hw->srqs, (hw->nsrqs + 1) * sizeof(*grown)) : NULL;
	if (grown) {
		hw->srqs = grown;
		hw->srqs[hw->nsrqs++] = srq;
	}
	pthread_mutex_unlock(&hw->lock);
	if (!grown) {
		if (ring)
			munmap(ring, resp.drv.mmap_size);
		ibv_cmd_destroy_srq(&srq->vsrq.srq);
		free(h->wrid); free(h);
		return ENOMEM;
	}
	h->map_len = resp.drv.mmap_size;
	h->q.srqn = resp.drv.srqn;
	h->q.log_size = resp.drv.log_size;
	h->q.log_stride = resp.drv.stride_log;
	h->q.ring = ring;
	h->q.db = ring + resp.drv.dbrec_offset;
	srq->hw = h;
	srq->handle = h->q.srqn; /* the SRQ's number, as CQEs and events name it; srq.handle is the kernel's */
	srq->max_sge = attr->max_sge;
	srq->vsrq.srq_num = h->q.srqn;
	return 0;
}

int nicsim_kern_destroy_srq(struct nicsim_ibv_srq *srq) {
	struct nicsim_hw *hw = to_nctx(srq->vsrq.srq.context)->hw;
	int rc = ibv_cmd_destroy_srq(&srq->vsrq.srq);
	if (rc)
		return rc;
	pthread_mutex_lock(&hw->lock);
	for (uint32_t i = 0; i < hw->nsrqs; i++)
		if (hw->srqs[i] == srq) {
			hw->srqs[i] = hw->srqs[--hw->nsrqs];
			break;
		}
	pthread_mutex_unlock(&hw->lock);
	munmap(srq->hw->q.ring, srq->hw->map_len);
	free(srq->hw->wrid);
	free(srq->hw);
	srq->hw = NULL;
	return 0;
}

/* The limit (the driver's ARM_SRQ); an SRQ is not resized. */
int nicsim_kern_modify_srq(struct nicsim_ibv_srq *srq, struct ibv_srq_attr *attr, int mask) {
	struct ibv_modify_srq cmd;
	return ibv_cmd_modify_srq(&srq->vsrq.srq, attr, mask, &cmd, sizeof(cmd));
}

int nicsim_kern_query_srq(struct nicsim_ibv_srq *srq, struct ibv_srq_attr *attr) {
	struct ibv_query_srq cmd;
	return ibv_cmd_query_srq(&srq->vsrq.srq, attr, &cmd, sizeof(cmd));
}
