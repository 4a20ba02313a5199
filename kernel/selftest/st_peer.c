// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The two-node mode (two_node=1): one RC QP on this guest's adapter talks
 * to the QP of another guest's adapter across the simulated fabric. The
 * guests exchange what the other needs over their own network (a shell
 * script with nc), so the module offers it through sysfs:
 *
 *   parameters/local  (read)   "qpn lid rkey addr" of this side
 *   parameters/peer   (write)  the other side's line: connects the QP
 *   parameters/run    (write)  RDMA WRITE 4096 bytes into the peer's addr,
 *                              then SEND 1000 bytes; waits for the peer's
 *                              own WRITE and SEND and checks their bytes
 *
 * A side writes "run" only once both are connected (the script's second
 * exchange), so a SEND never finds its receiver short of RTR. RC ordering
 * makes the peer's WRITE land before its SEND completes here, so one
 * receive completion tells both areas are final. Each side fills its
 * source with a pattern of its own LID and checks the peer's pattern.
 */
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/slab.h>

#include "selftest.h"

#define ST_PEER_SEND	1000
/* areas of the one buffer: what this side sends, then what it receives */
#define ST_SRC		0
#define ST_RECV		ST_BYTES
#define ST_WRITTEN	(2 * ST_BYTES)
#define ST_AREAS	(3 * ST_BYTES)

bool st_two_node;
module_param_named(two_node, st_two_node, bool, 0444);
MODULE_PARM_DESC(two_node, "one QP to another guest's adapter, driven by sysfs (see st_peer.c)");

static char st_local[64];
module_param_string(local, st_local, sizeof(st_local), 0444);
MODULE_PARM_DESC(local, "this side: qpn lid rkey addr (read it)");

static DEFINE_MUTEX(st_peer_lock);
static struct st_ctx *st_peer_ctx;	/* under st_peer_lock */
static u32 st_peer_lid;
static u32 st_peer_rkey;
static u64 st_peer_addr;

static void st_peer_fill(u8 *p, u32 lid)
{
	int i;

	for (i = 0; i < ST_BYTES; i++)
		p[i] = lid * 31 + i * 7;
}

/* Makes the PD, CQ, QP and buffer on @c->dev; says what the peer needs. */
int st_peer_add(struct st_ctx *c)
{
	struct ib_cq_init_attr cq_attr = { .cqe = 16 };
	struct ib_qp_init_attr qa = {
		.qp_type = IB_QPT_RC, .sq_sig_type = IB_SIGNAL_REQ_WR,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ib_port_attr port;
	int err;

	err = ib_query_port(c->dev, 1, &port);
	if (err)
		return err;
	c->lid = port.lid;
	c->pd = ib_alloc_pd(c->dev, IB_PD_UNSAFE_GLOBAL_RKEY);
	if (IS_ERR(c->pd))
		return PTR_ERR(c->pd);
	c->cq = ib_create_cq(c->dev, NULL, NULL, c, &cq_attr);
	if (IS_ERR(c->cq))
		return PTR_ERR(c->cq);
	qa.send_cq = c->cq;
	qa.recv_cq = c->cq;
	c->qp[0] = ib_create_qp(c->pd, &qa);
	if (IS_ERR(c->qp[0]))
		return PTR_ERR(c->qp[0]);
	c->buf[0] = kzalloc(ST_AREAS, GFP_KERNEL);
	if (!c->buf[0])
		return -ENOMEM;
	c->dma[0] = ib_dma_map_single(c->dev, c->buf[0], ST_AREAS,
				      DMA_BIDIRECTIONAL);
	if (ib_dma_mapping_error(c->dev, c->dma[0])) {
		c->dma[0] = 0;
		return -ENOMEM;
	}
	st_peer_fill(c->buf[0] + ST_SRC, c->lid);
	snprintf(st_local, sizeof(st_local), "%u %u 0x%x 0x%llx",
		 c->qp[0]->qp_num, c->lid, c->pd->unsafe_global_rkey,
		 c->dma[0] + ST_WRITTEN);
	mutex_lock(&st_peer_lock);
	st_peer_ctx = c;
	mutex_unlock(&st_peer_lock);
	pr_info("nicsim_selftest: %s: two-node: local %s\n",
		dev_name(&c->dev->dev), st_local);
	return 0;
}

/* Forgets @c before its objects go; st_teardown then destroys them. */
void st_peer_remove(struct st_ctx *c)
{
	mutex_lock(&st_peer_lock);
	if (st_peer_ctx == c)
		st_peer_ctx = NULL;
	mutex_unlock(&st_peer_lock);
	if (c->dma[0])
		ib_dma_unmap_single(c->dev, c->dma[0], ST_AREAS,
				    DMA_BIDIRECTIONAL);
	c->dma[0] = 0;
	kfree(c->buf[0]);
	c->buf[0] = NULL;
}

/* Connects to the peer, then posts the one receive its SEND will take. */
static int st_peer_connect(struct st_ctx *c, u32 qpn, u32 lid)
{
	struct ib_sge rs = { .addr = c->dma[0] + ST_RECV, .length = ST_BYTES,
			     .lkey = c->pd->local_dma_lkey };
	struct ib_recv_wr rwr = { .wr_id = 2, .sg_list = &rs, .num_sge = 1 };
	int err;

	err = st_connect(c->qp[0], qpn, lid);
	return err ?: ib_post_recv(c->qp[0], &rwr, NULL);
}

static int st_peer_set(const char *val, const struct kernel_param *kp)
{
	u32 qpn, lid, rkey;
	u64 addr;
	int err;

	if (sscanf(val, "%u %u %x %llx", &qpn, &lid, &rkey, &addr) != 4) {
		pr_info("nicsim_selftest: peer '%s': expected 'qpn lid rkey addr'\n",
			val);
		return -EINVAL;
	}
	mutex_lock(&st_peer_lock);
	err = -ENODEV;
	if (st_peer_ctx && st_peer_lid)
		err = -EISCONN;
	else if (st_peer_ctx)
		err = st_peer_connect(st_peer_ctx, qpn, lid);
	if (!err) {
		st_peer_lid = lid;
		st_peer_rkey = rkey;
		st_peer_addr = addr;
	}
	mutex_unlock(&st_peer_lock);
	pr_info("nicsim_selftest: two-node: connected to QP %u at LID %u: %d\n",
		qpn, lid, err);
	return err;
}

/* The WRITE then the SEND to the peer, and the peer's SEND received. */
static int st_peer_exchange(struct st_ctx *c)
{
	struct ib_sge ss = { .addr = c->dma[0] + ST_SRC, .length = ST_BYTES,
			     .lkey = c->pd->local_dma_lkey };
	struct ib_rdma_wr wr = {
		.wr = { .wr_id = 3, .sg_list = &ss, .num_sge = 1,
			.opcode = IB_WR_RDMA_WRITE,
			.send_flags = IB_SEND_SIGNALED },
		.remote_addr = st_peer_addr,
		.rkey = st_peer_rkey,
	};
	struct ib_sge ss2 = ss;
	struct ib_send_wr swr = { .wr_id = 1, .sg_list = &ss2, .num_sge = 1,
				  .opcode = IB_WR_SEND,
				  .send_flags = IB_SEND_SIGNALED };
	u8 *want;
	struct ib_wc wc;
	int err, i, seen = 0;

	ss2.length = ST_PEER_SEND;
	err = ib_post_send(c->qp[0], &wr.wr, NULL);
	if (!err)
		err = ib_post_send(c->qp[0], &swr, NULL);
	/* wr_ids 3 (WRITE), 1 (SEND) and 2 (the peer's SEND): one bit each */
	for (i = 0; !err && i < 3; i++) {
		err = st_poll(c, &wc);
		if (err)
			break;
		if (wc.wr_id > 3 || (seen & BIT(wc.wr_id)))
			err = -EPROTO;
		else if (wc.wr_id == 2 && wc.byte_len != ST_PEER_SEND)
			err = -EMSGSIZE;
		seen |= BIT(wc.wr_id & 3);
	}
	if (err)
		return err;
	want = kmalloc(ST_BYTES, GFP_KERNEL);
	if (!want)
		return -ENOMEM;
	st_peer_fill(want, st_peer_lid);
	if (memcmp(c->buf[0] + ST_RECV, want, ST_PEER_SEND))
		err = -EBADMSG;
	else if (memcmp(c->buf[0] + ST_WRITTEN, want, ST_BYTES))
		err = -EBADMSG;
	kfree(want);
	return err;
}

static int st_run_set(const char *val, const struct kernel_param *kp)
{
	const char *name = "none";
	int err = -ENODEV;

	mutex_lock(&st_peer_lock);
	if (st_peer_ctx && !st_peer_lid)
		err = -ENOTCONN;
	else if (st_peer_ctx)
		err = st_peer_exchange(st_peer_ctx);
	if (st_peer_ctx)
		name = dev_name(&st_peer_ctx->dev->dev);
	mutex_unlock(&st_peer_lock);
	pr_info("nicsim_selftest: %s: two-node WRITE of %u and SEND of %u bytes each way: %s (%d)\n",
		name, ST_BYTES, ST_PEER_SEND, err ? "FAIL" : "PASS", err);
	return err;
}

static const struct kernel_param_ops st_peer_ops = { .set = st_peer_set };
static const struct kernel_param_ops st_run_ops = { .set = st_run_set };
module_param_cb(peer, &st_peer_ops, NULL, 0200);
MODULE_PARM_DESC(peer, "the other side's 'qpn lid rkey addr' (write it)");
module_param_cb(run, &st_run_ops, NULL, 0200);
MODULE_PARM_DESC(run, "write 1: the exchange with the peer; fails if it does");
