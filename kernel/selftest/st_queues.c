// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The selftest's steps on QPs of their own: UD through an address handle,
 * UC, and an RC pair receiving from an SRQ whose limit raises an event.
 */
#include <linux/string.h>

#include "selftest.h"

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
int st_ud(struct st_ctx *c, u32 len)
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
int st_uc(struct st_ctx *c, u32 len)
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

static void st_srq_event(struct ib_event *ev, void *ctx)
{
	if (ev->event == IB_EVENT_SRQ_LIMIT_REACHED)
		complete(&((struct st_ctx *)ctx)->srq_event);
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

/* An RC pair whose receiver takes its receives from an SRQ. */
int st_srq(struct st_ctx *c, u32 len)
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
