/* MR family: ibv_reg_mr, ibv_reg_mr_iova, ibv_dereg_mr (their man page), access and range errors. */
#include "conf.h"
#include <sys/mman.h>

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
	check(mr->lkey != 0 && mr->lkey == mr->rkey, "lkey is non-zero and equals rkey", "lkey 0x%x rkey 0x%x", mr->lkey, mr->rkey);
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
	EXPECT_RC(ibv_dealloc_pd(pd), 0, "the PD deallocated: the refused MRs left nothing behind");
	EXPECT_RC(ibv_close_device(ctx), 0, "ibv_close_device");
	free(buf);
	return conf_end();
}
