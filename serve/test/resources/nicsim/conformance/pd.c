/* PD family: ibv_alloc_pd, ibv_dealloc_pd (their man page), and a PD's objects keeping it alive. */
#include "conf.h"

int main(void) {
	struct ibv_context *ctx = conf_open();
	struct ibv_pd *pd, *pd2;
	struct ibv_mr *mr;
	static char buf[4096];
	MUST(pd, ibv_alloc_pd(ctx), "ibv_alloc_pd");
	MUST(pd2, ibv_alloc_pd(ctx), "a second PD");
	check(pd->handle != pd2->handle, "two PDs have different handles", "%u", pd->handle);
	check(pd->context == ctx, "a PD names its context", "%p", (void *)pd->context);
	MUST(mr, ibv_reg_mr(pd, buf, sizeof buf, IBV_ACCESS_LOCAL_WRITE), "an MR of the PD");
	EXPECT_RC(ibv_dealloc_pd(pd), EBUSY, "ibv_dealloc_pd of a PD with an MR: EBUSY");
	EXPECT_RC(ibv_dereg_mr(mr), 0, "the MR deregistered");
	/* a refused create leaves nothing in the PD behind */
	EXPECT_NULL(ibv_reg_mr(pd, buf, sizeof buf, IBV_ACCESS_REMOTE_WRITE), EINVAL, "a refused MR (REMOTE_WRITE alone)");
	EXPECT_RC(ibv_dealloc_pd(pd), 0, "then ibv_dealloc_pd: 0");
	EXPECT_RC(ibv_dealloc_pd(pd2), 0, "the second PD too");
	EXPECT_RC(ibv_close_device(ctx), 0, "ibv_close_device");
	return conf_end();
}
