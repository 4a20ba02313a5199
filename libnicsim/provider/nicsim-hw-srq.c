/*
 * The provider on libnicsim (nicsim-hw.h): shared receive queues made by CREATE_SRQ, their receives
 * written into the SRQ's ring in this process's memory, and its limit armed by ARM_SRQ.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "nicsim-hw.h"
#include "nicsim/device.h"

int nicsim_hw_create_srq(struct ibv_pd *pd, struct ibv_srq_attr *attr, enum ibv_srq_type type, struct ibv_xrcd *xrcd,
			 struct ibv_cq *cq, const struct ibv_tm_cap *tm, struct nicsim_ibv_srq *srq) {
	struct nicsim_hw *hw = hw_of(pd->context);
	const struct nicsim_caps *caps = nicsim_caps(hw->dev);
	if (type != IBV_SRQT_BASIC && type != IBV_SRQT_XRC && type != IBV_SRQT_TM)
		return EINVAL;
	if (type != IBV_SRQT_BASIC && (!cq || !to_ncq(cq)->hw || (type == IBV_SRQT_XRC ? !xrcd : !tm)))
		return EINVAL;
	if (attr->max_wr < 1 || attr->max_wr > caps->max_qp_wr || attr->max_sge < 1 || attr->max_sge > caps->max_sge ||
	    attr->srq_limit > attr->max_wr)
		return EINVAL;
	struct nicsim_hw_srq *h = calloc(1, sizeof(*h));
	uint32_t size = nicsim_pow2_at_least(attr->max_wr > 2 ? attr->max_wr : 2);
	if (!h || !(h->wrid = calloc(size, sizeof(*h->wrid)))) {
		free(h);
		return ENOMEM;
	}
	h->size = size;
	h->max_wr = attr->max_wr;
	nicsim_hw_lock(hw);
	uint32_t log = nicsim_log2(size), stride = nicsim_recv_stride_log(attr->max_sge);
	int rc = type == IBV_SRQT_TM ? -(int)nicsim_hw_tm_init(h, tm->max_num_tags, tm->max_ops) : 0;
	if (!rc && type == IBV_SRQT_TM)
		rc = nicsim_tm_srq_create(hw->dev, to_npd(pd)->handle, log, stride, attr->srq_limit, to_ncq(cq)->hw->q.cqn,
					  tm->max_num_tags, tm->max_ops, &h->q);
	else if (!rc)
		rc = type == IBV_SRQT_XRC ? nicsim_xrc_srq_create(hw->dev, to_npd(pd)->handle, log, stride, attr->srq_limit,
								  to_nxrcd(xrcd)->xrcdn, to_ncq(cq)->hw->q.cqn, &h->q)
					  : nicsim_srq_create(hw->dev, to_npd(pd)->handle, log, stride, attr->srq_limit, &h->q);
	struct nicsim_ibv_srq **grown = rc ? NULL : realloc(hw->srqs, (hw->nsrqs + 1) * sizeof(*grown));
	if (!rc && !grown) {
		nicsim_srq_destroy(&h->q);
		rc = -ENOMEM;
	}
	if (!rc) {
		hw->srqs = grown;
		hw->srqs[hw->nsrqs++] = srq;
	}
	pthread_mutex_unlock(&hw->lock);
	if (rc) {
		nicsim_hw_tm_free(h);
		free(h->wrid);
		free(h);
		return nicsim_hw_errno(type == IBV_SRQT_XRC ? "CREATE_XRC_SRQ" : type == IBV_SRQT_TM ? "CREATE_TM_SRQ"
											  : "CREATE_SRQ", rc);
	}
	srq->hw = h;
	srq->handle = srq->vsrq.srq.handle = h->q.srqn;
	srq->max_sge = attr->max_sge;
	srq->vsrq.srq_num = h->q.srqn;
	return 0;
}

struct nicsim_ibv_srq *nicsim_hw_srq(struct nicsim_hw *hw, uint32_t srqn) {
	for (uint32_t i = 0; i < hw->nsrqs; i++)
		if (hw->srqs[i]->hw->q.srqn == srqn)
			return hw->srqs[i];
	return NULL;
}

/*
 * An XRC domain: one shared by a file is the node's, which the session holds as the kernel holds one
 * per inode (nicsim-xrcd.c); one of the context's alone is made by ALLOC_XRCD.
 */
struct ibv_xrcd *nicsim_hw_open_xrcd(struct ibv_context *c, const struct stat *file, int oflags) {
	if (file)
		return nicsim_serve_open_xrcd(c, file, oflags);
	struct nicsim_hw *hw = hw_of(c);
	struct nicsim_ibv_xrcd *x = calloc(1, sizeof(*x));
	if (!x) {
		errno = ENOMEM;
		return NULL;
	}
	nicsim_hw_lock(hw);
	int rc = nicsim_alloc_xrcd(hw->dev, &x->xrcdn);
	pthread_mutex_unlock(&hw->lock);
	if (rc) {
		free(x);
		errno = nicsim_hw_errno("ALLOC_XRCD", rc);
		return NULL;
	}
	x->own = 1;
	x->vxrcd.handle = x->xrcdn;
	x->vxrcd.xrcd.context = c;
	return &x->vxrcd.xrcd;
}

int nicsim_hw_close_xrcd(struct nicsim_ibv_xrcd *x) {
	if (!x->own)
		return nicsim_serve_close_xrcd(x); /* a file's, the session's */
	struct nicsim_hw *hw = hw_of(x->vxrcd.xrcd.context);
	int rc = nicsim_hw_destroy(hw, NICSIM_CMD_DEALLOC_XRCD, x->xrcdn, "DEALLOC_XRCD");
	if (rc)
		return rc;
	free(x);
	return 0;
}

int nicsim_hw_destroy_srq(struct nicsim_ibv_srq *srq) {
	struct nicsim_hw *hw = hw_of(srq->vsrq.srq.context);
	nicsim_hw_lock(hw);
	int rc = nicsim_srq_destroy(&srq->hw->q);
	for (uint32_t i = 0; !rc && i < hw->nsrqs; i++)
		if (hw->srqs[i] == srq) {
			hw->srqs[i] = hw->srqs[--hw->nsrqs];
			break;
		}
	pthread_mutex_unlock(&hw->lock);
	if (rc)
		return nicsim_hw_errno("DESTROY_SRQ", rc);
	nicsim_hw_tm_free(srq->hw);
	free(srq->hw->wrid);
	free(srq->hw);
	srq->hw = NULL;
	return 0;
}

/* ibv_modify_srq: the limit is armed by ARM_SRQ; an SRQ is not resized (EINVAL, as the Java driver's). */
int nicsim_hw_modify_srq(struct nicsim_ibv_srq *srq, struct ibv_srq_attr *attr, int mask) {
	struct nicsim_hw *hw = hw_of(srq->vsrq.srq.context);
	if ((mask & IBV_SRQ_MAX_WR) || (mask & ~(IBV_SRQ_MAX_WR | IBV_SRQ_LIMIT)) || attr->srq_limit > srq->hw->max_wr)
		return EINVAL;
	if (!(mask & IBV_SRQ_LIMIT))
		return 0;
	uint64_t in[NICSIM_ARM_SRQ_IN_WORDS] = {0};
	in[NICSIM_ARM_SRQ_IN_SRQN] = srq->hw->q.srqn;
	in[NICSIM_ARM_SRQ_IN_LIMIT] = attr->srq_limit;
	return nicsim_hw_cmd(hw, NICSIM_CMD_ARM_SRQ, in, NICSIM_ARM_SRQ_IN_WORDS, NULL, 0);
}

int nicsim_hw_query_srq(struct nicsim_ibv_srq *srq, struct ibv_srq_attr *attr) {
	struct nicsim_hw *hw = hw_of(srq->vsrq.srq.context);
	uint64_t in = srq->hw->q.srqn, limit = 0;
	int rc = nicsim_hw_cmd(hw, NICSIM_CMD_QUERY_SRQ, &in, 1, &limit, 1);
	if (rc)
		return rc;
	attr->max_wr = srq->hw->max_wr;
	attr->max_sge = srq->max_sge;
	attr->srq_limit = (uint32_t)limit;
	return 0;
}

int nicsim_hw_post_srq_recv(struct nicsim_ibv_srq *srq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad) {
	struct nicsim_hw_srq *h = srq->hw;
	struct nicsim_hw *hw = hw_of(srq->vsrq.srq.context);
	struct nicsim_sge sge[NICSIM_HW_MAX_SGE];
	int count = 0, rc = 0;
	nicsim_hw_lock(hw);
	for (; wr; wr = wr->next) {
		if (!(rc = nicsim_hw_sges(wr->sg_list, wr->num_sge, srq->max_sge, sge)) &&
		    ((h->q.head - h->tail) & 0xffff) >= h->max_wr)
			rc = ENOMEM;
		if (rc)
			break;
		uint32_t slot = h->q.head & (h->size - 1);
		if ((rc = -nicsim_srq_recv_put(&h->q, sge, wr->num_sge)))
			break;
		h->wrid[slot] = wr->wr_id;
		count++;
	}
	if (count)
		nicsim_srq_publish(&h->q);
	pthread_mutex_unlock(&hw->lock);
	if (rc)
		*bad = wr;
	return rc;
}
