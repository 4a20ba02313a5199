// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Queue pairs: CREATE_QP on rings the driver allocates (a send ring of
 * 64-byte WQEBBs, a receive ring, a doorbell record), MODIFY_QP, QUERY_QP and
 * DESTROY_QP (docs/device.md, "Send queues", "Receive queues", "QP states").
 * ib_mad's QP0 and QP1 are the port's special QPs: UD QPs the adapter binds to
 * QP0 and QP1 ("Management: QP0 and QP1"), whose device QPN only the
 * doorbells and CQEs carry.
 */
#include <linux/build_bug.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/nicsim-abi.h>

#include "nicsim.h"

/* MODIFY_QP's mask is libibverbs' and the kernel's IB_QP_* numbering. */
#define NICSIM_QP_ATTR_ALL	(NICSIM_QP_ATTR_DEST_QPN * 2 - 1)

#define NICSIM_MAX_LOG_WQ	15

static void nicsim_qp_mask_check(void)
{
	BUILD_BUG_ON(IB_QP_STATE != NICSIM_QP_ATTR_STATE);
	BUILD_BUG_ON(IB_QP_CUR_STATE != NICSIM_QP_ATTR_CUR_STATE);
	BUILD_BUG_ON(IB_QP_EN_SQD_ASYNC_NOTIFY !=
		     NICSIM_QP_ATTR_EN_SQD_ASYNC_NOTIFY);
	BUILD_BUG_ON(IB_QP_ACCESS_FLAGS != NICSIM_QP_ATTR_ACCESS_FLAGS);
	BUILD_BUG_ON(IB_QP_PKEY_INDEX != NICSIM_QP_ATTR_PKEY_INDEX);
	BUILD_BUG_ON(IB_QP_PORT != NICSIM_QP_ATTR_PORT);
	BUILD_BUG_ON(IB_QP_QKEY != NICSIM_QP_ATTR_QKEY);
	BUILD_BUG_ON(IB_QP_AV != NICSIM_QP_ATTR_AV);
	BUILD_BUG_ON(IB_QP_PATH_MTU != NICSIM_QP_ATTR_PATH_MTU);
	BUILD_BUG_ON(IB_QP_TIMEOUT != NICSIM_QP_ATTR_TIMEOUT);
	BUILD_BUG_ON(IB_QP_RETRY_CNT != NICSIM_QP_ATTR_RETRY_CNT);
	BUILD_BUG_ON(IB_QP_RNR_RETRY != NICSIM_QP_ATTR_RNR_RETRY);
	BUILD_BUG_ON(IB_QP_RQ_PSN != NICSIM_QP_ATTR_RQ_PSN);
	BUILD_BUG_ON(IB_QP_MAX_QP_RD_ATOMIC != NICSIM_QP_ATTR_MAX_QP_RD_ATOMIC);
	BUILD_BUG_ON(IB_QP_ALT_PATH != NICSIM_QP_ATTR_ALT_PATH);
	BUILD_BUG_ON(IB_QP_MIN_RNR_TIMER != NICSIM_QP_ATTR_MIN_RNR_TIMER);
	BUILD_BUG_ON(IB_QP_SQ_PSN != NICSIM_QP_ATTR_SQ_PSN);
	BUILD_BUG_ON(IB_QP_MAX_DEST_RD_ATOMIC !=
		     NICSIM_QP_ATTR_MAX_DEST_RD_ATOMIC);
	BUILD_BUG_ON(IB_QP_PATH_MIG_STATE != NICSIM_QP_ATTR_PATH_MIG_STATE);
	BUILD_BUG_ON(IB_QP_CAP != NICSIM_QP_ATTR_CAP);
	BUILD_BUG_ON(IB_QP_DEST_QPN != NICSIM_QP_ATTR_DEST_QPN);
	BUILD_BUG_ON(IB_QPT_RC != NICSIM_QPT_RC);
	BUILD_BUG_ON(IB_QPT_UC != NICSIM_QPT_UC);
	BUILD_BUG_ON(IB_QPT_UD != NICSIM_QPT_UD);
	BUILD_BUG_ON(IB_QPT_SMI != NICSIM_QPT_SMI);
	BUILD_BUG_ON(IB_QPT_GSI != NICSIM_QPT_GSI);
	BUILD_BUG_ON(IB_QPS_RESET != NICSIM_QPS_RESET);
	BUILD_BUG_ON(IB_QPS_ERR != NICSIM_QPS_ERR);
}

/*
 * The WQEBBs a send WQE's slot takes, or 0: the largest WQE these
 * capabilities allow, and at least NICSIM_MIN_SEND_WQEBBS, as the device's
 * other drivers size it. The inline data the slot holds goes to *room (at
 * least what was asked, at most the device's limit), which is what the QP
 * grants: mlx5 reports its spare room so, and consumers written against it
 * post a few bytes inline on a QP that asked for none.
 */
static u32 nicsim_sq_wqebbs(struct nicsim_dev *dev, struct ib_qp_init_attr *a,
			    u32 *room)
{
	u32 data = max_t(u32, a->cap.max_send_sge * NICSIM_WQE_DS_UNIT,
			 ALIGN(NICSIM_WQE_INLINE_SEG_DATA + a->cap.max_inline_data,
			       NICSIM_WQE_DS_UNIT));
	/*
	 * a UD WQE has the address vector, the others may have both the
	 * remote-address and the atomic segment
	 */
	u32 head = NICSIM_WQE_CTRL_SEG_BYTES + (nicsim_qp_type_ud(a->qp_type) ?
		NICSIM_AV_BYTES : 2 * NICSIM_WQE_DS_UNIT);
	u32 wqebbs = DIV_ROUND_UP(head + data, NICSIM_WQEBB);

	if (a->cap.max_send_sge > dev->caps.max_sge ||
	    a->cap.max_inline_data > dev->caps.max_inline ||
	    wqebbs > NICSIM_MAX_WQEBBS)
		return 0;
	wqebbs = max_t(u32, wqebbs, NICSIM_MIN_SEND_WQEBBS);
	*room = min_t(u32, wqebbs * NICSIM_WQEBB - head -
		      NICSIM_WQE_INLINE_SEG_DATA, dev->caps.max_inline);
	return wqebbs;
}

/* Ring sizes from the capabilities asked for; the capabilities granted. */
static int nicsim_qp_sizes(struct nicsim_dev *dev, struct nicsim_qp *qp,
			   struct ib_qp_init_attr *a)
{
	u32 room = 0, wqebbs = nicsim_sq_wqebbs(dev, a, &room);
	u32 send_wr = max_t(u32, a->cap.max_send_wr, 1);
	u32 recv_wr = max_t(u32, a->cap.max_recv_wr, 1);

	if (!wqebbs || send_wr > dev->caps.max_qp_wr ||
	    recv_wr > dev->caps.max_qp_wr ||
	    a->cap.max_recv_sge > dev->caps.max_sge)
		return -EINVAL;
	qp->sq.log_size = max_t(u32, 1, order_base_2(send_wr * wqebbs));
	if (a->srq) {
		qp->rq.log_size = 0;
		qp->rq_stride_log = 4;
	} else {
		qp->rq.log_size = order_base_2(recv_wr);
		/* room for the data segments and the list's end */
		qp->rq_stride_log = order_base_2((a->cap.max_recv_sge + 1) *
						 NICSIM_WQE_DS_UNIT);
	}
	if (qp->sq.log_size > NICSIM_MAX_LOG_WQ ||
	    qp->rq.log_size > NICSIM_MAX_LOG_WQ)
		return -EINVAL;
	a->cap.max_send_wr = BIT(qp->sq.log_size) / wqebbs;
	a->cap.max_inline_data = room;
	if (!a->srq)
		a->cap.max_recv_wr = BIT(qp->rq.log_size);
	qp->cap = a->cap;
	qp->sq.offset = 0;
	qp->rq.offset = PAGE_ALIGN(NICSIM_WQEBB << qp->sq.log_size);
	qp->dbrec_offset = qp->rq.offset +
		PAGE_ALIGN(BIT(qp->rq.log_size + qp->rq_stride_log));
	return 0;
}

static int nicsim_qp_kernel_init(struct nicsim_qp *qp)
{
	qp->sq.wr_ids = kcalloc(BIT(qp->sq.log_size), sizeof(u64), GFP_KERNEL);
	qp->sq_wqebbs = kcalloc(BIT(qp->sq.log_size), sizeof(u16), GFP_KERNEL);
	qp->rq.wr_ids = kcalloc(BIT(qp->rq.log_size), sizeof(u64), GFP_KERNEL);
	if (!qp->sq.wr_ids || !qp->sq_wqebbs || !qp->rq.wr_ids)
		return -ENOMEM;
	return 0;
}

static void nicsim_qp_kernel_free(struct nicsim_qp *qp)
{
	kfree(qp->sq.wr_ids);
	kfree(qp->sq_wqebbs);
	kfree(qp->rq.wr_ids);
}

static int nicsim_qp_user_resp(struct nicsim_qp *qp, struct ib_udata *udata,
			       struct nicsim_ucontext *ctx)
{
	struct nicsim_ibv_create_qp_resp resp = {};

	resp.qpn = qp->qpn;
	resp.uar = qp->uar;
	resp.sq_log_size = qp->sq.log_size;
	resp.rq_log_size = qp->rq.log_size;
	resp.rq_stride_log = qp->rq_stride_log;
	resp.sq_offset = qp->sq.offset;
	resp.rq_offset = qp->rq.offset;
	resp.dbrec_offset = qp->dbrec_offset;
	resp.mmap_size = qp->buf.size;
	qp->entry = nicsim_mmap_insert_buf(&ctx->ibucontext, &qp->buf,
					   &resp.mmap_key);
	if (!qp->entry)
		return -ENOMEM;
	return ib_copy_to_udata(udata, &resp, min(sizeof(resp), udata->outlen));
}

int nicsim_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *attr,
		     struct ib_udata *udata)
{
	struct nicsim_dev *dev = to_ndev(ibqp->device);
	struct nicsim_qp *qp = to_nqp(ibqp);
	struct nicsim_ucontext *ctx = NULL;
	u64 in[NICSIM_CREATE_QP_IN_WORDS];
	int err;

	nicsim_qp_mask_check();
	if (attr->qp_type != IB_QPT_RC && attr->qp_type != IB_QPT_UC &&
	    !nicsim_qp_type_ud(attr->qp_type))
		return -EOPNOTSUPP;
	/* QP0 and QP1 are the MAD layer's, in the kernel */
	if (nicsim_qp_special(attr->qp_type) &&
	    (udata || attr->port_num != NICSIM_PORT))
		return -EINVAL;
	if (attr->create_flags)
		return -EOPNOTSUPP;
	if (udata)
		ctx = rdma_udata_to_drv_context(udata, struct nicsim_ucontext,
						ibucontext);
	err = nicsim_qp_sizes(dev, qp, attr);
	if (err)
		return err;
	spin_lock_init(&qp->sq_lock);
	spin_lock_init(&qp->rq_lock);
	qp->uar = ctx ? ctx->uar : dev->kuar;
	qp->signal_all = attr->sq_sig_type == IB_SIGNAL_ALL_WR;
	qp->state = IB_QPS_RESET;
	err = nicsim_buf_alloc(dev, &qp->buf, qp->dbrec_offset + PAGE_SIZE);
	if (err)
		return err;
	if (!ctx) {
		err = nicsim_qp_kernel_init(qp);
		if (err)
			goto err_buf;
	}

	in[NICSIM_CREATE_QP_IN_TYPE] = attr->qp_type;
	in[NICSIM_CREATE_QP_IN_PD] = to_npd(ibqp->pd)->pdn;
	in[NICSIM_CREATE_QP_IN_SEND_CQ] = to_ncq(attr->send_cq)->cqn;
	in[NICSIM_CREATE_QP_IN_RECV_CQ] = to_ncq(attr->recv_cq)->cqn;
	in[NICSIM_CREATE_QP_IN_UAR] = qp->uar;
	in[NICSIM_CREATE_QP_IN_SQ_ADDR] = qp->buf.dma + qp->sq.offset;
	in[NICSIM_CREATE_QP_IN_SQ_LOG_SIZE] = qp->sq.log_size;
	in[NICSIM_CREATE_QP_IN_RQ_ADDR] = qp->buf.dma + qp->rq.offset;
	in[NICSIM_CREATE_QP_IN_RQ_LOG_SIZE] = qp->rq.log_size;
	in[NICSIM_CREATE_QP_IN_RQ_STRIDE_LOG] = qp->rq_stride_log;
	in[NICSIM_CREATE_QP_IN_DBREC] = qp->buf.dma + qp->dbrec_offset;
	in[NICSIM_CREATE_QP_IN_FLAGS] =
		qp->signal_all ? NICSIM_QP_FLAG_SIGNAL_ALL : 0;
	in[NICSIM_CREATE_QP_IN_SRQ] = attr->srq ? to_nsrq(attr->srq)->srqn : 0;
	err = nicsim_cmd_handle(dev, NICSIM_CMD_CREATE_QP, in,
				NICSIM_CREATE_QP_IN_WORDS, &qp->qpn);
	if (err)
		goto err_kernel;
	/* ib_mad knows its QPs by 0 and 1; the adapter by their QPN */
	ibqp->qp_num = nicsim_qp_special(attr->qp_type) ?
		attr->qp_type == IB_QPT_GSI : qp->qpn;
	err = xa_insert(&dev->qps, qp->qpn, qp, GFP_KERNEL);
	if (err)
		goto err_cmd;
	if (ctx) {
		err = nicsim_qp_user_resp(qp, udata, ctx);
		if (err)
			goto err_xa;
	}
	return 0;

err_xa:
	xa_erase(&dev->qps, qp->qpn);
err_cmd:
	nicsim_cmd_destroy(dev, NICSIM_CMD_DESTROY_QP, qp->qpn);
err_kernel:
	nicsim_qp_kernel_free(qp);
err_buf:
	if (qp->entry)
		rdma_user_mmap_entry_remove(qp->entry);
	nicsim_buf_free(dev, &qp->buf);
	return err;
}

/* Back in RESET, a kernel QP's rings start again from 0. */
static void nicsim_qp_reset(struct nicsim_qp *qp)
{
	unsigned long flags;

	if (!qp->buf.va)
		return;
	spin_lock_irqsave(&qp->sq_lock, flags);
	qp->sq.head = 0;
	qp->sq.tail = 0;
	spin_unlock_irqrestore(&qp->sq_lock, flags);
	spin_lock_irqsave(&qp->rq_lock, flags);
	qp->rq.head = 0;
	qp->rq.tail = 0;
	spin_unlock_irqrestore(&qp->rq_lock, flags);
	memset(qp->buf.va + qp->dbrec_offset, 0, 8);
}

int nicsim_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr,
		     int mask, struct ib_udata *udata)
{
	struct nicsim_dev *dev = to_ndev(ibqp->device);
	struct nicsim_qp *qp = to_nqp(ibqp);
	u64 in[NICSIM_MODIFY_QP_IN_WORDS] = {};
	enum ib_qp_state cur, next;
	int err;

	if (mask & ~NICSIM_QP_ATTR_ALL)
		return -EOPNOTSUPP;
	cur = mask & IB_QP_CUR_STATE ? attr->cur_qp_state : qp->state;
	next = mask & IB_QP_STATE ? attr->qp_state : cur;
	/*
	 * The kernel's table has QP0/QP1 enter INIT without a port; the
	 * adapter's, UD's, wants one: theirs is the port they were made on.
	 */
	if (nicsim_qp_special(ibqp->qp_type) && cur == IB_QPS_RESET &&
	    next == IB_QPS_INIT)
		mask |= IB_QP_PORT;
	in[NICSIM_MODIFY_QP_IN_QPN] = qp->qpn;
	in[NICSIM_MODIFY_QP_IN_MASK] = mask;
	in[NICSIM_MODIFY_QP_IN_CUR_STATE] = cur;
	in[NICSIM_MODIFY_QP_IN_STATE] = next;
	if (mask & IB_QP_ACCESS_FLAGS)
		in[NICSIM_MODIFY_QP_IN_ACCESS] = attr->qp_access_flags &
			(IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE |
			 IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_ATOMIC);
	if (mask & IB_QP_QKEY)
		in[NICSIM_MODIFY_QP_IN_QKEY] = attr->qkey;
	if (mask & IB_QP_PATH_MTU)
		in[NICSIM_MODIFY_QP_IN_PATH_MTU] = attr->path_mtu;
	if (mask & IB_QP_DEST_QPN)
		in[NICSIM_MODIFY_QP_IN_DEST_QPN] = attr->dest_qp_num;
	if (mask & IB_QP_RQ_PSN)
		in[NICSIM_MODIFY_QP_IN_RQ_PSN] = attr->rq_psn;
	if (mask & IB_QP_SQ_PSN)
		in[NICSIM_MODIFY_QP_IN_SQ_PSN] = attr->sq_psn;
	if (mask & IB_QP_AV)
		in[NICSIM_MODIFY_QP_IN_DLID] = rdma_ah_get_dlid(&attr->ah_attr);
	if (mask & IB_QP_TIMEOUT)
		in[NICSIM_MODIFY_QP_IN_TIMEOUT] = attr->timeout;
	if (mask & IB_QP_RETRY_CNT)
		in[NICSIM_MODIFY_QP_IN_RETRY_CNT] = attr->retry_cnt;
	if (mask & IB_QP_RNR_RETRY)
		in[NICSIM_MODIFY_QP_IN_RNR_RETRY] = attr->rnr_retry;
	if (mask & IB_QP_MIN_RNR_TIMER)
		in[NICSIM_MODIFY_QP_IN_MIN_RNR_TIMER] = attr->min_rnr_timer;
	if (mask & IB_QP_MAX_QP_RD_ATOMIC)
		in[NICSIM_MODIFY_QP_IN_MAX_RD_ATOMIC] = attr->max_rd_atomic;
	if (mask & IB_QP_MAX_DEST_RD_ATOMIC)
		in[NICSIM_MODIFY_QP_IN_MAX_DEST_RD_ATOMIC] =
			attr->max_dest_rd_atomic;
	in[NICSIM_MODIFY_QP_IN_PORT] = NICSIM_PORT;
	if (mask & IB_QP_PORT && !nicsim_qp_special(ibqp->qp_type))
		in[NICSIM_MODIFY_QP_IN_PORT] = attr->port_num;
	if (mask & IB_QP_PKEY_INDEX)
		in[NICSIM_MODIFY_QP_IN_PKEY_INDEX] = attr->pkey_index;
	err = nicsim_cmd_exec(dev, NICSIM_CMD_MODIFY_QP, in,
			      NICSIM_MODIFY_QP_IN_WORDS, NULL, 0);
	if (err)
		return err;
	qp->state = next;
	if (next == IB_QPS_RESET && !udata)
		nicsim_qp_reset(qp);
	return 0;
}

int nicsim_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		    struct ib_qp_init_attr *init_attr)
{
	struct nicsim_dev *dev = to_ndev(ibqp->device);
	struct nicsim_qp *qp = to_nqp(ibqp);
	u64 out[NICSIM_QUERY_QP_OUT_WORDS];
	u64 in = qp->qpn;
	int err;

	err = nicsim_cmd_exec(dev, NICSIM_CMD_QUERY_QP, &in, 1, out,
			      NICSIM_QUERY_QP_OUT_WORDS);
	if (err)
		return err;
	memset(attr, 0, sizeof(*attr));
	memset(init_attr, 0, sizeof(*init_attr));
	attr->qp_state = out[NICSIM_QUERY_QP_OUT_STATE];
	attr->cur_qp_state = attr->qp_state;
	attr->qp_access_flags = out[NICSIM_QUERY_QP_OUT_ACCESS];
	attr->qkey = out[NICSIM_QUERY_QP_OUT_QKEY];
	attr->path_mtu = out[NICSIM_QUERY_QP_OUT_PATH_MTU];
	attr->dest_qp_num = out[NICSIM_QUERY_QP_OUT_DEST_QPN];
	attr->rq_psn = out[NICSIM_QUERY_QP_OUT_RQ_PSN];
	attr->sq_psn = out[NICSIM_QUERY_QP_OUT_SQ_PSN];
	attr->ah_attr.type = RDMA_AH_ATTR_TYPE_IB;
	rdma_ah_set_dlid(&attr->ah_attr, out[NICSIM_QUERY_QP_OUT_DLID]);
	rdma_ah_set_port_num(&attr->ah_attr, NICSIM_PORT);
	attr->timeout = out[NICSIM_QUERY_QP_OUT_TIMEOUT];
	attr->retry_cnt = out[NICSIM_QUERY_QP_OUT_RETRY_CNT];
	attr->rnr_retry = out[NICSIM_QUERY_QP_OUT_RNR_RETRY];
	attr->min_rnr_timer = out[NICSIM_QUERY_QP_OUT_MIN_RNR_TIMER];
	attr->max_rd_atomic = out[NICSIM_QUERY_QP_OUT_MAX_RD_ATOMIC];
	attr->max_dest_rd_atomic = out[NICSIM_QUERY_QP_OUT_MAX_DEST_RD_ATOMIC];
	attr->port_num = out[NICSIM_QUERY_QP_OUT_PORT];
	attr->pkey_index = out[NICSIM_QUERY_QP_OUT_PKEY_INDEX];
	attr->sq_draining = out[NICSIM_QUERY_QP_OUT_SQ_DRAINING];
	attr->cap = qp->cap;
	init_attr->cap = qp->cap;
	init_attr->qp_type = ibqp->qp_type;
	init_attr->send_cq = ibqp->send_cq;
	init_attr->recv_cq = ibqp->recv_cq;
	init_attr->srq = ibqp->srq;
	init_attr->sq_sig_type = qp->signal_all ? IB_SIGNAL_ALL_WR :
		IB_SIGNAL_REQ_WR;
	qp->state = attr->qp_state;
	return 0;
}

int nicsim_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata)
{
	struct nicsim_dev *dev = to_ndev(ibqp->device);
	struct nicsim_qp *qp = to_nqp(ibqp);
	int err;

	err = nicsim_cmd_destroy(dev, NICSIM_CMD_DESTROY_QP, qp->qpn);
	if (err)
		return err;
	/* a user QP's CQEs are in its process's rings: its provider's */
	if (!udata) {
		if (ibqp->recv_cq)
			nicsim_cq_clean(to_ncq(ibqp->recv_cq), qp->qpn,
					ibqp->srq ? to_nsrq(ibqp->srq) : NULL);
		if (ibqp->send_cq && ibqp->send_cq != ibqp->recv_cq)
			nicsim_cq_clean(to_ncq(ibqp->send_cq), qp->qpn, NULL);
	}
	xa_erase(&dev->qps, qp->qpn);
	if (qp->entry)
		rdma_user_mmap_entry_remove(qp->entry);
	nicsim_buf_free(dev, &qp->buf);
	nicsim_qp_kernel_free(qp);
	return 0;
}

/*
 * A UD QP joins or leaves multicast group gid: ib_core has checked the QP
 * type, the MGID's 0xff and the MLID. The adapter keys groups by MGID alone
 * (the fabric's switch routes the MLID), so lid goes no further.
 */
static int nicsim_mcast(struct ib_qp *ibqp, union ib_gid *gid, u32 opcode)
{
	u64 in[NICSIM_ATTACH_MCAST_IN_WORDS];

	in[NICSIM_ATTACH_MCAST_IN_QPN] = to_nqp(ibqp)->qpn;
	in[NICSIM_ATTACH_MCAST_IN_GID_HI] = be64_to_cpu(gid->global.subnet_prefix);
	in[NICSIM_ATTACH_MCAST_IN_GID_LO] = be64_to_cpu(gid->global.interface_id);
	return nicsim_cmd_exec(to_ndev(ibqp->device), opcode, in,
			       ARRAY_SIZE(in), NULL, 0);
}

int nicsim_attach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid)
{
	return nicsim_mcast(ibqp, gid, NICSIM_CMD_ATTACH_MCAST);
}

int nicsim_detach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid)
{
	return nicsim_mcast(ibqp, gid, NICSIM_CMD_DETACH_MCAST);
}
