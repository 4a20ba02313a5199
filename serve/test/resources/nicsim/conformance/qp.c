/*
 * QP family: ibv_create_qp's capability checks (its man page), ibv_query_qp, ibv_destroy_qp, and
 * ibv_modify_qp against the kernel's qp_state_table (ib_modify_qp_is_ok) for RC, UC and UD: every
 * transition from RESET, INIT, RTR, RTS, SQD and ERR to every state, valid ones with their
 * required attributes (and then without each, and with one they do not allow), invalid ones refused.
 */
#include "conf.h"

enum { S_RESET, S_INIT, S_RTR, S_RTS, S_SQD, S_SQE, S_ERR, NSTATES };
static const char *names[] = { "RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR" };
static const enum ibv_qp_type types[] = { IBV_QPT_RC, IBV_QPT_UC, IBV_QPT_UD };
static const char *tnames[] = { "RC", "UC", "UD" };

/*
 * required and optional attribute masks (besides IBV_QP_STATE) by [type][cur][next]; valid marks the table's
 * transitions
 */
static int valid[NSTATES][NSTATES];
static int req[3][NSTATES][NSTATES], opt[3][NSTATES][NSTATES];

static void row(int cur, int next, int rc_req, int rc_opt, int uc_req, int uc_opt, int ud_req, int ud_opt) {
	valid[cur][next] = 1;
	req[0][cur][next] = rc_req; opt[0][cur][next] = rc_opt;
	req[1][cur][next] = uc_req; opt[1][cur][next] = uc_opt;
	req[2][cur][next] = ud_req; opt[2][cur][next] = ud_opt;
}

static void table(void) {
	row(S_RESET, S_RESET, 0, 0, 0, 0, 0, 0);
	row(S_RESET, S_INIT, 0x38, 0, 0x38, 0, 0x70, 0);
	row(S_INIT, S_RESET, 0, 0, 0, 0, 0, 0);
	row(S_INIT, S_INIT, 0, 0x38, 0, 0x38, 0, 0x70);
	row(S_INIT, S_RTR, 0x129180, 0x4018, 0x101180, 0x4018, 0, 0x50);
	row(S_INIT, S_ERR, 0, 0, 0, 0, 0, 0);
	row(S_RTR, S_RESET, 0, 0, 0, 0, 0, 0);
	row(S_RTR, S_RTS, 0x12e00, 0x4c00a, 0x10000, 0x4400a, 0x10000, 0x42);
	row(S_RTR, S_ERR, 0, 0, 0, 0, 0, 0);
	row(S_RTS, S_RESET, 0, 0, 0, 0, 0, 0);
	row(S_RTS, S_RTS, 0, 0x4c00a, 0, 0x4400a, 0, 0x42);
	row(S_RTS, S_SQD, 0, 0x4, 0, 0x4, 0, 0x4);
	row(S_RTS, S_ERR, 0, 0, 0, 0, 0, 0);
	row(S_SQD, S_RESET, 0, 0, 0, 0, 0, 0);
	row(S_SQD, S_RTS, 0, 0x4c00a, 0, 0x4400a, 0, 0x42);
	row(S_SQD, S_SQD, 0, 0x6eeb8, 0, 0x44098, 0, 0x50);
	row(S_SQD, S_ERR, 0, 0, 0, 0, 0, 0);
	row(S_ERR, S_RESET, 0, 0, 0, 0, 0, 0);
	row(S_ERR, S_ERR, 0, 0, 0, 0, 0, 0);
}

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_cq *cq;

static struct ibv_qp *make(enum ibv_qp_type t) {
	struct ibv_qp_init_attr qa = { .send_cq = cq, .recv_cq = cq, .qp_type = t,
				       .cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1 } };
	return ibv_create_qp(pd, &qa);
}

/* Every attribute a mask may name, with values any transition takes. */
static struct ibv_qp_attr values(struct ibv_qp *qp, int next) {
	struct ibv_qp_attr a;
	memset(&a, 0, sizeof a);
	a.qp_state = (enum ibv_qp_state)next;
	a.cur_qp_state = qp->state;
	a.qkey = 0x11111111;
	a.port_num = 1;
	a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = qp->qp_num;
	a.ah_attr.dlid = (uint16_t)conf_lid(ctx);
	a.ah_attr.port_num = 1;
	a.alt_ah_attr = a.ah_attr;
	a.alt_port_num = 1;
	a.alt_timeout = 14;
	a.path_mig_state = IBV_MIG_MIGRATED;
	a.max_dest_rd_atomic = 4;
	a.max_rd_atomic = 4;
	a.min_rnr_timer = 12;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	return a;
}

static int step(struct ibv_qp *qp, int t, int next) {
	struct ibv_qp_attr a = values(qp, next);
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | req[t][qp->state][next]);
}

/* A fresh QP of type t brought to state s along valid transitions; NULL if that failed. */
static struct ibv_qp *at(int t, int s) {
	static const int path[] = { S_INIT, S_RTR, S_RTS, S_SQD };
	struct ibv_qp *qp = make(types[t]);
	if (!qp) return NULL;
	if (s == S_ERR) { /* RESET->ERR is not in the table */
		if (step(qp, t, S_INIT) || step(qp, t, S_ERR)) goto fail;
		return qp;
	}
	for (int i = 0; i < 4 && qp->state != (enum ibv_qp_state)s; i++)
		if (step(qp, t, path[i])) goto fail;
	if (s == S_SQD) { /* the drain completes at once: no send is outstanding */
		struct ibv_qp_attr q;
		struct ibv_qp_init_attr qi;
		if (ibv_query_qp(qp, &q, IBV_QP_STATE, &qi) || q.qp_state != IBV_QPS_SQD) goto fail;
	}
	return qp;
fail:
	ibv_destroy_qp(qp);
	return NULL;
}

/* The first attribute bit that neither the transition nor IBV_QP_STATE allows. */
static int disallowed(int allowed) {
	static const int bits[] = { IBV_QP_QKEY, IBV_QP_ACCESS_FLAGS, IBV_QP_DEST_QPN, IBV_QP_SQ_PSN, IBV_QP_TIMEOUT,
				    IBV_QP_MAX_DEST_RD_ATOMIC, IBV_QP_PKEY_INDEX, IBV_QP_PATH_MTU, IBV_QP_CAP };
	for (unsigned i = 0; i < sizeof bits / sizeof bits[0]; i++) if (!(allowed & bits[i])) return bits[i];
	return 0;
}

static void transitions(int t) {
	char what[160];
	for (int cur = 0; cur < NSTATES; cur++) {
		if (cur == S_SQE) continue; /* reached only by a send error on UC/UD: the QP tests cover it */
		for (int next = 0; next < NSTATES; next++) {
			struct ibv_qp *qp = at(t, cur);
			struct ibv_qp_attr a;
			int rc;
			if (!qp) { check(0, "reach a state", "%s %s", tnames[t], names[cur]); continue; }
			a = values(qp, next);
			if (valid[cur][next] && req[t][cur][next]) {
				for (int bit = 1; bit <= IBV_QP_DEST_QPN; bit <<= 1) {
					if (!(req[t][cur][next] & bit)) continue;
					snprintf(what, sizeof what, "%s %s->%s without required 0x%x: EINVAL", tnames[t], names[cur], names[next], bit);
					EXPECT_RC(ibv_modify_qp(qp, &a, IBV_QP_STATE | (req[t][cur][next] & ~bit)), EINVAL, what);
				}
			}
			if (valid[cur][next]) {
				int extra = disallowed(req[t][cur][next] | opt[t][cur][next]);
				snprintf(what, sizeof what, "%s %s->%s with 0x%x it does not allow: EINVAL", tnames[t],
					 names[cur], names[next], extra);
				EXPECT_RC(ibv_modify_qp(qp, &a, IBV_QP_STATE | req[t][cur][next] | extra), EINVAL, what);
			}
			rc = ibv_modify_qp(qp, &a, IBV_QP_STATE | req[t][cur][next]);
			snprintf(what, sizeof what, "%s %s->%s %s", tnames[t], names[cur], names[next],
				 valid[cur][next] ? "is valid" : "is refused");
			check(valid[cur][next] ? rc == 0 : rc == EINVAL, what, "modify_qp returned %d", rc);
			if (valid[cur][next] && rc == 0) {
				struct ibv_qp_attr q;
				struct ibv_qp_init_attr qi;
				ibv_query_qp(qp, &q, IBV_QP_STATE, &qi);
				snprintf(what, sizeof what, "%s %s->%s: query_qp says %s", tnames[t], names[cur], names[next], names[next]);
				check(q.qp_state == (enum ibv_qp_state)next && qp->state == (enum ibv_qp_state)next, what, "query %d, qp->state %d",
				      q.qp_state, qp->state);
			}
			ibv_destroy_qp(qp);
		}
	}
}

static void caps(void) {
	struct ibv_device_attr d;
	struct ibv_qp_init_attr qa = { .send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
				       .cap = { .max_send_wr = 10, .max_recv_wr = 10, .max_send_sge = 2, .max_recv_sge = 2,
						.max_inline_data = 32 } };
	struct ibv_qp_init_attr bad;
	struct ibv_qp_attr q;
	struct ibv_qp_init_attr qi;
	struct ibv_qp *qp;
	ibv_query_device(ctx, &d);
	qp = ibv_create_qp(pd, &qa);
	check(qp != NULL, "ibv_create_qp RC", "errno %d", errno);
	if (!qp) return;
	check(qa.cap.max_send_wr >= 10 && qa.cap.max_recv_wr >= 10 && qa.cap.max_send_sge >= 2 && qa.cap.max_inline_data >= 32,
	      "the caps it got are at least those asked", "send_wr %u", qa.cap.max_send_wr);
	EXPECT_RC(ibv_query_qp(qp, &q, IBV_QP_STATE | IBV_QP_CAP, &qi), 0, "ibv_query_qp");
	check(q.qp_state == IBV_QPS_RESET && qi.qp_type == IBV_QPT_RC && qi.send_cq == cq
	      && q.cap.max_send_wr == qa.cap.max_send_wr, "query_qp: RESET, RC, its CQ and caps", "state %d", q.qp_state);
	EXPECT_RC(ibv_destroy_qp(qp), 0, "ibv_destroy_qp");

	/* as mlx5, the inline data reported is what the QP's WQE holds, asked for or not: an RC WQE's slot is at
	 * least two 64-byte blocks, 48 bytes of them control, remote address and atomic segments, 4 the inline
	 * header (WqeLayout.MIN_SEND_WQEBBS), so programs that post a few bytes inline on such a QP, as they may on
	 * mlx5, are served */
	struct ibv_qp_init_attr z = qa;
	z.cap.max_send_sge = 1;
	z.cap.max_inline_data = 0;
	qp = ibv_create_qp(pd, &z);
	check(qp != NULL, "ibv_create_qp RC, no inline asked", "errno %d", errno);
	if (!qp) return;
	check(z.cap.max_inline_data == 76, "it holds 76 bytes inline", "max_inline_data %u", z.cap.max_inline_data);
	EXPECT_RC(ibv_query_qp(qp, &q, IBV_QP_CAP, &qi), 0, "ibv_query_qp of its caps");
	check(q.cap.max_inline_data == z.cap.max_inline_data && qi.cap.max_inline_data == z.cap.max_inline_data,
	      "query_qp reports the inline data create_qp did", "%u, %u", q.cap.max_inline_data, qi.cap.max_inline_data);
	EXPECT_RC(ibv_destroy_qp(qp), 0, "ibv_destroy_qp");

#define BAD(field, value, name) do { \
	bad = qa; \
	bad.field = value; \
	EXPECT_NULL(ibv_create_qp(pd, &bad), EINVAL, name); \
} while (0)
	BAD(cap.max_send_wr, 0xffffffffu, "max_send_wr 0xffffffff: EINVAL");
	BAD(cap.max_recv_wr, 0xffffffffu, "max_recv_wr 0xffffffff: EINVAL");
	BAD(cap.max_send_sge, 0xffffffffu, "max_send_sge 0xffffffff: EINVAL");
	BAD(cap.max_recv_sge, 0xffffffffu, "max_recv_sge 0xffffffff: EINVAL");
	BAD(cap.max_inline_data, 0xffffffffu, "max_inline_data 0xffffffff: EINVAL");
	BAD(cap.max_send_wr, (uint32_t)d.max_qp_wr + 1, "max_send_wr past max_qp_wr: EINVAL");
	BAD(cap.max_recv_wr, (uint32_t)d.max_qp_wr + 1, "max_recv_wr past max_qp_wr: EINVAL");
	BAD(cap.max_send_sge, (uint32_t)d.max_sge + 1, "max_send_sge past max_sge: EINVAL");
	BAD(cap.max_inline_data, 1u << 20, "max_inline_data of 1 MiB: EINVAL");
	BAD(send_cq, NULL, "no send CQ: EINVAL");
	BAD(recv_cq, NULL, "no receive CQ: EINVAL");
#undef BAD
}

int main(void) {
	ctx = conf_open();
	table();
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	check(pd && cq, "a PD and a CQ", "errno %d", errno);
	if (!pd || !cq) return conf_end();
	caps();
	for (int t = 0; t < 3; t++) transitions(t);
	EXPECT_RC(ibv_destroy_cq(cq), 0, "every QP gone: the CQ goes");
	EXPECT_RC(ibv_dealloc_pd(pd), 0, "and the PD");
	EXPECT_RC(ibv_close_device(ctx), 0, "ibv_close_device");
	return conf_end();
}
