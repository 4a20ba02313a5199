/*
 * The provider on libnicsim (nicsim-hw.h): work requests written as WQEs into a QP's rings in this
 * process's memory, then one doorbell for the list (docs/device.md, "Send queues", "Receive queues").
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <endian.h>

#include "nicsim-hw.h"
#include "nicsim/device.h"

/* The WQE opcode of a work request on a QP of type t, or -1 if that QP cannot post it. */
static int wqe_opcode(enum ibv_wr_opcode op, enum ibv_qp_type t) {
	int sends = op == IBV_WR_SEND || op == IBV_WR_SEND_WITH_IMM;
	if ((t == IBV_QPT_UD && !sends) || t == IBV_QPT_XRC_RECV)
		return -1; /* an XRC target has no send queue */
	if (t == IBV_QPT_XRC_SEND || t == IBV_QPT_DRIVER)
		t = IBV_QPT_RC; /* an XRC or DC initiator is an RC requester (a DC target: refused before) */
	switch (op) {
	case IBV_WR_SEND: return NICSIM_WQE_OP_SEND;
	case IBV_WR_SEND_WITH_IMM: return NICSIM_WQE_OP_SEND_IMM;
	case IBV_WR_RDMA_WRITE: return NICSIM_WQE_OP_RDMA_WRITE;
	case IBV_WR_RDMA_WRITE_WITH_IMM: return NICSIM_WQE_OP_RDMA_WRITE_IMM;
	case IBV_WR_SEND_WITH_INV: return NICSIM_WQE_OP_SEND_INVAL;
	case IBV_WR_LOCAL_INV: return NICSIM_WQE_OP_LOCAL_INVAL;
	case IBV_WR_BIND_MW: return NICSIM_WQE_OP_UMR; /* nicsim's bind: a UMR naming the window */
	case IBV_WR_RDMA_READ: return t == IBV_QPT_RC ? NICSIM_WQE_OP_RDMA_READ : -1;
	case IBV_WR_ATOMIC_CMP_AND_SWP: return t == IBV_QPT_RC ? NICSIM_WQE_OP_ATOMIC_CS : -1;
	case IBV_WR_ATOMIC_FETCH_AND_ADD: return t == IBV_QPT_RC ? NICSIM_WQE_OP_ATOMIC_FA : -1;
	default: return -1;
	}
}

int nicsim_hw_sges(const struct ibv_sge *list, int n, uint32_t max, struct nicsim_sge *out) {
	if (n < 0 || (uint32_t)n > max || n > NICSIM_HW_MAX_SGE)
		return EINVAL;
	for (int i = 0; i < n; i++)
		out[i] = (struct nicsim_sge){list[i].addr, list[i].length, list[i].lkey};
	return 0;
}

/*
 * A window bind: the window's address and new rkey (its index kept), its length, and the MR's lkey
 * with the window's remote access (LOCAL_WRITE, which mlx5 accepts, changes nothing): 0 or EINVAL.
 */
static int bind(const struct ibv_send_wr *wr, struct nicsim_send_wr *s) {
	const struct ibv_mw_bind_info *b = &wr->bind_mw.bind_info;
	int window = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_ZERO_BASED;
	if (!wr->bind_mw.mw || !b->mr || wr->num_sge || (wr->bind_mw.rkey >> 8) != (wr->bind_mw.mw->rkey >> 8) ||
	    (b->mw_access_flags & ~(unsigned)(window | IBV_ACCESS_LOCAL_WRITE)))
		return EINVAL;
	s->remote_addr = b->addr;
	s->rkey = wr->bind_mw.rkey;
	s->swap_add = b->length;
	s->compare = (uint64_t)b->mr->lkey << 32 | (b->mw_access_flags & (unsigned)window);
	return 0;
}

/*
 * wr as the WQE will carry it (sge: room for NICSIM_HW_MAX_SGE; x: what the ibv_wr_* API added, or
 * NULL): 0, or the errno that refuses it. A DC initiator's request names its target (x's DC address:
 * mlx5dv_wr_set_dc_addr); a DC target sends nothing.
 */
static int describe(struct nicsim_ibv_qp *qp, const struct ibv_send_wr *wr, const struct nicsim_wr *x,
		    struct nicsim_send_wr *s, struct nicsim_sge *sge) {
	struct nicsim_hw_qp *h = qp->hw;
	enum ibv_qp_type t = qp->vqp.qp.qp_type;
	int op = wqe_opcode(wr->opcode, t), dci = qp->dc_type == NICSIM_DC_INITIATOR;
	if (op < 0 || qp->dc_type == NICSIM_DC_TARGET || nicsim_hw_sges(wr->sg_list, wr->num_sge, qp->max_send_sge, sge))
		return EINVAL;
	memset(s, 0, sizeof(*s));
	if (dci && op != NICSIM_WQE_OP_LOCAL_INVAL && op != NICSIM_WQE_OP_UMR) {
		if (!x || x->dc.ah == NICSIM_NONE)
			return EINVAL; /* no target: mlx5dv_wr_set_dc_addr was not called */
		s->dlid = x->dc.ah; /* the C driver's AH handle is the LID */
		s->dest_qpn = x->dc.dctn & 0xffffff;
		s->dc_key = x->dc.key;
	}
	s->opcode = (uint32_t)op;
	s->fm_ce_se = (h->sig_all || (wr->send_flags & IBV_SEND_SIGNALED) ? NICSIM_FM_SIGNALED : 0) |
		      (wr->send_flags & IBV_SEND_SOLICITED ? NICSIM_FM_SOLICITED : 0) |
		      (wr->send_flags & IBV_SEND_FENCE && (t == IBV_QPT_RC || t == IBV_QPT_XRC_SEND || dci) ? NICSIM_FM_FENCE : 0);
	if (t == IBV_QPT_XRC_SEND)
		s->xrc_srqn = wr->qp_type.xrc.remote_srqn;
	if (wr->opcode == IBV_WR_SEND_WITH_IMM || wr->opcode == IBV_WR_RDMA_WRITE_WITH_IMM)
		s->imm = wr->imm_data;
	if (wr->opcode == IBV_WR_SEND_WITH_INV || wr->opcode == IBV_WR_LOCAL_INV)
		s->imm = htobe32(wr->invalidate_rkey);
	if (op == NICSIM_WQE_OP_UMR)
		return bind(wr, s);
	if (op == NICSIM_WQE_OP_ATOMIC_CS || op == NICSIM_WQE_OP_ATOMIC_FA) {
		/* an atomic's remote word is aligned, and its result lands in one 8-byte segment (libibverbs' rules) */
		if ((wr->wr.atomic.remote_addr & 7) || wr->num_sge != 1 || wr->sg_list[0].length != 8)
			return EINVAL;
		s->remote_addr = wr->wr.atomic.remote_addr;
		s->rkey = wr->wr.atomic.rkey;
		s->swap_add = op == NICSIM_WQE_OP_ATOMIC_CS ? wr->wr.atomic.swap : wr->wr.atomic.compare_add;
		s->compare = op == NICSIM_WQE_OP_ATOMIC_CS ? wr->wr.atomic.compare_add : 0;
	} else if (t != IBV_QPT_UD) {
		s->remote_addr = wr->wr.rdma.remote_addr;
		s->rkey = wr->wr.rdma.rkey;
	} else {
		if (!wr->wr.ud.ah)
			return EINVAL;
		s->dlid = to_nah(wr->wr.ud.ah)->handle;
		s->grh = to_nah(wr->wr.ud.ah)->is_global;
		memcpy(s->dgid, to_nah(wr->wr.ud.ah)->dgid, 16);
		s->dest_qpn = wr->wr.ud.remote_qpn & 0xffffff;
		s->qkey = wr->wr.ud.remote_qkey;
	}
	uint64_t total = 0;
	for (int i = 0; i < wr->num_sge; i++)
		total += sge[i].len;
	s->sge = sge;
	s->num_sge = wr->num_sge;
	s->inline_data = (wr->send_flags & IBV_SEND_INLINE) != 0;
	if (s->inline_data && total > qp->max_inline)
		return EINVAL;
	return 0;
}

/* A layout UMR (mlx5dv_wr_mr_list, _interleaved) on an RC QP, its WQE put at the head: 0 or an errno. */
static int put_layout(struct nicsim_ibv_qp *qp, const struct ibv_send_wr *wr, const struct nicsim_umr *u, uint8_t *wqe,
		      int *bytes) {
	uint8_t body[NICSIM_WQEBB * NICSIM_MAX_WQEBBS];
	if (qp->vqp.qp.qp_type != IBV_QPT_RC)
		return EINVAL; /* UMRs are posted on RC QPs */
	int n = nicsim_hw_layout(u, body);
	if (n < 0)
		return -n;
	uint32_t fm = qp->hw->sig_all || (wr->send_flags & IBV_SEND_SIGNALED) ? NICSIM_FM_SIGNALED : 0;
	*bytes = nicsim_wqe_put_raw(&qp->hw->q, NICSIM_WQE_OP_UMR, NICSIM_WQE_OPMOD_MKEY_LAYOUT, body, (uint32_t)n, fm,
				    htobe32(u->mkey), wqe);
	return *bytes < 0 ? -*bytes : 0;
}

int nicsim_hw_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr, const struct nicsim_wr *ext,
			struct ibv_send_wr **bad) {
	struct nicsim_ibv_qp *qp = to_nqp(ibqp);
	struct nicsim_hw_qp *h = qp->hw;
	struct nicsim_hw *hw = hw_of(ibqp->context);
	struct nicsim_send_wr s;
	struct nicsim_sge sge[NICSIM_HW_MAX_SGE];
	uint8_t wqe[NICSIM_WQEBB * NICSIM_MAX_WQEBBS];
	int count = 0, bytes = 0, rc = 0;
	if (h->state == IBV_QPS_RESET || h->state == IBV_QPS_INIT || h->state == IBV_QPS_RTR) {
		*bad = wr; /* sends are taken from RTS on, as the Java driver's (the adapter would not run them) */
		return EINVAL;
	}
	nicsim_hw_lock(hw);
	for (int i = 0; wr; wr = wr->next, i++) {
		int layout = ext && ext[i].umr.mkey != NICSIM_NONE;
		uint32_t slot = h->q.sq_head & (h->sq_size - 1);
		if (h->posted - h->retired >= h->max_send_wr)
			rc = ENOMEM;
		else if (layout)
			rc = put_layout(qp, wr, &ext[i].umr, wqe, &bytes);
		else if (!(rc = describe(qp, wr, ext ? &ext[i] : NULL, &s, sge)) && (bytes = nicsim_wqe_put(&h->q, &s, wqe)) < 0)
			rc = -bytes;
		if (rc)
			break;
		h->wrid[slot] = wr->wr_id;
		h->bind[slot] = layout ? (struct nicsim_hw_bind){NULL, 0, 1}
				       : (struct nicsim_hw_bind){s.opcode == NICSIM_WQE_OP_UMR ? wr->bind_mw.mw : NULL, s.rkey, 0};
		h->seq[slot] = h->posted++;
		h->next_head[slot] = h->q.sq_head;
		count++;
	}
	int ring = nicsim_sq_ring(&h->q, count, wqe, bytes);
	pthread_mutex_unlock(&hw->lock);
	if (rc)
		*bad = wr;
	return rc ? rc : ring < 0 ? -ring : 0;
}

int nicsim_hw_post_recv(struct nicsim_ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad) {
	struct nicsim_hw_qp *h = qp->hw;
	struct nicsim_hw *hw = hw_of(qp->vqp.qp.context);
	struct nicsim_sge sge[NICSIM_HW_MAX_SGE];
	int count = 0, rc = 0;
	enum ibv_qp_type t = qp->vqp.qp.qp_type;
	if (t == IBV_QPT_XRC_SEND || t == IBV_QPT_XRC_RECV || t == IBV_QPT_DRIVER || h->state == IBV_QPS_RESET) {
		/* XRC receives go to an XRC SRQ of the target's domain, a DC target's to its SRQ; a DCI receives none;
		 * and a QP in RESET takes none */
		*bad = wr;
		return EINVAL;
	}
	nicsim_hw_lock(hw);
	for (; wr; wr = wr->next) {
		uint32_t capacity = h->max_recv_wr < h->rq_size ? h->max_recv_wr : h->rq_size;
		if (!(rc = nicsim_hw_sges(wr->sg_list, wr->num_sge, qp->max_recv_sge, sge)) &&
		    ((h->q.rq_head - h->rq_tail) & 0xffff) >= capacity)
			rc = ENOMEM;
		if (rc)
			break;
		uint32_t slot = h->q.rq_head & (h->rq_size - 1);
		if ((rc = -nicsim_recv_put(&h->q, sge, wr->num_sge)))
			break;
		h->rwrid[slot] = wr->wr_id;
		count++;
	}
	if (count)
		nicsim_rq_publish(&h->q);
	pthread_mutex_unlock(&hw->lock);
	if (rc)
		*bad = wr;
	return rc;
}
