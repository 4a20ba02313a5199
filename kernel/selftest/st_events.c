// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * QP async events on the handlers a kernel consumer gave: an RDMA
 * WRITE through a bad rkey makes the responder's QP raise QP_ACCESS_ERR,
 * a WRITE its access flags deny QP_REQ_ERR. The device raises them
 * through its event queue; the driver's poller hands each to the handler
 * of the object its entry names.
 */
#include "selftest.h"

static void ev_handler(struct ib_event *ev, void *ctx)
{
	struct st_ev *e = ctx;

	/* the first event each object gets is the one checked */
	if (e->got)
		return;
	e->type = ev->event;
	e->got = true;
	complete(&e->done);
}

/* Waits for event record i; 0 when its first event was the one wanted. */
static int ev_wait(struct st_ctx *c, int i, enum ib_event_type want)
{
	struct st_ev *e = &c->ev[i];

	if (!wait_for_completion_timeout(&e->done,
					 msecs_to_jiffies(ST_WAIT_MS))) {
		pr_info("nicsim_selftest: no %s event\n",
			ib_event_msg(want));
		return -ETIME;
	}
	if (e->type != want) {
		pr_info("nicsim_selftest: event %s where %s was due\n",
			ib_event_msg(e->type), ib_event_msg(want));
		return -EPROTO;
	}
	return 0;
}

/* QPs 2k and 2k + 1 connected, each reporting to event record of its index */
static int ev_pair(struct st_ctx *c, int k)
{
	struct ib_qp_init_attr qa = {
		.send_cq = c->cq, .recv_cq = c->cq, .qp_type = IB_QPT_RC,
		.sq_sig_type = IB_SIGNAL_ALL_WR, .event_handler = ev_handler,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	int err, i;

	for (i = 2 * k; i < 2 * k + 2; i++) {
		init_completion(&c->ev[i].done);
		qa.qp_context = &c->ev[i];
		c->ev_qp[i] = ib_create_qp(c->pd, &qa);
		if (IS_ERR(c->ev_qp[i]))
			return PTR_ERR(c->ev_qp[i]);
	}
	err = st_connect(c->ev_qp[2 * k], c->ev_qp[2 * k + 1]->qp_num, c->lid);
	return err ?: st_connect(c->ev_qp[2 * k + 1], c->ev_qp[2 * k]->qp_num,
				 c->lid);
}

static int ev_write(struct st_ctx *c, struct ib_qp *qp, u32 rkey, u64 id)
{
	struct ib_sge ss = { .addr = c->dma[0], .length = 64,
			     .lkey = c->pd->local_dma_lkey };
	struct ib_rdma_wr wr = {
		.wr = { .wr_id = id, .sg_list = &ss, .num_sge = 1,
			.opcode = IB_WR_RDMA_WRITE },
		.remote_addr = c->dma[1], .rkey = rkey,
	};

	return ib_post_send(qp, &wr.wr, NULL);
}

/* A WRITE under a key byte the adapter never gave: QP_ACCESS_ERR. */
static int ev_access(struct st_ctx *c)
{
	struct ib_wc wc;
	int err;

	err = ev_pair(c, 0);
	if (!err)
		err = ev_write(c, c->ev_qp[0],
			       c->pd->unsafe_global_rkey ^ 0x5a, 1);
	if (!err)
		err = st_poll(c, &wc);
	if (err != -EIO || wc.status != IB_WC_REM_ACCESS_ERR) {
		pr_info("nicsim_selftest: a WRITE under a bad rkey: %d\n", err);
		return err ?: -EPROTO;
	}
	return ev_wait(c, 1, IB_EVENT_QP_ACCESS_ERR);
}

/*
 * A WRITE to a responder whose access flags (RTS to RTS) no longer allow
 * remote writes: QP_REQ_ERR, the device's event for an operation the
 * responder QP does not take.
 */
static int ev_denied(struct st_ctx *c)
{
	struct ib_qp_attr a = { .qp_state = IB_QPS_RTS,
				.qp_access_flags = IB_ACCESS_LOCAL_WRITE };
	struct ib_wc wc;
	int err;

	err = ev_pair(c, 1);
	if (!err)
		err = ib_modify_qp(c->ev_qp[3], &a,
				   IB_QP_STATE | IB_QP_ACCESS_FLAGS);
	if (!err)
		err = ev_write(c, c->ev_qp[2], c->pd->unsafe_global_rkey, 2);
	if (!err)
		err = st_poll(c, &wc);
	if (err != -EIO || wc.status != IB_WC_REM_INV_REQ_ERR) {
		pr_info("nicsim_selftest: a WRITE the responder denies: %d\n",
			err);
		return err ?: -EPROTO;
	}
	return ev_wait(c, 3, IB_EVENT_QP_REQ_ERR);
}

int st_events(struct st_ctx *c)
{
	return ev_access(c) ?: ev_denied(c);
}

void st_events_teardown(struct st_ctx *c)
{
	int i;

	for (i = 0; i < ARRAY_SIZE(c->ev_qp); i++)
		if (!IS_ERR_OR_NULL(c->ev_qp[i]))
			ib_destroy_qp(c->ev_qp[i]);
}
