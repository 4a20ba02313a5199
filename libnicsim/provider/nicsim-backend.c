/*
 * What every back end shares (nicsim-backend.h): the entries of the kinds a back end does not offer,
 * and the setting of a context's table at open. Each table is its back end's: nicsim-java.c,
 * nicsim-hw-verbs.c, nicsim-kern.c.
 */
#include <errno.h>

#include "nicsim-backend.h"

struct ibv_xrcd *nicsim_no_open_xrcd(struct ibv_context *c, const struct stat *file, int oflags) {
	(void)c; (void)file; (void)oflags;
	errno = EOPNOTSUPP;
	return NULL;
}

int nicsim_no_close_xrcd(struct nicsim_ibv_xrcd *x) {
	(void)x;
	return EOPNOTSUPP;
}

struct nicsim_mkey *nicsim_no_create_mkey(struct ibv_pd *pd, uint32_t create_flags, uint16_t max_entries) {
	(void)pd; (void)create_flags; (void)max_entries;
	errno = EOPNOTSUPP;
	return NULL;
}

int nicsim_no_destroy_mkey(struct nicsim_mkey *k) {
	(void)k;
	return EOPNOTSUPP;
}

int nicsim_no_resize_cq(struct nicsim_ibv_cq *cq, int cqe) {
	(void)cq; (void)cqe;
	return EOPNOTSUPP;
}

void nicsim_set_backend(struct nicsim_context *ctx, const struct nicsim_backend_ops *ops) {
	ctx->ops = ops;
	verbs_set_ops(&ctx->vctx, &nicsim_cq_ops);
	verbs_set_ops(&ctx->vctx, &nicsim_cqex_ops);
	verbs_set_ops(&ctx->vctx, &nicsim_qp_ops);
	verbs_set_ops(&ctx->vctx, &nicsim_srq_ops);
	verbs_set_ops(&ctx->vctx, &nicsim_post_ops);
	verbs_set_ops(&ctx->vctx, ops->verbs);
}
