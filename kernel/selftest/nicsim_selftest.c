// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A kernel RDMA consumer that checks nicsim_ib against the device, as a
 * ULP would use it: on each nicsim device it makes a PD (with get_dma_mr's
 * global keys), a CQ and two RC QPs connected to each other through the
 * port's own LID, then moves bytes with SEND/RECV and RDMA WRITE, compares
 * them, takes a completion event through req_notify_cq, reads back with
 * RDMA READ, adds and swaps with atomics, sends a UD datagram through an
 * address handle, a UC SEND and a SEND into an SRQ. Each step
 * logs "nicsim_selftest: <device>: <step>: ok" or what went wrong, and a
 * last line "PASS" or "FAIL"; the module then stays loaded, doing nothing.
 */
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <rdma/ib_verbs.h>

MODULE_DESCRIPTION("Checks nicsim_ib's verbs on the device");
MODULE_LICENSE("Dual BSD/GPL");

#define ST_BYTES	4096
#define ST_WAIT_MS	20000

struct st_ctx {
	struct ib_device *dev;
	struct ib_pd *pd;
	struct ib_cq *cq;
	struct ib_qp *qp[2];
	void *buf[2];
	u64 dma[2];
	struct completion event;
	u16 lid;
	/* UD QPs, and an RC pair whose receiver takes from an SRQ */
	struct ib_qp *ud[2];
	struct ib_ah *ah;
	struct ib_srq *srq;
	struct ib_qp *sq[2];
	struct ib_qp *uc[2];
	struct completion srq_event;
};

static void st_srq_event(struct ib_event *ev, void *ctx)
{
	if (ev->event == IB_EVENT_SRQ_LIMIT_REACHED)
		complete(&((struct st_ctx *)ctx)->srq_event);
}

static void st_comp(struct ib_cq *cq, void *ctx)
{
	complete(&((struct st_ctx *)ctx)->event);
}

/* Polls until one completion arrives: 0 and *wc, or an errno. */
static int st_poll(struct st_ctx *c, struct ib_wc *wc)
{
	int waited, n;

	for (waited = 0; waited < ST_WAIT_MS; waited++) {
		n = ib_poll_cq(c->cq, 1, wc);
		if (n < 0)
			return n;
		if (n && wc->status != IB_WC_SUCCESS)
			pr_info("nicsim_selftest: wr_id %llu completed with %s (vendor error 0x%x)\n",
				wc->wr_id, ib_wc_status_msg(wc->status),
				wc->vendor_err);
		if (n)
			return wc->status == IB_WC_SUCCESS ? 0 : -EIO;
		usleep_range(1000, 2000);
	}
	return -ETIMEDOUT;
}

static int st_connect(struct ib_qp *qp, u32 dest_qpn, u16 lid)
{
	struct ib_qp_attr a = {};
	int err;

	a.qp_state = IB_QPS_INIT;
	a.pkey_index = 0;
	a.port_num = 1;
	a.qp_access_flags = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE |
		IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_ATOMIC;
	err = ib_modify_qp(qp, &a, IB_QP_STATE | IB_QP_PKEY_INDEX |
			   IB_QP_PORT | IB_QP_ACCESS_FLAGS);
	if (err)
		return err;
	memset(&a, 0, sizeof(a));
	a.qp_state = IB_QPS_RTR;
	a.path_mtu = IB_MTU_1024;
	a.dest_qp_num = dest_qpn;
	a.rq_psn = 0;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	a.ah_attr.type = RDMA_AH_ATTR_TYPE_IB;
	rdma_ah_set_dlid(&a.ah_attr, lid);
	rdma_ah_set_port_num(&a.ah_attr, 1);
	err = ib_modify_qp(qp, &a, IB_QP_STATE | IB_QP_AV |
			   IB_QP_PATH_MTU | IB_QP_DEST_QPN | IB_QP_RQ_PSN |
			   IB_QP_MAX_DEST_RD_ATOMIC | IB_QP_MIN_RNR_TIMER);
	if (err)
		return err;
	memset(&a, 0, sizeof(a));
	a.qp_state = IB_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.sq_psn = 0;
	a.max_rd_atomic = 1;
	return ib_modify_qp(qp, &a, IB_QP_STATE | IB_QP_TIMEOUT |
			    IB_QP_RETRY_CNT | IB_QP_RNR_RETRY | IB_QP_SQ_PSN |
			    IB_QP_MAX_QP_RD_ATOMIC);
}

static int st_setup(struct st_ctx *c)
{
	struct ib_cq_init_attr cq_attr = { .cqe = 64 };
	struct ib_qp_init_attr qa = {};
	struct ib_port_attr port;
	int i, err;

	err = ib_query_port(c->dev, 1, &port);
	if (err)
		return err;
	c->pd = ib_alloc_pd(c->dev, IB_PD_UNSAFE_GLOBAL_RKEY);
	if (IS_ERR(c->pd))
		return PTR_ERR(c->pd);
	c->cq = ib_create_cq(c->dev, st_comp, NULL, c, &cq_attr);
	if (IS_ERR(c->cq))
		return PTR_ERR(c->cq);
	qa.send_cq = c->cq;
	qa.recv_cq = c->cq;
	qa.qp_type = IB_QPT_RC;
	qa.sq_sig_type = IB_SIGNAL_REQ_WR;
	qa.cap.max_send_wr = 8;
	qa.cap.max_recv_wr = 8;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	qa.cap.max_inline_data = 64;
	for (i = 0; i < 2; i++) {
		c->qp[i] = ib_create_qp(c->pd, &qa);
		if (IS_ERR(c->qp[i]))
			return PTR_ERR(c->qp[i]);
		c->buf[i] = kzalloc(ST_BYTES, GFP_KERNEL);
		if (!c->buf[i])
			return -ENOMEM;
		c->dma[i] = ib_dma_map_single(c->dev, c->buf[i], ST_BYTES,
					      DMA_BIDIRECTIONAL);
		if (ib_dma_mapping_error(c->dev, c->dma[i]))
			return -ENOMEM;
	}
	c->lid = port.lid;
	for (i = 0; i < 2; i++) {
		err = st_connect(c->qp[i], c->qp[1 - i]->qp_num, c->lid);
		if (err)
			return err;
	}
	return 0;
}

static void st_teardown(struct st_ctx *c)
{
	int i;

	for (i = 0; i < 2; i++) {
		if (!IS_ERR_OR_NULL(c->ud[i]))
			ib_destroy_qp(c->ud[i]);
		if (!IS_ERR_OR_NULL(c->sq[i]))
			ib_destroy_qp(c->sq[i]);
		if (!IS_ERR_OR_NULL(c->uc[i]))
			ib_destroy_qp(c->uc[i]);
	}
	if (!IS_ERR_OR_NULL(c->srq))
		ib_destroy_srq(c->srq);
	if (!IS_ERR_OR_NULL(c->ah))
		rdma_destroy_ah(c->ah, 0);
	for (i = 0; i < 2; i++) {
		if (!IS_ERR_OR_NULL(c->qp[i]))
			ib_destroy_qp(c->qp[i]);
		if (c->dma[i])
			ib_dma_unmap_single(c->dev, c->dma[i], ST_BYTES,
					    DMA_BIDIRECTIONAL);
		kfree(c->buf[i]);
	}
	if (!IS_ERR_OR_NULL(c->cq))
		ib_destroy_cq(c->cq);
	if (!IS_ERR_OR_NULL(c->pd))
		ib_dealloc_pd(c->pd);
}

/* SEND len bytes from buffer 0 into buffer 1 at offset off. */
static int st_send(struct st_ctx *c, u32 len, u32 off, bool arm)
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
	int err, i;

	err = ib_post_recv(c->qp[1], &rwr, NULL);
	if (err)
		return err;
	if (arm) {
		reinit_completion(&c->event);
		ib_req_notify_cq(c->cq, IB_CQ_NEXT_COMP);
	}
	err = ib_post_send(c->qp[0], &swr, NULL);
	if (err)
		return err;
	if (arm && !wait_for_completion_timeout(&c->event,
						msecs_to_jiffies(ST_WAIT_MS)))
		return -ETIME;
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

static int st_write(struct st_ctx *c, u32 len, u32 off)
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

/* RDMA READ of buffer 1 into buffer 0, then a fetch-and-add on buffer 1. */
static int st_read_atomic(struct st_ctx *c)
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

/* UC: the RC transitions without the read, atomic and retry attributes. */
static int st_uc_pair(struct st_ctx *c)
{
	struct ib_qp_init_attr qa = {
		.send_cq = c->cq, .recv_cq = c->cq, .qp_type = IB_QPT_UC,
		.sq_sig_type = IB_SIGNAL_ALL_WR,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ib_qp_attr a;
	int err, i;

	for (i = 0; i < 2; i++) {
		c->uc[i] = ib_create_qp(c->pd, &qa);
		if (IS_ERR(c->uc[i]))
			return PTR_ERR(c->uc[i]);
	}
	for (i = 0; i < 2; i++) {
		memset(&a, 0, sizeof(a));
		a.qp_state = IB_QPS_INIT;
		a.port_num = 1;
		a.qp_access_flags = IB_ACCESS_LOCAL_WRITE |
			IB_ACCESS_REMOTE_WRITE;
		err = ib_modify_qp(c->uc[i], &a, IB_QP_STATE |
				   IB_QP_PKEY_INDEX | IB_QP_PORT |
				   IB_QP_ACCESS_FLAGS);
		if (err)
			return err;
		memset(&a, 0, sizeof(a));
		a.qp_state = IB_QPS_RTR;
		a.path_mtu = IB_MTU_1024;
		a.dest_qp_num = c->uc[1 - i]->qp_num;
		a.ah_attr.type = RDMA_AH_ATTR_TYPE_IB;
		rdma_ah_set_dlid(&a.ah_attr, c->lid);
		rdma_ah_set_port_num(&a.ah_attr, 1);
		err = ib_modify_qp(c->uc[i], &a, IB_QP_STATE | IB_QP_AV |
				   IB_QP_PATH_MTU | IB_QP_DEST_QPN |
				   IB_QP_RQ_PSN);
		if (err)
			return err;
		a.qp_state = IB_QPS_RTS;
		err = ib_modify_qp(c->uc[i], &a, IB_QP_STATE | IB_QP_SQ_PSN);
		if (err)
			return err;
	}
	return 0;
}

/* A UC SEND of len bytes into buffer 1 at 256. */
static int st_uc(struct st_ctx *c, u32 len)
{
	struct ib_sge rs = { .addr = c->dma[1] + 256, .length = len,
			     .lkey = c->pd->local_dma_lkey };
	struct ib_sge ss = { .addr = c->dma[0], .length = len,
			     .lkey = c->pd->local_dma_lkey };
	struct ib_recv_wr rwr = { .wr_id = 14, .sg_list = &rs, .num_sge = 1 };
	struct ib_send_wr swr = { .wr_id = 13, .sg_list = &ss, .num_sge = 1,
				  .opcode = IB_WR_SEND };
	struct ib_wc wc[2];
	int err, i;

	err = st_uc_pair(c);
	if (!err)
		err = ib_post_recv(c->uc[1], &rwr, NULL);
	if (!err)
		err = ib_post_send(c->uc[0], &swr, NULL);
	for (i = 0; !err && i < 2; i++)
		err = st_poll(c, &wc[i]);
	if (err)
		return err;
	if (wc[0].wr_id + wc[1].wr_id != 27)
		return -EPROTO;
	return memcmp(c->buf[0], c->buf[1] + 256, len) ? -EBADMSG : 0;
}

static int st_ud_qp(struct st_ctx *c, struct ib_qp **qp)
{
	struct ib_qp_init_attr qa = {
		.send_cq = c->cq, .recv_cq = c->cq, .qp_type = IB_QPT_UD,
		.sq_sig_type = IB_SIGNAL_ALL_WR,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ib_qp_attr a = { .qp_state = IB_QPS_INIT, .port_num = 1,
				.qkey = 0x11111111 };
	int err;

	*qp = ib_create_qp(c->pd, &qa);
	if (IS_ERR(*qp))
		return PTR_ERR(*qp);
	err = ib_modify_qp(*qp, &a, IB_QP_STATE | IB_QP_PKEY_INDEX |
			   IB_QP_PORT | IB_QP_QKEY);
	if (err)
		return err;
	a.qp_state = IB_QPS_RTR;
	err = ib_modify_qp(*qp, &a, IB_QP_STATE);
	if (err)
		return err;
	a.qp_state = IB_QPS_RTS;
	a.sq_psn = 0;
	return ib_modify_qp(*qp, &a, IB_QP_STATE | IB_QP_SQ_PSN);
}

/* A UD SEND through an address handle: the bytes land after 40 of GRH. */
static int st_ud(struct st_ctx *c, u32 len)
{
	struct rdma_ah_attr ah = { .type = RDMA_AH_ATTR_TYPE_IB };
	struct ib_sge rs = { .addr = c->dma[1], .length = len + 40,
			     .lkey = c->pd->local_dma_lkey };
	struct ib_sge ss = { .addr = c->dma[0], .length = len,
			     .lkey = c->pd->local_dma_lkey };
	struct ib_recv_wr rwr = { .wr_id = 7, .sg_list = &rs, .num_sge = 1 };
	struct ib_ud_wr swr = {
		.wr = { .wr_id = 6, .sg_list = &ss, .num_sge = 1,
			.opcode = IB_WR_SEND },
		.remote_qkey = 0x11111111,
	};
	struct ib_wc wc[2];
	int err, i;

	err = st_ud_qp(c, &c->ud[0]);
	if (!err)
		err = st_ud_qp(c, &c->ud[1]);
	if (err)
		return err;
	rdma_ah_set_dlid(&ah, c->lid);
	rdma_ah_set_port_num(&ah, 1);
	c->ah = rdma_create_ah(c->pd, &ah, 0);
	if (IS_ERR(c->ah))
		return PTR_ERR(c->ah);
	swr.ah = c->ah;
	swr.remote_qpn = c->ud[1]->qp_num;
	err = ib_post_recv(c->ud[1], &rwr, NULL);
	if (!err)
		err = ib_post_send(c->ud[0], &swr.wr, NULL);
	for (i = 0; !err && i < 2; i++)
		err = st_poll(c, &wc[i]);
	if (err)
		return err;
	for (i = 0; i < 2; i++) {
		if (wc[i].wr_id != 7)
			continue;
		if (wc[i].byte_len != len + 40 ||
		    wc[i].src_qp != c->ud[0]->qp_num)
			return -EPROTO;
	}
	return memcmp(c->buf[0], c->buf[1] + 40, len) ? -EBADMSG : 0;
}

/*
 * Two receives posted, the limit armed at 2, one SEND: one receive left,
 * fewer than the limit, so the device raises SRQ_LIMIT_REACHED through the
 * event queue, and the driver's poller hands it to the SRQ's handler.
 */
static int st_srq_limit(struct st_ctx *c, const struct ib_recv_wr *rwr,
			const struct ib_send_wr *swr)
{
	struct ib_srq_attr attr = { .srq_limit = 2 };
	struct ib_wc wc[2];
	int err, i;

	for (i = 0; i < 2; i++) {
		err = ib_post_srq_recv(c->srq, rwr, NULL);
		if (err)
			return err;
	}
	err = ib_modify_srq(c->srq, &attr, IB_SRQ_LIMIT);
	if (!err)
		err = ib_query_srq(c->srq, &attr);
	if (err)
		return err;
	if (attr.srq_limit != 2)
		return -EPROTO;
	err = ib_post_send(c->sq[0], swr, NULL);
	for (i = 0; !err && i < 2; i++)
		err = st_poll(c, &wc[i]);
	if (err)
		return err;
	if (!wait_for_completion_timeout(&c->srq_event,
					 msecs_to_jiffies(ST_WAIT_MS)))
		return -ETIME;
	/* the limit reads 0 once its event fired */
	err = ib_query_srq(c->srq, &attr);
	return err ?: attr.srq_limit ? -EPROTO : 0;
}

/* SEND with immediate data, inline; then query_qp says RTS and the peer. */
static int st_imm_inline(struct st_ctx *c, u32 len)
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
	return qa.qp_state == IB_QPS_RTS &&
		qa.dest_qp_num == c->qp[1]->qp_num ? 0 : -EPROTO;
}

/*
 * A transition the device's table refuses (RTS to INIT): the driver must
 * return the errno of the command's status (EINVAL for BAD_QP_STATE) and
 * log the status and syndrome by name; the QP stays in RTS.
 */
static int st_refused(struct st_ctx *c)
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

/* An RC pair whose receiver takes its receives from an SRQ. */
static int st_srq(struct st_ctx *c, u32 len)
{
	struct ib_srq_init_attr sa = { .attr = { .max_wr = 8, .max_sge = 1 },
				       .event_handler = st_srq_event,
				       .srq_context = c };
	struct ib_qp_init_attr qa = {
		.send_cq = c->cq, .recv_cq = c->cq, .qp_type = IB_QPT_RC,
		.sq_sig_type = IB_SIGNAL_ALL_WR,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ib_sge rs = { .addr = c->dma[1] + 128, .length = len,
			     .lkey = c->pd->local_dma_lkey };
	struct ib_sge ss = { .addr = c->dma[0], .length = len,
			     .lkey = c->pd->local_dma_lkey };
	struct ib_recv_wr rwr = { .wr_id = 9, .sg_list = &rs, .num_sge = 1 };
	struct ib_send_wr swr = { .wr_id = 8, .sg_list = &ss, .num_sge = 1,
				  .opcode = IB_WR_SEND };
	struct ib_wc wc[2];
	int err, i;

	c->srq = ib_create_srq(c->pd, &sa);
	if (IS_ERR(c->srq))
		return PTR_ERR(c->srq);
	c->sq[0] = ib_create_qp(c->pd, &qa);
	if (IS_ERR(c->sq[0]))
		return PTR_ERR(c->sq[0]);
	qa.srq = c->srq;
	c->sq[1] = ib_create_qp(c->pd, &qa);
	if (IS_ERR(c->sq[1]))
		return PTR_ERR(c->sq[1]);
	err = st_connect(c->sq[0], c->sq[1]->qp_num, c->lid);
	if (!err)
		err = st_connect(c->sq[1], c->sq[0]->qp_num, c->lid);
	if (!err)
		err = ib_post_srq_recv(c->srq, &rwr, NULL);
	if (!err)
		err = ib_post_send(c->sq[0], &swr, NULL);
	for (i = 0; !err && i < 2; i++)
		err = st_poll(c, &wc[i]);
	if (err)
		return err;
	if (wc[0].wr_id + wc[1].wr_id != 17)
		return -EPROTO;
	if (memcmp(c->buf[0], c->buf[1] + 128, len))
		return -EBADMSG;
	return st_srq_limit(c, &rwr, &swr);
}

static void st_fill(struct st_ctx *c, u8 seed)
{
	u8 *p = c->buf[0];
	int i;

	for (i = 0; i < ST_BYTES; i++)
		p[i] = seed + i * 7;
}

static int st_step(const char *dev, const char *step, int err)
{
	if (err)
		pr_info("nicsim_selftest: %s: %s: error %d\n", dev, step, err);
	else
		pr_info("nicsim_selftest: %s: %s: ok\n", dev, step);
	return err;
}

static int st_add(struct ib_device *dev)
{
	struct st_ctx *c;
	const char *name = dev_name(&dev->dev);
	int err, round;

	if (strncmp(name, "nicsim_", 7))
		return -EOPNOTSUPP;
	c = kzalloc(sizeof(*c), GFP_KERNEL);
	if (!c)
		return -ENOMEM;
	c->dev = dev;
	init_completion(&c->event);
	init_completion(&c->srq_event);
	err = st_step(name, "PD, CQ, two RC QPs connected", st_setup(c));
	for (round = 0; !err && round < 3; round++) {
		st_fill(c, round);
		err = st_step(name, "SEND of 1000 bytes", st_send(c, 1000, 64, false));
	}
	if (!err) {
		st_fill(c, 100);
		err = st_step(name, "RDMA WRITE of 4096 bytes",
			      st_write(c, ST_BYTES, 0));
	}
	if (!err) {
		st_fill(c, 200);
		err = st_step(name, "SEND woken by a completion event",
			      st_send(c, 8, 0, true));
	}
	if (!err) {
		st_fill(c, 40);
		err = st_step(name, "inline SEND with immediate, query_qp",
			      st_imm_inline(c, 48));
	}
	if (!err)
		err = st_step(name, "RTS to INIT refused with EINVAL",
			      st_refused(c));
	if (!err)
		err = st_step(name, "RDMA READ of 4096 bytes, fetch-and-add, compare-and-swap",
			      st_read_atomic(c));
	if (!err) {
		st_fill(c, 50);
		err = st_step(name, "UD SEND of 256 bytes", st_ud(c, 256));
	}
	if (!err) {
		st_fill(c, 70);
		err = st_step(name, "UC SEND of 300 bytes", st_uc(c, 300));
	}
	if (!err) {
		st_fill(c, 60);
		err = st_step(name, "SEND into an SRQ, its limit event",
			      st_srq(c, 512));
	}
	st_teardown(c);
	pr_info("nicsim_selftest: %s: %s\n", name, err ? "FAIL" : "PASS");
	kfree(c);
	return 0;
}

static void st_remove(struct ib_device *dev, void *data)
{
}

static struct ib_client st_client = {
	.name = "nicsim_selftest",
	.add = st_add,
	.remove = st_remove,
};

static int __init st_init(void)
{
	return ib_register_client(&st_client);
}

static void __exit st_exit(void)
{
	ib_unregister_client(&st_client);
}

module_init(st_init);
module_exit(st_exit);
