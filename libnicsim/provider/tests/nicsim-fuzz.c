/*
 * Random verbs with random arguments, N of them (argv[1], default 100000) from seed argv[2]: PDs,
 * MRs, CQs (with resizes), QPs of every type with random modifies and posts, SRQs, AHs, MWs,
 * device memory, queries and polls, on live objects only (a freed pointer would be the program's
 * own bug), every scalar argument random. Every call must succeed or refuse with an errno; the
 * program must neither crash nor hang. Prints a line per kind of refusal and "fuzz: N verbs,
 * R refused, B bad"; exits 1 if any refusal came without an errno.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <infiniband/verbs.h>

#define SLOTS 8
#define ARENA (1 << 20)

static uint64_t state;
static uint64_t rnd(void) { state ^= state << 13; state ^= state >> 7; state ^= state << 17; return state; }
static uint32_t pick(uint32_t n) { return (uint32_t)(rnd() % n); }
/* A random 32-bit value: small numbers, limits and noise alike. */
static uint32_t wild(void) {
	static const uint32_t edges[] = { 0, 1, 2, 3, 4, 7, 8, 16, 63, 64, 255, 256, 4096, 65535, 65536, 0x7fffffff,
					  0x80000000,
					  0xfffffffe, 0xffffffff };
	return pick(3) ? edges[pick(sizeof edges / sizeof edges[0])] : (uint32_t)rnd();
}

static struct ibv_context *ctx;
static struct ibv_pd *pds[SLOTS];
static struct ibv_mr *mrs[SLOTS];
static struct ibv_cq *cqs[SLOTS];
static struct ibv_qp *qps[SLOTS];
static struct ibv_srq *srqs[SLOTS];
static struct ibv_ah *ahs[SLOTS];
static struct ibv_mw *mws[SLOTS];
static struct ibv_dm *dms[SLOTS];
static char *arena;
static long verbs, refused, bad, by_errno[200];
static uint16_t lid;

/* Records a call's outcome: rc 0 is success; otherwise err must be an errno. */
static void outcome(int failed, int err, const char *what) {
	verbs++;
	if (!failed) return;
	refused++;
	if (err > 0 && err < 200) by_errno[err]++;
	else { bad++; printf("bad: %s refused with errno %d\n", what, err); }
}

/* Calls returning an errno (0: success). */
#define RC(call, what) do { int r_ = (call); outcome(r_ != 0, r_ < 0 ? -r_ : r_, what); } while (0)
/* Calls returning a pointer (NULL with errno). */
#define PTR(var, call, what) do { errno = 0; (var) = (call); outcome(!(var), errno, what); } while (0)

static void *any(void **slots) {
	int k = (int)pick(SLOTS);
	for (int i = 0; i < SLOTS; i++) if (slots[(k + i) % SLOTS]) return slots[(k + i) % SLOTS];
	return NULL;
}
static int empty(void **slots) { for (int i = 0; i < SLOTS; i++) if (!slots[i]) return i; return -1; }
#define ANY(arr) any((void **)(arr))
#define EMPTY(arr) empty((void **)(arr))

static struct ibv_sge sge(void) {
	struct ibv_mr *mr = ANY(mrs);
	struct ibv_sge s = { .addr = (uintptr_t)arena + pick(ARENA - 8192), .length = pick(5) ? pick(8192) : wild(),
			     .lkey = mr && pick(8) ? mr->lkey : wild() };
	return s;
}

static void make_qp(void) {
	static const enum ibv_qp_type types[] = { IBV_QPT_RC, IBV_QPT_UC, IBV_QPT_UD, IBV_QPT_RC, (enum ibv_qp_type)77 };
	struct ibv_qp_init_attr a;
	struct ibv_pd *pd = ANY(pds);
	int i = EMPTY(qps);
	if (i < 0 || !pd || !ANY(cqs)) return;
	memset(&a, 0, sizeof a);
	a.qp_type = types[pick(5)];
	a.send_cq = ANY(cqs);
	a.recv_cq = ANY(cqs);
	a.srq = pick(4) ? NULL : ANY(srqs);
	a.cap.max_send_wr = pick(3) ? 1 + pick(64) : wild();
	a.cap.max_recv_wr = pick(3) ? 1 + pick(64) : wild();
	a.cap.max_send_sge = pick(3) ? 1 + pick(4) : wild();
	a.cap.max_recv_sge = pick(3) ? 1 + pick(4) : wild();
	a.cap.max_inline_data = pick(3) ? pick(256) : wild();
	a.sq_sig_all = (int)pick(2);
	PTR(qps[i], ibv_create_qp(pd, &a), "ibv_create_qp");
}

static void modify_qp(void) {
	struct ibv_qp *qp = ANY(qps), *peer = ANY(qps);
	struct ibv_qp_attr a;
	int mask;
	if (!qp) return;
	memset(&a, 0, sizeof a);
	a.qp_state = (enum ibv_qp_state)pick(8);
	a.cur_qp_state = (enum ibv_qp_state)pick(8);
	a.pkey_index = (uint16_t)(pick(4) ? 0 : wild());
	a.port_num = (uint8_t)(pick(4) ? 1 : wild());
	a.qkey = wild();
	a.qp_access_flags = pick(2) ? (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ) : wild();
	a.path_mtu = (enum ibv_mtu)(1 + pick(6));
	a.dest_qp_num = peer && pick(4) ? peer->qp_num : wild();
	a.rq_psn = wild() & 0xffffff;
	a.sq_psn = wild() & 0xffffff;
	a.max_dest_rd_atomic = (uint8_t)pick(20);
	a.max_rd_atomic = (uint8_t)pick(20);
	a.min_rnr_timer = (uint8_t)pick(40);
	a.timeout = (uint8_t)pick(40);
	a.retry_cnt = (uint8_t)pick(9);
	a.rnr_retry = (uint8_t)pick(7); /* 7 (for ever) left out: a QP that retries for ever is the watchdog test's */
	a.ah_attr.dlid = pick(4) ? lid : (uint16_t)wild();
	a.ah_attr.port_num = 1;
	a.ah_attr.sl = (uint8_t)pick(20);
	a.sq_draining = (uint8_t)pick(2);
	mask = pick(3) ? (int)(wild() & 0x1fffff) : (int)(IBV_QP_STATE | (rnd() & 0xfffff));
	RC(ibv_modify_qp(qp, &a, mask), "ibv_modify_qp");
}

static void post_send(void) {
	static const enum ibv_wr_opcode ops[] = { IBV_WR_SEND, IBV_WR_SEND_WITH_IMM, IBV_WR_RDMA_WRITE,
						  IBV_WR_RDMA_WRITE_WITH_IMM,
						  IBV_WR_RDMA_READ, IBV_WR_ATOMIC_CMP_AND_SWP, IBV_WR_ATOMIC_FETCH_AND_ADD,
						  IBV_WR_LOCAL_INV, IBV_WR_BIND_MW, IBV_WR_SEND_WITH_INV, (enum ibv_wr_opcode)99 };
	struct ibv_qp *qp = ANY(qps);
	struct ibv_mr *mr = ANY(mrs);
	struct ibv_sge s[64]; /* more than any QP takes: a request's num_sge never runs past the array */
	struct ibv_send_wr w[3], *bad_wr;
	int n = 1 + (int)pick(3);
	if (!qp) return;
	memset(w, 0, sizeof w);
	for (int i = 0; i < 64; i++) s[i] = sge();
	for (int i = 0; i < n; i++) {
		w[i].wr_id = rnd();
		w[i].next = i + 1 < n ? &w[i + 1] : NULL;
		w[i].sg_list = s + i;
		w[i].num_sge = pick(6) ? 1 : pick(2) ? (int)pick(64) : (int)wild();
		if (w[i].num_sge > 1 && w[i].num_sge <= 64) w[i].sg_list = s;
		w[i].opcode = ops[pick(sizeof ops / sizeof ops[0])];
		w[i].send_flags = pick(2) ? IBV_SEND_SIGNALED : wild() & 0x3f;
		w[i].wr.rdma.remote_addr = (uintptr_t)arena + (pick(2) ? pick(ARENA) & ~7u : wild());
		w[i].wr.rdma.rkey = mr && pick(4) ? mr->rkey : wild();
		if (w[i].opcode == IBV_WR_ATOMIC_CMP_AND_SWP || w[i].opcode == IBV_WR_ATOMIC_FETCH_AND_ADD) {
			w[i].wr.atomic.remote_addr = (uintptr_t)arena + (pick(ARENA) & ~7u);
			w[i].wr.atomic.rkey = mr && pick(4) ? mr->rkey : wild();
			w[i].wr.atomic.compare_add = rnd();
			s[i].length = 8;
		}
		if (qp->qp_type == IBV_QPT_UD) {
			w[i].wr.ud.ah = ANY(ahs);
			w[i].wr.ud.remote_qpn = wild() & 0xffffff;
			w[i].wr.ud.remote_qkey = wild();
			if (!w[i].wr.ud.ah) return; /* a UD send needs an AH: libibverbs' programs never send without one */
		}
		if (w[i].opcode == IBV_WR_BIND_MW) return; /* needs a live MW and MR pair: bind_mw() does it */
		if ((w[i].send_flags & IBV_SEND_INLINE) && w[i].num_sge == 1) s[i].length = pick(300);
	}
	RC(ibv_post_send(qp, w, &bad_wr), "ibv_post_send");
}

static void post_recv(void) {
	struct ibv_qp *qp = ANY(qps);
	struct ibv_srq *srq = ANY(srqs);
	struct ibv_sge s[64];
	struct ibv_recv_wr w = { .wr_id = rnd(), .sg_list = s }, *bad_wr;
	w.num_sge = pick(5) ? 1 : pick(2) ? (int)pick(64) : (int)wild();
	for (int i = 0; i < 64; i++) s[i] = sge();
	if (pick(2) && qp) RC(ibv_post_recv(qp, &w, &bad_wr), "ibv_post_recv");
	else if (srq) RC(ibv_post_srq_recv(srq, &w, &bad_wr), "ibv_post_srq_recv");
}

static void bind_mw(void) {
	struct ibv_qp *qp = ANY(qps);
	struct ibv_mw *mw = ANY(mws);
	struct ibv_mr *mr = ANY(mrs);
	struct ibv_mw_bind b;
	if (!qp || !mw || !mr || mw->type != IBV_MW_TYPE_1) return;
	memset(&b, 0, sizeof b);
	b.wr_id = rnd();
	b.send_flags = IBV_SEND_SIGNALED;
	b.bind_info.mr = mr;
	b.bind_info.addr = (uintptr_t)arena + pick(ARENA);
	b.bind_info.length = pick(3) ? pick(8192) : wild();
	b.bind_info.mw_access_flags = wild() & 0x3f;
	RC(ibv_bind_mw(qp, mw, &b), "ibv_bind_mw");
}

/* Destroys a random slot's object, if there is one; a refusal leaves it there. */
#define DROP(arr, fn, what) do { \
	int i_ = (int)pick(SLOTS); \
	if (arr[i_]) { \
		int r_ = fn(arr[i_]); \
		outcome(r_ != 0, r_, what); \
		if (!r_) arr[i_] = NULL; \
	} \
} while (0)

static void reg_mr(void) {
	static const int acc[] = { IBV_ACCESS_LOCAL_WRITE,
				   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC
				   | IBV_ACCESS_MW_BIND,
				   IBV_ACCESS_REMOTE_WRITE, IBV_ACCESS_ON_DEMAND | IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE, 0 };
	struct ibv_pd *pd = ANY(pds);
	size_t off = pick(ARENA), len = pick(4) ? pick((uint32_t)(ARENA - off)) + 1 : wild();
	int i = EMPTY(mrs);
	if (pd && i >= 0) PTR(mrs[i], ibv_reg_mr(pd, arena + off, len, pick(5) ? acc[pick(5)] : (int)wild()), "ibv_reg_mr");
}

static void cq_verb(int which) {
	struct ibv_cq *cq = ANY(cqs);
	struct ibv_wc wc[8];
	int i = EMPTY(cqs), n;
	switch (which) {
	case 0:
		if (i >= 0)
			PTR(cqs[i], ibv_create_cq(ctx, pick(3) ? 1 + (int)pick(256) : (int)wild(), NULL, NULL, pick(4) ? 0 : (int)wild()),
			    "ibv_create_cq");
		break;
	case 1: DROP(cqs, ibv_destroy_cq, "ibv_destroy_cq"); break;
	case 2: if (cq) RC(ibv_resize_cq(cq, pick(3) ? 1 + (int)pick(512) : (int)wild()), "ibv_resize_cq"); break;
	case 3:
		if (!cq) break;
		n = ibv_poll_cq(cq, pick(5) ? 1 + (int)pick(8) : -(int)pick(3), wc);
		outcome(n < 0, -n, "ibv_poll_cq");
		break;
	default: if (cq) RC(ibv_req_notify_cq(cq, (int)pick(2)), "ibv_req_notify_cq"); break;
	}
}

static void srq_verb(int which) {
	struct ibv_pd *pd = ANY(pds);
	struct ibv_srq *srq = ANY(srqs);
	struct ibv_srq_init_attr a;
	memset(&a, 0, sizeof a);
	a.attr.max_wr = pick(3) ? 1 + pick(64) : wild();
	a.attr.max_sge = pick(3) ? 1 + pick(4) : wild();
	a.attr.srq_limit = pick(2) ? 0 : wild();
	int i = EMPTY(srqs);
	if (which == 0 && pd && i >= 0) PTR(srqs[i], ibv_create_srq(pd, &a), "ibv_create_srq");
	else if (which == 1) DROP(srqs, ibv_destroy_srq, "ibv_destroy_srq");
	else if (which == 2 && srq) RC(ibv_modify_srq(srq, &a.attr, (int)(wild() & 7)), "ibv_modify_srq");
}

static void ah_mw_dm_verb(int which) {
	struct ibv_pd *pd = ANY(pds);
	struct ibv_ah_attr a = { .dlid = pick(2) ? lid : (uint16_t)wild(), .sl = (uint8_t)pick(20),
				 .port_num = (uint8_t)(pick(4) ? 1 : wild()), .is_global = (uint8_t)(pick(8) == 0) };
	struct ibv_alloc_dm_attr d = { .length = pick(3) ? 1 + pick(8192) : wild(), .log_align_req = pick(20) };
	int i;
	switch (which) {
	case 0: if (pd && (i = EMPTY(ahs)) >= 0) PTR(ahs[i], ibv_create_ah(pd, &a), "ibv_create_ah"); break;
	case 1: DROP(ahs, ibv_destroy_ah, "ibv_destroy_ah"); break;
	case 2:
		if (pd && (i = EMPTY(mws)) >= 0)
			PTR(mws[i], ibv_alloc_mw(pd, (enum ibv_mw_type)(pick(4) ? 1 + pick(2) : wild())), "ibv_alloc_mw");
		if (pick(2)) bind_mw();
		break;
	case 3: DROP(mws, ibv_dealloc_mw, "ibv_dealloc_mw"); break;
	case 4: if ((i = EMPTY(dms)) >= 0) PTR(dms[i], ibv_alloc_dm(ctx, &d), "ibv_alloc_dm"); break;
	default: DROP(dms, ibv_free_dm, "ibv_free_dm"); break;
	}
}

static void one(void) {
	struct ibv_qp *qp = ANY(qps);
	struct ibv_qp_attr qa;
	struct ibv_qp_init_attr qia;
	struct ibv_port_attr port;
	struct ibv_device_attr dev;
	int i, k = (int)pick(32);
	if (k == 0 && (i = EMPTY(pds)) >= 0) PTR(pds[i], ibv_alloc_pd(ctx), "ibv_alloc_pd");
	else if (k == 1) DROP(pds, ibv_dealloc_pd, "ibv_dealloc_pd");
	else if (k <= 3) reg_mr();
	else if (k == 4) DROP(mrs, ibv_dereg_mr, "ibv_dereg_mr");
	else if (k <= 9) cq_verb(k - 5);
	else if (k == 10) make_qp();
	else if (k == 11) DROP(qps, ibv_destroy_qp, "ibv_destroy_qp");
	else if (k <= 14) modify_qp();
	else if (k <= 18) post_send();
	else if (k <= 20) post_recv();
	else if (k == 21 && qp) RC(ibv_query_qp(qp, &qa, (int)wild(), &qia), "ibv_query_qp");
	else if (k <= 24) srq_verb(k - 22);
	else if (k <= 30) ah_mw_dm_verb(k - 25);
	else if (pick(2)) RC(ibv_query_port(ctx, (uint8_t)(pick(4) ? 1 : wild()), &port), "ibv_query_port");
	else RC(ibv_query_device(ctx, &dev), "ibv_query_device");
}

int main(int argc, char **argv) {
	long n = argc > 1 ? atol(argv[1]) : 100000;
	int num;
	struct ibv_device **list = ibv_get_device_list(&num);
	struct ibv_port_attr port;
	state = argc > 2 ? strtoull(argv[2], NULL, 0) : 0x9e3779b97f4a7c15ull;
	if (!state) state = 1;
	ctx = list && num > 0 ? ibv_open_device(list[0]) : NULL;
	arena = aligned_alloc(4096, ARENA);
	if (!ctx || !arena || ibv_query_port(ctx, 1, &port)) { printf("fuzz: no device\n"); return 1; }
	memset(arena, 0, ARENA);
	lid = port.lid;
	while (verbs < n) one();
	for (int e = 1; e < 200; e++) if (by_errno[e]) printf("refused %ld times: %s\n", by_errno[e], strerror(e));
	printf("fuzz: %ld verbs, %ld refused, %ld bad\n", verbs, refused, bad);
	fflush(stdout);
	return bad ? 1 : 0; /* what is left goes when the program exits: the simulator releases it */
}
