/*
 * The kern back end's MRs and memory windows (nicsim-kern.c): REG_MR and ALLOC_MW through the kernel
 * driver; a window's bind is a WQE of the hw back end's ring code, as every post on this back end.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "nicsim-kern.h"

struct ibv_mr *nicsim_kern_reg_mr(struct ibv_pd *pd, void *addr, size_t len, uint64_t hca_va, int access) {
	struct nicsim_ibv_mr *mr = calloc(1, sizeof(*mr));
	struct ibv_reg_mr cmd;
	struct ib_uverbs_reg_mr_resp resp;
	if (!mr) { errno = ENOMEM; return NULL; }
	int rc = ibv_cmd_reg_mr(pd, addr, len, hca_va, access, &mr->vmr, &cmd, sizeof(cmd), &resp, sizeof(resp));
	if (rc) { free(mr); errno = rc; return NULL; }
	mr->handle = mr->vmr.ibv_mr.lkey;
	return &mr->vmr.ibv_mr;
}

int nicsim_kern_dereg_mr(struct verbs_mr *vmr) {
	int rc = ibv_cmd_dereg_mr(vmr);
	if (!rc)
		free(to_nvmr(vmr));
	return rc;
}

struct ibv_mw *nicsim_kern_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type) {
	struct nicsim_ibv_mw *mw = calloc(1, sizeof(*mw));
	struct ibv_alloc_mw cmd;
	struct ib_uverbs_alloc_mw_resp resp;
	if (!mw) { errno = ENOMEM; return NULL; }
	int rc = ibv_cmd_alloc_mw(pd, type, &mw->mw, &cmd, sizeof(cmd), &resp, sizeof(resp));
	if (rc) { free(mw); errno = rc; return NULL; }
	return &mw->mw;
}

int nicsim_kern_dealloc_mw(struct ibv_mw *mw) {
	int rc = ibv_cmd_dealloc_mw(mw);
	if (!rc)
		free(mw); /* the nicsim_ibv_mw it is the first member of */
	return rc;
}
