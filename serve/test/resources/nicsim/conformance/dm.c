/*
 * DM family: ibv_alloc_dm, ibv_memcpy_to_dm, ibv_memcpy_from_dm, ibv_reg_dm_mr, ibv_free_dm
 * (their man pages): the adapter's on-chip memory, written and read by the host, registered
 * zero-based, and reached by RDMA WRITE, READ and atomics.
 */
#include "conf.h"

int main(void) {
	struct ibv_context *ctx = conf_open();
	struct ibv_device_attr_ex x;
	struct ibv_alloc_dm_attr da = { .length = 4096, .log_align_req = 6 };
	struct ibv_dm *dm, *all;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr, *hm;
	struct ibv_qp *qa, *qb;
	struct ibv_wc wc;
	char *buf = aligned_alloc(4096, 16384), in[256], out[256];
	struct ibv_qp_init_attr qi = { .qp_type = IBV_QPT_RC,
				       .cap = { .max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 1, .max_recv_sge = 1 } };
	int acc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
	EXPECT_RC(ibv_query_device_ex(ctx, NULL, &x), 0, "ibv_query_device_ex");
	check(x.max_dm_size >= 4096, "it offers device memory (max_dm_size)", "%" PRIu64, x.max_dm_size);
	MUST(dm, ibv_alloc_dm(ctx, &da), "ibv_alloc_dm of 4096 bytes");
	for (int i = 0; i < 256; i++) in[i] = (char)(i * 5 + 3);
	EXPECT_RC(ibv_memcpy_to_dm(dm, 512, in, 256), 0, "ibv_memcpy_to_dm");
	EXPECT_RC(ibv_memcpy_from_dm(out, dm, 512, 256), 0, "ibv_memcpy_from_dm");
	check(memcmp(in, out, 256) == 0, "reads back what it wrote", "");
	EXPECT_RC(ibv_memcpy_to_dm(dm, 3, in, 4), EINVAL, "an offset not a multiple of 4: EINVAL");
	EXPECT_RC(ibv_memcpy_from_dm(out, dm, 4, 3), EINVAL, "a length not a multiple of 4: EINVAL");
	EXPECT_RC(ibv_memcpy_from_dm(out, dm, 4092, 8), EINVAL, "past the allocation: EINVAL");
	{
		struct ibv_alloc_dm_attr big = { .length = x.max_dm_size + 4 }, mask = { .length = 64, .comp_mask = 1 };
		EXPECT_NULL(ibv_alloc_dm(ctx, &big), EINVAL, "more than max_dm_size: EINVAL");
		EXPECT_NULL(ibv_alloc_dm(ctx, &mask), EINVAL, "an unknown comp_mask: EINVAL");
	}
	MUST(pd, ibv_alloc_pd(ctx), "a PD");
	EXPECT_NULL(ibv_reg_dm_mr(pd, dm, 0, 4096, IBV_ACCESS_LOCAL_WRITE), EINVAL,
		    "ibv_reg_dm_mr without ZERO_BASED: EINVAL");
	EXPECT_NULL(ibv_reg_dm_mr(pd, dm, 0, 4100, acc | IBV_ACCESS_ZERO_BASED), EINVAL,
		    "a region past the device memory: EINVAL");
	MUST(mr, ibv_reg_dm_mr(pd, dm, 0, 4096, acc | IBV_ACCESS_ZERO_BASED), "ibv_reg_dm_mr, zero-based");
	EXPECT_RC(ibv_free_dm(dm), EBUSY, "device memory a region is over cannot go: EBUSY");
	MUST(cq, ibv_create_cq(ctx, 16, NULL, NULL, 0), "a CQ");
	MUST(hm, ibv_reg_mr(pd, buf, 16384, acc), "a host MR");
	qi.send_cq = qi.recv_cq = cq;
	MUST(qa, ibv_create_qp(pd, &qi), "a QP");
	MUST(qb, ibv_create_qp(pd, &qi), "its peer");
	EXPECT_RC(conf_connect(qa, qb, acc & ~IBV_ACCESS_LOCAL_WRITE), 0, "connected (loopback)");
	{
		struct ibv_sge s = { .addr = (uintptr_t)buf, .length = 256, .lkey = hm->lkey };
		struct ibv_send_wr w = { .wr_id = 1, .sg_list = &s, .num_sge = 1, .opcode = IBV_WR_RDMA_READ,
					 .send_flags = IBV_SEND_SIGNALED }, *bad;
		w.wr.rdma.remote_addr = 512; /* zero-based */
		w.wr.rdma.rkey = mr->rkey;
		EXPECT_RC(ibv_post_send(qa, &w, &bad), 0, "a READ of the device memory");
		wc = conf_wait(cq);
		check(wc.status == IBV_WC_SUCCESS && memcmp(buf, in, 256) == 0, "returns what the host wrote there",
		      "status %d", wc.status);
		memset(buf + 4096, 0x77, 256);
		s.addr = (uintptr_t)buf + 4096;
		w.opcode = IBV_WR_RDMA_WRITE;
		w.wr.rdma.remote_addr = 1024;
		EXPECT_RC(ibv_post_send(qa, &w, &bad), 0, "a WRITE into it");
		wc = conf_wait(cq);
		EXPECT_RC(ibv_memcpy_from_dm(out, dm, 1024, 256), 0, "read back by the host");
		check(wc.status == IBV_WC_SUCCESS && memcmp(out, buf + 4096, 256) == 0, "the WRITE landed in device memory",
		      "status %d", wc.status);
		s.addr = (uintptr_t)buf + 8192;
		s.length = 8;
		w.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
		w.wr.atomic.remote_addr = 2048;
		w.wr.atomic.rkey = mr->rkey;
		w.wr.atomic.compare_add = 41;
		EXPECT_RC(ibv_post_send(qa, &w, &bad), 0, "a fetch-and-add in it");
		wc = conf_wait(cq);
		{
			uint64_t v = 0;
			ibv_memcpy_from_dm(&v, dm, 2048, 8);
			check(wc.status == IBV_WC_SUCCESS && v == 41, "adds in device memory", "status %d, word %" PRIu64, wc.status, v);
		}
	}
	ibv_destroy_qp(qa);
	ibv_destroy_qp(qb);
	EXPECT_RC(ibv_dereg_mr(mr), 0, "the region deregistered");
	EXPECT_RC(ibv_free_dm(dm), 0, "then ibv_free_dm");
	da.length = x.max_dm_size;
	da.log_align_req = 0;
	MUST(all, ibv_alloc_dm(ctx, &da), "all of the device memory at once");
	da.length = 64;
	EXPECT_NULL(ibv_alloc_dm(ctx, &da), ENOMEM, "then no more: ENOMEM");
	EXPECT_RC(ibv_free_dm(all), 0, "freed");
	ibv_dereg_mr(hm);
	ibv_destroy_cq(cq);
	EXPECT_RC(ibv_dealloc_pd(pd), 0, "everything released");
	ibv_close_device(ctx);
	return conf_end();
}
