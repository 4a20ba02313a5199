/*
 * The hw back end's table (nicsim-backend.h) and its own verbs: PDs by the device's commands, AHs
 * kept in the program, the objects its events name; its MRs and windows are nicsim-hw-mr.c's,
 * device memory nicsim-hw-dm.c's, CQs nicsim-hw-cq.c's, QPs and posting nicsim-hw-qp.c's and
 * nicsim-hw-post.c's, SRQs and XRC domains nicsim-hw-srq.c's (tag matching: nicsim-hw-tm.c).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "nicsim-hw.h"
#include "nicsim/device.h"

/* The QP or SRQ of the number an adapter's event names (under ctx->named.lock, as the java back end's). */
struct ibv_qp *nicsim_hw_event_qp(struct nicsim_context *ctx, uint32_t qpn) {
	nicsim_hw_lock(ctx->hw);
	struct nicsim_ibv_qp *qp = nicsim_hw_qp(ctx->hw, qpn);
	pthread_mutex_unlock(&ctx->hw->lock);
	return qp ? &qp->vqp.qp : NULL;
}

struct ibv_srq *nicsim_hw_event_srq(struct nicsim_context *ctx, uint32_t srqn) {
	nicsim_hw_lock(ctx->hw);
	struct nicsim_ibv_srq *srq = nicsim_hw_srq(ctx->hw, srqn);
	pthread_mutex_unlock(&ctx->hw->lock);
	return srq ? &srq->vsrq.srq : NULL;
}

/* ---- protection domains (MRs: nicsim-hw-mr.c) ---- */

static struct ibv_pd *alloc_pd(struct ibv_context *c) {
	struct nicsim_hw *hw = hw_of(c);
	struct nicsim_ibv_pd *pd = calloc(1, sizeof(*pd));
	if (!pd) { errno = ENOMEM; return NULL; }
	nicsim_hw_lock(hw);
	int rc = nicsim_alloc_pd(hw->dev, &pd->handle);
	pthread_mutex_unlock(&hw->lock);
	if (rc) { free(pd); errno = nicsim_hw_errno("ALLOC_PD", rc); return NULL; }
	pd->pd.handle = pd->handle;
	atomic_init(&pd->refcount, 1);
	return &pd->pd;
}

/* A parent domain is freed in the program; a PD a parent domain contains is EBUSY (as mlx5's). */
static int dealloc_pd(struct ibv_pd *pd) {
	struct nicsim_hw *hw = hw_of(pd->context);
	struct nicsim_ibv_pd *parent = nicsim_parent_domain(pd);
	if (parent) return nicsim_dealloc_parent_domain(parent);
	if (atomic_load(&to_npd(pd)->refcount) > 1) return EBUSY;
	int rc = nicsim_hw_destroy(hw, NICSIM_CMD_DEALLOC_PD, to_npd(pd)->handle, "DEALLOC_PD");
	if (rc) return rc;
	free(to_npd(pd));
	return 0;
}

/* ---- address handles: the address vector a UD WQE carries, kept in the program ---- */

static struct ibv_ah *create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr) {
	struct nicsim_ibv_ah *ah = calloc(1, sizeof(*ah));
	(void)pd;
	if (!ah) { errno = ENOMEM; return NULL; }
	ah->handle = attr->dlid;
	ah->is_global = attr->is_global;
	memcpy(ah->dgid, attr->grh.dgid.raw, 16);
	return &ah->ah;
}

static int destroy_ah(struct ibv_ah *ah) {
	free(to_nah(ah));
	return 0;
}

static struct ibv_pd *import_pd(struct ibv_context *c, uint32_t handle) {
	uint64_t length;
	int rc = nicsim_hw_import(c, NICSIM_CMD_DEALLOC_PD, handle, &length);
	if (rc) { errno = rc; return NULL; }
	return nicsim_imported_pd(c, handle);
}

static const struct verbs_context_ops hw_verbs = {
	.advise_mr = nicsim_hw_advise_mr,
	.alloc_dm = nicsim_hw_alloc_dm,
	.alloc_mw = nicsim_hw_alloc_mw,
	.alloc_pd = alloc_pd,
	.create_ah = create_ah,
	.dealloc_mw = nicsim_hw_dealloc_mw,
	.dealloc_pd = dealloc_pd,
	.dereg_mr = nicsim_hw_dereg_mr,
	.destroy_ah = destroy_ah,
	.free_dm = nicsim_hw_free_dm,
	.import_dm = nicsim_hw_import_dm,
	.import_mr = nicsim_hw_import_mr,
	.import_pd = import_pd,
	.reg_dm_mr = nicsim_hw_reg_dm_mr,
	.reg_mr = nicsim_hw_reg_mr,
	.rereg_mr = nicsim_hw_rereg_mr,
	.unimport_dm = nicsim_hw_unimport_dm,
	.unimport_mr = nicsim_unimport_mr,
	.unimport_pd = nicsim_unimport_pd,
};

const struct nicsim_backend_ops nicsim_hw_backend = {
	.create_cq = nicsim_hw_create_cq,
	.destroy_cq = nicsim_hw_destroy_cq,
	.resize_cq = nicsim_hw_resize_cq,
	.poll_cq = nicsim_hw_poll,
	.req_notify_cq = nicsim_hw_req_notify_cq,
	.cq_event_taken = nicsim_hw_cq_event,
	.create_qp = nicsim_hw_create_qp,
	.destroy_qp = nicsim_hw_destroy_qp,
	.modify_qp = nicsim_hw_modify_qp,
	.query_qp = nicsim_hw_query_qp,
	.post_send = nicsim_hw_post_send,
	.post_recv = nicsim_hw_post_recv,
	.post_srq_recv = nicsim_hw_post_srq_recv,
	.mcast = nicsim_hw_mcast,
	.create_srq = nicsim_hw_create_srq,
	.destroy_srq = nicsim_hw_destroy_srq,
	.modify_srq = nicsim_hw_modify_srq,
	.query_srq = nicsim_hw_query_srq,
	.post_srq_ops = nicsim_hw_post_srq_ops,
	.open_xrcd = nicsim_hw_open_xrcd,
	.close_xrcd = nicsim_hw_close_xrcd,
	.create_mkey = nicsim_hw_create_mkey,
	.destroy_mkey = nicsim_hw_destroy_mkey,
	.event_qp = nicsim_hw_event_qp,
	.event_srq = nicsim_hw_event_srq,
	.verbs = &hw_verbs,
};
