/*
 * What AttachTest's programs share: the roles of one test meet through small files in a folder
 * (written whole, then renamed, so a reader never sees half of one), open the first RDMA device,
 * and wait for completions. Each program sets {@code dir} before it meets anyone.
 */
#ifndef NICSIM_TEST_MEET_H
#define NICSIM_TEST_MEET_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <infiniband/verbs.h>

static const char *dir;

static inline void die(const char *what) {
	fprintf(stderr, "%s: %s failed\n", program_invocation_short_name, what);
	exit(1);
}

static inline void put_file(const char *name, const char *text) {
	char path[512], tmp[520];
	FILE *f;
	snprintf(path, sizeof path, "%s/%s", dir, name);
	snprintf(tmp, sizeof tmp, "%s.tmp", path);
	if (!(f = fopen(tmp, "w")) || fputs(text, f) < 0 || fclose(f) || rename(tmp, path)) die("writing a file");
}

/* Waits for file name and reads its first line. */
static inline void get_file(const char *name, char *text, size_t n) {
	char path[512];
	FILE *f;
	snprintf(path, sizeof path, "%s/%s", dir, name);
	while (!(f = fopen(path, "r"))) usleep(10000);
	if (!fgets(text, (int)n, f)) die("reading a file");
	fclose(f);
}

static inline struct ibv_context *open_first(void) {
	int num;
	struct ibv_device **list = ibv_get_device_list(&num);
	struct ibv_context *ctx;
	if (!list || num < 1 || !(ctx = ibv_open_device(list[0]))) die("open");
	ibv_free_device_list(list);
	return ctx;
}

/* The next completion of cq, polled for. */
static inline struct ibv_wc wait_one(struct ibv_cq *cq) {
	struct ibv_wc wc;
	int n;
	while ((n = ibv_poll_cq(cq, 1, &wc)) == 0) {}
	if (n < 0) die("poll_cq");
	return wc;
}

/*
 * An RC QP from RESET to RTS towards the peer's LID and QP number (PSN 0 both ways, MTU 1024), with access
 * flags access.
 */
static inline void connect_rc(struct ibv_qp *qp, unsigned lid, unsigned qpn, unsigned access) {
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1, .qp_access_flags = access };
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS)) die("to INIT");
	memset(&a, 0, sizeof a);
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = qpn;
	a.ah_attr.dlid = (uint16_t)lid;
	a.ah_attr.port_num = 1;
	a.max_dest_rd_atomic = 4;
	a.min_rnr_timer = 12;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN
			  | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER)) die("to RTR");
	memset(&a, 0, sizeof a);
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 4;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN
			  | IBV_QP_MAX_QP_RD_ATOMIC))
		die("to RTS");
}

/* This node's LID (port 1). */
static inline unsigned my_lid(struct ibv_context *ctx) {
	struct ibv_port_attr p;
	if (ibv_query_port(ctx, 1, &p)) die("query_port");
	return p.lid;
}

#endif
