// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The selftest's CQ resize: completions left in the ring while ib_resize_cq
 * moves it (the adapter copies them to the new ring's first entries), a
 * shrink below what waits refused, and the ring taking new ones after.
 */
#include <linux/delay.h>
#include <linux/string.h>

#include "selftest.h"

/* n SENDs of len bytes on the RC pair, none polled: 2n completions wait. */
static int st_cq_sends(struct st_ctx *c, u32 len, int n)
{
	struct ib_sge rs = { .addr = c->dma[1], .length = len,
			     .lkey = c->pd->local_dma_lkey };
	struct ib_sge ss = { .addr = c->dma[0], .length = len,
			     .lkey = c->pd->local_dma_lkey };
	struct ib_recv_wr rwr = { .sg_list = &rs, .num_sge = 1 };
	struct ib_send_wr swr = { .sg_list = &ss, .num_sge = 1,
				  .opcode = IB_WR_SEND,
				  .send_flags = IB_SEND_SIGNALED };
	int err = 0, i;

	for (i = 0; !err && i < n; i++) {
		rwr.wr_id = 100 + i;
		swr.wr_id = 200 + i;
		err = ib_post_recv(c->qp[1], &rwr, NULL) ?:
			ib_post_send(c->qp[0], &swr, NULL);
	}
	return err;
}

/* Polls 2n completions: each send's and receive's wr_id once. */
static int st_cq_take(struct st_ctx *c, int n)
{
	unsigned long seen = 0;
	struct ib_wc wc;
	int err, i, bit;

	for (i = 0; i < 2 * n; i++) {
		err = st_poll(c, &wc);
		if (err)
			return err;
		bit = wc.wr_id >= 200 ? n + wc.wr_id - 200 : wc.wr_id - 100;
		if (bit < 0 || bit >= 2 * n || (seen & BIT(bit)))
			return -EPROTO;
		seen |= BIT(bit);
	}
	return 0;
}

int st_resize(struct st_ctx *c, u32 len)
{
	int err, waiting = 6;

	err = st_cq_sends(c, len, waiting / 2);
	/* the sends' completions land before the ring moves */
	msleep(200);
	if (err)
		return err;
	/* fewer entries than completions waiting: refused, the ring kept */
	err = ib_resize_cq(c->cq, waiting - 3);
	if (err != -EINVAL) {
		pr_info("nicsim_selftest: a resize below what waits: %d\n", err);
		return -EPROTO;
	}
	err = ib_resize_cq(c->cq, 200);
	if (err)
		return err;
	if (c->cq->cqe != 255)
		return -EMSGSIZE;
	err = st_cq_take(c, waiting / 2);
	if (!err)
		err = st_cq_sends(c, len, 2);
	if (!err)
		err = st_cq_take(c, 2);
	return err ?: memcmp(c->buf[0], c->buf[1], len) ? -EBADMSG : 0;
}
