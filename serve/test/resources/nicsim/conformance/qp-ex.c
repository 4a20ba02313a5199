/*
 * QP-ex family: ibv_create_qp_ex (its man page) and the ibv_wr_* API (ibv_wr_post(3)): comp_mask,
 * create_flags and send_ops_flags a device does not offer are refused with EOPNOTSUPP, an
 * operation not asked for is not installed, and the ones asked for work.
 */
#include "conf.h"

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_cq *cq;

static struct ibv_qp_init_attr_ex attr(enum ibv_qp_type t, uint64_t ops) {
	struct ibv_qp_init_attr_ex a;
	memset(&a, 0, sizeof a);
	a.qp_type = t;
	a.send_cq = cq;
	a.recv_cq = cq;
	a.cap.max_send_wr = 8;
	a.cap.max_recv_wr = 8;
	a.cap.max_send_sge = 1;
	a.cap.max_recv_sge = 1;
	a.cap.max_inline_data = 64;
	a.pd = pd;
	a.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	a.send_ops_flags = ops;
	return a;
}

int main(void) {
	struct ibv_qp_init_attr_ex a;
	struct ibv_qp *qa, *qb;
	struct ibv_qp_ex *x;
	struct ibv_mr *mr;
	char *buf = calloc(1, 8192);
	ctx = conf_open();
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	mr = ibv_reg_mr(pd, buf, 8192, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	check(pd && cq && mr, "a PD, a CQ and an MR", "errno %d", errno);
	if (!pd || !cq || !mr) return conf_end();

	a = attr(IBV_QPT_RC, 0);
	a.comp_mask |= IBV_QP_INIT_ATTR_CREATE_FLAGS;
	a.create_flags = 0;
	MUST(qa, ibv_create_qp_ex(ctx, &a), "IBV_QP_INIT_ATTR_CREATE_FLAGS with flags 0 is accepted");
	ibv_destroy_qp(qa);
	a.create_flags = IBV_QP_CREATE_BLOCK_SELF_MCAST_LB;
	MUST(qa, ibv_create_qp_ex(ctx, &a), "BLOCK_SELF_MCAST_LB is accepted: no QP gets its own multicast sends");
	ibv_destroy_qp(qa);
	a.create_flags = IBV_QP_CREATE_SCATTER_FCS;
	EXPECT_NULL(ibv_create_qp_ex(ctx, &a), EOPNOTSUPP, "a creation flag nicsim does not offer: EOPNOTSUPP");
	a = attr(IBV_QPT_RC, IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_ATOMIC_WRITE);
	EXPECT_NULL(ibv_create_qp_ex(ctx, &a), EOPNOTSUPP, "send_ops_flags with ATOMIC_WRITE: EOPNOTSUPP");
	a = attr(IBV_QPT_RC, IBV_QP_EX_WITH_TSO);
	EXPECT_NULL(ibv_create_qp_ex(ctx, &a), EOPNOTSUPP, "send_ops_flags with TSO: EOPNOTSUPP");
	a = attr(IBV_QPT_UD, IBV_QP_EX_WITH_RDMA_WRITE);
	EXPECT_NULL(ibv_create_qp_ex(ctx, &a), EOPNOTSUPP, "RDMA_WRITE on a UD QP: EOPNOTSUPP");
	a = attr(IBV_QPT_UC, IBV_QP_EX_WITH_RDMA_READ);
	EXPECT_NULL(ibv_create_qp_ex(ctx, &a), EOPNOTSUPP, "RDMA_READ on a UC QP: EOPNOTSUPP");
	a = attr(IBV_QPT_RC, IBV_QP_EX_WITH_SEND);
	a.comp_mask |= 1u << 30;
	EXPECT_NULL(ibv_create_qp_ex(ctx, &a), EOPNOTSUPP, "an unknown comp_mask bit: EOPNOTSUPP");

	a = attr(IBV_QPT_RC, IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_SEND);
	MUST(qa, ibv_create_qp_ex(ctx, &a), "an RC QP with WRITE and SEND");
	a = attr(IBV_QPT_RC, IBV_QP_EX_WITH_SEND);
	MUST(qb, ibv_create_qp_ex(ctx, &a), "its peer with SEND");
	x = ibv_qp_to_qp_ex(qa);
	check(x && x->wr_rdma_write && x->wr_send && x->wr_start && x->wr_complete && x->wr_set_sge,
	      "ibv_qp_to_qp_ex gives the operations asked for", "%p", (void *)x);
	check(x && !x->wr_rdma_read && !x->wr_atomic_fetch_add && !x->wr_atomic_write && !x->wr_bind_mw,
	      "and not the ones not asked for", "read %p", x ? (void *)x->wr_rdma_read : NULL);
	EXPECT_RC(conf_connect(qa, qb, IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ), 0, "the pair connected (loopback)");
	{
		struct ibv_sge r = { .addr = (uintptr_t)(buf + 4096), .length = 100, .lkey = mr->lkey };
		struct ibv_recv_wr rw = { .wr_id = 7, .sg_list = &r, .num_sge = 1 }, *bad;
		struct ibv_wc wc;
		EXPECT_RC(ibv_post_recv(qb, &rw, &bad), 0, "a receive posted");
		strcpy(buf, "written through ibv_wr_rdma_write");
		ibv_wr_start(x);
		x->wr_id = 1;
		x->wr_flags = IBV_SEND_SIGNALED;
		ibv_wr_rdma_write(x, mr->rkey, (uintptr_t)(buf + 1024));
		ibv_wr_set_sge(x, mr->lkey, (uintptr_t)buf, 40);
		x->wr_id = 2;
		ibv_wr_send(x);
		ibv_wr_set_inline_data(x, "inline", 7);
		EXPECT_RC(ibv_wr_complete(x), 0, "ibv_wr_complete posts a WRITE and an inline SEND");
		wc = conf_wait(cq);
		check(wc.status == IBV_WC_SUCCESS && wc.wr_id == 1 && wc.opcode == IBV_WC_RDMA_WRITE, "the WRITE completes",
		      "status %d wr_id %" PRIu64, wc.status, wc.wr_id);
		wc = conf_wait(cq);
		if (wc.wr_id == 7) {
			check(wc.status == IBV_WC_SUCCESS && wc.byte_len == 7, "the SEND arrives", "status %d", wc.status);
			wc = conf_wait(cq);
		} else {
			struct ibv_wc r2 = conf_wait(cq);
			check(r2.wr_id == 7 && r2.byte_len == 7, "the SEND arrives", "wr_id %" PRIu64, r2.wr_id);
		}
		check(wc.status == IBV_WC_SUCCESS && (wc.wr_id == 2 || wc.wr_id == 7), "the SEND completes", "status %d",
		      wc.status);
		check(strcmp(buf + 1024, "written through ibv_wr_rdma_write") == 0, "the WRITE's bytes landed", "%.40s", buf + 1024);
		check(strcmp(buf + 4096, "inline") == 0, "the inline SEND's bytes landed", "%.8s", buf + 4096);
	}
	ibv_destroy_qp(qa);
	ibv_destroy_qp(qb);
	EXPECT_RC(ibv_dereg_mr(mr), 0, "the MR deregistered");
	EXPECT_RC(ibv_destroy_cq(cq), 0, "the CQ destroyed");
	EXPECT_RC(ibv_dealloc_pd(pd), 0, "the PD deallocated");
	EXPECT_RC(ibv_close_device(ctx), 0, "ibv_close_device");
	return conf_end();
}
