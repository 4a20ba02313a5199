/*
 * What the conformance programs share. Each checks one verb family against its man page (and,
 * for QPs, the kernel's qp_state_table), error cases included, on the first RDMA device: one line
 * per check, "ok N what" or "not ok N what: how it differed", then "# N checks, F failed"; the
 * exit status is 1 if any check failed. Traffic runs between two QPs of one program on its one
 * node, connected to each other (loopback through the adapter's port).
 */
#ifndef NICSIM_CONF_H
#define NICSIM_CONF_H

#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <infiniband/verbs.h>

static int conf_checks, conf_failed;

/* Records a check: ok when good, else "not ok" with the detail (printf-style after what). */
static inline void check(int good, const char *what, const char *detail_fmt, ...) {
	conf_checks++;
	if (good) {
		printf("ok %d %s\n", conf_checks, what);
	} else {
		va_list ap;
		conf_failed++;
		printf("not ok %d %s: ", conf_checks, what);
		va_start(ap, detail_fmt);
		vprintf(detail_fmt, ap);
		va_end(ap);
		printf("\n");
	}
	fflush(stdout);
}

/* A call that must fail with errno want (returned NULL, or -1 with errno set). */
#define EXPECT_NULL(call, want, what) do { \
	errno = 0; \
	void *conf_p_ = (void *)(call); \
	int conf_e_ = errno; \
	check(!conf_p_ && conf_e_ == (want), what, "got %p, errno %d (%s), wanted NULL and %s", conf_p_, conf_e_, \
	      strerror(conf_e_), #want); \
} while (0)

/* A call that must return want (0, or an errno as the verbs that return one do). */
#define EXPECT_RC(call, want, what) do { \
	int conf_r_ = (call); \
	check(conf_r_ == (want), what, "returned %d (%s), wanted %d (%s)", conf_r_, \
	      strerror(conf_r_ < 0 ? -conf_r_ : conf_r_), (want), #want); \
} while (0)

/* A call that must succeed (non-NULL), its result kept in var; the program stops here if it did not. */
#define MUST(var, call, what) do { \
	errno = 0; \
	(var) = (call); \
	check((var) != NULL, what, "failed: errno %d (%s)", errno, strerror(errno)); \
	if (!(var)) return conf_end(); \
} while (0)

static inline int conf_end(void) {
	printf("# %d checks, %d failed\n", conf_checks, conf_failed);
	return conf_failed ? 1 : 0;
}

static inline struct ibv_context *conf_open(void) {
	int num;
	struct ibv_device **list = ibv_get_device_list(&num);
	struct ibv_context *ctx = list && num > 0 ? ibv_open_device(list[0]) : NULL;
	if (list) ibv_free_device_list(list);
	if (!ctx) { printf("not ok 1 open the first device: errno %d\n", errno); exit(1); }
	return ctx;
}

static inline unsigned conf_lid(struct ibv_context *ctx) {
	struct ibv_port_attr p;
	return ibv_query_port(ctx, 1, &p) ? 0 : p.lid;
}

/* Moves qp from RESET to INIT (RC/UC: access; UD: qkey). 0 or the errno. */
static inline int conf_to_init(struct ibv_qp *qp, unsigned access) {
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1, .qp_access_flags = access, .qkey = 0x11111111 };
	int mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;
	return ibv_modify_qp(qp, &a, mask | (qp->qp_type == IBV_QPT_UD ? IBV_QP_QKEY : IBV_QP_ACCESS_FLAGS));
}

/* INIT to RTR towards dest_qpn on this node (RC: 4 reads in, RNR timer 12). 0 or the errno. */
static inline int conf_to_rtr(struct ibv_qp *qp, uint32_t dest_qpn) {
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_1024, .dest_qp_num = dest_qpn,
				 .max_dest_rd_atomic = 4, .min_rnr_timer = 12 };
	int mask = IBV_QP_STATE;
	a.ah_attr.dlid = (uint16_t)conf_lid(qp->context);
	a.ah_attr.port_num = 1;
	if (qp->qp_type == IBV_QPT_UC) mask |= IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;
	if (qp->qp_type == IBV_QPT_RC)
		mask |= IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC
			| IBV_QP_MIN_RNR_TIMER;
	return ibv_modify_qp(qp, &a, mask);
}

/* RTR to RTS (RC: timeout 14, 7 retries, 4 reads out). 0 or the errno. */
static inline int conf_to_rts(struct ibv_qp *qp) {
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RTS, .timeout = 14, .retry_cnt = 7, .rnr_retry = 7, .max_rd_atomic = 4 };
	int mask = IBV_QP_STATE | IBV_QP_SQ_PSN;
	if (qp->qp_type == IBV_QPT_RC) mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC;
	return ibv_modify_qp(qp, &a, mask);
}

/* Connects a and b to each other (RC or UC) and brings both to RTS. 0 or the first errno. */
static inline int conf_connect(struct ibv_qp *a, struct ibv_qp *b, unsigned access) {
	int rc;
	if ((rc = conf_to_init(a, access)) || (rc = conf_to_init(b, access))) return rc;
	if ((rc = conf_to_rtr(a, b->qp_num)) || (rc = conf_to_rtr(b, a->qp_num))) return rc;
	if ((rc = conf_to_rts(a)) || (rc = conf_to_rts(b))) return rc;
	return 0;
}

/* Polls cq until one completion arrives (or 10 s pass: status -1). */
static inline struct ibv_wc conf_wait(struct ibv_cq *cq) {
	struct ibv_wc wc;
	for (int i = 0; i < 1000000; i++) {
		int n = ibv_poll_cq(cq, 1, &wc);
		if (n > 0) return wc;
		if (n < 0) break;
		if (i > 1000) usleep(10);
	}
	memset(&wc, 0, sizeof wc);
	wc.status = (enum ibv_wc_status)-1;
	return wc;
}

#endif
