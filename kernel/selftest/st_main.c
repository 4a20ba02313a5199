// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A kernel RDMA consumer that checks nicsim_ib against the device, as a
 * ULP would use it: on each nicsim device it makes a PD (with get_dma_mr's
 * global keys), a CQ and two RC QPs connected to each other through the
 * port's own LID, then moves bytes with SEND/RECV and RDMA WRITE, compares
 * them, takes a completion event through req_notify_cq, reads back with
 * RDMA READ, adds and swaps with atomics, sends a UD datagram through an
 * address handle, a UC SEND and a SEND into an SRQ, takes an SRQ's receives
 * out of order (st_srq.c) and QP async events (st_events.c), and
 * last registers an MR by IB_WR_REG_MR (st_fr.c). Each step
 * logs "nicsim_selftest: <device>: <step>: ok" or what went wrong, and a
 * last line "PASS" or "FAIL"; the module then stays loaded, doing nothing.
 * With two_node=1 it runs none of that: see st_peer.c.
 */
#include <linux/delay.h>
#include <linux/module.h>
#include <linux/slab.h>

#include "selftest.h"

MODULE_DESCRIPTION("Checks nicsim_ib's verbs on the device");
MODULE_LICENSE("Dual BSD/GPL");

static void st_comp(struct ib_cq *cq, void *ctx)
{
	complete(&((struct st_ctx *)ctx)->event);
}

/* Polls until one completion arrives: 0 and *wc, or an errno. */
int st_poll(struct st_ctx *c, struct ib_wc *wc)
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

int st_connect(struct ib_qp *qp, u32 dest_qpn, u16 lid)
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

	st_srq_order_teardown(c);
	st_events_teardown(c);
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

static int st_add(struct ib_device *dev);
static void st_remove(struct ib_device *dev, void *data);

static struct ib_client st_client = {
	.name = "nicsim_selftest",
	.add = st_add,
	.remove = st_remove,
};

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
	if (st_two_node) {
		err = st_step(name, "two-node: PD, CQ, an RC QP",
			      st_peer_add(c));
		if (!err) {
			/* kept until the device or the module goes */
			ib_set_client_data(dev, &st_client, c);
			return 0;
		}
		st_peer_remove(c);
		st_teardown(c);
		kfree(c);
		return err;
	}
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
	/* five, for the event's latency: the guest's time, not the device's */
	for (round = 0; !err && round < 5; round++) {
		st_fill(c, 200 + round);
		err = st_step(name, "SEND woken by a completion event",
			      st_send(c, 8, 0, true));
	}
	if (!err) {
		st_fill(c, 30);
		err = st_step(name, "solicited-only arm, then a solicited SEND",
			      st_solicited(c, 64));
	}
	if (!err) {
		st_fill(c, 40);
		/* all the inline data an RC WQE's slot holds: 128 - 48 - 4 */
		err = st_step(name, "inline SEND with immediate, query_qp",
			      st_imm_inline(c, 76));
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
	if (!err) {
		st_fill(c, 65);
		err = st_step(name, "SRQ receives completing out of order",
			      st_srq_order(c));
	}
	if (!err)
		err = st_step(name,
			      "SRQ receive never polled, its QP destroyed: its slot freed",
			      st_srq_clean(c));
	if (!err)
		err = st_step(name,
			      "QP_ACCESS_ERR from a bad rkey, QP_REQ_ERR from a denied WRITE",
			      st_events(c));
	if (!err) {
		st_fill(c, 90);
		err = st_step(name, "CQ resized with 6 completions waiting",
			      st_resize(c, 100));
	}
	if (!err) {
		st_fill(c, 80);
		err = st_step(name,
			      "REG_MR at an xid iova, WRITE, its bounds, SEND_WITH_INV, LOCAL_INV, a WRITE refused",
			      st_fastreg(c));
	}
	st_teardown(c);
	pr_info("nicsim_selftest: %s: %s\n", name, err ? "FAIL" : "PASS");
	kfree(c);
	return 0;
}

static void st_remove(struct ib_device *dev, void *data)
{
	struct st_ctx *c = data;

	if (!c)
		return;
	st_peer_remove(c);
	st_teardown(c);
	kfree(c);
}

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
