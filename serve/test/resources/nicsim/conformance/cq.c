/*
 * CQ family: ibv_create_cq, ibv_destroy_cq, ibv_poll_cq, ibv_req_notify_cq, and ibv_create_cq_ex
 * with completion timestamps, ibv_query_rt_values_ex, ibv_resize_cq (their man pages).
 */
#include "conf.h"

/* Extended CQs with completion timestamps, in core clock cycles and in ns, and the device's clock read directly. */
static void timestamps(struct ibv_context *ctx, struct ibv_pd *pd) {
	struct ibv_device_attr_ex dx;
	struct ibv_cq_init_attr_ex ca = { .cqe = 16, .wc_flags = IBV_WC_EX_WITH_COMPLETION_TIMESTAMP
					  | IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK | IBV_WC_EX_WITH_BYTE_LEN };
	struct ibv_cq_ex *cx;
	struct ibv_qp *a, *b;
	struct ibv_values_ex v = { .comp_mask = IBV_VALUES_MASK_RAW_CLOCK };
	struct ibv_poll_cq_attr pa = { 0 };
	static char buf[4096];
	struct ibv_mr *mr = ibv_reg_mr(pd, buf, sizeof buf, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	uint64_t last = 0;
	int rc;
	EXPECT_RC(ibv_query_device_ex(ctx, NULL, &dx), 0, "ibv_query_device_ex");
	check(dx.hca_core_clock > 0 && dx.completion_timestamp_mask != 0, "it reports hca_core_clock and the timestamp mask",
	      "%" PRIu64 " kHz, mask 0x%" PRIx64, dx.hca_core_clock, dx.completion_timestamp_mask);
	{
		struct ibv_cq_init_attr_ex bad = ca;
		bad.wc_flags |= IBV_WC_EX_WITH_FLOW_TAG;
		EXPECT_NULL(ibv_create_cq_ex(ctx, &bad), EOPNOTSUPP, "ibv_create_cq_ex with flow tags: EOPNOTSUPP");
	}
	cx = ibv_create_cq_ex(ctx, &ca);
	check(cx != NULL, "ibv_create_cq_ex with both timestamps", "errno %d", errno);
	if (!cx || !mr) return;
	{
		struct ibv_qp_init_attr qi = { .qp_type = IBV_QPT_RC, .send_cq = ibv_cq_ex_to_cq(cx), .recv_cq = ibv_cq_ex_to_cq(cx),
					       .cap = { .max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 1, .max_recv_sge = 1 } };
		struct ibv_sge s = { .addr = (uintptr_t)buf, .length = 64, .lkey = mr->lkey };
		struct ibv_send_wr w = { .sg_list = &s, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
					 .send_flags = IBV_SEND_SIGNALED }, *bad;
		a = ibv_create_qp(pd, &qi);
		b = ibv_create_qp(pd, &qi);
		check(a && b && !conf_connect(a, b, IBV_ACCESS_REMOTE_WRITE), "two QPs on it, connected", "errno %d", errno);
		w.wr.rdma.remote_addr = (uintptr_t)buf + 1024;
		w.wr.rdma.rkey = mr ? mr->rkey : 0;
		for (int i = 0; i < 3; i++) {
			w.wr_id = (uint64_t)i;
			ibv_post_send(a, &w, &bad);
		}
	}
	for (int i = 0; i < 3; i++) {
		for (int t = 0; (rc = ibv_start_poll(cx, &pa)) == ENOENT && t < 1000000; t++) {}
		if (rc) { check(0, "a completion comes", "start_poll %d", rc); break; }
		{
			uint64_t ts = ibv_wc_read_completion_ts(cx), ns = ibv_wc_read_completion_wallclock_ns(cx);
			check(cx->status == IBV_WC_SUCCESS && ts > last, "each completion's timestamp is later than the one before",
			      "status %d, %" PRIu64 " after %" PRIu64, cx->status, ts, last);
			check(ns == ts * 1000000 / dx.hca_core_clock, "its wallclock time is its cycles at hca_core_clock, in ns",
			      "%" PRIu64 " ns for %" PRIu64 " cycles", ns, ts);
			last = ts;
		}
		ibv_end_poll(cx);
	}
	EXPECT_RC(ibv_query_rt_values_ex(ctx, &v), 0, "ibv_query_rt_values_ex");
	check(v.raw_clock.tv_sec == 0 && (uint64_t)v.raw_clock.tv_nsec >= last,
	      "its raw clock (cycles) is not behind the last completion", "%ld after %" PRIu64, v.raw_clock.tv_nsec, last);
	v.comp_mask = 1u << 5;
	EXPECT_RC(ibv_query_rt_values_ex(ctx, &v), EINVAL, "ibv_query_rt_values_ex with an unknown comp_mask: EINVAL");
	ibv_destroy_qp(a);
	ibv_destroy_qp(b);
	EXPECT_RC(ibv_destroy_cq(ibv_cq_ex_to_cq(cx)), 0, "the extended CQ destroyed");
	ibv_dereg_mr(mr);
}

/* ibv_resize_cq: completions not yet polled stay, in order; too small for them, or out of range, is EINVAL. */
static void resize(struct ibv_context *ctx, struct ibv_pd *pd, int max_cqe) {
	static char buf[4096];
	struct ibv_mr *mr = ibv_reg_mr(pd, buf, sizeof buf, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	struct ibv_cq *cq = ibv_create_cq(ctx, 7, NULL, NULL, 0);
	struct ibv_qp_init_attr qi = { .qp_type = IBV_QPT_RC, .send_cq = cq, .recv_cq = cq,
				       .cap = { .max_send_wr = 64, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1 } };
	struct ibv_qp *a = cq ? ibv_create_qp(pd, &qi) : NULL, *b = cq ? ibv_create_qp(pd, &qi) : NULL;
	struct ibv_sge s = { .addr = (uintptr_t)buf, .length = 8, .lkey = mr ? mr->lkey : 0 };
	struct ibv_send_wr w = { .sg_list = &s, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
				 .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_wc wc[64];
	int got = 0, in_order = 1, rc;
	check(mr && cq && a && b && !conf_connect(a, b, IBV_ACCESS_REMOTE_WRITE), "a CQ of 7 and two QPs on it, connected",
	      "errno %d", errno);
	if (!mr || !cq || !a || !b) return;
	w.wr.rdma.remote_addr = (uintptr_t)buf + 2048;
	w.wr.rdma.rkey = mr->rkey;
	for (int i = 0; i < 6; i++) { w.wr_id = (uint64_t)i; ibv_post_send(a, &w, &bad); }
	for (int i = 0; i < 200 && got < 2; i++) {
		rc = ibv_poll_cq(cq, 2 - got, wc + got);
		if (rc > 0) got += rc; else usleep(1000);
	}
	usleep(100000); /* the other four land, unpolled */
	EXPECT_RC(ibv_resize_cq(cq, 2), EINVAL, "ibv_resize_cq smaller than the completions waiting: EINVAL");
	EXPECT_RC(ibv_resize_cq(cq, 0), EINVAL, "ibv_resize_cq to 0: EINVAL");
	EXPECT_RC(ibv_resize_cq(cq, max_cqe + 1), EINVAL, "ibv_resize_cq past max_cqe: EINVAL");
	check(cq->cqe == 7, "a refused resize leaves cqe as it was", "cqe %d", cq->cqe);
	EXPECT_RC(ibv_resize_cq(cq, 40), 0, "ibv_resize_cq to 40");
	check(cq->cqe >= 40, "cqe tells the new size", "cqe %d", cq->cqe);
	for (int i = 6; i < 30; i++) { w.wr_id = (uint64_t)i; ibv_post_send(a, &w, &bad); } /* more than the old ring held */
	for (int i = 0; i < 2000 && got < 30; i++) {
		rc = ibv_poll_cq(cq, 30 - got, wc + got);
		if (rc > 0) got += rc; else usleep(1000);
	}
	for (int i = 0; i < got; i++) in_order &= wc[i].wr_id == (uint64_t)i && wc[i].status == IBV_WC_SUCCESS;
	check(got == 30 && in_order, "the waiting completions and the later ones arrive, all of them, in order",
	      "%d of 30", got);
	ibv_destroy_qp(a);
	ibv_destroy_qp(b);
	EXPECT_RC(ibv_destroy_cq(cq), 0, "the resized CQ destroyed");
	ibv_dereg_mr(mr);
}

int main(void) {
	struct ibv_context *ctx = conf_open();
	struct ibv_device_attr a;
	struct ibv_cq *cq, *other;
	struct ibv_pd *pd;
	struct ibv_qp *qp;
	struct ibv_wc wc[4];
	ibv_query_device(ctx, &a);
	MUST(cq, ibv_create_cq(ctx, 100, (void *)0x1234, NULL, 0), "ibv_create_cq of 100");
	check(cq->cqe >= 100, "it holds at least the entries asked for", "cqe %d", cq->cqe);
	check(cq->cq_context == (void *)0x1234 && cq->context == ctx, "it keeps its cq_context and context", "%p",
	      cq->cq_context);
	EXPECT_RC(ibv_poll_cq(cq, 4, wc), 0, "polling an empty CQ returns 0");
	check(ibv_poll_cq(cq, -1, wc) < 0, "poll_cq num_entries -1 fails", "returned >= 0");
	EXPECT_RC(ibv_req_notify_cq(cq, 0), 0, "ibv_req_notify_cq");
	EXPECT_RC(ibv_req_notify_cq(cq, 1), 0, "ibv_req_notify_cq solicited only");
	EXPECT_NULL(ibv_create_cq(ctx, 0, NULL, NULL, 0), EINVAL, "cqe 0: EINVAL");
	EXPECT_NULL(ibv_create_cq(ctx, -1, NULL, NULL, 0), EINVAL, "cqe -1: EINVAL");
	EXPECT_NULL(ibv_create_cq(ctx, a.max_cqe + 1, NULL, NULL, 0), EINVAL, "cqe past max_cqe: EINVAL");

	/* a CQ a QP uses cannot go */
	MUST(pd, ibv_alloc_pd(ctx), "a PD");
	MUST(other, ibv_create_cq(ctx, 16, NULL, NULL, 0), "a second CQ");
	{
		struct ibv_qp_init_attr qa = { .send_cq = cq, .recv_cq = other, .qp_type = IBV_QPT_RC,
					       .cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1 } };
		MUST(qp, ibv_create_qp(pd, &qa), "a QP on both");
	}
	EXPECT_RC(ibv_destroy_cq(cq), EBUSY, "ibv_destroy_cq of a CQ a QP sends to: EBUSY");
	EXPECT_RC(ibv_destroy_cq(other), EBUSY, "and of one it receives to: EBUSY");
	EXPECT_RC(ibv_destroy_qp(qp), 0, "the QP destroyed");
	EXPECT_RC(ibv_destroy_cq(cq), 0, "then the CQs go");
	EXPECT_RC(ibv_destroy_cq(other), 0, "both of them");
	timestamps(ctx, pd);
	resize(ctx, pd, a.max_cqe);
	EXPECT_RC(ibv_dealloc_pd(pd), 0, "and the PD");
	EXPECT_RC(ibv_close_device(ctx), 0, "ibv_close_device");
	return conf_end();
}
