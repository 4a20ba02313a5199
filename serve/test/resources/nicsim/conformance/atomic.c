/*
 * Atomic family: IBV_WR_ATOMIC_CMP_AND_SWP and IBV_WR_ATOMIC_FETCH_AND_ADD (ibv_post_send(3)) on
 * 64-bit words in the host's byte order, as qperf's ver_rc_compare_swap and ver_rc_fetch_add check
 * them: the remote word changes, and the local buffer gets its value from before.
 */
#include "conf.h"

static struct ibv_cq *cq;
static struct ibv_qp *qa;
static struct ibv_mr *mr;
static uint64_t *buf;

static struct ibv_wc atomic(enum ibv_wr_opcode op, int local, int remote, uint64_t compare_add, uint64_t swap) {
	struct ibv_sge s = { .addr = (uintptr_t)&buf[local], .length = 8, .lkey = mr->lkey };
	struct ibv_send_wr w = { .wr_id = 9, .sg_list = &s, .num_sge = 1, .opcode = op,
				 .send_flags = IBV_SEND_SIGNALED }, *bad;
	w.wr.atomic.remote_addr = (uintptr_t)&buf[remote];
	w.wr.atomic.rkey = mr->rkey;
	w.wr.atomic.compare_add = compare_add;
	w.wr.atomic.swap = swap;
	if (ibv_post_send(qa, &w, &bad)) { struct ibv_wc none = { .status = (enum ibv_wc_status)-2 }; return none; }
	return conf_wait(cq);
}

int main(void) {
	struct ibv_context *ctx = conf_open();
	struct ibv_pd *pd;
	struct ibv_qp *qb;
	struct ibv_wc wc;
	struct ibv_qp_init_attr qi = { .qp_type = IBV_QPT_RC,
				       .cap = { .max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 1, .max_recv_sge = 1 } };
	buf = aligned_alloc(4096, 4096);
	memset(buf, 0, 4096);
	MUST(pd, ibv_alloc_pd(ctx), "a PD");
	MUST(cq, ibv_create_cq(ctx, 16, NULL, NULL, 0), "a CQ");
	MUST(mr, ibv_reg_mr(pd, buf, 4096, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_REMOTE_READ),
	     "an MR");
	qi.send_cq = qi.recv_cq = cq;
	MUST(qa, ibv_create_qp(pd, &qi), "a QP");
	MUST(qb, ibv_create_qp(pd, &qi), "its peer");
	EXPECT_RC(conf_connect(qa, qb, IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_REMOTE_READ), 0, "connected (loopback)");

	buf[16] = 0x0123456789abcdefull;
	wc = atomic(IBV_WR_ATOMIC_CMP_AND_SWP, 0, 16, 0x0123456789abcdefull, 0xfedcba9876543210ull);
	check(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_COMP_SWAP, "compare-and-swap completes", "status %d",
	      wc.status);
	check(buf[0] == 0x0123456789abcdefull, "it returns the original value in host order", "0x%" PRIx64, buf[0]);
	check(buf[16] == 0xfedcba9876543210ull, "and swapped, the values being equal", "0x%" PRIx64, buf[16]);
	wc = atomic(IBV_WR_ATOMIC_CMP_AND_SWP, 1, 16, 5, 6);
	check(wc.status == IBV_WC_SUCCESS && buf[1] == 0xfedcba9876543210ull && buf[16] == 0xfedcba9876543210ull,
	      "compare-and-swap with a different value returns it and swaps nothing", "got 0x%" PRIx64, buf[1]);

	buf[17] = 0;
	for (uint64_t i = 0; i < 3; i++) {
		wc = atomic(IBV_WR_ATOMIC_FETCH_AND_ADD, 2, 17, 1, 0);
		check(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_FETCH_ADD && buf[2] == i,
		      "fetch-and-add of 1 returns the count before it", "status %d, got 0x%" PRIx64, wc.status, buf[2]);
	}
	check(buf[17] == 3, "the remote word counts to 3", "0x%" PRIx64, buf[17]);
	buf[18] = 0xffffffffull;
	wc = atomic(IBV_WR_ATOMIC_FETCH_AND_ADD, 3, 18, 1, 0);
	check(buf[18] == 0x100000000ull && buf[3] == 0xffffffffull, "an add carries into the upper half",
	      "0x%" PRIx64, buf[18]);

	{ /* a misaligned remote word: refused at post (as rxe does), the WR named, the queue as it was */
		struct ibv_sge s = { .addr = (uintptr_t)&buf[4], .length = 8, .lkey = mr->lkey };
		struct ibv_send_wr w = { .wr_id = 10, .sg_list = &s, .num_sge = 1, .opcode = IBV_WR_ATOMIC_FETCH_AND_ADD,
					 .send_flags = IBV_SEND_SIGNALED }, *bad = NULL;
		w.wr.atomic.remote_addr = (uintptr_t)&buf[20] + 4;
		w.wr.atomic.rkey = mr->rkey;
		w.wr.atomic.compare_add = 1;
		EXPECT_RC(ibv_post_send(qa, &w, &bad), EINVAL, "an atomic on a misaligned word: EINVAL");
		check(bad == &w, "naming it in bad_wr", "bad %p", (void *)bad);
		s.length = 4;
		w.wr.atomic.remote_addr = (uintptr_t)&buf[20];
		EXPECT_RC(ibv_post_send(qa, &w, &bad), EINVAL, "an atomic whose local buffer is not 8 bytes: EINVAL");
		wc = atomic(IBV_WR_ATOMIC_FETCH_AND_ADD, 5, 17, 10, 0);
		check(wc.status == IBV_WC_SUCCESS && buf[5] == 3 && buf[17] == 13, "the queue goes on as before",
		      "status %d, got %" PRIu64, wc.status, buf[5]);
	}
	ibv_destroy_qp(qa);
	ibv_destroy_qp(qb);
	ibv_dereg_mr(mr);
	ibv_destroy_cq(cq);
	EXPECT_RC(ibv_dealloc_pd(pd), 0, "everything released");
	ibv_close_device(ctx);
	return conf_end();
}
