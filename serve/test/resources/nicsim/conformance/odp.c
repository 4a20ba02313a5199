/*
 * ODP family: ibv_query_device_ex's odp_caps, ibv_reg_mr with IBV_ACCESS_ON_DEMAND, and traffic
 * into on-demand pages (WRITE, READ, SEND and both atomics), each first touch faulting its page in;
 * ibv_advise_mr (its man page): prefetching, with and without IBV_ADVISE_MR_FLAG_FLUSH, and its errors;
 * implicit ODP (ibv_reg_mr of NULL, SIZE_MAX): one key for any buffer, a fault on nothing mapped an error.
 */
#include <stdint.h>
#include <sys/mman.h>
#include "conf.h"

int main(void) {
	struct ibv_context *ctx = conf_open();
	struct ibv_device_attr_ex x;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qa, *qb;
	struct ibv_mr *src, *odp;
	struct ibv_wc wc;
	struct ibv_qp_init_attr qi = { .qp_type = IBV_QPT_RC,
				       .cap = { .max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 1, .max_recv_sge = 1 } };
	char *a = aligned_alloc(4096, 1 << 16), *b = aligned_alloc(4096, 1 << 16);
	int acc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
	memset(a, 0, 1 << 16);
	memset(b, 0, 1 << 16);
	EXPECT_RC(ibv_query_device_ex(ctx, NULL, &x), 0, "ibv_query_device_ex");
	check(x.odp_caps.general_caps & IBV_ODP_SUPPORT, "odp_caps says ODP is supported", "0x%" PRIx64,
	      x.odp_caps.general_caps);
	check((x.odp_caps.per_transport_caps.rc_odp_caps & (IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_RECV
		| IBV_ODP_SUPPORT_WRITE | IBV_ODP_SUPPORT_READ | IBV_ODP_SUPPORT_ATOMIC))
	      == (IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_RECV | IBV_ODP_SUPPORT_WRITE | IBV_ODP_SUPPORT_READ
		| IBV_ODP_SUPPORT_ATOMIC), "RC: send, receive, write, read and atomic", "0x%x",
	      x.odp_caps.per_transport_caps.rc_odp_caps);
	MUST(pd, ibv_alloc_pd(ctx), "a PD");
	MUST(cq, ibv_create_cq(ctx, 64, NULL, NULL, 0), "a CQ");
	MUST(src, ibv_reg_mr(pd, a, 1 << 16, acc), "a pinned MR");
	MUST(odp, ibv_reg_mr(pd, b, 1 << 16, acc | IBV_ACCESS_ON_DEMAND), "an on-demand MR");
	qi.send_cq = qi.recv_cq = cq;
	MUST(qa, ibv_create_qp(pd, &qi), "a QP");
	MUST(qb, ibv_create_qp(pd, &qi), "its peer");
	EXPECT_RC(conf_connect(qa, qb, acc & ~IBV_ACCESS_LOCAL_WRITE), 0, "connected (loopback)");
	{
		struct ibv_sge s = { .addr = (uintptr_t)a, .length = 8, .lkey = src->lkey };
		struct ibv_send_wr w = { .wr_id = 1, .sg_list = &s, .num_sge = 1, .opcode = IBV_WR_ATOMIC_FETCH_AND_ADD,
					 .send_flags = IBV_SEND_SIGNALED }, *bad;
		w.wr.atomic.remote_addr = (uintptr_t)b + 40960;
		w.wr.atomic.rkey = odp->rkey;
		w.wr.atomic.compare_add = 7;
		EXPECT_RC(ibv_post_send(qa, &w, &bad), 0, "a fetch-and-add into a page not yet touched");
		wc = conf_wait(cq);
		check(wc.status == IBV_WC_SUCCESS && *(uint64_t *)(b + 40960) == 7, "completes once its page is in, and adds once",
		      "status %d, word %" PRIu64, wc.status, *(uint64_t *)(b + 40960));
		w.opcode = IBV_WR_ATOMIC_CMP_AND_SWP;
		w.wr.atomic.remote_addr = (uintptr_t)b + 49152;
		w.wr.atomic.compare_add = 0;
		w.wr.atomic.swap = 3;
		EXPECT_RC(ibv_post_send(qa, &w, &bad), 0, "a compare-and-swap into another untouched page");
		wc = conf_wait(cq);
		check(wc.status == IBV_WC_SUCCESS && *(uint64_t *)(b + 49152) == 3, "completes and swaps", "status %d", wc.status);
	}
	{
		struct ibv_sge s = { .addr = (uintptr_t)a + 8192, .length = 5000, .lkey = src->lkey };
		struct ibv_send_wr w = { .wr_id = 2, .sg_list = &s, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
					 .send_flags = IBV_SEND_SIGNALED }, *bad;
		memset(a + 8192, 0x5a, 5000);
		w.wr.rdma.remote_addr = (uintptr_t)b + 1000;
		w.wr.rdma.rkey = odp->rkey;
		EXPECT_RC(ibv_post_send(qa, &w, &bad), 0, "a WRITE across two untouched pages");
		wc = conf_wait(cq);
		check(wc.status == IBV_WC_SUCCESS && b[1000] == 0x5a && b[5999] == 0x5a && b[6000] == 0, "lands byte for byte",
		      "status %d", wc.status);
		w.opcode = IBV_WR_RDMA_READ;
		w.wr_id = 3;
		s.addr = (uintptr_t)a + 20000;
		EXPECT_RC(ibv_post_send(qa, &w, &bad), 0, "a READ of them back");
		wc = conf_wait(cq);
		check(wc.status == IBV_WC_SUCCESS && memcmp(a + 20000, b + 1000, 5000) == 0, "returns them", "status %d", wc.status);
	}
	{
		struct ibv_sge s = { .addr = (uintptr_t)b + 57344, .length = 8192, .lkey = odp->lkey };
		check((x.xrc_odp_caps & (IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_SRQ_RECV))
		      == (IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_SRQ_RECV),
		      "XRC: send and receive through an SRQ", "0x%x", x.xrc_odp_caps);
		EXPECT_RC(ibv_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE, IBV_ADVISE_MR_FLAG_FLUSH, &s, 1), 0,
			  "ibv_advise_mr PREFETCH_WRITE with FLUSH");
		EXPECT_RC(ibv_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH, 0, &s, 1), 0, "PREFETCH without FLUSH");
		EXPECT_RC(ibv_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT, 0, &s, 1), 0, "PREFETCH_NO_FAULT");
		EXPECT_RC(ibv_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH, 1u << 5, &s, 1), EINVAL, "an unknown flag: EINVAL");
		EXPECT_RC(ibv_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH, 0, &s, 0), EINVAL, "no SGE: EINVAL");
		EXPECT_RC(ibv_advise_mr(pd, (enum ibv_advise_mr_advice)9, 0, &s, 1), EOPNOTSUPP, "an unknown advice: EOPNOTSUPP");
		s.lkey ^= 0x80;
		check(ibv_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH, 0, &s, 1) != 0, "a key that is no MR's is refused",
		      "returned 0");
		s.lkey ^= 0x80;
		s.length = 1 << 20;
		check(ibv_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH, 0, &s, 1) != 0, "a range past the MR is refused",
		      "returned 0");
	}
	{ /* implicit ODP: one MR of the whole address space */
		struct ibv_mr *imp;
		char *c = mmap(NULL, 4 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		char *gone = mmap(NULL, 4 << 20, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		struct ibv_sge s = { .addr = (uintptr_t)a, .length = 3000, .lkey = src->lkey };
		struct ibv_send_wr w = { .wr_id = 4, .sg_list = &s, .num_sge = 1, .opcode = IBV_WR_SEND,
					 .send_flags = IBV_SEND_SIGNALED }, *bad;
		struct ibv_sge rs = { .addr = (uintptr_t)c + (3 << 20) + 123, .length = 4096 };
		struct ibv_recv_wr r = { .wr_id = 5, .sg_list = &rs, .num_sge = 1 }, *rbad;
		munmap(gone, 4 << 20); /* an address range nothing is mapped at */
		check(x.odp_caps.general_caps & IBV_ODP_SUPPORT_IMPLICIT, "odp_caps says implicit ODP is supported", "0x%" PRIx64,
		      x.odp_caps.general_caps);
		EXPECT_NULL(ibv_reg_mr(pd, NULL, SIZE_MAX, acc), EINVAL, "the whole address space without ON_DEMAND: EINVAL");
		MUST(imp, ibv_reg_mr(pd, NULL, SIZE_MAX, acc | IBV_ACCESS_ON_DEMAND), "an implicit MR (NULL, SIZE_MAX, ON_DEMAND)");
		check(imp->addr == NULL && imp->length == SIZE_MAX, "it says so", "%p, %zu", imp->addr, imp->length);
		rs.lkey = imp->lkey;
		memset(a, 0x3c, 3000);
		EXPECT_RC(ibv_post_recv(qb, &r, &rbad), 0, "a receive into a fresh mapping, through the implicit lkey");
		EXPECT_RC(ibv_post_send(qa, &w, &bad), 0, "a SEND to it");
		{
			struct ibv_wc w1 = conf_wait(cq), w2 = conf_wait(cq);
			char *at = c + (3 << 20) + 123;
			check(w1.status == IBV_WC_SUCCESS && w2.status == IBV_WC_SUCCESS && at[0] == 0x3c && at[2999] == 0x3c
			      && at[3000] == 0, "lands byte for byte", "status %d %d", w1.status, w2.status);
		}
		s.length = 64;
		w.opcode = IBV_WR_RDMA_WRITE;
		w.wr.rdma.remote_addr = (uintptr_t)c + 100;
		w.wr.rdma.rkey = imp->rkey;
		EXPECT_RC(ibv_post_send(qa, &w, &bad), 0, "a WRITE through the implicit rkey elsewhere");
		wc = conf_wait(cq);
		check(wc.status == IBV_WC_SUCCESS && c[100] == 0x3c && c[163] == 0x3c && c[164] == 0, "lands too", "status %d",
		      wc.status);
		rs.addr = (uintptr_t)c + (1 << 20);
		rs.length = 1 << 20;
		EXPECT_RC(ibv_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE, IBV_ADVISE_MR_FLAG_FLUSH, &rs, 1), 0,
			  "ibv_advise_mr of a range of it, with FLUSH");
		w.wr.rdma.remote_addr = (uintptr_t)gone + 4096;
		EXPECT_RC(ibv_post_send(qa, &w, &bad), 0, "a WRITE to an address nothing is mapped at");
		wc = conf_wait(cq);
		check(wc.status == IBV_WC_REM_ACCESS_ERR, "fails: IBV_WC_REM_ACCESS_ERR", "status %d (%s)", wc.status,
		      ibv_wc_status_str(wc.status));
		EXPECT_RC(ibv_dereg_mr(imp), 0, "the implicit MR deregistered");
		munmap(c, 4 << 20);
	}
	ibv_destroy_qp(qa);
	ibv_destroy_qp(qb);
	EXPECT_RC(ibv_dereg_mr(odp), 0, "the on-demand MR deregistered");
	ibv_dereg_mr(src);
	ibv_destroy_cq(cq);
	EXPECT_RC(ibv_dealloc_pd(pd), 0, "everything released");
	ibv_close_device(ctx);
	return conf_end();
}
