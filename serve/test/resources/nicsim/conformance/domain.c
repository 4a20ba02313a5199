/*
 * TD / parent domain family: ibv_alloc_td(3), ibv_alloc_parent_domain(3). A parent domain stands
 * for its PD everywhere a PD goes (MRs, QPs, extended CQs with IBV_CQ_INIT_ATTR_MASK_PD); what
 * uses a domain keeps it (EBUSY); custom allocators are called for the QP's buffer and their
 * failure fails the create; traffic through a QP of a parent domain arrives byte for byte.
 */
#include "conf.h"

static int allocs, frees, refuse;
static void *last_pd_context;

static void *alloc_cb(struct ibv_pd *pd, void *pd_context, size_t size, size_t alignment, uint64_t type) {
	void *p = NULL;
	(void)pd; (void)type;
	last_pd_context = pd_context;
	if (refuse) return NULL;
	allocs++;
	return posix_memalign(&p, alignment, size) ? NULL : p;
}

static void free_cb(struct ibv_pd *pd, void *pd_context, void *ptr, uint64_t type) {
	(void)pd; (void)pd_context; (void)type;
	frees++;
	free(ptr);
}

static struct ibv_qp *rc_qp(struct ibv_pd *pd, struct ibv_cq *cq) {
	struct ibv_qp_init_attr a = { .send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
				      .cap = { .max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 1, .max_recv_sge = 1 } };
	return ibv_create_qp(pd, &a);
}

int main(void) {
	struct ibv_context *ctx = conf_open();
	struct ibv_td_init_attr tda = { 0 };
	struct ibv_parent_domain_init_attr pda;
	struct ibv_cq_init_attr_ex cqa;
	struct ibv_td *td;
	struct ibv_pd *pd, *par, *par2;
	struct ibv_cq_ex *cqx;
	struct ibv_cq *cq;
	struct ibv_qp *qa, *qb;
	struct ibv_mr *mr;
	char *buf = calloc(1, 8192);
	int tag = 42;

	tda.comp_mask = 1;
	EXPECT_NULL(ibv_alloc_td(ctx, &tda), EINVAL, "ibv_alloc_td with an unknown comp_mask: EINVAL");
	tda.comp_mask = 0;
	MUST(td, ibv_alloc_td(ctx, &tda), "ibv_alloc_td");
	check(td->context == ctx, "a TD names its context", "%p", (void *)td->context);
	MUST(pd, ibv_alloc_pd(ctx), "a PD");

	memset(&pda, 0, sizeof pda);
	EXPECT_NULL(ibv_alloc_parent_domain(ctx, &pda), EINVAL, "ibv_alloc_parent_domain without a PD: EINVAL");
	pda.pd = pd;
	pda.comp_mask = 1u << 20;
	EXPECT_NULL(ibv_alloc_parent_domain(ctx, &pda), EINVAL, "an unknown comp_mask bit: EINVAL");
	pda.td = td;
	pda.comp_mask = IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS | IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT;
	pda.alloc = alloc_cb;
	pda.free = free_cb;
	pda.pd_context = &tag;
	MUST(par, ibv_alloc_parent_domain(ctx, &pda), "a parent domain with a TD, allocators and a context");
	check(par->context == ctx && par->handle == pd->handle, "it carries its PD's context and handle", "%u vs %u",
	      par->handle, pd->handle);
	pda.pd = par;
	pda.td = NULL;
	pda.comp_mask = 0;
	EXPECT_NULL(ibv_alloc_parent_domain(ctx, &pda), EINVAL, "a parent domain of a parent domain: EINVAL");
	pda.pd = pd;
	MUST(par2, ibv_alloc_parent_domain(ctx, &pda), "a second, plain parent domain of the same PD");
	EXPECT_RC(ibv_dealloc_td(td), EBUSY, "ibv_dealloc_td of a TD a parent domain holds: EBUSY");
	EXPECT_RC(ibv_dealloc_pd(pd), EBUSY, "ibv_dealloc_pd of a PD a parent domain contains: EBUSY");

	MUST(cq, ibv_create_cq(ctx, 64, NULL, NULL, 0), "a CQ");
	memset(&cqa, 0, sizeof cqa);
	cqa.cqe = 64;
	cqa.wc_flags = IBV_WC_STANDARD_FLAGS;
	cqa.comp_mask = IBV_CQ_INIT_ATTR_MASK_PD;
	cqa.parent_domain = pd;
	EXPECT_NULL(ibv_create_cq_ex(ctx, &cqa), EINVAL, "IBV_CQ_INIT_ATTR_MASK_PD naming a plain PD: EINVAL");
	cqa.parent_domain = par;
	cqa.comp_mask |= IBV_CQ_INIT_ATTR_MASK_FLAGS;
	cqa.flags = IBV_CREATE_CQ_ATTR_SINGLE_THREADED;
	MUST(cqx, ibv_create_cq_ex(ctx, &cqa), "an extended CQ on the parent domain, single-threaded");

	refuse = 1;
	errno = 0;
	qa = rc_qp(par, cq);
	check(!qa && errno == ENOMEM, "an allocator returning NULL fails ibv_create_qp with ENOMEM", "%p errno %d",
	      (void *)qa, errno);
	refuse = 0;
	MUST(qa, rc_qp(par, cq), "an RC QP on the parent domain");
	check(allocs == 1 && last_pd_context == &tag, "its buffer came from the allocator, with the pd_context",
	      "%d allocations", allocs);
	check(qa->pd == par, "the QP names the parent domain as its PD", "%p", (void *)qa->pd);
	MUST(qb, rc_qp(par2, cq), "its peer on the plain parent domain");
	MUST(mr, ibv_reg_mr(par, buf, 8192, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE), "an MR on the parent domain");
	EXPECT_RC(ibv_dealloc_pd(par), EBUSY, "ibv_dealloc_pd of a parent domain a QP and CQ use: EBUSY");
	EXPECT_RC(conf_connect(qa, qb, IBV_ACCESS_REMOTE_WRITE), 0, "the pair connected (loopback)");
	{
		struct ibv_sge s = { .addr = (uintptr_t)buf, .length = 64, .lkey = mr->lkey };
		struct ibv_sge r = { .addr = (uintptr_t)(buf + 4096), .length = 64, .lkey = mr->lkey };
		struct ibv_recv_wr rw = { .wr_id = 2, .sg_list = &r, .num_sge = 1 }, *rbad;
		struct ibv_send_wr sw = { .wr_id = 1, .sg_list = &s, .num_sge = 1, .opcode = IBV_WR_SEND,
					  .send_flags = IBV_SEND_SIGNALED }, *sbad;
		struct ibv_wc w1, w2;
		strcpy(buf, "sent through a parent domain");
		EXPECT_RC(ibv_post_recv(qb, &rw, &rbad), 0, "a receive posted on the peer");
		EXPECT_RC(ibv_post_send(qa, &sw, &sbad), 0, "a send posted on the parent domain's QP");
		w1 = conf_wait(cq);
		w2 = conf_wait(cq);
		check(w1.status == IBV_WC_SUCCESS && w2.status == IBV_WC_SUCCESS, "both completed", "%d %d", w1.status, w2.status);
		check(!strcmp(buf + 4096, "sent through a parent domain"), "the bytes arrived", "'%s'", buf + 4096);
	}
	{
		struct ibv_qp_init_attr_ex xa = { .send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC, .pd = par,
						  .cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1 },
						  .comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
						  .send_ops_flags = IBV_QP_EX_WITH_SEND };
		struct ibv_qp *qx;
		struct ibv_qp_ex *x;
		MUST(qx, ibv_create_qp_ex(ctx, &xa), "an ibv_wr_* QP on the parent domain");
		x = ibv_qp_to_qp_ex(qx);
		ibv_wr_start(x);
		for (uint32_t i = 0; i <= xa.cap.max_send_wr; i++) {
			ibv_wr_send(x);
			ibv_wr_set_sge(x, mr->lkey, (uintptr_t)buf, 8);
		}
		EXPECT_RC(ibv_wr_complete(x), ENOMEM, "one request more than its send queue holds: ENOMEM");
		EXPECT_RC(ibv_destroy_qp(qx), 0, "that QP destroyed");
		check(allocs == 2 && frees == 1, "its buffer came from the allocator and went back", "%d, %d", allocs, frees);
		frees = 0;
	}
	EXPECT_RC(ibv_destroy_qp(qa), 0, "the QP destroyed");
	check(frees == 1, "its buffer went back through the free callback", "%d frees", frees);
	EXPECT_RC(ibv_dealloc_pd(par), EBUSY, "the parent domain still has its CQ: EBUSY");
	EXPECT_RC(ibv_destroy_cq(ibv_cq_ex_to_cq(cqx)), 0, "the extended CQ destroyed");
	EXPECT_RC(ibv_destroy_qp(qb), 0, "the peer destroyed");
	EXPECT_RC(ibv_dereg_mr(mr), 0, "the MR deregistered");
	EXPECT_RC(ibv_dealloc_pd(par), 0, "then the parent domain is freed");
	EXPECT_RC(ibv_dealloc_td(td), 0, "and its TD");
	EXPECT_RC(ibv_dealloc_pd(pd), EBUSY, "the PD, still in the second parent domain: EBUSY");
	EXPECT_RC(ibv_dealloc_pd(par2), 0, "the second parent domain freed");
	EXPECT_RC(ibv_dealloc_pd(pd), 0, "then the PD");
	EXPECT_RC(ibv_destroy_cq(cq), 0, "the CQ");
	EXPECT_RC(ibv_close_device(ctx), 0, "ibv_close_device");
	free(buf);
	return conf_end();
}
