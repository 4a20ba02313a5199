/* CQ family: ibv_create_cq, ibv_destroy_cq, ibv_poll_cq, ibv_req_notify_cq (their man pages). */
#include "conf.h"

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
	check(cq->cq_context == (void *)0x1234 && cq->context == ctx, "it keeps its cq_context and context", "%p", cq->cq_context);
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
	EXPECT_RC(ibv_dealloc_pd(pd), 0, "and the PD");
	EXPECT_RC(ibv_close_device(ctx), 0, "ibv_close_device");
	return conf_end();
}
