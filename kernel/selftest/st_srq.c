// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Receives from one SRQ completing out of the order they were taken: two RC
 * receivers share an SRQ of four slots, each with a receive CQ of its own.
 * The first receiver's one message takes slot 0, the second's three take
 * slots 1 to 3, and the second's CQ is polled first. Slot 0 is then still
 * in use: a fifth receive must wait for it (the adapter takes slots in ring
 * order) rather than overwrite it, and every completion must name its own
 * receive's wr_id and bytes.
 */
#include <linux/delay.h>
#include <linux/string.h>

#include "selftest.h"

#define SO_SLOTS	4
#define SO_LEN		200
#define SO_ROOM		256
#define SO_WR_ID	100

/* Polls cq until one completion arrives, as st_poll does on c->cq. */
static int so_poll(struct ib_cq *cq, struct ib_wc *wc)
{
	int waited, n;

	for (waited = 0; waited < ST_WAIT_MS; waited++) {
		n = ib_poll_cq(cq, 1, wc);
		if (n < 0)
			return n;
		if (n)
			return wc->status == IB_WC_SUCCESS ? 0 : -EIO;
		usleep_range(1000, 2000);
	}
	return -ETIMEDOUT;
}

/* Receive n (wr_id 100 + n) lands in buffer 1 at slot n's room. */
static int so_post_recv(struct st_ctx *c, u32 n)
{
	struct ib_sge rs = { .addr = c->dma[1] + (n % SO_SLOTS) * SO_ROOM,
			     .length = SO_ROOM,
			     .lkey = c->pd->local_dma_lkey };
	struct ib_recv_wr rwr = { .wr_id = SO_WR_ID + n, .sg_list = &rs,
				  .num_sge = 1 };

	return ib_post_srq_recv(c->so_srq, &rwr, NULL);
}

/* Message m: SO_LEN bytes of buffer 0 from m * SO_LEN, on sender i. */
static int so_send(struct st_ctx *c, int i, u32 m)
{
	struct ib_sge ss = { .addr = c->dma[0] + m * SO_LEN, .length = SO_LEN,
			     .lkey = c->pd->local_dma_lkey };
	struct ib_send_wr swr = { .wr_id = m, .sg_list = &ss, .num_sge = 1,
				  .opcode = IB_WR_SEND };
	struct ib_wc wc;
	int err;

	err = ib_post_send(c->so_tx[i], &swr, NULL);
	/* the send's completion: its receive was taken from the SRQ */
	return err ?: st_poll(c, &wc);
}

/* The next completion on receiver i's CQ: receive n holding message m. */
static int so_check(struct st_ctx *c, int i, u32 n, u32 m)
{
	struct ib_wc wc;
	int err;

	err = so_poll(c->so_cq[i], &wc);
	if (err)
		return err;
	if (wc.wr_id != SO_WR_ID + n || wc.byte_len != SO_LEN ||
	    wc.qp != c->so_rx[i]) {
		pr_info("nicsim_selftest: SRQ receive %u: wr_id %llu, %u bytes\n",
			n, wc.wr_id, wc.byte_len);
		return -EPROTO;
	}
	if (memcmp(c->buf[1] + (n % SO_SLOTS) * SO_ROOM,
		   c->buf[0] + m * SO_LEN, SO_LEN))
		return -EBADMSG;
	return 0;
}

static int so_setup(struct st_ctx *c)
{
	struct ib_srq_init_attr sa = {
		.attr = { .max_wr = SO_SLOTS, .max_sge = 1 } };
	struct ib_cq_init_attr ca = { .cqe = 8 };
	struct ib_qp_init_attr qa = {
		.send_cq = c->cq, .recv_cq = c->cq, .qp_type = IB_QPT_RC,
		.sq_sig_type = IB_SIGNAL_ALL_WR,
		.cap = { .max_send_wr = 4, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	int err, i;

	c->so_srq = ib_create_srq(c->pd, &sa);
	if (IS_ERR(c->so_srq))
		return PTR_ERR(c->so_srq);
	if (sa.attr.max_wr != SO_SLOTS)
		return -EPROTO;
	for (i = 0; i < 2; i++) {
		c->so_cq[i] = ib_create_cq(c->dev, NULL, NULL, c, &ca);
		if (IS_ERR(c->so_cq[i]))
			return PTR_ERR(c->so_cq[i]);
		qa.srq = NULL;
		qa.recv_cq = c->cq;
		c->so_tx[i] = ib_create_qp(c->pd, &qa);
		if (IS_ERR(c->so_tx[i]))
			return PTR_ERR(c->so_tx[i]);
		qa.srq = c->so_srq;
		qa.recv_cq = c->so_cq[i];
		c->so_rx[i] = ib_create_qp(c->pd, &qa);
		if (IS_ERR(c->so_rx[i]))
			return PTR_ERR(c->so_rx[i]);
		err = st_connect(c->so_tx[i], c->so_rx[i]->qp_num, c->lid);
		if (!err)
			err = st_connect(c->so_rx[i], c->so_tx[i]->qp_num,
					 c->lid);
		if (err)
			return err;
	}
	return 0;
}

int st_srq_order(struct st_ctx *c)
{
	u32 n;
	int err;

	err = so_setup(c);
	for (n = 0; !err && n < SO_SLOTS; n++)
		err = so_post_recv(c, n);
	/* message 0 takes slot 0 on receiver 0; messages 1..3 the others */
	for (n = 0; !err && n < SO_SLOTS; n++)
		err = so_send(c, n ? 1 : 0, n);
	for (n = 1; !err && n < SO_SLOTS; n++)
		err = so_check(c, 1, n, n);
	if (err)
		return err;
	/* three slots completed, but the adapter's next one is still taken */
	err = so_post_recv(c, SO_SLOTS);
	if (err != -ENOMEM) {
		pr_info("nicsim_selftest: SRQ post over a slot in use: %d\n",
			err);
		return err ?: -EPROTO;
	}
	err = so_check(c, 0, 0, 0);
	/* slot 0 free again: a full ring's worth, then two more messages */
	for (n = SO_SLOTS; !err && n < 2 * SO_SLOTS; n++)
		err = so_post_recv(c, n);
	for (n = SO_SLOTS; !err && n < SO_SLOTS + 2; n++)
		err = so_send(c, 1, n);
	for (n = SO_SLOTS; !err && n < SO_SLOTS + 2; n++)
		err = so_check(c, 1, n, n);
	return err;
}

/*
 * After st_srq_order: a receive completed on receiver 0 but never polled, and
 * receiver 0 destroyed. Its CQE must go with it (nicsim_cq_clean) and free its
 * slot, which otherwise stays busy and stalls the SRQ's ring at it.
 */
int st_srq_clean(struct st_ctx *c)
{
	u32 n = 2 * SO_SLOTS;
	struct ib_wc wc;
	int err;

	/* message 6 takes slot 2 (receive 6) on receiver 0: never polled */
	err = so_send(c, 0, SO_SLOTS + 2);
	/* slots 0 and 1 were polled: receives 8 and 9 take them */
	for (; !err && n < 2 * SO_SLOTS + 2; n++)
		err = so_post_recv(c, n);
	if (err)
		return err;
	err = so_post_recv(c, n);
	if (err != -ENOMEM) {
		pr_info("nicsim_selftest: SRQ post over an unpolled slot: %d\n",
			err);
		return err ?: -EPROTO;
	}
	err = ib_destroy_qp(c->so_rx[0]);
	c->so_rx[0] = NULL;
	if (err)
		return err;
	if (ib_poll_cq(c->so_cq[0], 1, &wc)) {
		pr_info("nicsim_selftest: a destroyed QP's CQE was polled\n");
		return -EPROTO;
	}
	/* slot 2 free again: receive 10 takes it, the ring full once more */
	err = so_post_recv(c, n);
	/* and it goes on: messages 7 and 8 into receives 7 and 8 */
	for (n = SO_SLOTS + 3; !err && n < 2 * SO_SLOTS + 1; n++)
		err = so_send(c, 1, n);
	for (n = SO_SLOTS + 3; !err && n < 2 * SO_SLOTS + 1; n++)
		err = so_check(c, 1, n, n);
	return err;
}

void st_srq_order_teardown(struct st_ctx *c)
{
	int i;

	for (i = 0; i < 2; i++) {
		if (!IS_ERR_OR_NULL(c->so_tx[i]))
			ib_destroy_qp(c->so_tx[i]);
		if (!IS_ERR_OR_NULL(c->so_rx[i]))
			ib_destroy_qp(c->so_rx[i]);
		if (!IS_ERR_OR_NULL(c->so_cq[i]))
			ib_destroy_cq(c->so_cq[i]);
	}
	if (!IS_ERR_OR_NULL(c->so_srq))
		ib_destroy_srq(c->so_srq);
}
