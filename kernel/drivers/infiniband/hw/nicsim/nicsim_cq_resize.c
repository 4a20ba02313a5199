// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * CQ resize (ib_resize_cq, uverbs' RESIZE_CQ): RESIZE_CQ moves the
 * completions not yet polled to a new ring's first entries (docs/device.md,
 * "Commands"); the doorbell record stays where CREATE_CQ put it.
 */
#include <rdma/ib_user_verbs.h>
#include <rdma/nicsim-abi.h>

#include "nicsim.h"

/*
 * The new ring in place once RESIZE_CQ moved the completions not yet polled
 * to its first entries: polling starts again at 0 there. Under armed_lock
 * too, since the poller reads an armed CQ's ring without the CQ's lock.
 */
static void nicsim_cq_switch(struct nicsim_dev *dev, struct nicsim_cq *cq,
			     void *ring, u32 log_size)
{
	unsigned long flags;

	spin_lock_irqsave(&dev->armed_lock, flags);
	spin_lock(&cq->lock);
	cq->va = ring;
	cq->log_size = log_size;
	cq->ci = 0;
	cq->resizing = false;
	spin_unlock(&cq->lock);
	spin_unlock_irqrestore(&dev->armed_lock, flags);
}

/*
 * ib_resize_cq and uverbs' RESIZE_CQ: a new ring of at least cqe entries,
 * which a user CQ's process maps by the key in the udata (its doorbell record
 * stays where it was, in its first mapping). The old ring goes once the
 * adapter writes the new one; a user's once it unmaps it.
 */
int nicsim_resize_cq(struct ib_cq *ibcq, int cqe, struct ib_udata *udata)
{
	struct nicsim_dev *dev = to_ndev(ibcq->device);
	struct nicsim_cq *cq = to_ncq(ibcq);
	struct nicsim_ibv_resize_cq_resp resp = {};
	struct rdma_user_mmap_entry *entry = NULL;
	struct nicsim_ucontext *ctx;
	u64 in[NICSIM_RESIZE_CQ_IN_WORDS];
	struct nicsim_buf ring, old;
	unsigned long flags;
	u32 entries;
	void *va;
	int err;

	if (cqe < 1 || cqe > dev->caps.max_cqe)
		return -EINVAL;
	entries = roundup_pow_of_two(cqe + 1);
	err = nicsim_buf_alloc(dev, &ring,
			       PAGE_ALIGN(NICSIM_CQE_BYTES * (size_t)entries));
	if (err)
		return err;
	va = ring.va;
	nicsim_cq_ring_init(va, ilog2(entries));
	in[NICSIM_RESIZE_CQ_IN_CQN] = cq->cqn;
	in[NICSIM_RESIZE_CQ_IN_RING] = ring.dma;
	in[NICSIM_RESIZE_CQ_IN_LOG_SIZE] = ilog2(entries);
	if (udata) {
		resp.log_size = ilog2(entries);
		resp.mmap_size = ring.size;
		ctx = rdma_udata_to_drv_context(udata, struct nicsim_ucontext,
						ibucontext);
		entry = nicsim_mmap_insert_buf(&ctx->ibucontext, &ring,
					       &resp.mmap_key);
		if (!entry) {
			nicsim_buf_free(dev, &ring);
			return -ENOMEM;
		}
	}
	spin_lock_irqsave(&cq->lock, flags);
	cq->resizing = true;
	/* what the consumer took: the adapter moves the rest */
	if (!udata)
		cq->dbrec[NICSIM_DBREC_CQ_CI / 4] =
			cpu_to_be32(cq->ci & NICSIM_CQ_CI_MASK);
	spin_unlock_irqrestore(&cq->lock, flags);
	err = nicsim_cmd_exec(dev, NICSIM_CMD_RESIZE_CQ, in,
			      NICSIM_RESIZE_CQ_IN_WORDS, NULL, 0);
	if (!err && udata)
		err = ib_copy_to_udata(udata, &resp,
				       min(sizeof(resp), udata->outlen));
	if (err) {
		/* a refused resize leaves the ring where it was */
		spin_lock_irqsave(&cq->lock, flags);
		cq->resizing = false;
		spin_unlock_irqrestore(&cq->lock, flags);
		if (entry)
			rdma_user_mmap_entry_remove(entry);
		nicsim_buf_free(dev, &ring);
		return err;
	}
	nicsim_cq_switch(dev, cq, va, ilog2(entries));
	ibcq->cqe = entries - 1;
	old = cq->ring;
	cq->ring = ring;
	nicsim_buf_free(dev, &old);
	if (cq->ring_entry)
		rdma_user_mmap_entry_remove(cq->ring_entry);
	cq->ring_entry = entry;
	return 0;
}
