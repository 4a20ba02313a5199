/*
 * AttachTest's program for asynchronous events: an RC QP connected to itself sends four signaled
 * WRITEs into a CQ of one entry that it never polls; the CQ overflows, and libibverbs' own
 * ibv_get_async_event must then return CQ_ERR for that CQ and QP_FATAL for that QP. Prints each
 * event as "event <type> cq|qp|other" and exits 0 once both came (alarm: 60 s).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <infiniband/verbs.h>

static void die(const char *what) { fprintf(stderr, "async-events: %s failed\n", what); exit(1); }

int main(void) {
	int num, cq_err = 0, qp_fatal = 0;
	struct ibv_device **list = ibv_get_device_list(&num);
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *small, *other;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	struct ibv_port_attr port;
	static char buf[4096];
	alarm(60);
	if (!list || num < 1 || !(ctx = ibv_open_device(list[0]))) die("open");
	if (!(pd = ibv_alloc_pd(ctx))
	    || !(mr = ibv_reg_mr(pd, buf, sizeof buf, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE)))
		die("pd/mr");
	if (!(small = ibv_create_cq(ctx, 1, NULL, NULL, 0)) || !(other = ibv_create_cq(ctx, 16, NULL, NULL, 0))) die("cq");
	struct ibv_qp_init_attr init = { .send_cq = small, .recv_cq = other, .qp_type = IBV_QPT_RC,
					 .cap = { .max_send_wr = 16, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1 } };
	if (!(qp = ibv_create_qp(pd, &init))) die("qp");
	if (ibv_query_port(ctx, 1, &port)) die("query_port");
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				 .qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_LOCAL_WRITE };
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS)) die("INIT");
	memset(&a, 0, sizeof a);
	a.qp_state = IBV_QPS_RTR; a.path_mtu = IBV_MTU_1024; a.dest_qp_num = qp->qp_num; a.rq_psn = 7;
	a.max_dest_rd_atomic = 1; a.min_rnr_timer = 12; a.ah_attr.dlid = port.lid; a.ah_attr.port_num = 1;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN
				  | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER)) die("RTR");
	memset(&a, 0, sizeof a);
	a.qp_state = IBV_QPS_RTS; a.timeout = 14; a.retry_cnt = 7; a.rnr_retry = 7; a.sq_psn = 7; a.max_rd_atomic = 1;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN
				  | IBV_QP_MAX_QP_RD_ATOMIC)) die("RTS");
	for (int i = 0; i < 4; i++) {
		struct ibv_sge sge = { .addr = (uintptr_t)buf, .length = 64, .lkey = mr->lkey };
		struct ibv_send_wr wr = { .wr_id = i, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
					  .send_flags = IBV_SEND_SIGNALED, .wr.rdma = { .remote_addr = (uintptr_t)buf + 2048, .rkey = mr->rkey } };
		struct ibv_send_wr *bad;
		if (ibv_post_send(qp, &wr, &bad)) die("post_send");
	}
	while (!cq_err || !qp_fatal) {
		struct ibv_async_event ev;
		if (ibv_get_async_event(ctx, &ev)) die("get_async_event");
		const char *what = "other";
		if (ev.event_type == IBV_EVENT_CQ_ERR) {
			what = ev.element.cq == small ? "cq" : "another-cq";
			cq_err |= ev.element.cq == small;
		}
		if (ev.event_type == IBV_EVENT_QP_FATAL) {
			what = ev.element.qp == qp ? "qp" : "another-qp";
			qp_fatal |= ev.element.qp == qp;
		}
		printf("event %s %s\n", ibv_event_type_str(ev.event_type), what);
		fflush(stdout);
		ibv_ack_async_event(&ev);
	}
	return 0;
}
