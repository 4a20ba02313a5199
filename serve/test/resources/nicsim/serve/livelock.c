/*
 * A program that livelocks an RC QP: a SEND on a QP whose peer (another QP of this program,
 * through the port) never posts a receive, with rnr_retry 7 (retry forever). The requester is
 * answered RNR NAK, waits, retries, and so on for ever; the program polls the CQ for ever (until
 * killed). Prints "spinning 0x<qpn>" once the SEND is posted.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <infiniband/verbs.h>

/* RESET to RTS towards dest (this node's port), forever retrying RNR. 0 or an errno. */
static int up(struct ibv_qp *qp, uint32_t dest, uint16_t lid) {
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1 };
	int rc = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
	if (rc) return rc;
	memset(&a, 0, sizeof a);
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = dest;
	a.min_rnr_timer = 1; /* 0.01 ms between tries */
	a.ah_attr.dlid = lid;
	a.ah_attr.port_num = 1;
	rc = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN
			   | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
	if (rc) return rc;
	memset(&a, 0, sizeof a);
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7; /* for ever */
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY
			     | IBV_QP_MAX_QP_RD_ATOMIC);
}

int main(void) {
	int num;
	struct ibv_device **list = ibv_get_device_list(&num);
	struct ibv_context *ctx = list && num > 0 ? ibv_open_device(list[0]) : NULL;
	struct ibv_port_attr port;
	struct ibv_pd *pd = ctx ? ibv_alloc_pd(ctx) : NULL;
	struct ibv_cq *cq = ctx ? ibv_create_cq(ctx, 16, NULL, NULL, 0) : NULL;
	struct ibv_qp_init_attr qi = { .qp_type = IBV_QPT_RC,
				       .cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1 } };
	static char buf[4096];
	struct ibv_mr *mr = pd ? ibv_reg_mr(pd, buf, sizeof buf, IBV_ACCESS_LOCAL_WRITE) : NULL;
	struct ibv_qp *a, *b;
	struct ibv_sge s = { .addr = (uintptr_t)buf, .length = 64 };
	struct ibv_send_wr w = { .wr_id = 1, .sg_list = &s, .num_sge = 1, .opcode = IBV_WR_SEND,
				 .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_wc wc;
	qi.send_cq = qi.recv_cq = cq;
	if (!mr || !cq || ibv_query_port(ctx, 1, &port) || !(a = ibv_create_qp(pd, &qi)) || !(b = ibv_create_qp(pd, &qi))
	    || up(a, b->qp_num, port.lid) || up(b, a->qp_num, port.lid)) {
		printf("setup failed: errno %d\n", errno);
		return 1;
	}
	s.lkey = mr->lkey;
	if (ibv_post_send(a, &w, &bad)) { printf("post failed\n"); return 1; }
	printf("spinning 0x%x\n", a->qp_num);
	fflush(stdout);
	for (;;) {
		int n = ibv_poll_cq(cq, 1, &wc);
		if (n != 0) { printf("completed: status %d\n", n > 0 ? (int)wc.status : n); return 1; } /* never, with rnr_retry 7 */
		usleep(1000);
	}
}
