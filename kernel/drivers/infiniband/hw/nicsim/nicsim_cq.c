// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Completion queues: a ring of 64-byte CQEs whose owner bit is the pass
 * parity of the adapter's producer counter, and a doorbell record holding
 * the consumer counter and the arm word (docs/device.md, "Completion queues").
 */
#include <rdma/ib_user_verbs.h>
#include <rdma/nicsim-abi.h>

#include "nicsim.h"

/* the CQ's MSI-X vector: 0 is the event queue's */
#define NICSIM_COMP_VECTOR	1

static u8 *nicsim_cqe(struct nicsim_cq *cq, u32 index)
{
	return cq->va + NICSIM_CQE_BYTES * (index & ((1U << cq->log_size) - 1));
}

/* Whether the CQE at running count index is the adapter's newest for us. */
static bool nicsim_cqe_new(struct nicsim_cq *cq, u32 index)
{
	u8 own = READ_ONCE(nicsim_cqe(cq, index)[NICSIM_CQE_OP_OWN]);

	return (own & 1) == ((index >> cq->log_size) & 1) &&
		own >> 4 != NICSIM_CQE_INVALID;
}

/*
 * Whether the completion an arm word waits for is in the ring: a new CQE at
 * or past the consumer counter it carries; for a solicited-only arm, one
 * that is solicited (op_own bit 1) or an error (docs/device.md, "Completion
 * queues"). Every CQ's event comes on one vector, so the driver applies the
 * adapter's rule to each armed CQ itself.
 */
static bool nicsim_arm_met(struct nicsim_cq *cq, u32 word)
{
	u32 ci = word & NICSIM_CQ_CI_MASK, n;
	u8 own;

	if (!(word & NICSIM_CQ_ARM_SOLICITED))
		return nicsim_cqe_new(cq, ci);
	for (n = 0; n < 1U << cq->log_size && nicsim_cqe_new(cq, ci + n); n++) {
		own = READ_ONCE(nicsim_cqe(cq, ci + n)[NICSIM_CQE_OP_OWN]);
		if (own & NICSIM_CQE_SOLICITED ||
		    own >> 4 == NICSIM_CQE_REQ_ERR ||
		    own >> 4 == NICSIM_CQE_RESP_ERR)
			return true;
	}
	return false;
}

static __be32 *nicsim_cq_dbrec(struct nicsim_cq *cq)
{
	return cq->dbrec;
}

/* A ring of 2^log_size CQEs, each invalid and the adapter's for pass 0. */
void nicsim_cq_ring_init(void *ring, u32 log_size)
{
	u32 i;

	for (i = 0; i < 1U << log_size; i++)
		((u8 *)ring)[NICSIM_CQE_BYTES * i + NICSIM_CQE_OP_OWN] =
			NICSIM_CQE_INVALID << 4 | 1;
}

/*
 * A user CQ is armed by its process, which writes the arm word into the
 * record's bytes 4..7 (the adapter reads only bytes 0..3) as well as to the
 * UAR. The driver keeps the CQ on armed_cqs for its whole life and raises its
 * completion event once per arm word it has not answered yet: the word is
 * unique per arm, as it carries the count of events taken. Bytes 4..7 start
 * at NICSIM_USER_ARM_NONE, a word no arm writes (its command bits are not a
 * command), so a CQ never armed raises nothing.
 */
#define NICSIM_USER_ARM_NONE 0xffffffffu

static void nicsim_user_cq_watch(struct nicsim_dev *dev, struct nicsim_cq *cq)
{
	unsigned long flags;

	cq->user_arm = NICSIM_USER_ARM_NONE;
	WRITE_ONCE(nicsim_cq_dbrec(cq)[NICSIM_DBREC_CQ_ARM / 4],
		   cpu_to_be32(NICSIM_USER_ARM_NONE));
	spin_lock_irqsave(&dev->armed_lock, flags);
	cq->is_armed = true;
	list_add_tail(&cq->armed, &dev->armed_cqs);
	spin_unlock_irqrestore(&dev->armed_lock, flags);
}

/*
 * Called by the poller, under armed_lock, for a user CQ: whether a new arm
 * has the completion it waits for (nicsim_arm_met).
 */
bool nicsim_user_cq_fires(struct nicsim_cq *cq)
{
	__be32 *dbrec = nicsim_cq_dbrec(cq);
	u32 word = be32_to_cpu(READ_ONCE(dbrec[NICSIM_DBREC_CQ_ARM / 4]));

	if (word == cq->user_arm || !nicsim_arm_met(cq, word))
		return false;
	cq->user_arm = word;
	return true;
}

int nicsim_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		     struct ib_udata *udata)
{
	struct nicsim_dev *dev = to_ndev(ibcq->device);
	struct nicsim_cq *cq = to_ncq(ibcq);
	struct nicsim_ibv_create_cq_resp resp = {};
	struct nicsim_ucontext *ctx = NULL;
	u64 in[NICSIM_CREATE_CQ_IN_WORDS];
	size_t ring_bytes;
	dma_addr_t dma;
	u32 entries;
	int err;

	if (attr->flags)
		return -EOPNOTSUPP;
	if (attr->cqe < 1 || attr->cqe > dev->caps.max_cqe)
		return -EINVAL;
	if (udata)
		ctx = rdma_udata_to_drv_context(udata, struct nicsim_ucontext,
						ibucontext);
	entries = roundup_pow_of_two(attr->cqe + 1);
	cq->log_size = ilog2(entries);
	ring_bytes = PAGE_ALIGN(NICSIM_CQE_BYTES * (size_t)entries);
	spin_lock_init(&cq->lock);
	INIT_LIST_HEAD(&cq->armed);
	err = nicsim_buf_alloc(dev, &cq->buf, ring_bytes + PAGE_SIZE);
	if (err)
		return err;
	cq->va = cq->buf.va;
	cq->dbrec = cq->buf.va + ring_bytes;
	nicsim_cq_ring_init(cq->va, cq->log_size);
	dma = cq->buf.dma;

	in[NICSIM_CREATE_CQ_IN_UAR] = ctx ? ctx->uar : dev->kuar;
	in[NICSIM_CREATE_CQ_IN_RING] = dma;
	in[NICSIM_CREATE_CQ_IN_LOG_SIZE] = cq->log_size;
	in[NICSIM_CREATE_CQ_IN_VECTOR] = NICSIM_COMP_VECTOR;
	in[NICSIM_CREATE_CQ_IN_DBREC] = dma + ring_bytes;
	err = nicsim_cmd_handle(dev, NICSIM_CMD_CREATE_CQ, in,
				NICSIM_CREATE_CQ_IN_WORDS, &cq->cqn);
	if (err)
		goto err_buf;
	err = xa_insert(&dev->cqs, cq->cqn, cq, GFP_KERNEL);
	if (err)
		goto err_cmd;
	ibcq->cqe = entries - 1;

	if (ctx) {
		resp.cqn = cq->cqn;
		resp.log_size = cq->log_size;
		resp.dbrec_offset = ring_bytes;
		resp.mmap_size = cq->buf.size;
		cq->entry = nicsim_mmap_insert_buf(&ctx->ibucontext, &cq->buf,
						   &resp.mmap_key);
		if (!cq->entry) {
			err = -ENOMEM;
			goto err_xa;
		}
		err = ib_copy_to_udata(udata, &resp,
				       min(sizeof(resp), udata->outlen));
		if (err)
			goto err_xa;
		nicsim_user_cq_watch(dev, cq);
	}
	return 0;

err_xa:
	xa_erase(&dev->cqs, cq->cqn);
err_cmd:
	nicsim_cmd_destroy(dev, NICSIM_CMD_DESTROY_CQ, cq->cqn);
err_buf:
	/* a user CQ's buffer went to its mmap entry, freed when removed */
	if (cq->entry)
		rdma_user_mmap_entry_remove(cq->entry);
	nicsim_buf_free(dev, &cq->buf);
	return err;
}

int nicsim_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata)
{
	struct nicsim_dev *dev = to_ndev(ibcq->device);
	struct nicsim_cq *cq = to_ncq(ibcq);
	unsigned long flags;
	int err;

	spin_lock_irqsave(&dev->armed_lock, flags);
	list_del_init(&cq->armed);
	cq->is_armed = false;
	spin_unlock_irqrestore(&dev->armed_lock, flags);
	xa_erase(&dev->cqs, cq->cqn);
	err = nicsim_cmd_destroy(dev, NICSIM_CMD_DESTROY_CQ, cq->cqn);
	if (err)
		return err;
	if (cq->entry)
		rdma_user_mmap_entry_remove(cq->entry);
	if (cq->ring_entry)
		rdma_user_mmap_entry_remove(cq->ring_entry);
	nicsim_buf_free(dev, &cq->ring);
	nicsim_buf_free(dev, &cq->buf);
	return 0;
}

static enum ib_wc_status nicsim_wc_status(u8 syndrome)
{
	switch (syndrome) {
	case NICSIM_CQE_SYNDROME_LOC_LEN_ERR: return IB_WC_LOC_LEN_ERR;
	case NICSIM_CQE_SYNDROME_LOC_QP_OP_ERR: return IB_WC_LOC_QP_OP_ERR;
	case NICSIM_CQE_SYNDROME_LOC_PROT_ERR: return IB_WC_LOC_PROT_ERR;
	case NICSIM_CQE_SYNDROME_WR_FLUSH_ERR: return IB_WC_WR_FLUSH_ERR;
	case NICSIM_CQE_SYNDROME_MW_BIND_ERR: return IB_WC_MW_BIND_ERR;
	case NICSIM_CQE_SYNDROME_BAD_RESP_ERR: return IB_WC_BAD_RESP_ERR;
	case NICSIM_CQE_SYNDROME_LOC_ACCESS_ERR: return IB_WC_LOC_ACCESS_ERR;
	case NICSIM_CQE_SYNDROME_REM_INV_REQ_ERR: return IB_WC_REM_INV_REQ_ERR;
	case NICSIM_CQE_SYNDROME_REM_ACCESS_ERR: return IB_WC_REM_ACCESS_ERR;
	case NICSIM_CQE_SYNDROME_REM_OP_ERR: return IB_WC_REM_OP_ERR;
	case NICSIM_CQE_SYNDROME_RETRY_EXC_ERR: return IB_WC_RETRY_EXC_ERR;
	case NICSIM_CQE_SYNDROME_RNR_RETRY_EXC_ERR:
		return IB_WC_RNR_RETRY_EXC_ERR;
	case NICSIM_CQE_SYNDROME_REM_ABORT_ERR: return IB_WC_REM_ABORT_ERR;
	default: return IB_WC_GENERAL_ERR;
	}
}

static enum ib_wc_opcode nicsim_wc_send_opcode(u8 wqe_opcode)
{
	switch (wqe_opcode) {
	case NICSIM_WQE_OP_RDMA_WRITE:
	case NICSIM_WQE_OP_RDMA_WRITE_IMM:
		return IB_WC_RDMA_WRITE;
	case NICSIM_WQE_OP_RDMA_READ: return IB_WC_RDMA_READ;
	case NICSIM_WQE_OP_ATOMIC_CS: return IB_WC_COMP_SWAP;
	case NICSIM_WQE_OP_ATOMIC_FA: return IB_WC_FETCH_ADD;
	case NICSIM_WQE_OP_LOCAL_INVAL: return IB_WC_LOCAL_INV;
	case NICSIM_WQE_OP_UMR: return IB_WC_REG_MR;
	default: return IB_WC_SEND;
	}
}

/* The work request a CQE completes: its wr_id, and its ring slots freed. */
static void nicsim_wc_wr_id(struct nicsim_qp *qp, const u8 *cqe, bool send,
			    struct ib_wc *wc)
{
	u16 counter = be16_to_cpup((const __be16 *)(cqe + NICSIM_CQE_WQE_COUNTER));
	struct nicsim_srq *srq;
	u32 idx;

	if (send) {
		idx = counter & ((1U << qp->sq.log_size) - 1);
		wc->wr_id = qp->sq.wr_ids[idx];
		/*
		 * The WQEs before it completed unsignaled. The counter is
		 * 16 bits of the 32-bit producer counter: the tail advances
		 * by less than 2^16 at a time.
		 */
		qp->sq.tail += (u16)(counter + qp->sq_wqebbs[idx] - qp->sq.tail);
	} else if (qp->ibqp.srq) {
		srq = to_nsrq(qp->ibqp.srq);
		idx = counter & ((1U << srq->wq.log_size) - 1);
		wc->wr_id = srq->wq.wr_ids[idx];
		/* the slot is free for post_srq_recv after its wr_id's read */
		clear_bit_unlock(idx, srq->busy);
	} else {
		idx = counter & ((1U << qp->rq.log_size) - 1);
		wc->wr_id = qp->rq.wr_ids[idx];
		qp->rq.tail++;
	}
}

static int nicsim_poll_one(struct nicsim_dev *dev, struct nicsim_cq *cq,
			   struct ib_wc *wc)
{
	u8 *cqe = nicsim_cqe(cq, cq->ci);
	struct nicsim_qp *qp;
	u8 op;
	u32 qpn;

	if (!nicsim_cqe_new(cq, cq->ci))
		return 0;
	/* the CQE's other bytes only after its owner bit */
	dma_rmb();
	op = cqe[NICSIM_CQE_OP_OWN] >> 4;
	qpn = be32_to_cpup((__be32 *)(cqe + NICSIM_CQE_SOP_QPN)) & 0xffffff;
	cq->ci++;
	qp = xa_load(&dev->qps, qpn);
	if (!qp) {
		dev_warn(&dev->pdev->dev, "CQ 0x%x: CQE for unknown QP 0x%x\n",
			 cq->cqn, qpn);
		return -EAGAIN;
	}
	memset(wc, 0, sizeof(*wc));
	wc->qp = &qp->ibqp;
	wc->port_num = NICSIM_PORT;
	wc->byte_len = be32_to_cpup((__be32 *)(cqe + NICSIM_CQE_BYTE_CNT));
	switch (op) {
	case NICSIM_CQE_REQ:
	case NICSIM_CQE_REQ_ERR:
		wc->opcode = nicsim_wc_send_opcode(cqe[NICSIM_CQE_SOP_QPN]);
		nicsim_wc_wr_id(qp, cqe, true, wc);
		break;
	default:
		wc->opcode = op == NICSIM_CQE_RESP_WR_IMM ?
			IB_WC_RECV_RDMA_WITH_IMM : IB_WC_RECV;
		if (op == NICSIM_CQE_RESP_WR_IMM ||
		    op == NICSIM_CQE_RESP_SEND_IMM)
			wc->wc_flags |= IB_WC_WITH_IMM;
		if (op == NICSIM_CQE_RESP_SEND_INV)
			wc->wc_flags |= IB_WC_WITH_INVALIDATE;
		/* bytes 36..39: the immediate, or the rkey invalidated */
		if (op == NICSIM_CQE_RESP_SEND_INV)
			wc->ex.invalidate_rkey =
				be32_to_cpup((__be32 *)(cqe + NICSIM_CQE_IMM));
		else
			memcpy(&wc->ex.imm_data, cqe + NICSIM_CQE_IMM, 4);
		wc->src_qp = be32_to_cpup((__be32 *)(cqe + NICSIM_CQE_SRC_QP)) &
			0xffffff;
		wc->slid = be16_to_cpup((__be16 *)(cqe + NICSIM_CQE_SLID));
		if (op != NICSIM_CQE_RESP_ERR &&
		    (cqe[NICSIM_CQE_GRH_BYTE] & NICSIM_CQE_GRH_MASK))
			wc->wc_flags |= IB_WC_GRH;
		nicsim_wc_wr_id(qp, cqe, false, wc);
	}
	if (op == NICSIM_CQE_REQ_ERR || op == NICSIM_CQE_RESP_ERR) {
		wc->status = nicsim_wc_status(cqe[NICSIM_CQE_SYNDROME]);
		wc->vendor_err = cqe[NICSIM_CQE_VENDOR_SYNDROME];
	} else {
		wc->status = IB_WC_SUCCESS;
	}
	return 1;
}

int nicsim_poll_cq(struct ib_cq *ibcq, int num_entries, struct ib_wc *wc)
{
	struct nicsim_dev *dev = to_ndev(ibcq->device);
	struct nicsim_cq *cq = to_ncq(ibcq);
	unsigned long flags;
	int n = 0, got;

	spin_lock_irqsave(&cq->lock, flags);
	if (cq->resizing) {
		spin_unlock_irqrestore(&cq->lock, flags);
		return 0;
	}
	while (n < num_entries) {
		got = nicsim_poll_one(dev, cq, &wc[n]);
		if (got == 0)
			break;
		if (got > 0)
			n++;
	}
	/* the adapter may reuse what software has taken */
	nicsim_cq_dbrec(cq)[NICSIM_DBREC_CQ_CI / 4] =
		cpu_to_be32(cq->ci & NICSIM_CQ_CI_MASK);
	spin_unlock_irqrestore(&cq->lock, flags);
	return n;
}

/* A dropped CQE of a receive taken from srq: its slot is free again. */
static void nicsim_cq_clean_slot(struct nicsim_srq *srq, const u8 *cqe)
{
	u8 op = cqe[NICSIM_CQE_OP_OWN] >> 4;
	u16 counter;

	if (!srq || op == NICSIM_CQE_REQ || op == NICSIM_CQE_REQ_ERR)
		return;
	counter = be16_to_cpup((const __be16 *)(cqe + NICSIM_CQE_WQE_COUNTER));
	clear_bit_unlock(counter & ((1U << srq->wq.log_size) - 1), srq->busy);
}

/*
 * Drops destroyed QP qpn's completions not yet polled from kernel CQ cq, as
 * mlx5_ib_cq_clean does: DESTROY_QP has answered, so the adapter writes no
 * more of them, and a later poll would find no QP to name. The CQEs after
 * them move up over them, each taking its new slot's owner bit, and the
 * consumer counter moves past the slots freed. A receive the QP took from
 * srq frees its slot, which would otherwise stay busy and stall the ring at
 * it (nicsim_srq.busy). CQEs the adapter writes meanwhile are past the last
 * one looked at, and stay where they are.
 */
void nicsim_cq_clean(struct nicsim_cq *cq, u32 qpn, struct nicsim_srq *srq)
{
	u32 size, prod, i, nfreed = 0;
	unsigned long flags;
	u8 *cqe, *dest, own;

	spin_lock_irqsave(&cq->lock, flags);
	/* RESIZE_CQ is moving the ring: the adapter owns its entries now */
	if (cq->resizing)
		goto out;
	size = 1U << cq->log_size;
	for (prod = cq->ci; prod - cq->ci < size && nicsim_cqe_new(cq, prod);
	     prod++)
		;
	/* the CQEs' other bytes only after their owner bits */
	dma_rmb();
	for (i = prod; i != cq->ci;) {
		cqe = nicsim_cqe(cq, --i);
		if ((be32_to_cpup((__be32 *)(cqe + NICSIM_CQE_SOP_QPN)) &
		     0xffffff) == qpn) {
			nicsim_cq_clean_slot(srq, cqe);
			nfreed++;
		} else if (nfreed) {
			dest = nicsim_cqe(cq, i + nfreed);
			own = dest[NICSIM_CQE_OP_OWN] & 1;
			memcpy(dest, cqe, NICSIM_CQE_BYTES);
			dest[NICSIM_CQE_OP_OWN] =
				(dest[NICSIM_CQE_OP_OWN] & ~1) | own;
		}
	}
	if (nfreed) {
		cq->ci += nfreed;
		/* the moved CQEs before the adapter may reuse the slots */
		wmb();
		nicsim_cq_dbrec(cq)[NICSIM_DBREC_CQ_CI / 4] =
		cpu_to_be32(cq->ci & NICSIM_CQ_CI_MASK);
	}
out:
	spin_unlock_irqrestore(&cq->lock, flags);
}

int nicsim_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags)
{
	struct nicsim_dev *dev = to_ndev(ibcq->device);
	struct nicsim_cq *cq = to_ncq(ibcq);
	void __iomem *db = dev->bar0 + dev->caps.uar_base +
		(u64)dev->kuar * dev->caps.uar_page_size + NICSIM_UAR_CQ_DOORBELL;
	unsigned long irqflags;
	__be32 arm[2];
	u32 word;
	int missed = 0;

	spin_lock_irqsave(&cq->lock, irqflags);
	word = (cq->arm_sn & 3) << NICSIM_CQ_ARM_SN_SHIFT |
		(cq->ci & NICSIM_CQ_CI_MASK);
	if ((flags & IB_CQ_SOLICITED_MASK) == IB_CQ_SOLICITED)
		word |= NICSIM_CQ_ARM_SOLICITED;
	arm[NICSIM_UAR_CQ_DOORBELL_ARM / 4] = cpu_to_be32(word);
	arm[NICSIM_UAR_CQ_DOORBELL_CQN / 4] = cpu_to_be32(cq->cqn);
	WRITE_ONCE(cq->arm_word, word);
	nicsim_cq_dbrec(cq)[NICSIM_DBREC_CQ_ARM / 4] =
		arm[NICSIM_UAR_CQ_DOORBELL_ARM / 4];
	/* the record before the doorbell; one 8-byte write, in byte order */
	wmb();
	spin_lock(&dev->kuar_lock);
	__raw_writeq(*(u64 *)arm, db);
	spin_unlock(&dev->kuar_lock);
	if (flags & IB_CQ_REPORT_MISSED_EVENTS)
		missed = nicsim_cqe_new(cq, cq->ci);
	spin_unlock_irqrestore(&cq->lock, irqflags);

	spin_lock_irqsave(&dev->armed_lock, irqflags);
	if (!cq->is_armed) {
		cq->is_armed = true;
		list_add_tail(&cq->armed, &dev->armed_cqs);
	}
	spin_unlock_irqrestore(&dev->armed_lock, irqflags);
	return missed;
}

/*
 * Called by the poller for an armed CQ: whether its event fires now. A
 * solicited-only arm waits for its kind of completion from where it was
 * armed; any other fires on a completion not yet polled.
 */
bool nicsim_cq_poll_event(struct nicsim_dev *dev, struct nicsim_cq *cq)
{
	u32 word = READ_ONCE(cq->arm_word);

	if (word & NICSIM_CQ_ARM_SOLICITED)
		return nicsim_arm_met(cq, word);
	return nicsim_cqe_new(cq, READ_ONCE(cq->ci));
}
