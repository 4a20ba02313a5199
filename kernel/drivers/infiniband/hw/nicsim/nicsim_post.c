// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Posting for kernel consumers: WQEs into the rings, then the doorbell
 * record, then the doorbell (docs/device.md, "Rules a driver must keep").
 */
#include "nicsim.h"

/* the largest WQE: 16 WQEBBs */
#define NICSIM_MAX_WQE_BYTES	(NICSIM_WQEBB * NICSIM_MAX_WQEBBS)

static int nicsim_wqe_opcode(enum ib_wr_opcode op)
{
	switch (op) {
	case IB_WR_SEND: return NICSIM_WQE_OP_SEND;
	case IB_WR_SEND_WITH_IMM: return NICSIM_WQE_OP_SEND_IMM;
	case IB_WR_SEND_WITH_INV: return NICSIM_WQE_OP_SEND_INVAL;
	case IB_WR_RDMA_WRITE: return NICSIM_WQE_OP_RDMA_WRITE;
	case IB_WR_RDMA_WRITE_WITH_IMM: return NICSIM_WQE_OP_RDMA_WRITE_IMM;
	case IB_WR_RDMA_READ: return NICSIM_WQE_OP_RDMA_READ;
	case IB_WR_ATOMIC_CMP_AND_SWP: return NICSIM_WQE_OP_ATOMIC_CS;
	case IB_WR_ATOMIC_FETCH_AND_ADD: return NICSIM_WQE_OP_ATOMIC_FA;
	case IB_WR_LOCAL_INV: return NICSIM_WQE_OP_LOCAL_INVAL;
	case IB_WR_REG_MR: return NICSIM_WQE_OP_UMR;
	default: return -EINVAL;
	}
}

static void nicsim_data_seg(u8 *seg, u32 len, u32 lkey, u64 addr)
{
	*(__be32 *)(seg + NICSIM_WQE_DATA_SEG_BYTE_COUNT) = cpu_to_be32(len);
	*(__be32 *)(seg + NICSIM_WQE_DATA_SEG_LKEY) = cpu_to_be32(lkey);
	*(__be64 *)(seg + NICSIM_WQE_DATA_SEG_ADDR) = cpu_to_be64(addr);
}

/* The segments after the control segment; returns where they end or NULL. */
static u8 *nicsim_wqe_body(struct nicsim_qp *qp, const struct ib_send_wr *wr,
			   int op, u8 *w)
{
	u8 *seg = w + NICSIM_WQE_CTRL_SEG_BYTES;
	u8 *end = w + NICSIM_MAX_WQE_BYTES;
	const struct nicsim_ah *ah;
	u32 len = 0;
	int i, body;
	bool cs;

	if (nicsim_qp_type_ud(qp->ibqp.qp_type)) {
		/* Q_Key, destination QPN, remote LID */
		ah = to_nah(ud_wr(wr)->ah);
		*(__be32 *)(seg + NICSIM_AV_KEY) =
			cpu_to_be32(ud_wr(wr)->remote_qkey);
		*(__be32 *)(seg + NICSIM_AV_DQPN) =
			cpu_to_be32(ud_wr(wr)->remote_qpn | NICSIM_AV_EXT);
		*(__be16 *)(seg + NICSIM_AV_RLID) = cpu_to_be16(ah->dlid);
		if (ah->grh) {
			*(__be32 *)(seg + NICSIM_AV_GRH_WORD) =
				cpu_to_be32(NICSIM_AV_GRH_BIT);
			memcpy(seg + NICSIM_AV_RGID, ah->dgid.raw, 16);
		}
		seg += NICSIM_AV_BYTES;
	}
	if (op == NICSIM_WQE_OP_RDMA_WRITE || op == NICSIM_WQE_OP_RDMA_READ ||
	    op == NICSIM_WQE_OP_RDMA_WRITE_IMM) {
		*(__be64 *)(seg + NICSIM_WQE_RADDR_SEG_ADDR) =
			cpu_to_be64(rdma_wr(wr)->remote_addr);
		*(__be32 *)(seg + NICSIM_WQE_RADDR_SEG_RKEY) =
			cpu_to_be32(rdma_wr(wr)->rkey);
		seg += NICSIM_WQE_DS_UNIT;
	}
	if (op == NICSIM_WQE_OP_ATOMIC_CS || op == NICSIM_WQE_OP_ATOMIC_FA) {
		const struct ib_atomic_wr *a = atomic_wr(wr);

		cs = op == NICSIM_WQE_OP_ATOMIC_CS;
		*(__be64 *)(seg + NICSIM_WQE_RADDR_SEG_ADDR) =
			cpu_to_be64(a->remote_addr);
		*(__be32 *)(seg + NICSIM_WQE_RADDR_SEG_RKEY) =
			cpu_to_be32(a->rkey);
		seg += NICSIM_WQE_DS_UNIT;
		/* swap or add, then compare */
		*(__be64 *)(seg + NICSIM_WQE_ATOMIC_SEG_SWAP_ADD) =
			cpu_to_be64(cs ? a->swap : a->compare_add);
		*(__be64 *)(seg + NICSIM_WQE_ATOMIC_SEG_COMPARE) =
			cpu_to_be64(cs ? a->compare_add : 0);
		seg += NICSIM_WQE_DS_UNIT;
	}
	if (op == NICSIM_WQE_OP_UMR) {
		/* IB_WR_REG_MR: the MR's layout (nicsim_mr.c), at most 63 DS */
		body = nicsim_mr_layout(to_nmr(reg_wr(wr)->mr),
					reg_wr(wr)->access, seg,
					16 * (2 + NICSIM_UMR_MAX_AT_ENTRIES));
		return body < 0 ? NULL : seg + body;
	}
	if (wr->send_flags & IB_SEND_INLINE) {
		/* kernel consumers' inline addresses are kernel virtual */
		u8 *data = seg + NICSIM_WQE_INLINE_SEG_DATA;

		for (i = 0; i < wr->num_sge; i++) {
			if (data + len + wr->sg_list[i].length > end)
				return NULL;
			memcpy(data + len,
			       (void *)(uintptr_t)wr->sg_list[i].addr,
			       wr->sg_list[i].length);
			len += wr->sg_list[i].length;
		}
		*(__be32 *)(seg + NICSIM_WQE_INLINE_SEG_BYTE_COUNT) =
			cpu_to_be32(len | NICSIM_WQE_INLINE_SEG_FLAG);
		return seg + ALIGN(NICSIM_WQE_INLINE_SEG_DATA + len,
				   NICSIM_WQE_DS_UNIT);
	}
	for (i = 0; i < wr->num_sge; i++) {
		if (!wr->sg_list[i].length)
			continue;
		if (seg + NICSIM_WQE_DS_UNIT > end)
			return NULL;
		nicsim_data_seg(seg, wr->sg_list[i].length,
				wr->sg_list[i].lkey, wr->sg_list[i].addr);
		seg += NICSIM_WQE_DS_UNIT;
	}
	return seg;
}

/* Builds wr's WQE at the send ring's head: its WQEBBs, or an errno. */
static int nicsim_post_one(struct nicsim_qp *qp, const struct ib_send_wr *wr,
			   u8 *w)
{
	u32 mask = BIT(qp->sq.log_size) - 1;
	u32 ds, wqebbs, i, idx;
	u8 *seg, flags = 0;
	int op;

	op = nicsim_wqe_opcode(wr->opcode);
	if (op < 0 || wr->num_sge > qp->cap.max_send_sge)
		return -EINVAL;
	memset(w, 0, NICSIM_MAX_WQE_BYTES);
	seg = nicsim_wqe_body(qp, wr, op, w);
	if (!seg)
		return -EINVAL;
	ds = (seg - w) / NICSIM_WQE_DS_UNIT;
	wqebbs = DIV_ROUND_UP(ds, 4);
	if (qp->sq.head - qp->sq.tail + wqebbs > BIT(qp->sq.log_size))
		return -ENOMEM;
	if (wr->send_flags & IB_SEND_SIGNALED || qp->signal_all)
		flags |= NICSIM_WQE_CTRL_CQ_UPDATE;
	if (wr->send_flags & IB_SEND_SOLICITED)
		flags |= NICSIM_WQE_CTRL_SOLICITED;
	if (wr->send_flags & IB_SEND_FENCE)
		flags |= NICSIM_WQE_CTRL_FENCE;
	/* opmod, index, opcode; QPN, DS */
	*(__be32 *)(w + NICSIM_WQE_CTRL_SEG_OPMOD) =
		cpu_to_be32((qp->sq.head & 0xffff) << 8 | op);
	*(__be32 *)(w + NICSIM_WQE_CTRL_SEG_QPN) =
		cpu_to_be32(qp->qpn << 8 | ds);
	w[NICSIM_WQE_CTRL_SEG_FM_CE_SE] = flags;
	if (op == NICSIM_WQE_OP_SEND_INVAL || op == NICSIM_WQE_OP_LOCAL_INVAL) {
		*(__be32 *)(w + NICSIM_WQE_CTRL_SEG_IMM) =
			cpu_to_be32(wr->ex.invalidate_rkey);
	} else if (op == NICSIM_WQE_OP_UMR) {
		/*
		 * the mkey, with the key byte the ULP chose for this layout;
		 * the layout carries the MR's iova and length
		 */
		w[NICSIM_WQE_CTRL_SEG_OPMOD] = NICSIM_WQE_OPMOD_MKEY_LAYOUT_AT;
		*(__be32 *)(w + NICSIM_WQE_CTRL_SEG_IMM) =
			cpu_to_be32(reg_wr(wr)->key);
		/* the adapter's key from now on (DESTROY_MKEY names it) */
		to_nmr(reg_wr(wr)->mr)->mkey = reg_wr(wr)->key;
	} else {
		memcpy(w + NICSIM_WQE_CTRL_SEG_IMM, &wr->ex.imm_data, 4);
	}

	idx = qp->sq.head & mask;
	qp->sq.wr_ids[idx] = wr->wr_id;
	qp->sq_wqebbs[idx] = wqebbs;
	/* WQEBB by WQEBB: a WQE may wrap the ring */
	for (i = 0; i < wqebbs; i++)
		memcpy(qp->buf.va + qp->sq.offset +
		       NICSIM_WQEBB * ((qp->sq.head + i) & mask),
		       w + NICSIM_WQEBB * i, NICSIM_WQEBB);
	return wqebbs;
}

int nicsim_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		     const struct ib_send_wr **bad_wr)
{
	struct nicsim_dev *dev = to_ndev(ibqp->device);
	struct nicsim_qp *qp = to_nqp(ibqp);
	void __iomem *bf = dev->bar0 + dev->caps.uar_base +
		(u64)qp->uar * dev->caps.uar_page_size + NICSIM_UAR_BF_OFFSET;
	__be32 *dbrec = qp->buf.va + qp->dbrec_offset;
	u8 *w, *last = NULL;
	unsigned long flags;
	int err = 0, n;

	w = kmalloc(NICSIM_MAX_WQE_BYTES, GFP_ATOMIC);
	if (!w) {
		*bad_wr = wr;
		return -ENOMEM;
	}
	spin_lock_irqsave(&qp->sq_lock, flags);
	for (; wr; wr = wr->next) {
		n = nicsim_post_one(qp, wr, w);
		if (n < 0) {
			err = n;
			*bad_wr = wr;
			break;
		}
		last = qp->buf.va + qp->sq.offset +
			NICSIM_WQEBB * (qp->sq.head & (BIT(qp->sq.log_size) - 1));
		qp->sq.head += n;
	}
	if (last) {
		/* the WQEs, then the record's send counter, then the doorbell */
		dma_wmb();
		dbrec[NICSIM_DBREC_SEND / 4] = cpu_to_be32(qp->sq.head & 0xffff);
		/* the record in memory before the MMIO doorbell */
		wmb();
		spin_lock(&dev->kuar_lock);
		__raw_writeq(*(u64 *)last, bf);
		spin_unlock(&dev->kuar_lock);
	}
	spin_unlock_irqrestore(&qp->sq_lock, flags);
	kfree(w);
	return err;
}

/* A receive WQE: its data segments, then the list's end if there is room. */
static int nicsim_recv_wqe(u8 *wqe, u32 stride, const struct ib_recv_wr *wr)
{
	u8 *seg = wqe;
	int i;

	if (wr->num_sge * NICSIM_WQE_DS_UNIT > stride)
		return -EINVAL;
	for (i = 0; i < wr->num_sge; i++, seg += NICSIM_WQE_DS_UNIT)
		nicsim_data_seg(seg, wr->sg_list[i].length, wr->sg_list[i].lkey,
				wr->sg_list[i].addr);
	if (seg + NICSIM_WQE_DS_UNIT <= wqe + stride)
		nicsim_data_seg(seg, 0, NICSIM_RECV_END_LKEY, 0);
	return 0;
}

/*
 * Whether the ring slot at the producer counter is free: an RQ's when fewer
 * than its size are outstanding (its receives complete in order); an SRQ's
 * when its own bit is clear, since the QPs sharing the ring complete the
 * receives they took in any order. The bit is taken here with acquire
 * ordering, so the poller's read of the slot's wr_id came before.
 */
static bool nicsim_wq_take(struct nicsim_wq *wq, unsigned long *busy)
{
	if (busy)
		return !test_and_set_bit_lock(wq->head & (BIT(wq->log_size) - 1),
					      busy);
	return wq->head - wq->tail < BIT(wq->log_size);
}

static int nicsim_post_wq(struct nicsim_wq *wq, u8 *ring, u32 stride_log,
			  __be32 *counter, unsigned long *busy,
			  const struct ib_recv_wr *wr,
			  const struct ib_recv_wr **bad_wr)
{
	u32 mask = BIT(wq->log_size) - 1;
	int err = 0;
	bool posted = false;

	for (; wr; wr = wr->next) {
		if (!nicsim_wq_take(wq, busy)) {
			err = -ENOMEM;
			break;
		}
		err = nicsim_recv_wqe(ring + ((wq->head & mask) << stride_log),
				      BIT(stride_log), wr);
		if (err) {
			if (busy)
				clear_bit_unlock(wq->head & mask, busy);
			break;
		}
		wq->wr_ids[wq->head & mask] = wr->wr_id;
		wq->head++;
		posted = true;
	}
	if (err)
		*bad_wr = wr;
	if (posted) {
		/* the WQEs before the record's receive counter */
		dma_wmb();
		*counter = cpu_to_be32(wq->head & 0xffff);
	}
	return err;
}

/*
 * A send doorbell that announces no new WQE: DS 0 and the producer counter as
 * the index. A QP in the error state reads its receive queue again on it and
 * flushes what was posted since; nothing else tells the adapter of receives,
 * and ib_drain_rq waits for the flush of the one it posts after ERR.
 */
static void nicsim_kick(struct nicsim_dev *dev, struct nicsim_qp *qp)
{
	void __iomem *bf = dev->bar0 + dev->caps.uar_base +
		(u64)qp->uar * dev->caps.uar_page_size + NICSIM_UAR_BF_OFFSET;
	__be32 db[2];
	unsigned long flags;

	spin_lock_irqsave(&qp->sq_lock, flags);
	/* a control segment's first 8 bytes: index, no opcode; QPN, DS 0 */
	db[NICSIM_WQE_CTRL_SEG_OPMOD / 4] = cpu_to_be32((qp->sq.head & 0xffff) << 8);
	db[NICSIM_WQE_CTRL_SEG_QPN / 4] = cpu_to_be32(qp->qpn << 8);
	/* the receive counter in memory before the MMIO doorbell */
	wmb();
	spin_lock(&dev->kuar_lock);
	__raw_writeq(*(u64 *)db, bf);
	spin_unlock(&dev->kuar_lock);
	spin_unlock_irqrestore(&qp->sq_lock, flags);
}

int nicsim_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		     const struct ib_recv_wr **bad_wr)
{
	struct nicsim_qp *qp = to_nqp(ibqp);
	unsigned long flags;
	int err;

	if (ibqp->srq) {
		*bad_wr = wr;
		return -EINVAL;
	}
	spin_lock_irqsave(&qp->rq_lock, flags);
	err = nicsim_post_wq(&qp->rq, qp->buf.va + qp->rq.offset,
			     qp->rq_stride_log,
			     qp->buf.va + qp->dbrec_offset + NICSIM_DBREC_RECV,
			     NULL, wr, bad_wr);
	spin_unlock_irqrestore(&qp->rq_lock, flags);
	if (READ_ONCE(qp->state) == IB_QPS_ERR)
		nicsim_kick(to_ndev(ibqp->device), qp);
	return err;
}

int nicsim_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
			 const struct ib_recv_wr **bad_wr)
{
	struct nicsim_srq *srq = to_nsrq(ibsrq);
	unsigned long flags;
	int err;

	spin_lock_irqsave(&srq->lock, flags);
	err = nicsim_post_wq(&srq->wq, srq->buf.va, srq->stride_log,
			     srq->buf.va + srq->dbrec_offset + NICSIM_DBREC_RECV,
			     srq->busy, wr, bad_wr);
	spin_unlock_irqrestore(&srq->lock, flags);
	return err;
}
