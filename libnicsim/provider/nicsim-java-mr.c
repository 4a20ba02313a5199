/*
 * The java back end's memory regions, memory windows and indirect mkeys (nicsim-backend.h), each
 * made by the simulator's adapter and named here by the handle it gave, and a shared context's MR
 * (ibv_import_mr).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "nicsim-backend.h"

/* Sends registration request m of pd and takes its MrReply into mr: 0, or the errno (m then done). */
int nicsim_java_registered(struct ibv_pd *pd, struct msg *m, struct nicsim_ibv_mr *mr) {
	struct nicsim_wire_mr_reply r;
	int rc = call(to_nctx(pd->context), m);
	if (rc) { done(m); return rc; }
	GET(m, r);
	mr->handle = r.handle;
	mr->vmr.ibv_mr.handle = r.handle;
	mr->vmr.ibv_mr.lkey = r.lkey;
	mr->vmr.ibv_mr.rkey = r.rkey;
	return 0;
}

struct ibv_mr *nicsim_java_reg_mr(struct ibv_pd *pd, void *addr, size_t length, uint64_t iova, int access) {
	struct nicsim_ibv_mr *mr = calloc(1, sizeof(*mr));
	struct msg m;
	int rc;
	if (!mr) { errno = ENOMEM; return NULL; }
	struct nicsim_wire_reg_mr_request q = {
		.pd = pd_handle(pd), .addr = (uint64_t)(uintptr_t)addr, .length = length, .iova = iova,
		.access = (uint32_t)access,
	};
	m = request(NICSIM_OP_REG_MR);
	PUT(&m, q);
	rc = nicsim_java_registered(pd, &m, mr);
	if (rc) { free(mr); errno = rc; return NULL; }
	mr->vmr.mr_type = IBV_MR_TYPE_MR;
	mr->vmr.access = access;
	done(&m);
	return &mr->vmr.ibv_mr;
}

/*
 * ibv_rereg_mr: libibverbs has checked the flags and, once this returns 0, sets the MR's PD, address
 * and length; the keys come back (the same: the adapter keeps them). errno is set too: libibverbs
 * reports the command's failure as IBV_REREG_MR_ERR_CMD, and programs read the reason from errno.
 */
int nicsim_java_rereg_mr(struct verbs_mr *vmr, int flags, struct ibv_pd *pd, void *addr, size_t length, int access) {
	struct nicsim_ibv_mr *mr = to_nvmr(vmr);
	struct msg m = request(NICSIM_OP_REREG_MR);
	struct nicsim_wire_rereg_mr_request q = {
		.mr = mr->handle, .flags = (uint32_t)flags,
		.pd = (flags & IBV_REREG_MR_CHANGE_PD) && pd ? pd_handle(pd) : NICSIM_NONE,
		.addr = (uint64_t)(uintptr_t)addr, .length = length, .access = (uint32_t)access,
	};
	struct nicsim_wire_mr_keys r;
	int rc;
	PUT(&m, q);
	rc = call(to_nctx(vmr->ibv_mr.context), &m);
	if (rc) { done(&m); errno = rc; return rc; }
	GET(&m, r);
	vmr->ibv_mr.lkey = r.lkey;
	vmr->ibv_mr.rkey = r.rkey;
	if (flags & IBV_REREG_MR_CHANGE_ACCESS) vmr->access = access;
	done(&m);
	return 0;
}

/* ibv_advise_mr: the pages under each SGE brought in ahead (with IBV_ADVISE_MR_FLAG_FLUSH, before it returns). */
int nicsim_java_advise_mr(struct ibv_pd *pd, enum ibv_advise_mr_advice advice, uint32_t flags, struct ibv_sge *sg_list,
			  uint32_t num_sge) {
	struct msg m;
	struct nicsim_wire_advise_mr_request q = { .pd = pd_handle(pd), .advice = advice, .flags = flags };
	int rc;
	if (num_sge == 0 || num_sge > 16) return EINVAL; /* the simulator takes up to 16, as a post's list */
	m = request(NICSIM_OP_ADVISE_MR);
	PUT(&m, q);
	put_sges(&m, sg_list, (int)num_sge);
	rc = call(to_nctx(pd->context), &m);
	done(&m);
	return rc;
}

int nicsim_java_dereg_mr(struct verbs_mr *vmr) {
	struct nicsim_ibv_mr *mr = to_nvmr(vmr);
	int rc = simple(vmr->ibv_mr.context, NICSIM_OP_DEREG_MR, mr->handle);
	if (!rc) free(mr);
	return rc;
}

/* ---- memory windows ---- */

struct ibv_mw *nicsim_java_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type) {
	struct nicsim_ibv_mw *mw = calloc(1, sizeof(*mw));
	struct msg m = request(NICSIM_OP_ALLOC_MW);
	struct nicsim_wire_alloc_mw_request q = { .pd = pd_handle(pd), .type = (uint32_t)type };
	struct nicsim_wire_alloc_mw_reply r;
	int rc;
	if (!mw) { done(&m); errno = ENOMEM; return NULL; }
	PUT(&m, q);
	rc = call(to_nctx(pd->context), &m);
	if (rc) { done(&m); free(mw); errno = rc; return NULL; }
	GET(&m, r);
	mw->mw.handle = r.handle;
	mw->mw.rkey = r.rkey;
	mw->mw.context = pd->context;
	mw->mw.pd = pd;
	mw->mw.type = type;
	done(&m);
	return &mw->mw;
}

int nicsim_java_dealloc_mw(struct ibv_mw *mw) {
	int rc = simple(mw->context, NICSIM_OP_DEALLOC_MW, mw->handle);
	if (!rc) free(mw);
	return rc;
}

/* ---- indirect mkeys (mlx5dv_create_mkey) ---- */

struct nicsim_mkey *nicsim_java_create_mkey(struct ibv_pd *pd, uint32_t create_flags, uint16_t max_entries) {
	struct nicsim_mkey *k = calloc(1, sizeof(*k));
	struct msg m = request(NICSIM_OP_CREATE_MKEY);
	struct nicsim_wire_create_mkey_request q = {
		.pd = pd_handle(pd), .max_entries = max_entries, .create_flags = create_flags,
	};
	struct nicsim_wire_create_mkey_reply r;
	int rc;
	if (!k) { done(&m); errno = ENOMEM; return NULL; }
	PUT(&m, q);
	rc = call(to_nctx(pd->context), &m);
	if (rc) { done(&m); free(k); errno = rc; return NULL; }
	GET(&m, r);
	k->handle = r.handle;
	k->dv.lkey = k->dv.rkey = r.lkey;
	k->context = pd->context;
	done(&m);
	return k;
}

int nicsim_java_destroy_mkey(struct nicsim_mkey *k) {
	int rc = simple(k->context, NICSIM_OP_DESTROY_MKEY, k->handle);
	if (!rc) free(k);
	return rc;
}

/* As ibv_cmd_query_mr leaves an imported MR: its keys and length, no address (the importer knows it, if anyone). */
struct ibv_mr *nicsim_java_import_mr(struct ibv_pd *pd, uint32_t handle) {
	struct nicsim_ibv_mr *mr;
	struct nicsim_wire_import_mr_reply r;
	struct msg m;
	int rc = nicsim_java_named(pd->context, NICSIM_OP_IMPORT_MR, handle, &m);
	if (rc) { errno = rc; return NULL; }
	mr = calloc(1, sizeof(*mr));
	if (!mr) { done(&m); errno = ENOMEM; return NULL; }
	GET(&m, r);
	mr->handle = handle;
	mr->vmr.ibv_mr.handle = handle;
	mr->vmr.ibv_mr.lkey = r.lkey;
	mr->vmr.ibv_mr.rkey = r.rkey;
	mr->vmr.ibv_mr.length = r.length;
	mr->vmr.ibv_mr.context = pd->context;
	mr->vmr.ibv_mr.pd = pd;
	mr->vmr.ibv_mr.addr = NULL;
	mr->vmr.mr_type = IBV_MR_TYPE_IMPORTED_MR;
	done(&m);
	return &mr->vmr.ibv_mr;
}
