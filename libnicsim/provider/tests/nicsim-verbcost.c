/*
 * The bench's measure of what a verb costs a C program through nicsim's provider: the first
 * device's context, then N calls each of ibv_query_port and ibv_req_notify_cq (verbs that answer
 * at once, never waiting on the simulation), then N/10 times an 8-byte inline RDMA WRITE on a QP
 * connected to another of the same adapter: the ibv_post_send, and, after a sleep in which the
 * completion lands, the ibv_poll_cq that finds it (one that found nothing is not counted). Timed
 * with the host's monotonic clock. Prints one line per verb: "<verb> <calls> <ns per call>", the mean
 * of the loop for the first two, the median of the calls for the post and the poll (each call timed
 * alone: a call the machine preempted, on a host the simulator shares, moves the mean, not the median).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <infiniband/verbs.h>

static double now_ns(void) {
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static int by_value(const void *a, const void *b) {
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* The median of the n samples in s (sorted in place); 0 when there are none. */
static double median(double *s, int n) {
	if (n < 1) return 0;
	qsort(s, (size_t)n, sizeof(*s), by_value);
	return s[n / 2];
}

static int fail(const char *what) {
	fprintf(stderr, "nicsim-verbcost: %s failed\n", what);
	return 1;
}

/* RESET to RTS, connected to QP dest of LID lid. */
static int connect_qp(struct ibv_qp *qp, uint32_t dest, uint16_t lid) {
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_INIT, .port_num = 1,
				.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE};
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS)) return -1;
	a = (struct ibv_qp_attr){.qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_1024, .dest_qp_num = dest,
				 .max_dest_rd_atomic = 1, .min_rnr_timer = 12, .ah_attr = {.dlid = lid, .port_num = 1}};
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN
			  | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER)) return -1;
	a = (struct ibv_qp_attr){.qp_state = IBV_QPS_RTS, .timeout = 14, .retry_cnt = 7, .rnr_retry = 7, .max_rd_atomic = 1};
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN
			     | IBV_QP_MAX_QP_RD_ATOMIC);
}

/* n signalled 8-byte inline WRITEs from one QP to another: the post's cost, and the successful poll's. */
static int post_and_poll(struct ibv_context *ctx, struct ibv_cq *cq, int n) {
	static char buf[4096] __attribute__((aligned(4096)));
	struct ibv_port_attr port;
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_mr *mr = pd ? ibv_reg_mr(pd, buf, sizeof buf, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE) : NULL;
	struct ibv_qp_init_attr init = {.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
					.cap = {.max_send_wr = 16, .max_recv_wr = 1, .max_send_sge = 1, .max_recv_sge = 1,
						.max_inline_data = 64}};
	struct ibv_qp *a = mr ? ibv_create_qp(pd, &init) : NULL, *b = a ? ibv_create_qp(pd, &init) : NULL;
	double *post = calloc((size_t)n, sizeof(double)), *poll = calloc((size_t)n, sizeof(double)), t0;
	int found = 0;
	if (!post || !poll) return fail("allocating the samples");
	if (!b || ibv_query_port(ctx, 1, &port) || connect_qp(a, b->qp_num, port.lid) || connect_qp(b, a->qp_num, port.lid))
		return fail("setting up two connected QPs");
	for (int i = 0; i < n; i++) {
		struct ibv_sge sge = {.addr = (uintptr_t)buf, .length = 8, .lkey = mr->lkey};
		struct ibv_send_wr wr = {.wr_id = (uint64_t)i, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
					 .send_flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE,
					 .wr.rdma = {.remote_addr = (uintptr_t)buf + 2048, .rkey = mr->rkey}}, *bad;
		struct ibv_wc wc;
		int got;
		t0 = now_ns();
		if (ibv_post_send(a, &wr, &bad)) return fail("ibv_post_send");
		post[i] = now_ns() - t0;
		usleep(2000); /* asleep, the program lets simulated time move: the completion lands meanwhile */
		t0 = now_ns();
		got = ibv_poll_cq(cq, 1, &wc);
		if (got == 1) { /* only a poll that found its completion there is timed */
			poll[found++] = now_ns() - t0;
		}
		while (got == 0) got = ibv_poll_cq(cq, 1, &wc);
		if (got < 0 || wc.status != IBV_WC_SUCCESS) return fail("the WRITE's completion");
	}
	printf("ibv_post_send %d %.0f\nibv_poll_cq(found) %d %.0f\n", n, median(post, n), found, median(poll, found));
	free(post);
	free(poll);
	ibv_destroy_qp(b);
	ibv_destroy_qp(a);
	ibv_dereg_mr(mr);
	ibv_dealloc_pd(pd);
	return 0;
}

int main(int argc, char **argv) {
	int n = argc > 1 ? atoi(argv[1]) : 10000, num;
	struct ibv_device **list = ibv_get_device_list(&num);
	struct ibv_context *ctx;
	struct ibv_cq *cq;
	struct ibv_port_attr port;
	double t0;
	if (!list || num < 1) { fprintf(stderr, "nicsim-verbcost: no RDMA device\n"); return 1; }
	ctx = ibv_open_device(list[0]);
	if (!ctx) { fprintf(stderr, "nicsim-verbcost: cannot open %s\n", ibv_get_device_name(list[0])); return 1; }
	cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	if (!cq) { fprintf(stderr, "nicsim-verbcost: cannot create a CQ\n"); return 1; }
	t0 = now_ns();
	for (int i = 0; i < n; i++)
		if (ibv_query_port(ctx, 1, &port)) { fprintf(stderr, "nicsim-verbcost: ibv_query_port failed\n"); return 1; }
	printf("ibv_query_port %d %.0f\n", n, (now_ns() - t0) / n);
	t0 = now_ns();
	for (int i = 0; i < n; i++)
		if (ibv_req_notify_cq(cq, 0)) { fprintf(stderr, "nicsim-verbcost: ibv_req_notify_cq failed\n"); return 1; }
	printf("ibv_req_notify_cq %d %.0f\n", n, (now_ns() - t0) / n);
	if (post_and_poll(ctx, cq, n / 10 > 0 ? n / 10 : 1)) return 1;
	ibv_destroy_cq(cq);
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	return 0;
}
