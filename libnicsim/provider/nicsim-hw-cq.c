/*
 * The provider on libnicsim (nicsim-hw.h): CQs made by the device's commands, their completions
 * polled from the CQ's ring in this process's memory by the owner bit. These are the hw back end's
 * half of nicsim-cq.c's verbs (nicsim-backend.h); the kern back end polls its rings here too.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <endian.h>

#include "nicsim-hw.h"
#include "nicsim/device.h"

/* Simulated time a poll that found nothing lets pass at most before it looks again (the simulator answers sooner). */
#define POLL_WAIT_PS (1ull << 62)

struct nicsim_ibv_cq *nicsim_hw_create_cq(struct ibv_context *c, int cqe, struct ibv_comp_channel *channel) {
	struct nicsim_hw *hw = hw_of(c);
	const struct nicsim_caps *caps = nicsim_caps(hw->dev);
	if (cqe < 1 || (uint32_t)cqe > caps->max_cqe) {
		errno = EINVAL;
		return NULL;
	}
	struct nicsim_ibv_cq *cq = calloc(1, sizeof(*cq));
	struct nicsim_hw_cq *h = calloc(1, sizeof(*h));
	if (!cq || !h) { free(cq); free(h); errno = ENOMEM; return NULL; }
	uint32_t log = nicsim_log2(nicsim_pow2_at_least((uint32_t)cqe + 1)); /* roundup_pow_of_two(cqe + 1) */
	nicsim_hw_lock(hw);
	int rc = nicsim_cq_create(hw->dev, hw->uar, log, 1, &h->q);
	if (!rc && channel && (rc = nicsim_cq_channel(hw->dev, h->q.cqn, (uint32_t)channel->fd)))
		nicsim_cq_destroy(&h->q);
	pthread_mutex_unlock(&hw->lock);
	if (rc) { free(cq); free(h); errno = nicsim_hw_errno("CREATE_CQ", rc); return NULL; }
	nicsim_name(to_nctx(c), h->q.cqn, cq); /* its events name it by its number */
	cq->hw = h;
	cq->handle = h->q.cqn;
	cq->cq.handle = h->q.cqn;
	cq->cq.cqe = (int)(1u << log) - 1;
	return cq;
}

int nicsim_hw_destroy_cq(struct ibv_cq *cq) {
	struct nicsim_ibv_cq *c = to_ncq(cq);
	struct nicsim_hw *hw = hw_of(cq->context);
	nicsim_hw_lock(hw);
	int rc = nicsim_cq_destroy(&c->hw->q);
	pthread_mutex_unlock(&hw->lock);
	if (rc) return nicsim_hw_errno("DESTROY_CQ", rc);
	nicsim_domain_use(c->domain, -1);
	nicsim_name(to_nctx(cq->context), c->handle, NULL);
	nicsim_await_acks(&cq->mutex, &cq->cond, &cq->comp_events_completed, c->comp_returned);
	free(c->hw);
	free(c);
	return 0;
}

static enum ibv_wc_status status_of(uint32_t syndrome) {
	switch (syndrome) {
	case NICSIM_CQE_SYNDROME_LOC_LEN_ERR: return IBV_WC_LOC_LEN_ERR;
	case NICSIM_CQE_SYNDROME_LOC_QP_OP_ERR: return IBV_WC_LOC_QP_OP_ERR;
	case NICSIM_CQE_SYNDROME_LOC_PROT_ERR: return IBV_WC_LOC_PROT_ERR;
	case NICSIM_CQE_SYNDROME_WR_FLUSH_ERR: return IBV_WC_WR_FLUSH_ERR;
	case NICSIM_CQE_SYNDROME_MW_BIND_ERR: return IBV_WC_MW_BIND_ERR;
	case NICSIM_CQE_SYNDROME_BAD_RESP_ERR: return IBV_WC_BAD_RESP_ERR;
	case NICSIM_CQE_SYNDROME_LOC_ACCESS_ERR: return IBV_WC_LOC_ACCESS_ERR;
	case NICSIM_CQE_SYNDROME_REM_INV_REQ_ERR: return IBV_WC_REM_INV_REQ_ERR;
	case NICSIM_CQE_SYNDROME_REM_ACCESS_ERR: return IBV_WC_REM_ACCESS_ERR;
	case NICSIM_CQE_SYNDROME_REM_OP_ERR: return IBV_WC_REM_OP_ERR;
	case NICSIM_CQE_SYNDROME_RETRY_EXC_ERR: return IBV_WC_RETRY_EXC_ERR;
	case NICSIM_CQE_SYNDROME_RNR_RETRY_EXC_ERR: return IBV_WC_RNR_RETRY_EXC_ERR;
	case NICSIM_CQE_SYNDROME_REM_ABORT_ERR: return IBV_WC_REM_ABORT_ERR;
	case NICSIM_CQE_SYNDROME_TM_ERR: return IBV_WC_TM_ERR;
	case NICSIM_CQE_SYNDROME_TM_RNDV_INCOMPLETE: return IBV_WC_TM_RNDV_INCOMPLETE;
	default: return IBV_WC_GENERAL_ERR;
	}
}

static enum ibv_wc_opcode send_opcode(uint32_t wqe_opcode) {
	switch (wqe_opcode) {
	case NICSIM_WQE_OP_RDMA_WRITE: case NICSIM_WQE_OP_RDMA_WRITE_IMM: return IBV_WC_RDMA_WRITE;
	case NICSIM_WQE_OP_RDMA_READ: return IBV_WC_RDMA_READ;
	case NICSIM_WQE_OP_ATOMIC_CS: return IBV_WC_COMP_SWAP;
	case NICSIM_WQE_OP_ATOMIC_FA: return IBV_WC_FETCH_ADD;
	case NICSIM_WQE_OP_LOCAL_INVAL: return IBV_WC_LOCAL_INV;
	case NICSIM_WQE_OP_UMR: return IBV_WC_BIND_MW;
	default: return IBV_WC_SEND;
	}
}

/* A receive's opcode and flags by its CQE opcode. */
static void recv_kind(const struct nicsim_wc *w, struct ibv_wc *wc) {
	wc->opcode = IBV_WC_RECV;
	if (w->opcode == NICSIM_CQE_RESP_WR_IMM)
		wc->opcode = IBV_WC_RECV_RDMA_WITH_IMM;
	if (w->opcode == NICSIM_CQE_RESP_WR_IMM || w->opcode == NICSIM_CQE_RESP_SEND_IMM) {
		wc->wc_flags |= IBV_WC_WITH_IMM;
		wc->imm_data = w->imm;
	}
	if (w->opcode == NICSIM_CQE_RESP_SEND_INV) {
		wc->wc_flags |= IBV_WC_WITH_INV;
		wc->invalidated_rkey = be32toh(w->imm);
	}
}

/*
 * The work completion of CQE w (tm: a tag-matching one's tag): its wr_id from the QP's or SRQ's
 * ring, which it retires. 0 when the CQE completes nothing the program asked to hear of.
 */
static int to_wc(struct nicsim_hw *hw, const struct nicsim_wc *w, struct ibv_wc *wc, struct ibv_wc_tm_info *tm) {
	struct nicsim_ibv_qp *qp = nicsim_hw_qp(hw, w->qpn);
	struct nicsim_hw_qp *h = qp ? qp->hw : NULL;
	int requester = w->opcode == NICSIM_CQE_REQ || w->opcode == NICSIM_CQE_REQ_ERR;
	memset(wc, 0, sizeof(*wc));
	wc->qp_num = w->qpn;
	wc->status = w->syndrome || w->opcode == NICSIM_CQE_REQ_ERR || w->opcode == NICSIM_CQE_RESP_ERR
			     ? status_of(w->syndrome) : IBV_WC_SUCCESS;
	wc->vendor_err = w->vendor_err;
	/* the adapter moved the QP to ERR (UC and UD senders: SQE); a short rendezvous buffer is
	 * software's to finish */
	if (h && wc->status != IBV_WC_SUCCESS && wc->status != IBV_WC_TM_RNDV_INCOMPLETE)
		h->state = requester && qp->vqp.qp.qp_type != IBV_QPT_RC ? IBV_QPS_SQE : IBV_QPS_ERR;
	if (requester) {
		if (h) {
			uint32_t slot = w->wqe_counter & (h->sq_size - 1);
			wc->wr_id = h->wrid[slot];
			h->retired = h->seq[slot] + 1;
			if (h->bind[slot].mw && wc->status == IBV_WC_SUCCESS) /* the window has its new rkey now */
				h->bind[slot].mw->rkey = h->bind[slot].rkey;
		}
		wc->opcode = h && h->bind[w->wqe_counter & (h->sq_size - 1)].layout ? IBV_WC_DRIVER1 /* MLX5DV_WC_UMR */
										       : send_opcode(w->wqe_opcode);
		if (wc->opcode == IBV_WC_RDMA_READ || wc->opcode == IBV_WC_COMP_SWAP || wc->opcode == IBV_WC_FETCH_ADD)
			wc->byte_len = w->byte_len;
		return 1;
	}
	struct ibv_srq *srq = qp ? qp->vqp.qp.srq : NULL;
	/* an SRQ the CQE names: an XRC SRQ (the target QP may be another's) or a tag-matching one */
	struct nicsim_ibv_srq *named = w->srqn ? nicsim_hw_srq(hw, w->srqn) : NULL;
	int took = named && named->hw->tm ? nicsim_hw_tm_wc(named->hw, w, wc, tm) : -1;
	if (took >= 0)
		return took;
	if (named || (srq && to_nsrq(srq)->hw)) { /* its receive was the SRQ's */
		struct nicsim_hw_srq *s = named ? named->hw : to_nsrq(srq)->hw;
		wc->wr_id = s->wrid[w->wqe_counter & (s->size - 1)];
		s->tail++;
	} else if (h) {
		wc->wr_id = h->rwrid[w->wqe_counter & (h->rq_size - 1)];
		h->rq_tail++;
	}
	recv_kind(w, wc);
	if (named && named->hw->tm)
		nicsim_hw_tm_plain(w, wc);
	wc->byte_len = w->byte_len;
	wc->src_qp = w->src_qp;
	wc->slid = (uint16_t)w->slid;
	if (w->grh)
		wc->wc_flags |= IBV_WC_GRH;
	return 1;
}

/* Completions of cq into wc (and x, if not NULL), as many as max allows: how many. */
static int take(struct nicsim_hw *hw, struct nicsim_ibv_cq *c, int max, struct ibv_wc *wc, struct nicsim_wc_extra *x) {
	struct nicsim_wc got[16];
	int n = 0;
	while (n < max) {
		int asked = max - n < 16 ? max - n : 16, k = nicsim_cq_poll(&c->hw->q, got, asked);
		for (int i = 0; i < k; i++) {
			struct nicsim_wc_extra e = {.timestamp = got[i].timestamp};
			if (!to_wc(hw, &got[i], &wc[n], &e.tm))
				continue; /* a CQE of no completion the program asked for */
			if (x)
				x[n] = e;
			n++;
		}
		if (k < asked)
			break;
	}
	return n;
}

/* Up to max completions the ring holds now (the kern back end's poll: time is the guest's own). */
int nicsim_ring_poll(struct ibv_cq *cq, int max, struct ibv_wc *wc, struct nicsim_wc_extra *x) {
	struct nicsim_hw *hw = hw_of(cq->context);
	if (max < 0) return -EINVAL;
	nicsim_hw_lock(hw);
	int n = take(hw, to_ncq(cq), max, wc, x);
	pthread_mutex_unlock(&hw->lock);
	return n;
}

/*
 * Up to max completions. When there are none, simulated time may move (PCI_WAIT) until a CQE of
 * the context's lands, or the simulation has nothing to do; a wait that only took interrupts (an
 * event the program's channel already has) waits again, a few times, for the CQE behind it.
 */
int nicsim_hw_poll(struct ibv_cq *cq, int max, struct ibv_wc *wc, struct nicsim_wc_extra *x) {
	struct nicsim_ibv_cq *c = to_ncq(cq);
	struct nicsim_hw *hw = hw_of(cq->context);
	uint32_t vectors[64];
	if (max < 0) return -EINVAL;
	nicsim_hw_lock(hw);
	int n = take(hw, c, max, wc, x);
	for (int waits = 0; n == 0 && max > 0 && waits < 4; waits++) {
		int irqs = nicsim_wait(hw->dev, POLL_WAIT_PS, vectors, 64, NULL);
		if (irqs < 0) {
			n = -EIO;
			break;
		}
		n = take(hw, c, max, wc, x);
		if (irqs == 0)
			break;
	}
	pthread_mutex_unlock(&hw->lock);
	return n;
}

int nicsim_hw_resize_cq(struct nicsim_ibv_cq *cq, int cqe) {
	struct nicsim_hw *hw = hw_of(cq->cq.context);
	if (cqe < 1 || (uint32_t)cqe > nicsim_caps(hw->dev)->max_cqe)
		return EINVAL;
	uint32_t log = nicsim_log2(nicsim_pow2_at_least((uint32_t)cqe + 1));
	nicsim_hw_lock(hw);
	int rc = nicsim_cq_resize(&cq->hw->q, log);
	pthread_mutex_unlock(&hw->lock);
	if (rc)
		return nicsim_hw_errno("RESIZE_CQ", rc);
	cq->cq.cqe = (int)(1u << log) - 1;
	return 0;
}

void nicsim_hw_cq_event(struct nicsim_ibv_cq *cq) { nicsim_cq_event(&cq->hw->q); }

int nicsim_hw_req_notify_cq(struct ibv_cq *cq, int solicited_only) {
	struct nicsim_hw *hw = hw_of(cq->context);
	nicsim_hw_lock(hw);
	int rc = nicsim_cq_arm(&to_ncq(cq)->hw->q, solicited_only);
	pthread_mutex_unlock(&hw->lock);
	return rc < 0 ? -rc : 0;
}

