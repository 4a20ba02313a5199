/*
 * The bench's measure of what a verb costs a C program through nicsim's provider: the first
 * device's context, then N calls each of ibv_query_port and ibv_req_notify_cq (verbs that answer
 * at once, never waiting on the simulation), timed with the host's monotonic clock. Prints one line
 * per verb: "<verb> <calls> <ns per call>".
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <infiniband/verbs.h>

static double now_ns(void) {
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
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
	ibv_destroy_cq(cq);
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	return 0;
}
