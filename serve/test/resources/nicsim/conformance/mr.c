/* MR family: ibv_reg_mr, ibv_reg_mr_iova, ibv_rereg_mr, ibv_dereg_mr (their man pages), access and range errors. */
#include "conf.h"
#include <sys/mman.h>

/* A WRITE of 64 bytes from src (lkey) to dst through rkey, on a connected pair: its completion status. */
static enum ibv_wc_status write64(struct ibv_qp *qp, struct ibv_cq *cq, void *src, uint32_t lkey, void *dst,
				  uint32_t rkey) {
	struct ibv_sge s = { .addr = (uintptr_t)src, .length = 64, .lkey = lkey };
	struct ibv_send_wr w = { .sg_list = &s, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
				 .send_flags = IBV_SEND_SIGNALED }, *bad;
	w.wr.rdma.remote_addr = (uintptr_t)dst;
	w.wr.rdma.rkey = rkey;
	if (ibv_post_send(qp, &w, &bad)) return (enum ibv_wc_status)-2;
	return conf_wait(cq).status;
}

static void reconnect(struct ibv_qp *a, struct ibv_qp *b, struct ibv_cq *cq) {
	struct ibv_qp_attr r = { .qp_state = IBV_QPS_RESET };
	struct ibv_wc wc[8];
	ibv_modify_qp(a, &r, IBV_QP_STATE);
	ibv_modify_qp(b, &r, IBV_QP_STATE);
	while (ibv_poll_cq(cq, 8, wc) > 0) {}
	conf_connect(a, b, IBV_ACCESS_REMOTE_WRITE);
}

/* ibv_rereg_mr: access, PD and translation changes, each seen by traffic, and the errors libibverbs gives. */
static void rereg(struct ibv_context *ctx, struct ibv_pd *pd) {
	char *src = aligned_alloc(4096, 4096), *dst = aligned_alloc(4096, 8192), *moved = aligned_alloc(4096, 4096);
	struct ibv_cq *cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	struct ibv_qp_init_attr qi = { .qp_type = IBV_QPT_RC, .send_cq = cq, .recv_cq = cq,
				       .cap = { .max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 1, .max_recv_sge = 1 } };
	struct ibv_qp *a = ibv_create_qp(pd, &qi), *b = ibv_create_qp(pd, &qi);
	struct ibv_mr *s = ibv_reg_mr(pd, src, 4096, IBV_ACCESS_LOCAL_WRITE);
	struct ibv_mr *d = ibv_reg_mr(pd, dst, 8192, IBV_ACCESS_LOCAL_WRITE);
	struct ibv_pd *other = ibv_alloc_pd(ctx);
	memset(src, 0x61, 4096);
	check(a && b && s && d && other && !conf_connect(a, b, IBV_ACCESS_REMOTE_WRITE), "a connected pair and two MRs",
	      "errno %d", errno);
	if (!other) return;
	check(write64(a, cq, src, s->lkey, dst, d->rkey) == IBV_WC_REM_ACCESS_ERR,
	      "a WRITE into an MR without REMOTE_WRITE fails", "");
	reconnect(a, b, cq);
	{
		uint32_t rkey = d->rkey;
		EXPECT_RC(ibv_rereg_mr(d, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
				       IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE), 0,
			  "ibv_rereg_mr CHANGE_ACCESS adds REMOTE_WRITE");
		check(d->rkey == rkey, "the MR keeps its keys (a peer goes on naming it)", "0x%x -> 0x%x", rkey, d->rkey);
	}
	check(write64(a, cq, src, s->lkey, dst, d->rkey) == IBV_WC_SUCCESS && dst[63] == 0x61, "then the WRITE lands",
	      "");
	EXPECT_RC(ibv_rereg_mr(d, IBV_REREG_MR_CHANGE_TRANSLATION, NULL, moved, 4096, 0), 0,
		  "CHANGE_TRANSLATION to another buffer");
	check(d->addr == moved && d->length == 4096, "the MR says its new address and length", "%p %zu", d->addr,
	      d->length);
	memset(moved, 0, 64);
	check(write64(a, cq, src, s->lkey, moved, d->rkey) == IBV_WC_SUCCESS && moved[63] == 0x61,
	      "a WRITE lands in the new buffer", "");
	EXPECT_RC(ibv_rereg_mr(s, IBV_REREG_MR_CHANGE_PD, other, NULL, 0, 0), 0, "CHANGE_PD to another PD");
	check(s->pd == other, "the MR names its new PD", "");
	check(write64(a, cq, src, s->lkey, moved, d->rkey) == IBV_WC_LOC_PROT_ERR,
	      "a QP of the old PD cannot use it: local protection error", "");
	reconnect(a, b, cq);
	EXPECT_RC(ibv_dealloc_pd(other), EBUSY, "the new PD holds the MR: EBUSY");
	EXPECT_RC(ibv_rereg_mr(s, IBV_REREG_MR_CHANGE_PD, pd, NULL, 0, 0), 0, "back to the QP's PD");
	check(write64(a, cq, src, s->lkey, moved, d->rkey) == IBV_WC_SUCCESS, "then the QP can use it again", "");
	errno = 0;
	check(ibv_rereg_mr(s, 1 << 6, NULL, NULL, 0, 0) == IBV_REREG_MR_ERR_INPUT && errno == EINVAL,
	      "an unknown flag: ERR_INPUT, EINVAL", "errno %d", errno);
	errno = 0;
	check(ibv_rereg_mr(s, IBV_REREG_MR_CHANGE_TRANSLATION, NULL, src, 0, 0) == IBV_REREG_MR_ERR_INPUT && errno == EINVAL,
	      "a translation of length 0: ERR_INPUT, EINVAL", "errno %d", errno);
	errno = 0;
	check(ibv_rereg_mr(s, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0, IBV_ACCESS_REMOTE_WRITE) == IBV_REREG_MR_ERR_CMD
	      && errno == EINVAL, "REMOTE_WRITE without LOCAL_WRITE: ERR_CMD, EINVAL", "errno %d", errno);
	check(write64(a, cq, src, s->lkey, moved, d->rkey) == IBV_WC_SUCCESS, "a refused rereg leaves the MR as it was", "");
	ibv_destroy_qp(a);
	ibv_destroy_qp(b);
	ibv_dereg_mr(s);
	EXPECT_RC(ibv_dereg_mr(d), 0, "a re-registered MR deregisters");
	ibv_destroy_cq(cq);
	EXPECT_RC(ibv_dealloc_pd(other), 0, "the other PD, empty again, goes");
}

int main(void) {
	struct ibv_context *ctx = conf_open();
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	char *buf = aligned_alloc(4096, 1 << 16);
	int all = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
	MUST(pd, ibv_alloc_pd(ctx), "ibv_alloc_pd");
	MUST(mr, ibv_reg_mr(pd, buf, 1 << 16, all), "ibv_reg_mr with every remote access");
	check(mr->addr == buf && mr->length == 1 << 16 && mr->pd == pd, "the MR says its address, length and PD",
	      "addr %p length %zu", mr->addr, mr->length);
	check(mr->lkey != 0 && mr->lkey == mr->rkey, "lkey is non-zero and equals rkey", "lkey 0x%x rkey 0x%x",
	      mr->lkey, mr->rkey);
	EXPECT_RC(ibv_dereg_mr(mr), 0, "ibv_dereg_mr");
	MUST(mr, ibv_reg_mr(pd, buf + 100, 1000, IBV_ACCESS_LOCAL_WRITE), "an MR not on a page boundary");
	EXPECT_RC(ibv_dereg_mr(mr), 0, "deregistered");
	MUST(mr, ibv_reg_mr_iova(pd, buf, 4096, 0x10000, IBV_ACCESS_LOCAL_WRITE), "ibv_reg_mr_iova");
	EXPECT_RC(ibv_dereg_mr(mr), 0, "deregistered");
	MUST(mr, ibv_reg_mr(pd, buf, 4096, 0), "read-only local access (0)");
	EXPECT_RC(ibv_dereg_mr(mr), 0, "deregistered");

	EXPECT_NULL(ibv_reg_mr(pd, buf, 4096, IBV_ACCESS_REMOTE_WRITE), EINVAL, "REMOTE_WRITE without LOCAL_WRITE: EINVAL");
	EXPECT_NULL(ibv_reg_mr(pd, buf, 4096, IBV_ACCESS_REMOTE_ATOMIC), EINVAL, "REMOTE_ATOMIC without LOCAL_WRITE: EINVAL");
	EXPECT_NULL(ibv_reg_mr(pd, buf, 0, IBV_ACCESS_LOCAL_WRITE), EINVAL, "length 0: EINVAL");
	{
		char *hole = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		munmap(hole, 8192);
		EXPECT_NULL(ibv_reg_mr(pd, hole, 8192, IBV_ACCESS_LOCAL_WRITE), EFAULT, "memory that is not mapped: EFAULT");
	}
	rereg(ctx, pd);
	EXPECT_RC(ibv_dealloc_pd(pd), 0, "the PD deallocated: the refused MRs left nothing behind");
	EXPECT_RC(ibv_close_device(ctx), 0, "ibv_close_device");
	free(buf);
	return conf_end();
}
