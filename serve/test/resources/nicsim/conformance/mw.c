/*
 * MW family: ibv_alloc_mw, ibv_bind_mw, ibv_dealloc_mw, IBV_WR_BIND_MW, ibv_wr_bind_mw,
 * IBV_WR_LOCAL_INV and IBV_WR_SEND_WITH_INV (their man pages): a window gives remote access to part
 * of an MR under its own rkey, and loses it when unbound, invalidated or deallocated.
 */
#include "conf.h"

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_cq *cq;
static struct ibv_qp *qa, *qb;
static struct ibv_mr *mr, *plain;
static char *buf;

/* A WRITE of 64 bytes from a to b through rkey at addr: its completion status. */
static enum ibv_wc_status write_through(uint32_t rkey, void *addr) {
	struct ibv_sge s = { .addr = (uintptr_t)buf, .length = 64, .lkey = mr->lkey };
	struct ibv_send_wr w = { .wr_id = 5, .sg_list = &s, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
				 .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_wc wc;
	w.wr.rdma.remote_addr = (uintptr_t)addr;
	w.wr.rdma.rkey = rkey;
	if (ibv_post_send(qa, &w, &bad)) return (enum ibv_wc_status)-2;
	wc = conf_wait(cq);
	return wc.status;
}

/* Both QPs back to RTS after an error took them to ERR. */
static void reconnect(void) {
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RESET };
	struct ibv_wc wc[16];
	ibv_modify_qp(qa, &a, IBV_QP_STATE);
	ibv_modify_qp(qb, &a, IBV_QP_STATE);
	while (ibv_poll_cq(cq, 16, wc) > 0) {}
	conf_connect(qa, qb, IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
}

static struct ibv_wc post_bind(struct ibv_qp *qp, struct ibv_mw *mw, uint32_t rkey, struct ibv_mr *on, size_t off,
			       size_t len) {
	struct ibv_send_wr w = { .wr_id = 9, .opcode = IBV_WR_BIND_MW, .send_flags = IBV_SEND_SIGNALED }, *bad;
	w.bind_mw.mw = mw;
	w.bind_mw.rkey = rkey;
	w.bind_mw.bind_info.mr = on;
	w.bind_mw.bind_info.addr = (uintptr_t)buf + off;
	w.bind_mw.bind_info.length = len;
	w.bind_mw.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_WRITE;
	if (ibv_post_send(qp, &w, &bad)) { struct ibv_wc none = { .status = (enum ibv_wc_status)-2 }; return none; }
	return conf_wait(cq);
}

static void type1(void) {
	struct ibv_mw *mw = ibv_alloc_mw(pd, IBV_MW_TYPE_1);
	struct ibv_mw_bind bind = { .wr_id = 3, .send_flags = IBV_SEND_SIGNALED };
	uint32_t before;
	struct ibv_wc wc;
	check(mw && mw->type == IBV_MW_TYPE_1 && mw->pd == pd, "ibv_alloc_mw type 1", "errno %d", errno);
	if (!mw) return;
	before = mw->rkey;
	bind.bind_info.mr = mr;
	bind.bind_info.addr = (uintptr_t)buf + 8192;
	bind.bind_info.length = 4096;
	bind.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_WRITE;
	EXPECT_RC(ibv_bind_mw(qb, mw, &bind), 0, "ibv_bind_mw");
	check(mw->rkey != before && (mw->rkey >> 8) == (before >> 8), "it gives the window the next rkey, same index",
	      "0x%x -> 0x%x", before, mw->rkey);
	wc = conf_wait(cq);
	check(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_BIND_MW && wc.wr_id == 3, "the bind completes IBV_WC_BIND_MW",
	      "status %d opcode %d", wc.status, wc.opcode);
	memset(buf, 0x3c, 64);
	check(write_through(mw->rkey, buf + 8192) == IBV_WC_SUCCESS && buf[8192 + 63] == 0x3c,
	      "a WRITE through the window lands", "");
	check(write_through(mw->rkey, buf + 8192 + 4090) == IBV_WC_REM_ACCESS_ERR, "past its end: remote access error", "");
	reconnect();
	bind.bind_info.length = 0; /* rebinding with no length takes the access away (pyverbs' invalidation of type 1) */
	EXPECT_RC(ibv_bind_mw(qb, mw, &bind), 0, "a bind of length 0");
	conf_wait(cq);
	check(write_through(mw->rkey, buf + 8192) == IBV_WC_REM_ACCESS_ERR, "then the window gives no access", "");
	reconnect();
	bind.bind_info.mr = plain;
	bind.bind_info.addr = (uintptr_t)buf + 32768;
	bind.bind_info.length = 64;
	EXPECT_RC(ibv_bind_mw(qb, mw, &bind), 0, "a bind to an MR without IBV_ACCESS_MW_BIND is posted");
	wc = conf_wait(cq);
	check(wc.status == IBV_WC_MW_BIND_ERR, "and completes IBV_WC_MW_BIND_ERR", "status %d", wc.status);
	reconnect();
	EXPECT_RC(ibv_dealloc_pd(pd), EBUSY, "a PD with a window cannot go: EBUSY");
	EXPECT_RC(ibv_dealloc_mw(mw), 0, "ibv_dealloc_mw");
}

static void type2(void) {
	struct ibv_mw *mw = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	struct ibv_mw_bind bind = { .wr_id = 3, .send_flags = IBV_SEND_SIGNALED };
	uint32_t rkey;
	struct ibv_wc wc;
	check(mw && mw->type == IBV_MW_TYPE_2, "ibv_alloc_mw type 2", "errno %d", errno);
	if (!mw) return;
	bind.bind_info.mr = mr;
	bind.bind_info.length = 64;
	EXPECT_RC(ibv_bind_mw(qb, mw, &bind), EINVAL,
		  "ibv_bind_mw of a type-2 window: EINVAL (it is bound by a work request)");
	rkey = ibv_inc_rkey(mw->rkey);
	wc = post_bind(qb, mw, rkey, mr, 16384, 4096);
	check(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_BIND_MW, "IBV_WR_BIND_MW binds it", "status %d", wc.status);
	check(write_through(rkey, buf + 16384) == IBV_WC_SUCCESS, "a WRITE through its new rkey lands", "");
	{ /* LOCAL_INV from its QP takes it back */
		struct ibv_send_wr w = { .wr_id = 4, .opcode = IBV_WR_LOCAL_INV, .send_flags = IBV_SEND_SIGNALED }, *bad;
		w.invalidate_rkey = rkey;
		EXPECT_RC(ibv_post_send(qb, &w, &bad), 0, "IBV_WR_LOCAL_INV posted");
		wc = conf_wait(cq);
		check(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_LOCAL_INV, "completes IBV_WC_LOCAL_INV",
		      "status %d", wc.status);
	}
	check(write_through(rkey, buf + 16384) == IBV_WC_REM_ACCESS_ERR, "then a WRITE through it: remote access error", "");
	reconnect();
	rkey = ibv_inc_rkey(rkey);
	wc = post_bind(qb, mw, rkey, mr, 16384, 4096);
	check(wc.status == IBV_WC_SUCCESS, "bound again with the next rkey", "status %d", wc.status);
	{ /* the peer's SEND_WITH_INV takes it back too */
		struct ibv_sge r = { .addr = (uintptr_t)buf + 40000, .length = 64, .lkey = mr->lkey };
		struct ibv_recv_wr rw = { .wr_id = 6, .sg_list = &r, .num_sge = 1 }, *rbad;
		struct ibv_sge s = { .addr = (uintptr_t)buf, .length = 8, .lkey = mr->lkey };
		struct ibv_send_wr w = { .wr_id = 7, .sg_list = &s, .num_sge = 1, .opcode = IBV_WR_SEND_WITH_INV,
					 .send_flags = IBV_SEND_SIGNALED }, *bad;
		int got_inv = 0;
		w.invalidate_rkey = rkey;
		ibv_post_recv(qb, &rw, &rbad);
		EXPECT_RC(ibv_post_send(qa, &w, &bad), 0, "IBV_WR_SEND_WITH_INV posted by the peer");
		for (int i = 0; i < 2; i++) {
			wc = conf_wait(cq);
			if (wc.wr_id == 6)
				got_inv = wc.status == IBV_WC_SUCCESS && (wc.wc_flags & IBV_WC_WITH_INV)
					  && wc.invalidated_rkey == rkey;
		}
		check(got_inv, "the receive says IBV_WC_WITH_INV and the rkey", "");
	}
	check(write_through(rkey, buf + 16384) == IBV_WC_REM_ACCESS_ERR, "then the window gives no access", "");
	reconnect();
	rkey = ibv_inc_rkey(rkey);
	wc = post_bind(qb, mw, rkey, mr, 16384, 4096);
	check(wc.status == IBV_WC_SUCCESS, "bound once more", "status %d", wc.status);
	EXPECT_RC(ibv_dealloc_mw(mw), 0, "ibv_dealloc_mw of a bound window");
	check(write_through(rkey, buf + 16384) == IBV_WC_REM_ACCESS_ERR, "then its rkey gives no access", "");
	reconnect();
}

static void wr_api(void) {
	struct ibv_qp_init_attr_ex a = { .qp_type = IBV_QPT_RC, .send_cq = cq, .recv_cq = cq, .pd = pd,
					 .comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
					 .send_ops_flags = IBV_QP_EX_WITH_BIND_MW | IBV_QP_EX_WITH_RDMA_WRITE,
					 .cap = { .max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 1, .max_recv_sge = 1 } };
	struct ibv_qp *q = ibv_create_qp_ex(ctx, &a);
	struct ibv_qp_ex *x;
	struct ibv_mw *mw = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	struct ibv_mw_bind_info info = { .mr = mr, .addr = (uintptr_t)buf + 20480, .length = 128,
					 .mw_access_flags = IBV_ACCESS_REMOTE_WRITE };
	struct ibv_wc wc;
	check(q && mw, "a QP with IBV_QP_EX_WITH_BIND_MW", "errno %d", errno);
	if (!q || !mw) return;
	x = ibv_qp_to_qp_ex(q);
	check(x->wr_bind_mw != NULL, "ibv_wr_bind_mw is installed", "");
	conf_to_init(q, IBV_ACCESS_REMOTE_WRITE);
	conf_to_rtr(q, qa->qp_num);
	conf_to_rts(q);
	ibv_wr_start(x);
	x->wr_id = 11;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_bind_mw(x, mw, ibv_inc_rkey(mw->rkey), &info);
	EXPECT_RC(ibv_wr_complete(x), 0, "ibv_wr_bind_mw posted");
	wc = conf_wait(cq);
	check(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_BIND_MW && wc.wr_id == 11, "and completes", "status %d",
	      wc.status);
	ibv_dealloc_mw(mw);
	ibv_destroy_qp(q);
}

int main(void) {
	struct ibv_qp_init_attr qi = { .qp_type = IBV_QPT_RC,
				       .cap = { .max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 1, .max_recv_sge = 1 } };
	ctx = conf_open();
	buf = aligned_alloc(4096, 1 << 16);
	memset(buf, 0, 1 << 16);
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	mr = ibv_reg_mr(pd, buf, 1 << 16, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_MW_BIND);
	plain = ibv_reg_mr(pd, buf + 32768, 4096, IBV_ACCESS_LOCAL_WRITE);
	qi.send_cq = qi.recv_cq = cq;
	qa = ibv_create_qp(pd, &qi);
	qb = ibv_create_qp(pd, &qi);
	check(mr && plain && qa && qb, "an MR with IBV_ACCESS_MW_BIND, two QPs", "errno %d", errno);
	if (!qb) return conf_end();
	EXPECT_RC(conf_connect(qa, qb, IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ), 0, "connected (loopback)");
	EXPECT_NULL(ibv_alloc_mw(pd, (enum ibv_mw_type)3), EINVAL, "ibv_alloc_mw type 3: EINVAL");
	type1();
	type2();
	wr_api();
	ibv_destroy_qp(qa);
	ibv_destroy_qp(qb);
	ibv_dereg_mr(plain);
	ibv_dereg_mr(mr);
	ibv_destroy_cq(cq);
	EXPECT_RC(ibv_dealloc_pd(pd), 0, "everything released");
	ibv_close_device(ctx);
	return conf_end();
}
