/*
 * A program that polls its CQs in turn, as UCX polls its receive and send CQs: a signalled WRITE
 * completes on the send CQ while the program polls the empty receive CQ first. Meanwhile a third
 * QP waits for an ACK that never comes (its peer does not exist), so the simulation always has
 * something far ahead: its ACK timeout, about a second. The completion must be seen microseconds
 * after the WRITE, not when that timeout fires. Prints the WRITE's post-to-seen time in simulated
 * microseconds (run it with attach --sim-time) and exits 0 if it was under a millisecond.
 */
#define _GNU_SOURCE
#include <time.h>
#include "meet.h"

static double now_us(void) {
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static void to_rts(struct ibv_qp *qp, uint32_t dest, uint16_t lid) {
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1, .qp_access_flags = IBV_ACCESS_REMOTE_WRITE };
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS)) die("INIT");
	memset(&a, 0, sizeof a);
	a.qp_state = IBV_QPS_RTR; a.path_mtu = IBV_MTU_1024; a.dest_qp_num = dest; a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12; a.ah_attr.dlid = lid; a.ah_attr.port_num = 1;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN
			  | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		die("RTR");
	memset(&a, 0, sizeof a);
	a.qp_state = IBV_QPS_RTS; a.timeout = 18; a.retry_cnt = 7; a.rnr_retry = 7; a.max_rd_atomic = 1;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN
			  | IBV_QP_MAX_QP_RD_ATOMIC))
		die("RTS");
}

static char buf[8192];

int main(void) {
	struct ibv_port_attr port;
	struct ibv_context *ctx = open_first();
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_cq *rcq = ibv_create_cq(ctx, 16, NULL, NULL, 0), *scq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	struct ibv_mr *mr = pd ? ibv_reg_mr(pd, buf, sizeof buf, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE) : NULL;
	struct ibv_qp_init_attr qi = { .send_cq = scq, .recv_cq = rcq, .qp_type = IBV_QPT_RC,
				       .cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1 } };
	struct ibv_qp *a, *b, *lost;
	struct ibv_wc wc;
	double t0, seen = -1;
	alarm(60);
	if (!mr || !rcq || !scq || ibv_query_port(ctx, 1, &port)) die("setup");
	if (!(a = ibv_create_qp(pd, &qi)) || !(b = ibv_create_qp(pd, &qi)) || !(lost = ibv_create_qp(pd, &qi))) die("QPs");
	to_rts(a, b->qp_num, port.lid);
	to_rts(b, a->qp_num, port.lid);
	to_rts(lost, 0xfffff0, port.lid); /* no such QP: its SEND is never ACKed */
	{
		struct ibv_sge s = { .addr = (uintptr_t)buf, .length = 8, .lkey = mr->lkey };
		struct ibv_send_wr w = { .wr_id = 1, .sg_list = &s, .num_sge = 1, .opcode = IBV_WR_SEND }, *bad;
		if (ibv_post_send(lost, &w, &bad)) die("the lost SEND");
	}
	{
		struct ibv_sge s = { .addr = (uintptr_t)buf, .length = 64, .lkey = mr->lkey };
		struct ibv_send_wr w = { .wr_id = 2, .sg_list = &s, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
					 .send_flags = IBV_SEND_SIGNALED }, *bad;
		w.wr.rdma.remote_addr = (uintptr_t)buf + 4096;
		w.wr.rdma.rkey = mr->rkey;
		t0 = now_us();
		if (ibv_post_send(a, &w, &bad)) die("the WRITE");
	}
	while (seen < 0) {
		if (ibv_poll_cq(rcq, 1, &wc) < 0) die("polling the receive CQ"); /* empty: nothing is received */
		int n = ibv_poll_cq(scq, 1, &wc);
		if (n < 0) die("polling the send CQ");
		if (n == 1 && wc.wr_id == 2) seen = now_us() - t0;
		if (n == 1 && wc.status != IBV_WC_SUCCESS) die("the WRITE's completion");
	}
	printf("write completion seen after %.1f us\n", seen);
	return seen < 1000 ? 0 : 1;
}
