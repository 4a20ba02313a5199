/*
 * The java back end's own verbs (nicsim-backend.h): protection domains, memory regions, address
 * handles, device memory, memory windows and indirect mkeys, each made by the simulator's adapter
 * and named here by the handle it gave; and the objects of a shared context (ibv_import_pd, _mr,
 * _dm), which the simulator names by those handles.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "nicsim-backend.h"

/* ---- protection domains, memory regions, address handles ---- */

/* Each verb that makes an object allocates its record first: a failure then leaves nothing in the simulator. */
static struct ibv_pd *alloc_pd(struct ibv_context *c) {
	struct nicsim_ibv_pd *pd = calloc(1, sizeof(*pd));
	struct msg m;
	int rc;
	if (!pd) { errno = ENOMEM; return NULL; }
	m = request(NICSIM_OP_ALLOC_PD);
	rc = call(to_nctx(c), &m);
	if (rc) { done(&m); free(pd); errno = rc; return NULL; }
	pd->handle = get32(&m);
	pd->pd.handle = pd->handle;
	atomic_init(&pd->refcount, 1);
	done(&m);
	return &pd->pd;
}

/* A parent domain is freed in the program; a PD a parent domain contains is EBUSY (as mlx5's). */
static int dealloc_pd(struct ibv_pd *pd) {
	struct nicsim_ibv_pd *parent = nicsim_parent_domain(pd);
	int rc;
	if (parent) return nicsim_dealloc_parent_domain(parent);
	if (atomic_load(&to_npd(pd)->refcount) > 1) return EBUSY;
	rc = simple(pd->context, NICSIM_OP_DEALLOC_PD, pd_handle(pd));
	if (!rc) free(pd);
	return rc;
}

static struct ibv_mr *reg_mr(struct ibv_pd *pd, void *addr, size_t length, uint64_t iova, int access) {
	struct nicsim_ibv_mr *mr = calloc(1, sizeof(*mr));
	struct msg m;
	int rc;
	if (!mr) { errno = ENOMEM; return NULL; }
	m = request(NICSIM_OP_REG_MR);
	put32(&m, pd_handle(pd));
	put64(&m, (uint64_t)(uintptr_t)addr);
	put64(&m, length);
	put64(&m, iova);
	put32(&m, (uint32_t)access);
	rc = call(to_nctx(pd->context), &m);
	if (rc) { done(&m); free(mr); errno = rc; return NULL; }
	mr->handle = get32(&m);
	mr->vmr.ibv_mr.handle = mr->handle;
	mr->vmr.ibv_mr.lkey = get32(&m);
	mr->vmr.ibv_mr.rkey = get32(&m);
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
static int rereg_mr(struct verbs_mr *vmr, int flags, struct ibv_pd *pd, void *addr, size_t length, int access) {
	struct nicsim_ibv_mr *mr = to_nvmr(vmr);
	struct msg m = request(NICSIM_OP_REREG_MR);
	int rc;
	put32(&m, mr->handle);
	put32(&m, (uint32_t)flags);
	put32(&m, (flags & IBV_REREG_MR_CHANGE_PD) && pd ? pd_handle(pd) : NICSIM_NONE);
	put64(&m, (uint64_t)(uintptr_t)addr);
	put64(&m, length);
	put32(&m, (uint32_t)access);
	rc = call(to_nctx(vmr->ibv_mr.context), &m);
	if (rc) { done(&m); errno = rc; return rc; }
	vmr->ibv_mr.lkey = get32(&m);
	vmr->ibv_mr.rkey = get32(&m);
	if (flags & IBV_REREG_MR_CHANGE_ACCESS) vmr->access = access;
	done(&m);
	return 0;
}

/* ibv_advise_mr: the pages under each SGE brought in ahead (with IBV_ADVISE_MR_FLAG_FLUSH, before it returns). */
static int advise_mr(struct ibv_pd *pd, enum ibv_advise_mr_advice advice, uint32_t flags, struct ibv_sge *sg_list,
		     uint32_t num_sge) {
	struct msg m;
	int rc;
	if (num_sge == 0 || num_sge > 16) return EINVAL; /* the simulator takes up to 16, as a post's list */
	m = request(NICSIM_OP_ADVISE_MR);
	put32(&m, pd_handle(pd));
	put32(&m, advice);
	put32(&m, flags);
	put_sges(&m, sg_list, (int)num_sge);
	rc = call(to_nctx(pd->context), &m);
	done(&m);
	return rc;
}

static int dereg_mr(struct verbs_mr *vmr) {
	struct nicsim_ibv_mr *mr = to_nvmr(vmr);
	int rc = simple(vmr->ibv_mr.context, NICSIM_OP_DEREG_MR, mr->handle);
	if (!rc) free(mr);
	return rc;
}

static struct ibv_ah *create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr) {
	struct nicsim_ibv_ah *ah = calloc(1, sizeof(*ah));
	struct msg m;
	int rc;
	if (!ah) { errno = ENOMEM; return NULL; }
	m = request(NICSIM_OP_CREATE_AH);
	put32(&m, pd_handle(pd));
	put32(&m, attr->dlid);
	put32(&m, attr->sl);
	put32(&m, attr->port_num);
	put32(&m, attr->is_global);
	put(&m, attr->grh.dgid.raw, 16);
	rc = call(to_nctx(pd->context), &m);
	if (rc) { done(&m); free(ah); errno = rc; return NULL; }
	ah->handle = get32(&m);
	ah->ah.handle = ah->handle;
	done(&m);
	return &ah->ah;
}

/* ---- device memory: the adapter's on-chip memory, written and read through BAR0, reached by RDMA ---- */

static int memcpy_to_dm(struct ibv_dm *dm, uint64_t offset, const void *host_addr, size_t length) {
	struct msg m = request(NICSIM_OP_MEMCPY_TO_DM);
	int rc;
	if (length > UINT32_MAX) return EINVAL;
	put32(&m, dm->handle);
	put64(&m, offset);
	put32(&m, (uint32_t)length);
	put(&m, host_addr, length);
	rc = call(to_nctx(dm->context), &m);
	done(&m);
	return rc;
}

static int memcpy_from_dm(void *host_addr, struct ibv_dm *dm, uint64_t offset, size_t length) {
	struct msg m = request(NICSIM_OP_MEMCPY_FROM_DM);
	uint32_t n;
	int rc;
	if (length > UINT32_MAX) return EINVAL;
	put32(&m, dm->handle);
	put64(&m, offset);
	put32(&m, (uint32_t)length);
	rc = call(to_nctx(dm->context), &m);
	if (!rc) {
		n = get32(&m);
		if (n != length) rc = EIO;
		else get(&m, host_addr, length);
		if (m.failed) rc = EIO;
	}
	done(&m);
	return rc;
}

static struct ibv_dm *alloc_dm(struct ibv_context *c, struct ibv_alloc_dm_attr *attr) {
	struct ibv_dm *dm;
	struct msg m;
	int rc;
	if (attr->comp_mask) { errno = EINVAL; return NULL; }
	dm = calloc(1, sizeof(*dm));
	if (!dm) { errno = ENOMEM; return NULL; }
	m = request(NICSIM_OP_ALLOC_DM);
	put64(&m, attr->length);
	put32(&m, attr->log_align_req);
	rc = call(to_nctx(c), &m);
	if (rc) { done(&m); free(dm); errno = rc; return NULL; }
	dm->handle = get32(&m);
	dm->context = c;
	dm->memcpy_to_dm = memcpy_to_dm;
	dm->memcpy_from_dm = memcpy_from_dm;
	done(&m);
	return dm;
}

static int free_dm(struct ibv_dm *dm) {
	int rc = simple(dm->context, NICSIM_OP_FREE_DM, dm->handle);
	if (!rc) free(dm);
	return rc;
}

static struct ibv_mr *reg_dm_mr(struct ibv_pd *pd, struct ibv_dm *dm, uint64_t offset, size_t length,
				unsigned int access) {
	struct nicsim_ibv_mr *mr = calloc(1, sizeof(*mr));
	struct msg m;
	int rc;
	if (!mr) { errno = ENOMEM; return NULL; }
	m = request(NICSIM_OP_REG_DM_MR);
	put32(&m, pd_handle(pd));
	put32(&m, dm->handle);
	put64(&m, offset);
	put64(&m, length);
	put32(&m, access);
	rc = call(to_nctx(pd->context), &m);
	if (rc) { done(&m); free(mr); errno = rc; return NULL; }
	mr->handle = get32(&m);
	mr->vmr.ibv_mr.handle = mr->handle;
	mr->vmr.ibv_mr.lkey = get32(&m);
	mr->vmr.ibv_mr.rkey = get32(&m);
	mr->vmr.ibv_mr.context = pd->context; /* what ibv_cmd_reg_dm_mr fills (ibv_reg_dm_mr is libibverbs' inline) */
	mr->vmr.ibv_mr.pd = pd;
	mr->vmr.ibv_mr.addr = (void *)(uintptr_t)offset; /* zero-based: the region's byte X is iova X */
	mr->vmr.ibv_mr.length = length;
	mr->vmr.mr_type = IBV_MR_TYPE_MR;
	mr->vmr.access = (int)access;
	done(&m);
	return &mr->vmr.ibv_mr;
}

/* ---- memory windows ---- */

static struct ibv_mw *alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type) {
	struct nicsim_ibv_mw *mw = calloc(1, sizeof(*mw));
	struct msg m = request(NICSIM_OP_ALLOC_MW);
	int rc;
	if (!mw) { done(&m); errno = ENOMEM; return NULL; }
	put32(&m, pd_handle(pd));
	put32(&m, (uint32_t)type);
	rc = call(to_nctx(pd->context), &m);
	if (rc) { done(&m); free(mw); errno = rc; return NULL; }
	mw->mw.handle = get32(&m);
	mw->mw.rkey = get32(&m);
	mw->mw.context = pd->context;
	mw->mw.pd = pd;
	mw->mw.type = type;
	done(&m);
	return &mw->mw;
}

static int dealloc_mw(struct ibv_mw *mw) {
	int rc = simple(mw->context, NICSIM_OP_DEALLOC_MW, mw->handle);
	if (!rc) free(mw);
	return rc;
}

static int destroy_ah(struct ibv_ah *ah) {
	int rc = simple(ah->context, NICSIM_OP_DESTROY_AH, ah_handle(ah));
	if (!rc) free(ah);
	return rc;
}

/* ---- indirect mkeys (mlx5dv_create_mkey) ---- */

struct nicsim_mkey *nicsim_java_create_mkey(struct ibv_pd *pd, uint32_t create_flags, uint16_t max_entries) {
	struct nicsim_mkey *k = calloc(1, sizeof(*k));
	struct msg m = request(NICSIM_OP_CREATE_MKEY);
	int rc;
	if (!k) { done(&m); errno = ENOMEM; return NULL; }
	put32(&m, pd_handle(pd));
	put32(&m, max_entries);
	put32(&m, create_flags);
	rc = call(to_nctx(pd->context), &m);
	if (rc) { done(&m); free(k); errno = rc; return NULL; }
	k->handle = get32(&m);
	k->dv.lkey = k->dv.rkey = get32(&m);
	k->context = pd->context;
	done(&m);
	return k;
}

int nicsim_java_destroy_mkey(struct nicsim_mkey *k) {
	int rc = simple(k->context, NICSIM_OP_DESTROY_MKEY, k->handle);
	if (!rc) free(k);
	return rc;
}

/* ---- a shared context's objects (ibv_import_pd, _mr, _dm; ibv_import_device: interpose/nicsim-import.c) ---- */

/* Asks whether the shared context has an object of kind op under handle: 0 with the reply in *m, or the errno. */
static int named(struct ibv_context *c, uint32_t op, uint32_t handle, struct msg *m) {
	int rc;
	*m = request(op);
	put32(m, handle);
	rc = call(to_nctx(c), m);
	if (rc) done(m);
	return rc;
}

static struct ibv_pd *import_pd(struct ibv_context *c, uint32_t handle) {
	struct msg m;
	int rc = named(c, NICSIM_OP_IMPORT_PD, handle, &m);
	if (rc) { errno = rc; return NULL; }
	done(&m);
	return nicsim_imported_pd(c, handle);
}

/* As ibv_cmd_query_mr leaves an imported MR: its keys and length, no address (the importer knows it, if anyone). */
static struct ibv_mr *import_mr(struct ibv_pd *pd, uint32_t handle) {
	struct nicsim_ibv_mr *mr;
	struct msg m;
	int rc = named(pd->context, NICSIM_OP_IMPORT_MR, handle, &m);
	if (rc) { errno = rc; return NULL; }
	mr = calloc(1, sizeof(*mr));
	if (!mr) { done(&m); errno = ENOMEM; return NULL; }
	mr->handle = handle;
	mr->vmr.ibv_mr.handle = handle;
	mr->vmr.ibv_mr.lkey = get32(&m);
	mr->vmr.ibv_mr.rkey = get32(&m);
	mr->vmr.ibv_mr.length = get64(&m);
	mr->vmr.ibv_mr.context = pd->context;
	mr->vmr.ibv_mr.pd = pd;
	mr->vmr.ibv_mr.addr = NULL;
	mr->vmr.mr_type = IBV_MR_TYPE_IMPORTED_MR;
	done(&m);
	return &mr->vmr.ibv_mr;
}

static struct ibv_dm *import_dm(struct ibv_context *c, uint32_t handle) {
	struct ibv_dm *dm;
	struct msg m;
	int rc = named(c, NICSIM_OP_IMPORT_DM, handle, &m);
	if (rc) { errno = rc; return NULL; }
	done(&m);
	dm = calloc(1, sizeof(*dm));
	if (!dm) { errno = ENOMEM; return NULL; }
	dm->handle = handle;
	dm->context = c;
	dm->memcpy_to_dm = memcpy_to_dm;
	dm->memcpy_from_dm = memcpy_from_dm;
	return dm;
}

static void unimport_dm(struct ibv_dm *dm) { free(dm); }

const struct verbs_context_ops nicsim_java_verbs = {
	.advise_mr = advise_mr,
	.alloc_dm = alloc_dm,
	.alloc_mw = alloc_mw,
	.alloc_pd = alloc_pd,
	.bind_mw = nicsim_bind_mw,
	.create_ah = create_ah,
	.dealloc_mw = dealloc_mw,
	.dealloc_pd = dealloc_pd,
	.dereg_mr = dereg_mr,
	.destroy_ah = destroy_ah,
	.free_dm = free_dm,
	.import_dm = import_dm,
	.import_mr = import_mr,
	.import_pd = import_pd,
	.reg_dm_mr = reg_dm_mr,
	.reg_mr = reg_mr,
	.rereg_mr = rereg_mr,
	.unimport_dm = unimport_dm,
	.unimport_mr = nicsim_unimport_mr,
	.unimport_pd = nicsim_unimport_pd,
};
