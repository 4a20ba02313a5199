/*
 * SRQ family: ibv_create_srq, ibv_modify_srq, ibv_query_srq, ibv_post_srq_recv, ibv_destroy_srq
 * (their man pages): limits refused with EINVAL, a full SRQ ENOMEM with bad_wr naming the first
 * not posted, two QPs taking receives from one SRQ in posting order, the limit event
 * (IBV_EVENT_SRQ_LIMIT_REACHED, once, disarming the limit), and an SRQ in use kept (EBUSY).
 */
#include <poll.h>
#include "conf.h"

static struct ibv_qp *qp_on(struct ibv_pd *pd, struct ibv_cq *cq, struct ibv_srq *srq) {
	struct ibv_qp_init_attr a = { .send_cq = cq, .recv_cq = cq, .srq = srq, .qp_type = IBV_QPT_RC,
				      .cap = { .max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 1, .max_recv_sge = 1 } };
	return ibv_create_qp(pd, &a);
}

static int post(struct ibv_srq *srq, uint64_t id, char *at, uint32_t lkey, struct ibv_recv_wr **bad) {
	struct ibv_sge s = { .addr = (uintptr_t)at, .length = 256, .lkey = lkey };
	struct ibv_recv_wr w = { .wr_id = id, .sg_list = &s, .num_sge = 1 };
	return ibv_post_srq_recv(srq, &w, bad);
}

static void send_to(struct ibv_qp *qp, char *from, uint32_t lkey, uint32_t len) {
	struct ibv_sge s = { .addr = (uintptr_t)from, .length = len, .lkey = lkey };
	struct ibv_send_wr w = { .wr_id = 99, .sg_list = &s, .num_sge = 1, .opcode = IBV_WR_SEND,
				 .send_flags = IBV_SEND_SIGNALED }, *bad;
	ibv_post_send(qp, &w, &bad);
}

int main(void) {
	struct ibv_context *ctx = conf_open();
	struct ibv_device_attr d;
	struct ibv_srq_init_attr a;
	struct ibv_srq_attr q;
	struct ibv_srq *srq;
	struct ibv_recv_wr *bad;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	struct ibv_qp *s1, *s2, *r1, *r2;
	char *buf = calloc(1, 1 << 16);
	int n;
	ibv_query_device(ctx, &d);
	MUST(pd, ibv_alloc_pd(ctx), "a PD");
	MUST(cq, ibv_create_cq(ctx, 64, NULL, NULL, 0), "a CQ");
	MUST(mr, ibv_reg_mr(pd, buf, 1 << 16, IBV_ACCESS_LOCAL_WRITE), "an MR");
	memset(&a, 0, sizeof a);
	a.attr.max_wr = 0;
	a.attr.max_sge = 1;
	EXPECT_NULL(ibv_create_srq(pd, &a), EINVAL, "max_wr 0: EINVAL");
	a.attr.max_wr = (uint32_t)d.max_srq_wr + 1;
	EXPECT_NULL(ibv_create_srq(pd, &a), EINVAL, "max_wr past max_srq_wr: EINVAL");
	a.attr.max_wr = 4;
	a.attr.max_sge = (uint32_t)d.max_srq_sge + 1;
	EXPECT_NULL(ibv_create_srq(pd, &a), EINVAL, "max_sge past max_srq_sge: EINVAL");
	a.attr.max_sge = 1;
	a.attr.srq_limit = 5;
	EXPECT_NULL(ibv_create_srq(pd, &a), EINVAL, "srq_limit past max_wr: EINVAL");
	a.attr.srq_limit = 0;
	MUST(srq, ibv_create_srq(pd, &a), "ibv_create_srq of 4");
	check(a.attr.max_wr >= 4 && a.attr.max_sge >= 1, "it reports what it got", "max_wr %u", a.attr.max_wr);
	EXPECT_RC(ibv_query_srq(srq, &q), 0, "ibv_query_srq");
	check(q.max_wr == a.attr.max_wr && q.srq_limit == 0, "query gives max_wr and the limit", "%u, %u", q.max_wr,
	      q.srq_limit);
	q.max_wr = 16;
	EXPECT_RC(ibv_modify_srq(srq, &q, IBV_SRQ_MAX_WR), EINVAL, "resizing (IBV_SRQ_MAX_WR): EINVAL, as mlx5");
	q.srq_limit = a.attr.max_wr + 1;
	EXPECT_RC(ibv_modify_srq(srq, &q, IBV_SRQ_LIMIT), EINVAL, "a limit past max_wr: EINVAL");
	{
		struct ibv_sge s[2] = { { .addr = (uintptr_t)buf, .length = 8, .lkey = mr->lkey },
					{ .addr = (uintptr_t)buf + 8, .length = 8, .lkey = mr->lkey } };
		struct ibv_recv_wr w = { .wr_id = 1, .sg_list = s, .num_sge = 2 };
		if (a.attr.max_sge == 1) {
			EXPECT_RC(ibv_post_srq_recv(srq, &w, &bad), EINVAL, "more SGEs than max_sge: EINVAL");
			check(bad == &w, "bad_wr names it", "%p", (void *)bad);
		}
	}
	for (n = 0; n < 64 && !post(srq, (uint64_t)n, buf + 256 * n, mr->lkey, &bad); n++) ;
	check(n == (int)a.attr.max_wr, "it takes max_wr receives, then ENOMEM", "took %d of %u", n, a.attr.max_wr);
	MUST(s1, qp_on(pd, cq, NULL), "a sender");
	MUST(s2, qp_on(pd, cq, NULL), "a second sender");
	MUST(r1, qp_on(pd, cq, srq), "a receiver on the SRQ");
	MUST(r2, qp_on(pd, cq, srq), "a second receiver on it");
	EXPECT_RC(ibv_destroy_srq(srq), EBUSY, "ibv_destroy_srq of an SRQ QPs use: EBUSY");
	check(!conf_connect(s1, r1, 0) && !conf_connect(s2, r2, 0), "both pairs connected", "errno %d", errno);
	q.srq_limit = 3; /* 4 posted: the second receive leaves 2, below it */
	EXPECT_RC(ibv_modify_srq(srq, &q, IBV_SRQ_LIMIT), 0, "arm the limit at 3");
	strcpy(buf + 32768, "first");
	strcpy(buf + 33024, "second");
	send_to(s2, buf + 32768, mr->lkey, 6);
	{
		struct ibv_wc w1 = conf_wait(cq), w2 = conf_wait(cq);
		struct ibv_wc rw = w1.opcode == IBV_WC_RECV ? w1 : w2;
		check(rw.status == IBV_WC_SUCCESS && rw.wr_id == 0 && rw.qp_num == r2->qp_num && !strcmp(buf, "first"),
		      "the second receiver took the SRQ's first WQE", "wr %" PRIu64 ", '%s'", rw.wr_id, buf);
	}
	send_to(s1, buf + 33024, mr->lkey, 7);
	{
		struct ibv_wc w1 = conf_wait(cq), w2 = conf_wait(cq);
		struct ibv_wc rw = w1.opcode == IBV_WC_RECV ? w1 : w2;
		check(rw.status == IBV_WC_SUCCESS && rw.wr_id == 1 && rw.qp_num == r1->qp_num && !strcmp(buf + 256, "second"),
		      "the first receiver the next", "wr %" PRIu64, rw.wr_id);
	}
	{
		struct ibv_async_event ev;
		struct pollfd p = { .fd = ctx->async_fd, .events = POLLIN };
		int ready = poll(&p, 1, 10000);
		check(ready == 1 && !ibv_get_async_event(ctx, &ev) && ev.event_type == IBV_EVENT_SRQ_LIMIT_REACHED
		      && ev.element.srq == srq, "below the limit: IBV_EVENT_SRQ_LIMIT_REACHED for the SRQ", "poll %d", ready);
		if (ready == 1) ibv_ack_async_event(&ev);
		EXPECT_RC(ibv_query_srq(srq, &q), 0, "query after the event");
		check(q.srq_limit == 0, "the event disarmed the limit", "limit %u", q.srq_limit);
	}
	EXPECT_RC(ibv_destroy_qp(r1), 0, "the receivers destroyed");
	EXPECT_RC(ibv_destroy_qp(r2), 0, "both");
	EXPECT_RC(ibv_destroy_srq(srq), 0, "then the SRQ goes");
	ibv_destroy_qp(s1);
	ibv_destroy_qp(s2);
	ibv_dereg_mr(mr);
	ibv_destroy_cq(cq);
	EXPECT_RC(ibv_dealloc_pd(pd), 0, "everything released");
	EXPECT_RC(ibv_close_device(ctx), 0, "ibv_close_device");
	return conf_end();
}
