// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The selftest's steps on the connected RC pair: SEND (with a completion
 * event, with immediate data, inline), RDMA WRITE and READ, atomics, and a
 * transition the device refuses.
 */
#include <linux/ktime.h>
#include <linux/string.h>

#include "selftest.h"

/* SEND len bytes from buffer 0 into buffer 1 at offset off. */
int st_send(struct st_ctx *c, u32 len, u32 off, bool arm)
{
	struct ib_sge rs = { .addr = c->dma[1] + off, .length = len,
			     .lkey = c->pd->local_dma_lkey };
	struct ib_sge ss = { .addr = c->dma[0], .length = len,
			     .lkey = c->pd->local_dma_lkey };
	struct ib_recv_wr rwr = { .wr_id = 2, .sg_list = &rs, .num_sge = 1 };
	struct ib_send_wr swr = { .wr_id = 1, .sg_list = &ss, .num_sge = 1,
				  .opcode = IB_WR_SEND,
				  .send_flags = IB_SEND_SIGNALED };
	struct ib_wc wc[2];
	ktime_t posted;
	int err, i;

	err = ib_post_recv(c->qp[1], &rwr, NULL);
	if (err)
		return err;
	if (arm) {
		reinit_completion(&c->event);
		ib_req_notify_cq(c->cq, IB_CQ_NEXT_COMP);
	}
	posted = ktime_get();
	err = ib_post_send(c->qp[0], &swr, NULL);
	if (err)
		return err;
	if (arm && !wait_for_completion_timeout(&c->event,
						msecs_to_jiffies(ST_WAIT_MS)))
		return -ETIME;
	/* the guest's time from the doorbell to the CQ's comp_handler */
	if (arm)
		pr_info("nicsim_selftest: completion event %lld us after the post\n",
			ktime_us_delta(ktime_get(), posted));
	for (i = 0; i < 2; i++) {
		err = st_poll(c, &wc[i]);
		if (err) {
			pr_info("nicsim_selftest: completion %d: %d, status %s, wr_id %llu\n",
				i, err, ib_wc_status_msg(wc[i].status),
				wc[i].wr_id);
			return err;
		}
	}
	/* one send and one receive completion, each its own work request */
	if (wc[0].wr_id + wc[1].wr_id != 3)
		return -EPROTO;
	for (i = 0; i < 2; i++)
		if (wc[i].wr_id == 2 && wc[i].byte_len != len)
			return -EMSGSIZE;
	return memcmp(c->buf[0], c->buf[1] + off, len) ? -EBADMSG : 0;
}

/*
 * A CQ armed for solicited completions only (IB_CQ_SOLICITED): a SEND
 * without IB_SEND_SOLICITED leaves it quiet, its two completions not polled;
 * a solicited SEND then wakes it. Four completions, all successful, follow.
 */
int st_solicited(struct st_ctx *c, u32 len)
{
	struct ib_sge rs = { .addr = c->dma[1], .length = len,
			     .lkey = c->pd->local_dma_lkey };
	struct ib_sge ss = { .addr = c->dma[0], .length = len,
			     .lkey = c->pd->local_dma_lkey };
	struct ib_recv_wr rwr = { .wr_id = 2, .sg_list = &rs, .num_sge = 1 };
	struct ib_send_wr swr = { .wr_id = 1, .sg_list = &ss, .num_sge = 1,
				  .opcode = IB_WR_SEND,
				  .send_flags = IB_SEND_SIGNALED };
	struct ib_wc wc;
	int err, i;

	for (i = 0; i < 2; i++) {
		err = ib_post_recv(c->qp[1], &rwr, NULL);
		if (err)
			return err;
	}
	reinit_completion(&c->event);
	ib_req_notify_cq(c->cq, IB_CQ_SOLICITED);
	err = ib_post_send(c->qp[0], &swr, NULL);
	if (err)
		return err;
	if (wait_for_completion_timeout(&c->event,
					msecs_to_jiffies(ST_QUIET_MS))) {
		pr_info("nicsim_selftest: an unsolicited SEND woke a solicited-only arm\n");
		return -EPROTO;
	}
	swr.send_flags |= IB_SEND_SOLICITED;
	err = ib_post_send(c->qp[0], &swr, NULL);
	if (err)
		return err;
	if (!wait_for_completion_timeout(&c->event,
					 msecs_to_jiffies(ST_WAIT_MS)))
		return -ETIME;
	for (i = 0; i < 4; i++) {
		err = st_poll(c, &wc);
		if (err)
			return err;
	}
	return memcmp(c->buf[0], c->buf[1], len) ? -EBADMSG : 0;
}

int st_write(struct st_ctx *c, u32 len, u32 off)
{
	struct ib_sge ss = { .addr = c->dma[0], .length = len,
			     .lkey = c->pd->local_dma_lkey };
	struct ib_rdma_wr wr = {
		.wr = { .wr_id = 3, .sg_list = &ss, .num_sge = 1,
			.opcode = IB_WR_RDMA_WRITE,
			.send_flags = IB_SEND_SIGNALED },
		.remote_addr = c->dma[1] + off,
		.rkey = c->pd->unsafe_global_rkey,
	};
	struct ib_wc wc;
	int err;

	err = ib_post_send(c->qp[0], &wr.wr, NULL);
	if (err)
		return err;
	err = st_poll(c, &wc);
	if (err)
		return err;
	if (wc.wr_id != 3 || wc.opcode != IB_WC_RDMA_WRITE)
		return -EPROTO;
	return memcmp(c->buf[0], c->buf[1] + off, len) ? -EBADMSG : 0;
}

/* SEND with immediate data, inline; then query_qp says RTS and the peer. */
int st_imm_inline(struct st_ctx *c, u32 len)
{
	struct ib_sge rs = { .addr = c->dma[1], .length = len,
			     .lkey = c->pd->local_dma_lkey };
	struct ib_sge ss = { .addr = (uintptr_t)c->buf[0], .length = len };
	struct ib_recv_wr rwr = { .wr_id = 11, .sg_list = &rs, .num_sge = 1 };
	struct ib_send_wr swr = { .wr_id = 10, .sg_list = &ss, .num_sge = 1,
				  .opcode = IB_WR_SEND_WITH_IMM,
				  .send_flags = IB_SEND_SIGNALED |
						IB_SEND_INLINE,
				  .ex.imm_data = cpu_to_be32(0x12345678) };
	struct ib_qp_init_attr init;
	struct ib_qp_attr qa;
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
		if (wc[i].wr_id != 11)
			continue;
		if (!(wc[i].wc_flags & IB_WC_WITH_IMM) ||
		    wc[i].ex.imm_data != cpu_to_be32(0x12345678) ||
		    wc[i].byte_len != len)
			return -EPROTO;
	}
	if (memcmp(c->buf[0], c->buf[1], len))
		return -EBADMSG;
	err = ib_query_qp(c->qp[0], &qa, IB_QP_STATE | IB_QP_DEST_QPN, &init);
	if (err)
		return err;
	/* asked for 64: the two-WQEBB slot holds len, as mlx5 reports it */
	if (init.cap.max_inline_data != len) {
		pr_info("nicsim_selftest: max_inline_data %u, not %u\n",
			init.cap.max_inline_data, len);
		return -EPROTO;
	}
	return qa.qp_state == IB_QPS_RTS &&
		qa.dest_qp_num == c->qp[1]->qp_num ? 0 : -EPROTO;
}

/*
 * A transition the device's table refuses (RTS to INIT): the driver must
 * return the errno of the command's status (EINVAL for BAD_QP_STATE) and
 * log the status and syndrome by name; the QP stays in RTS.
 */
int st_refused(struct st_ctx *c)
{
	struct ib_qp_attr a = { .qp_state = IB_QPS_INIT };
	struct ib_qp_init_attr init;
	int err;

	err = ib_modify_qp(c->qp[0], &a, IB_QP_STATE);
	if (err != -EINVAL)
		return err ?: -EPROTO;
	err = ib_query_qp(c->qp[0], &a, IB_QP_STATE, &init);
	return err ?: a.qp_state == IB_QPS_RTS ? 0 : -EPROTO;
}

/* RDMA READ of buffer 1 into buffer 0, then a fetch-and-add on buffer 1. */
int st_read_atomic(struct st_ctx *c)
{
	struct ib_sge ss = { .addr = c->dma[0], .length = ST_BYTES,
			     .lkey = c->pd->local_dma_lkey };
	struct ib_rdma_wr rd = {
		.wr = { .wr_id = 4, .sg_list = &ss, .num_sge = 1,
			.opcode = IB_WR_RDMA_READ,
			.send_flags = IB_SEND_SIGNALED },
		.remote_addr = c->dma[1],
		.rkey = c->pd->unsafe_global_rkey,
	};
	struct ib_atomic_wr fa = {
		.wr = { .wr_id = 5, .sg_list = &ss, .num_sge = 1,
			.opcode = IB_WR_ATOMIC_FETCH_AND_ADD,
			.send_flags = IB_SEND_SIGNALED },
		.remote_addr = c->dma[1],
		.compare_add = 5,
	};
	u64 before, *remote = c->buf[1], *local = c->buf[0];
	struct ib_mr *mr;
	struct ib_wc wc;
	int err;

	memset(c->buf[0], 0, ST_BYTES);
	err = ib_post_send(c->qp[0], &rd.wr, NULL);
	if (!err)
		err = st_poll(c, &wc);
	if (err)
		return err;
	if (wc.wr_id != 4 || wc.opcode != IB_WC_RDMA_READ ||
	    memcmp(c->buf[0], c->buf[1], ST_BYTES))
		return -EBADMSG;
	/*
	 * The PD's global rkey allows no atomics (the device answers those
	 * with REM_ACCESS_ERR): a DMA region of the driver's that does, set
	 * up as ib_alloc_pd sets up its own.
	 */
	mr = c->dev->ops.get_dma_mr(c->pd, IB_ACCESS_LOCAL_WRITE |
				    IB_ACCESS_REMOTE_READ |
				    IB_ACCESS_REMOTE_WRITE |
				    IB_ACCESS_REMOTE_ATOMIC);
	if (IS_ERR(mr))
		return PTR_ERR(mr);
	mr->device = c->dev;
	mr->pd = c->pd;
	mr->type = IB_MR_TYPE_DMA;
	fa.rkey = mr->rkey;
	before = *remote;
	ss.length = 8;
	err = ib_post_send(c->qp[0], &fa.wr, NULL);
	if (!err)
		err = st_poll(c, &wc);
	if (err)
		goto out;
	pr_info("nicsim_selftest: fetch-and-add: remote 0x%llx -> 0x%llx, returned 0x%llx\n",
		before, *remote, *local);
	if (wc.wr_id != 5 || wc.opcode != IB_WC_FETCH_ADD ||
	    *remote != before + 5 || *local != before) {
		err = -EBADMSG;
		goto out;
	}
	/* compare-and-swap: the value it compares equal, so it swaps */
	fa.wr.wr_id = 12;
	fa.wr.opcode = IB_WR_ATOMIC_CMP_AND_SWP;
	fa.compare_add = before + 5;
	fa.swap = 0x1122334455667788ULL;
	err = ib_post_send(c->qp[0], &fa.wr, NULL);
	if (!err)
		err = st_poll(c, &wc);
	if (!err && (wc.wr_id != 12 || wc.opcode != IB_WC_COMP_SWAP ||
		     *remote != fa.swap || *local != before + 5))
		err = -EBADMSG;
out:
	c->dev->ops.dereg_mr(mr, NULL);
	return err;
}
