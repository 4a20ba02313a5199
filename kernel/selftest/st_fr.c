// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Fast registration as NVMe-oF, iSER, SRP and NFS/RDMA use it: an MR from
 * ib_alloc_mr, mapped by ib_map_mr_sg over two separate pages, its iova's
 * top 32 bits rewritten as xprtrdma's frwr_map puts an RPC's xid there, given
 * a new key and registered by IB_WR_REG_MR on the RC pair's receiver, written
 * by its peer through the rkey at the new iova (a WRITE below the iova and
 * one past its length, each from a pair of its own, must fail), invalidated
 * by the peer's SEND with invalidate, given a new key and iova by another
 * REG_MR (a WRITE under the previous key, from the SRQ step's pair, must
 * fail) and invalidated by LOCAL_INV; a WRITE after that must fail. Both
 * pairs end in the error state: this is the run's last step.
 */
#include <linux/gfp.h>
#include <linux/scatterlist.h>
#include <linux/string.h>

#include "selftest.h"

#define ST_FR_ACCESS	(IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE | \
			 IB_ACCESS_REMOTE_READ)
/* an RPC's xid, as xprtrdma puts it in the top 32 bits of an MR's iova */
#define ST_FR_XID	0xa5a50001U

/* Posts wr on qp and polls its one completion: 0, or the poll's errno. */
static int st_fr_post(struct st_ctx *c, struct ib_qp *qp,
		      const struct ib_send_wr *wr, struct ib_wc *wc)
{
	int err = ib_post_send(qp, wr, NULL);

	return err ?: st_poll(c, wc);
}

/*
 * A new key byte, the MR mapped from sg at off, xid in its iova's top 32
 * bits (as frwr_map does), and IB_WR_REG_MR on qp[1].
 */
static int st_fr_register(struct st_ctx *c, struct ib_mr *mr,
			  struct scatterlist *sg, int nents, unsigned int off,
			  u32 xid)
{
	struct ib_reg_wr reg = {
		.wr = { .wr_id = 20, .opcode = IB_WR_REG_MR,
			.send_flags = IB_SEND_SIGNALED },
		.mr = mr, .access = ST_FR_ACCESS,
	};
	struct ib_wc wc;
	u64 iova;
	int n, err;

	ib_update_fast_reg_key(mr, ib_inc_rkey(mr->rkey));
	n = ib_map_mr_sg(mr, sg, nents, &off, PAGE_SIZE);
	if (n != nents)
		return n < 0 ? n : -EINVAL;
	iova = (mr->iova & 0xffffffff) | (u64)xid << 32;
	mr->iova = iova;
	reg.key = mr->rkey;
	err = st_fr_post(c, c->qp[1], &reg.wr, &wc);
	if (err)
		return err;
	/* the rkey answers at the iova the ULP chose, which stays as it was */
	if (wc.opcode != IB_WC_REG_MR || mr->iova != iova) {
		pr_info("nicsim_selftest: REG_MR completed as %d, iova 0x%llx of 0x%llx\n",
			wc.opcode, mr->iova, iova);
		return -EPROTO;
	}
	return 0;
}

/* An RDMA WRITE by qp of len bytes of buffer 0 to offset at under rkey. */
static int st_fr_write(struct st_ctx *c, struct ib_qp *qp, u32 rkey, u64 at,
		       u32 len, struct ib_wc *wc)
{
	struct ib_sge ss = { .addr = c->dma[0], .length = len,
			     .lkey = c->pd->local_dma_lkey };
	struct ib_rdma_wr wr = {
		.wr = { .wr_id = 21, .sg_list = &ss, .num_sge = 1,
			.opcode = IB_WR_RDMA_WRITE,
			.send_flags = IB_SEND_SIGNALED },
		.remote_addr = at, .rkey = rkey,
	};

	return st_fr_post(c, qp, &wr.wr, wc);
}

/*
 * A WRITE of len bytes at under rkey, from a new RC pair (a refused WRITE
 * leaves its pair in error), must complete REM_ACCESS_ERR.
 */
static int st_fr_refused(struct st_ctx *c, u32 rkey, u64 at, u32 len,
			 const char *what)
{
	struct ib_qp_init_attr qa = {
		.send_cq = c->cq, .recv_cq = c->cq, .qp_type = IB_QPT_RC,
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.cap = { .max_send_wr = 2, .max_recv_wr = 2,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ib_qp *qp[2] = {};
	struct ib_wc wc = {};
	int err = 0, i;

	for (i = 0; i < 2 && !err; i++) {
		qp[i] = ib_create_qp(c->pd, &qa);
		if (IS_ERR(qp[i])) {
			err = PTR_ERR(qp[i]);
			qp[i] = NULL;
		}
	}
	for (i = 0; i < 2 && !err; i++)
		err = st_connect(qp[i], qp[1 - i]->qp_num, c->lid);
	if (!err) {
		err = st_fr_write(c, qp[0], rkey, at, len, &wc);
		if (err != -EIO || wc.status != IB_WC_REM_ACCESS_ERR) {
			pr_info("nicsim_selftest: a WRITE %s: %d, %s\n", what,
				err, ib_wc_status_msg(wc.status));
			err = -EPROTO;
		} else {
			err = 0;
		}
	}
	for (i = 0; i < 2; i++)
		if (qp[i])
			ib_destroy_qp(qp[i]);
	return err;
}

/* A SEND of 64 bytes into buffer 1 that invalidates the MR's rkey. */
static int st_fr_send_inv(struct st_ctx *c, struct ib_mr *mr)
{
	struct ib_sge rs = { .addr = c->dma[1], .length = 64,
			     .lkey = c->pd->local_dma_lkey };
	struct ib_sge ss = { .addr = c->dma[0], .length = 64,
			     .lkey = c->pd->local_dma_lkey };
	struct ib_recv_wr rwr = { .wr_id = 23, .sg_list = &rs, .num_sge = 1 };
	struct ib_send_wr swr = { .wr_id = 22, .sg_list = &ss, .num_sge = 1,
				  .opcode = IB_WR_SEND_WITH_INV,
				  .send_flags = IB_SEND_SIGNALED,
				  .ex.invalidate_rkey = mr->rkey };
	struct ib_wc wc[2];
	int err, i;

	err = ib_post_recv(c->qp[1], &rwr, NULL);
	if (!err)
		err = ib_post_send(c->qp[0], &swr, NULL);
	for (i = 0; !err && i < 2; i++)
		err = st_poll(c, &wc[i]);
	if (err)
		return err;
	for (i = 0; i < 2; i++) {
		if (wc[i].wr_id != 23)
			continue;
		if (!(wc[i].wc_flags & IB_WC_WITH_INVALIDATE) ||
		    wc[i].ex.invalidate_rkey != mr->rkey) {
			pr_info("nicsim_selftest: SEND with invalidate: flags 0x%x, rkey 0x%x of 0x%x\n",
				wc[i].wc_flags, wc[i].ex.invalidate_rkey,
				mr->rkey);
			return -EPROTO;
		}
		return 0;
	}
	return -EPROTO;
}

static int st_fr_steps(struct st_ctx *c, struct ib_mr *mr, u8 *page,
		       struct scatterlist *sg)
{
	struct ib_send_wr inv = { .wr_id = 24, .opcode = IB_WR_LOCAL_INV,
				  .send_flags = IB_SEND_SIGNALED };
	u8 *src = c->buf[0], *dst = c->buf[1];
	struct ib_wc wc;
	u32 old;
	int err;

	/* 7680 bytes from 512 into buffer 1, then the page; 4096 across both */
	err = st_fr_register(c, mr, sg, 2, 512, ST_FR_XID);
	if (!err)
		err = st_fr_write(c, c->qp[0], mr->rkey, mr->iova + 3000,
				  ST_BYTES, &wc);
	if (err)
		return err;
	if (memcmp(dst + 3512, src, 584) || memcmp(page, src + 584, 3512))
		return -EBADMSG;
	/* the key's bounds: a byte below its iova, a byte past its length */
	err = st_fr_refused(c, mr->rkey, mr->iova - 1, 64, "below the iova");
	if (!err)
		err = st_fr_refused(c, mr->rkey, mr->iova + mr->length - 63, 64,
				    "past the MR's length");
	if (!err)
		err = st_fr_send_inv(c, mr);
	/* registered again, under another key, and invalidated locally */
	old = mr->rkey;
	if (!err)
		err = st_fr_register(c, mr, sg, 1, 0, ST_FR_XID + 1);
	if (!err)
		err = st_fr_write(c, c->qp[0], mr->rkey, mr->iova + 100, 200,
				  &wc);
	if (err)
		return err;
	if (memcmp(dst + 100, src, 200))
		return -EBADMSG;
	/* the previous key byte is refused (on the SRQ step's pair) */
	err = st_fr_write(c, c->sq[0], old, mr->iova + 100, 200, &wc);
	if (err != -EIO || wc.status != IB_WC_REM_ACCESS_ERR) {
		pr_info("nicsim_selftest: a WRITE under the previous key: %d, %s\n",
			err, ib_wc_status_msg(wc.status));
		return -EPROTO;
	}
	inv.ex.invalidate_rkey = mr->rkey;
	err = st_fr_post(c, c->qp[1], &inv, &wc);
	if (err)
		return err;
	if (wc.opcode != IB_WC_LOCAL_INV)
		return -EPROTO;
	/* the peer's WRITE through the invalidated rkey: refused */
	err = st_fr_write(c, c->qp[0], mr->rkey, mr->iova, 64, &wc);
	if (err != -EIO || wc.status != IB_WC_REM_ACCESS_ERR) {
		pr_info("nicsim_selftest: a WRITE after LOCAL_INV: %d, %s\n",
			err, ib_wc_status_msg(wc.status));
		return -EPROTO;
	}
	return 0;
}

int st_fastreg(struct st_ctx *c)
{
	struct scatterlist sg[2];
	struct page *page;
	struct ib_mr *mr;
	u64 dma;
	int err;

	mr = ib_alloc_mr(c->pd, IB_MR_TYPE_MEM_REG, 2);
	if (IS_ERR(mr))
		return PTR_ERR(mr);
	page = alloc_page(GFP_KERNEL | __GFP_ZERO);
	if (!page) {
		err = -ENOMEM;
		goto out_mr;
	}
	dma = ib_dma_map_page(c->dev, page, 0, PAGE_SIZE, DMA_BIDIRECTIONAL);
	if (ib_dma_mapping_error(c->dev, dma)) {
		err = -ENOMEM;
		goto out_page;
	}
	/* as a ULP's mapped scatterlist: buffer 1, then the page */
	sg_init_table(sg, 2);
	sg_dma_address(&sg[0]) = c->dma[1];
	sg_dma_len(&sg[0]) = ST_BYTES;
	sg_dma_address(&sg[1]) = dma;
	sg_dma_len(&sg[1]) = PAGE_SIZE;
	err = st_fr_steps(c, mr, page_address(page), sg);
	ib_dma_unmap_page(c->dev, dma, PAGE_SIZE, DMA_BIDIRECTIONAL);
out_page:
	__free_page(page);
out_mr:
	/* after a REG_MR under a new key, the adapter's key is that one */
	return ib_dereg_mr(mr) ?: err;
}
