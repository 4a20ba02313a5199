// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Shared receive queues: a ring of receive WQEs many QPs take from in
 * order, its doorbell record's receive counter, and an armed limit. The
 * QPs' receives complete in any order, so a kernel SRQ tracks each slot
 * (nicsim_srq.busy) rather than counting completions.
 */
#include <rdma/ib_user_verbs.h>
#include <rdma/nicsim-abi.h>

#include "nicsim.h"

int nicsim_create_srq(struct ib_srq *ibsrq, struct ib_srq_init_attr *attr,
		      struct ib_udata *udata)
{
	struct nicsim_dev *dev = to_ndev(ibsrq->device);
	struct nicsim_srq *srq = to_nsrq(ibsrq);
	struct nicsim_ibv_create_srq_resp resp = {};
	struct nicsim_ucontext *ctx = NULL;
	u64 in[NICSIM_CREATE_SRQ_IN_WORDS];
	u32 max_wr = attr->attr.max_wr;
	size_t ring_bytes;
	int err;

	if (attr->srq_type != IB_SRQT_BASIC)
		return -EOPNOTSUPP;
	if (!max_wr || max_wr > dev->caps.max_qp_wr ||
	    attr->attr.max_sge > dev->caps.max_sge ||
	    attr->attr.srq_limit > max_wr)
		return -EINVAL;
	if (udata)
		ctx = rdma_udata_to_drv_context(udata, struct nicsim_ucontext,
						ibucontext);
	spin_lock_init(&srq->lock);
	srq->wq.log_size = order_base_2(max_wr);
	srq->stride_log = order_base_2((max_t(u32, attr->attr.max_sge, 1) + 1) *
				       16);
	srq->max_sge = attr->attr.max_sge;
	srq->limit = attr->attr.srq_limit;
	ring_bytes = PAGE_ALIGN(BIT(srq->wq.log_size + srq->stride_log));
	srq->dbrec_offset = ring_bytes;
	err = nicsim_buf_alloc(dev, &srq->buf, ring_bytes + PAGE_SIZE);
	if (err)
		return err;
	if (!ctx) {
		srq->wq.wr_ids = kcalloc(BIT(srq->wq.log_size), sizeof(u64),
					 GFP_KERNEL);
		srq->busy = bitmap_zalloc(BIT(srq->wq.log_size), GFP_KERNEL);
		if (!srq->wq.wr_ids || !srq->busy) {
			err = -ENOMEM;
			goto err_wr_ids;
		}
	}

	in[NICSIM_CREATE_SRQ_IN_PD] = to_npd(ibsrq->pd)->pdn;
	in[NICSIM_CREATE_SRQ_IN_RING] = srq->buf.dma;
	in[NICSIM_CREATE_SRQ_IN_LOG_SIZE] = srq->wq.log_size;
	in[NICSIM_CREATE_SRQ_IN_STRIDE_LOG] = srq->stride_log;
	in[NICSIM_CREATE_SRQ_IN_DBREC] = srq->buf.dma + srq->dbrec_offset;
	in[NICSIM_CREATE_SRQ_IN_LIMIT] = srq->limit;
	err = nicsim_cmd_handle(dev, NICSIM_CMD_CREATE_SRQ, in,
				NICSIM_CREATE_SRQ_IN_WORDS, &srq->srqn);
	if (err)
		goto err_wr_ids;
	err = xa_insert(&dev->srqs, srq->srqn, srq, GFP_KERNEL);
	if (err)
		goto err_cmd;
	attr->attr.max_wr = BIT(srq->wq.log_size);

	if (ctx) {
		resp.srqn = srq->srqn;
		resp.log_size = srq->wq.log_size;
		resp.stride_log = srq->stride_log;
		resp.dbrec_offset = srq->dbrec_offset;
		resp.mmap_size = srq->buf.size;
		srq->entry = nicsim_mmap_insert_buf(&ctx->ibucontext, &srq->buf,
						    &resp.mmap_key);
		if (!srq->entry) {
			err = -ENOMEM;
			goto err_xa;
		}
		err = ib_copy_to_udata(udata, &resp,
				       min(sizeof(resp), udata->outlen));
		if (err)
			goto err_xa;
	}
	return 0;

err_xa:
	xa_erase(&dev->srqs, srq->srqn);
err_cmd:
	nicsim_cmd_destroy(dev, NICSIM_CMD_DESTROY_SRQ, srq->srqn);
err_wr_ids:
	bitmap_free(srq->busy);
	kfree(srq->wq.wr_ids);
	if (srq->entry)
		rdma_user_mmap_entry_remove(srq->entry);
	nicsim_buf_free(dev, &srq->buf);
	return err;
}

int nicsim_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		      enum ib_srq_attr_mask mask, struct ib_udata *udata)
{
	struct nicsim_srq *srq = to_nsrq(ibsrq);
	u64 in[NICSIM_ARM_SRQ_IN_WORDS];
	int err;

	/* the ring is not resized */
	if (mask & IB_SRQ_MAX_WR)
		return -EOPNOTSUPP;
	if (!(mask & IB_SRQ_LIMIT))
		return 0;
	if (attr->srq_limit > BIT(srq->wq.log_size))
		return -EINVAL;
	in[NICSIM_ARM_SRQ_IN_SRQN] = srq->srqn;
	in[NICSIM_ARM_SRQ_IN_LIMIT] = attr->srq_limit;
	err = nicsim_cmd_exec(to_ndev(ibsrq->device), NICSIM_CMD_ARM_SRQ, in,
			      NICSIM_ARM_SRQ_IN_WORDS, NULL, 0);
	if (!err)
		srq->limit = attr->srq_limit;
	return err;
}

int nicsim_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr)
{
	struct nicsim_srq *srq = to_nsrq(ibsrq);
	u64 in = srq->srqn, limit;
	int err;

	err = nicsim_cmd_exec(to_ndev(ibsrq->device), NICSIM_CMD_QUERY_SRQ,
			      &in, 1, &limit, 1);
	if (err)
		return err;
	/* the limit reads 0 once its event fired */
	attr->srq_limit = limit;
	attr->max_wr = BIT(srq->wq.log_size);
	attr->max_sge = srq->max_sge;
	return 0;
}

int nicsim_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata)
{
	struct nicsim_dev *dev = to_ndev(ibsrq->device);
	struct nicsim_srq *srq = to_nsrq(ibsrq);
	int err;

	err = nicsim_cmd_destroy(dev, NICSIM_CMD_DESTROY_SRQ, srq->srqn);
	if (err)
		return err;
	xa_erase(&dev->srqs, srq->srqn);
	if (srq->entry)
		rdma_user_mmap_entry_remove(srq->entry);
	nicsim_buf_free(dev, &srq->buf);
	bitmap_free(srq->busy);
	kfree(srq->wq.wr_ids);
	return 0;
}
