/*
 * The kern back end's QPs (nicsim-kern.c): CREATE_QP and MODIFY_QP through the kernel driver, the
 * rings mapped by the key its udata returns, multicast by ATTACH_MCAST and DETACH_MCAST; posted to by
 * the hw back end's code.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "nicsim-kern.h"

int nicsim_kern_create_qp(struct ibv_context *c, struct ibv_pd *pd, struct ibv_xrcd *xrcd,
			  struct ibv_qp_init_attr *init, uint32_t dc_type, uint64_t dct_key, struct nicsim_ibv_qp *qp) {
	struct nicsim_hw *hw = to_nctx(c)->hw;
	enum ibv_qp_type t = init->qp_type;
	struct ibv_create_qp cmd;
	struct { struct ib_uverbs_create_qp_resp ibv; struct nicsim_ibv_create_qp_resp drv; } resp;
	(void)dct_key;
	if (xrcd || dc_type || (t != IBV_QPT_RC && t != IBV_QPT_UC && t != IBV_QPT_UD))
		return EOPNOTSUPP; /* XRC and DC: not through the kernel driver yet */
	if (!pd || !init->send_cq || !init->recv_cq || !to_ncq(init->send_cq)->hw || !to_ncq(init->recv_cq)->hw ||
	    (init->srq && !to_nsrq(init->srq)->hw))
		return EINVAL;
	memset(&resp, 0, sizeof(resp));
	int rc = ibv_cmd_create_qp(pd, &qp->vqp.qp, init, &cmd, sizeof(cmd), &resp.ibv, sizeof(resp));
	if (rc)
		return rc;
	struct nicsim_hw_qp *h = nicsim_hw_qp_alloc(1u << resp.drv.sq_log_size, 1u << resp.drv.rq_log_size);
	uint8_t *m = h ? kern_map(c, resp.drv.mmap_key, resp.drv.mmap_size) : NULL;
	pthread_mutex_lock(&hw->lock);
	rc = !h || !m ? ENOMEM : nicsim_hw_know_qp(hw, qp);
	pthread_mutex_unlock(&hw->lock);
	if (rc) {
		if (m)
			munmap(m, resp.drv.mmap_size);
		if (h)
			nicsim_hw_qp_free(h);
		ibv_cmd_destroy_qp(&qp->vqp.qp);
		return rc;
	}
	h->map = m;
	h->map_len = resp.drv.mmap_size;
	h->q.qpn = resp.drv.qpn;
	h->q.uar = resp.drv.uar;
	h->q.type = (uint32_t)t;
	h->q.log_sq = resp.drv.sq_log_size;
	h->q.log_rq = resp.drv.rq_log_size;
	h->q.log_stride = resp.drv.rq_stride_log;
	h->q.sq = m + resp.drv.sq_offset;
	h->q.rq = m + resp.drv.rq_offset;
	h->q.db = m + resp.drv.dbrec_offset;
	h->q.uar_map = kern_of(c)->uar_map;
	h->max_send_wr = init->cap.max_send_wr; /* as the kernel gave them back */
	h->max_recv_wr = init->cap.max_recv_wr;
	h->sig_all = init->sq_sig_all != 0;
	h->state = IBV_QPS_RESET;
	qp->hw = h;
	qp->handle = qp->vqp.qp.handle;
	qp->max_send_sge = init->cap.max_send_sge;
	qp->max_recv_sge = init->cap.max_recv_sge;
	qp->max_inline = init->cap.max_inline_data;
	return 0;
}

int nicsim_kern_destroy_qp(struct nicsim_ibv_qp *qp) {
	struct nicsim_hw *hw = to_nctx(qp->vqp.qp.context)->hw;
	int rc = ibv_cmd_destroy_qp(&qp->vqp.qp);
	if (rc)
		return rc;
	pthread_mutex_lock(&hw->lock);
	nicsim_hw_forget_qp(hw, qp);
	pthread_mutex_unlock(&hw->lock);
	munmap(qp->hw->map, qp->hw->map_len);
	nicsim_hw_qp_free(qp->hw);
	qp->hw = NULL;
	return 0;
}

int nicsim_kern_modify_qp(struct nicsim_ibv_qp *qp, struct ibv_qp_attr *attr, int mask) {
	struct nicsim_hw *hw = to_nctx(qp->vqp.qp.context)->hw;
	struct ibv_modify_qp cmd;
	int rc = ibv_cmd_modify_qp(&qp->vqp.qp, attr, mask, &cmd, sizeof(cmd));
	if (rc || !(mask & IBV_QP_STATE))
		return rc;
	pthread_mutex_lock(&hw->lock);
	nicsim_hw_qp_moved(qp, attr->qp_state);
	pthread_mutex_unlock(&hw->lock);
	return 0;
}

int nicsim_kern_query_qp(struct nicsim_ibv_qp *qp, struct ibv_qp_attr *attr, int mask,
			 struct ibv_qp_init_attr *init) {
	struct ibv_query_qp cmd;
	struct ibv_qp_init_attr ignored;
	return ibv_cmd_query_qp(&qp->vqp.qp, attr, mask, init ? init : &ignored, &cmd, sizeof(cmd));
}

/* ibv_attach_mcast / ibv_detach_mcast: the kernel driver's attach_mcast / detach_mcast (uverbs). */
int nicsim_kern_mcast(struct nicsim_ibv_qp *qp, const union ibv_gid *gid, uint16_t lid, int attach) {
	return attach ? ibv_cmd_attach_mcast(&qp->vqp.qp, gid, lid) : ibv_cmd_detach_mcast(&qp->vqp.qp, gid, lid);
}
