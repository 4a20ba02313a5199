/*
 * The provider on libnicsim (nicsim-hw.h): QPs made and moved by the device's commands, and work
 * requests written as WQEs into their rings, rung as mlx5 rings them (docs/device.md).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <endian.h>

#include "nicsim-hw.h"
#include "nicsim/device.h"

void nicsim_hw_qp_free(struct nicsim_hw_qp *h) {
	free(h->wrid);
	free(h->bind);
	free(h->rwrid);
	free(h->next_head);
	free(h->seq);
	free(h);
}

struct nicsim_hw_qp *nicsim_hw_qp_alloc(uint32_t sq_size, uint32_t rq_size) {
	struct nicsim_hw_qp *h = calloc(1, sizeof(*h));
	if (!h)
		return NULL;
	h->sq_size = sq_size;
	h->rq_size = rq_size;
	h->wrid = calloc(sq_size, sizeof(*h->wrid));
	h->bind = calloc(sq_size, sizeof(*h->bind));
	h->rwrid = calloc(rq_size, sizeof(*h->rwrid));
	h->next_head = calloc(sq_size, sizeof(*h->next_head));
	h->seq = calloc(sq_size, sizeof(*h->seq));
	if (!h->wrid || !h->bind || !h->rwrid || !h->next_head || !h->seq) {
		nicsim_hw_qp_free(h);
		return NULL;
	}
	return h;
}

int nicsim_hw_know_qp(struct nicsim_hw *hw, struct nicsim_ibv_qp *qp) {
	struct nicsim_ibv_qp **grown = realloc(hw->qps, (hw->nqps + 1) * sizeof(*grown));
	if (!grown)
		return ENOMEM;
	hw->qps = grown;
	hw->qps[hw->nqps++] = qp;
	return 0;
}

void nicsim_hw_forget_qp(struct nicsim_hw *hw, struct nicsim_ibv_qp *qp) {
	for (uint32_t i = 0; i < hw->nqps; i++)
		if (hw->qps[i] == qp) {
			hw->qps[i] = hw->qps[--hw->nqps];
			break;
		}
}

/*
 * Whether init names the PD or domain, CQs and SRQ a QP of its type needs (and nothing an XRC or DC
 * QP may not have): a DC target (DRIVER, dc_type 1) takes its receives from an SRQ and completes
 * them to its receive CQ; a DC initiator (dc_type 2) only sends.
 */
static int well_formed(struct ibv_pd *pd, struct ibv_xrcd *xrcd, const struct ibv_qp_init_attr *init, uint32_t dc) {
	enum ibv_qp_type t = init->qp_type;
	int target = t == IBV_QPT_XRC_RECV, xrc = target || t == IBV_QPT_XRC_SEND;
	if (target ? !xrcd || pd : !pd)
		return 0; /* an XRC target has its domain and no PD; every other QP a PD */
	if ((t == IBV_QPT_DRIVER) != (dc == NICSIM_DC_TARGET || dc == NICSIM_DC_INITIATOR))
		return 0;
	if (dc == NICSIM_DC_TARGET)
		return init->srq && init->recv_cq && to_ncq(init->recv_cq)->hw;
	if ((xrc || dc) && init->srq)
		return 0; /* an XRC SRQ is named by each request, not attached; a DC initiator receives nothing */
	if (!target && (!init->send_cq || !to_ncq(init->send_cq)->hw))
		return 0;
	return xrc || dc || (init->recv_cq && to_ncq(init->recv_cq)->hw);
}

/*
 * An RC, UC, UD, XRC or DC QP on rings sized as the Java driver sizes them (its largest WQE times
 * max_send_wr WQEBBs, rounded up; receives of max_recv_sge segments): 0 or an errno. An XRC
 * target (XRC_RECV) has no PD, CQs or queues of its own, only its domain; an XRC initiator
 * (XRC_SEND) and a DC initiator receive nothing; a DC target sends nothing (dct_key: its key).
 */
int nicsim_hw_create_qp(struct ibv_context *c, struct ibv_pd *pd, struct ibv_xrcd *xrcd, struct ibv_qp_init_attr *init,
			uint32_t dc_type, uint64_t dct_key, struct nicsim_ibv_qp *qp) {
	struct nicsim_hw *hw = hw_of(c);
	const struct nicsim_caps *caps = nicsim_caps(hw->dev);
	struct ibv_qp_cap *cap = &init->cap;
	enum ibv_qp_type t = init->qp_type;
	int target = t == IBV_QPT_XRC_RECV, initiator = t == IBV_QPT_XRC_SEND;
	int dct = dc_type == NICSIM_DC_TARGET, dci = dc_type == NICSIM_DC_INITIATOR;
	if ((t != IBV_QPT_RC && t != IBV_QPT_UC && t != IBV_QPT_UD && !target && !initiator && t != IBV_QPT_DRIVER) ||
	    (init->srq && !to_nsrq(init->srq)->hw))
		return EOPNOTSUPP; /* raw packet QPs: not offered */
	if (!well_formed(pd, xrcd, init, dc_type))
		return EINVAL;
	if (target || dct)
		memset(cap, 0, sizeof(*cap));
	if (initiator || dci)
		cap->max_recv_wr = cap->max_recv_sge = 0;
	if (cap->max_send_wr < 1 && !target && !dct)
		cap->max_send_wr = 1; /* a QP that only receives still has a send queue: of one WQE, as serve's Java path */
	if (cap->max_send_wr > caps->max_qp_wr || cap->max_recv_wr > caps->max_qp_wr ||
	    cap->max_send_sge > caps->max_sge || cap->max_recv_sge > caps->max_sge || cap->max_inline_data > caps->max_inline)
		return EINVAL;
	uint32_t send_sge = cap->max_send_sge ? cap->max_send_sge : 1, recv_sge = cap->max_recv_sge ? cap->max_recv_sge : 1;
	const uint32_t unit = NICSIM_WQE_DS_UNIT;
	uint32_t data = send_sge * unit;
	uint32_t inl = (cap->max_inline_data + NICSIM_WQE_INLINE_SEG_DATA + unit - 1) / unit * unit;
	uint32_t body = data > inl ? data : inl;
	/* the control segment; a UD WQE's address vector, or the remote-address and atomic segments; an XRC
	 * initiator's XRC segment; a DC initiator's address vector */
	uint32_t overhead = NICSIM_WQE_CTRL_SEG_BYTES + (t == IBV_QPT_UD ? NICSIM_AV_BYTES : 2 * unit) +
			    (initiator ? unit : 0) + (dci ? NICSIM_AV_BYTES : 0);
	/* a send WQE's slot is at least NICSIM_MIN_SEND_WQEBBS, as the Java driver's: programs written against
	 * mlx5 post a few bytes inline on a QP that asked for none (rdma_xclient's 16; see WqeLayout) */
	uint32_t need = (overhead + body + NICSIM_WQEBB - 1) / NICSIM_WQEBB;
	uint32_t bbs = need > NICSIM_MIN_SEND_WQEBBS ? need : NICSIM_MIN_SEND_WQEBBS;
	struct nicsim_hw_qp *h = nicsim_hw_qp_alloc(
		nicsim_pow2_at_least(cap->max_send_wr * bbs > 2 ? cap->max_send_wr * bbs : 2),
		cap->max_recv_wr ? nicsim_pow2_at_least(cap->max_recv_wr) : 1);
	if (!h)
		return ENOMEM;
	h->max_send_wr = cap->max_send_wr;
	h->max_recv_wr = cap->max_recv_wr;
	h->sig_all = init->sq_sig_all != 0;
	struct nicsim_qp_init q = {
		.type = (uint32_t)t, .pd = target ? to_nxrcd(xrcd)->xrcdn : to_npd(pd)->handle,
		.send_cqn = target || dct ? 0 : to_ncq(init->send_cq)->hw->q.cqn,
		.recv_cqn = init->recv_cq && !target && !initiator && !dci ? to_ncq(init->recv_cq)->hw->q.cqn : 0,
		.uar = hw->uar, .log_sq = nicsim_log2(h->sq_size),
		.log_rq = nicsim_log2(h->rq_size), .log_stride = nicsim_recv_stride_log(recv_sge),
		.flags = h->sig_all ? 1 : 0, .srqn = init->srq ? to_nsrq(init->srq)->hw->q.srqn : 0,
		.dc_type = dc_type, .dct_key = dct_key};
	nicsim_hw_lock(hw);
	int rc = nicsim_qp_create_ex(hw->dev, &q, &h->q);
	if (!rc && nicsim_hw_know_qp(hw, qp)) {
		nicsim_qp_destroy(&h->q);
		rc = -ENOMEM;
	}
	pthread_mutex_unlock(&hw->lock);
	if (rc) {
		nicsim_hw_qp_free(h);
		return nicsim_hw_errno("CREATE_QP", rc);
	}
	qp->hw = h;
	qp->handle = h->q.qpn;
	qp->vqp.qp.qp_num = h->q.qpn;
	qp->max_send_sge = cap->max_send_sge;
	qp->max_recv_sge = cap->max_recv_sge;
	/* as mlx5: the inline data a WQE of this size holds (at least what was asked, at most the device's limit) */
	uint32_t room = bbs * NICSIM_WQEBB - overhead - NICSIM_WQE_INLINE_SEG_DATA;
	qp->max_inline = target || dct ? 0 : room < caps->max_inline ? room : caps->max_inline;
	cap->max_inline_data = qp->max_inline;
	return 0;
}

/* The MGID's halves as the command's words take them (big-endian, as the GID's bytes are). */
int nicsim_hw_mcast(struct nicsim_ibv_qp *qp, const union ibv_gid *gid, uint16_t lid, int attach) {
	uint64_t in[NICSIM_ATTACH_MCAST_IN_WORDS];
	(void)lid; /* the adapter keys a group by its MGID, as mlx5's ATTACH_TO_MCG */
	in[NICSIM_ATTACH_MCAST_IN_QPN] = qp->vqp.qp.qp_num;
	in[NICSIM_ATTACH_MCAST_IN_GID_HI] = be64toh(gid->global.subnet_prefix);
	in[NICSIM_ATTACH_MCAST_IN_GID_LO] = be64toh(gid->global.interface_id);
	return nicsim_hw_cmd(hw_of(qp->vqp.qp.context), attach ? NICSIM_CMD_ATTACH_MCAST : NICSIM_CMD_DETACH_MCAST, in,
			     NICSIM_ATTACH_MCAST_IN_WORDS, NULL, 0);
}

int nicsim_hw_destroy_qp(struct nicsim_ibv_qp *qp) {
	struct nicsim_hw *hw = hw_of(qp->vqp.qp.context);
	nicsim_hw_lock(hw);
	int rc = nicsim_qp_destroy(&qp->hw->q);
	if (!rc)
		nicsim_hw_forget_qp(hw, qp);
	pthread_mutex_unlock(&hw->lock);
	if (rc)
		return nicsim_hw_errno("DESTROY_QP", rc);
	nicsim_hw_qp_free(qp->hw);
	qp->hw = NULL;
	return 0;
}

/* A reset QP's completions not yet polled leave its CQs (an SRQ's receives among them are used up). */
static void clean(struct nicsim_ibv_qp *qp) {
	struct ibv_qp *q = &qp->vqp.qp;
	int rx = 0, more = 0;
	if (q->send_cq && to_ncq(q->send_cq)->hw)
		nicsim_cq_clean(&to_ncq(q->send_cq)->hw->q, qp->hw->q.qpn, &rx);
	if (q->recv_cq && q->recv_cq != q->send_cq && to_ncq(q->recv_cq)->hw)
		nicsim_cq_clean(&to_ncq(q->recv_cq)->hw->q, qp->hw->q.qpn, &more);
	if (q->srq && to_nsrq(q->srq)->hw)
		to_nsrq(q->srq)->hw->tail += (uint32_t)(rx + more);
}

void nicsim_hw_qp_moved(struct nicsim_ibv_qp *qp, enum ibv_qp_state s) {
	struct nicsim_hw_qp *h = qp->hw;
	h->state = s;
	if (s == IBV_QPS_RESET) { /* the rings start over, its completions not yet polled go */
		h->q.sq_head = h->q.rq_head = h->rq_tail = 0;
		h->posted = h->retired = 0;
		memset(h->q.db, 0, 8);
		clean(qp);
	}
}

/* MODIFY_QP with libibverbs' mask (the command's numbers are libibverbs'); the state is kept for the next. */
int nicsim_hw_modify_qp(struct nicsim_ibv_qp *qp, struct ibv_qp_attr *a, int mask) {
	struct nicsim_hw *hw = hw_of(qp->vqp.qp.context);
	struct nicsim_hw_qp *h = qp->hw;
	uint64_t in[NICSIM_MODIFY_QP_IN_WORDS] = {0};
	in[NICSIM_MODIFY_QP_IN_QPN] = h->q.qpn;
	in[NICSIM_MODIFY_QP_IN_MASK] = (uint32_t)mask;
	in[NICSIM_MODIFY_QP_IN_CUR_STATE] = (mask & IBV_QP_CUR_STATE) ? a->cur_qp_state : h->state;
	in[NICSIM_MODIFY_QP_IN_STATE] = (mask & IBV_QP_STATE) ? a->qp_state : h->state;
	/* only the fields the mask names: the others may be anything in the caller's struct */
#define FIELD(bit, word, value) do { if (mask & (bit)) in[word] = (value); } while (0)
	FIELD(IBV_QP_ACCESS_FLAGS, NICSIM_MODIFY_QP_IN_ACCESS, a->qp_access_flags);
	FIELD(IBV_QP_QKEY, NICSIM_MODIFY_QP_IN_QKEY, a->qkey);
	FIELD(IBV_QP_PATH_MTU, NICSIM_MODIFY_QP_IN_PATH_MTU, a->path_mtu);
	FIELD(IBV_QP_DEST_QPN, NICSIM_MODIFY_QP_IN_DEST_QPN, a->dest_qp_num & 0xffffff);
	FIELD(IBV_QP_RQ_PSN, NICSIM_MODIFY_QP_IN_RQ_PSN, a->rq_psn & 0xffffff);
	FIELD(IBV_QP_SQ_PSN, NICSIM_MODIFY_QP_IN_SQ_PSN, a->sq_psn & 0xffffff);
	FIELD(IBV_QP_AV, NICSIM_MODIFY_QP_IN_DLID, a->ah_attr.dlid);
	FIELD(IBV_QP_TIMEOUT, NICSIM_MODIFY_QP_IN_TIMEOUT, a->timeout);
	FIELD(IBV_QP_RETRY_CNT, NICSIM_MODIFY_QP_IN_RETRY_CNT, a->retry_cnt);
	FIELD(IBV_QP_RNR_RETRY, NICSIM_MODIFY_QP_IN_RNR_RETRY, a->rnr_retry);
	FIELD(IBV_QP_MIN_RNR_TIMER, NICSIM_MODIFY_QP_IN_MIN_RNR_TIMER, a->min_rnr_timer);
	FIELD(IBV_QP_MAX_QP_RD_ATOMIC, NICSIM_MODIFY_QP_IN_MAX_RD_ATOMIC, a->max_rd_atomic);
	FIELD(IBV_QP_MAX_DEST_RD_ATOMIC, NICSIM_MODIFY_QP_IN_MAX_DEST_RD_ATOMIC, a->max_dest_rd_atomic);
	FIELD(IBV_QP_PORT, NICSIM_MODIFY_QP_IN_PORT, a->port_num);
	FIELD(IBV_QP_PKEY_INDEX, NICSIM_MODIFY_QP_IN_PKEY_INDEX, a->pkey_index);
	FIELD(IBV_QP_EN_SQD_ASYNC_NOTIFY, NICSIM_MODIFY_QP_IN_SQ_DRAINING, a->en_sqd_async_notify);
#undef FIELD
	uint32_t syndrome = 0;
	nicsim_hw_lock(hw);
	int st = nicsim_cmd(hw->dev, NICSIM_CMD_MODIFY_QP, in, NICSIM_MODIFY_QP_IN_WORDS, NULL, 0, &syndrome);
	if (st == 0 && (mask & IBV_QP_STATE))
		nicsim_hw_qp_moved(qp, a->qp_state);
	pthread_mutex_unlock(&hw->lock);
	if (st < 0)
		return -st;
	if (st > 0 && nicsim_hw_verbose())
		fprintf(stderr, "nicsim: MODIFY_QP of QP 0x%x to state %d refused by the adapter (syndrome %s)\n", h->q.qpn,
			a->qp_state, nicsim_syndrome_name(syndrome));
	return st > 0 ? nicsim_status_errno(st) : 0;
}

/* QUERY_QP answers every attribute: mask asks for nothing less. */
int nicsim_hw_query_qp(struct nicsim_ibv_qp *qp, struct ibv_qp_attr *a, int mask, struct ibv_qp_init_attr *init) {
	(void)mask;
	struct nicsim_hw *hw = hw_of(qp->vqp.qp.context);
	struct nicsim_hw_qp *h = qp->hw;
	uint64_t in = h->q.qpn, o[NICSIM_QUERY_QP_OUT_WORDS];
	int rc = nicsim_hw_cmd(hw, NICSIM_CMD_QUERY_QP, &in, 1, o, NICSIM_QUERY_QP_OUT_WORDS);
	if (rc)
		return rc;
	memset(a, 0, sizeof(*a));
	a->qp_state = a->cur_qp_state = (enum ibv_qp_state)o[NICSIM_QUERY_QP_OUT_STATE];
	h->state = a->qp_state;
	a->qp_access_flags = (unsigned)o[NICSIM_QUERY_QP_OUT_ACCESS];
	a->qkey = (uint32_t)o[NICSIM_QUERY_QP_OUT_QKEY];
	a->path_mtu = (enum ibv_mtu)o[NICSIM_QUERY_QP_OUT_PATH_MTU];
	a->dest_qp_num = (uint32_t)o[NICSIM_QUERY_QP_OUT_DEST_QPN];
	a->rq_psn = (uint32_t)o[NICSIM_QUERY_QP_OUT_RQ_PSN];
	a->sq_psn = (uint32_t)o[NICSIM_QUERY_QP_OUT_SQ_PSN];
	a->ah_attr.dlid = (uint16_t)o[NICSIM_QUERY_QP_OUT_DLID];
	a->ah_attr.port_num = (uint8_t)o[NICSIM_QUERY_QP_OUT_PORT];
	a->timeout = (uint8_t)o[NICSIM_QUERY_QP_OUT_TIMEOUT];
	a->retry_cnt = (uint8_t)o[NICSIM_QUERY_QP_OUT_RETRY_CNT];
	a->rnr_retry = (uint8_t)o[NICSIM_QUERY_QP_OUT_RNR_RETRY];
	a->min_rnr_timer = (uint8_t)o[NICSIM_QUERY_QP_OUT_MIN_RNR_TIMER];
	a->max_rd_atomic = (uint8_t)o[NICSIM_QUERY_QP_OUT_MAX_RD_ATOMIC];
	a->max_dest_rd_atomic = (uint8_t)o[NICSIM_QUERY_QP_OUT_MAX_DEST_RD_ATOMIC];
	a->pkey_index = (uint16_t)o[NICSIM_QUERY_QP_OUT_PKEY_INDEX];
	a->sq_draining = (uint8_t)o[NICSIM_QUERY_QP_OUT_SQ_DRAINING];
	a->port_num = a->ah_attr.port_num;
	a->cap.max_send_wr = h->max_send_wr;
	a->cap.max_recv_wr = h->max_recv_wr;
	a->cap.max_send_sge = qp->max_send_sge;
	a->cap.max_recv_sge = qp->max_recv_sge;
	a->cap.max_inline_data = qp->max_inline;
	if (init) {
		struct ibv_qp *q = &qp->vqp.qp;
		memset(init, 0, sizeof(*init));
		init->qp_context = q->qp_context;
		init->send_cq = q->send_cq;
		init->recv_cq = q->recv_cq;
		init->qp_type = q->qp_type;
		init->cap = a->cap;
		init->sq_sig_all = (int)h->sig_all;
	}
	return 0;
}
