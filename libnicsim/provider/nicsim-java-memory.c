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
	struct nicsim_wire_handle r;
	rc = call(to_nctx(c), &m);
	if (rc) { done(&m); free(pd); errno = rc; return NULL; }
	GET(&m, r);
	pd->handle = r.handle;
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

/* Sends registration request m of pd and takes its MrReply into mr: 0, or the errno (m then done). */
static int registered(struct ibv_pd *pd, struct msg *m, struct nicsim_ibv_mr *mr) {
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

static struct ibv_mr *reg_mr(struct ibv_pd *pd, void *addr, size_t length, uint64_t iova, int access) {
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
	rc = registered(pd, &m, mr);
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
static int rereg_mr(struct verbs_mr *vmr, int flags, struct ibv_pd *pd, void *addr, size_t length, int access) {
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
static int advise_mr(struct ibv_pd *pd, enum ibv_advise_mr_advice advice, uint32_t flags, struct ibv_sge *sg_list,
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
	struct nicsim_wire_create_ah_request q = {
		.pd = pd_handle(pd), .dlid = attr->dlid, .sl = attr->sl, .port_num = attr->port_num,
		.is_global = attr->is_global,
	};
	struct nicsim_wire_handle r;
	m = request(NICSIM_OP_CREATE_AH);
	PUT(&m, q);
	put(&m, attr->grh.dgid.raw, 16); /* the GRH's destination GID: CREATE_AH's rest */
	rc = call(to_nctx(pd->context), &m);
	if (rc) { done(&m); free(ah); errno = rc; return NULL; }
	GET(&m, r);
	ah->handle = r.handle;
	ah->ah.handle = ah->handle;
	done(&m);
	return &ah->ah;
}

/* ---- device memory: the adapter's on-chip memory, written and read through BAR0, reached by RDMA ---- */

static int memcpy_to_dm(struct ibv_dm *dm, uint64_t offset, const void *host_addr, size_t length) {
	struct msg m;
	struct nicsim_wire_dm_copy_request q = { .dm = dm->handle, .dm_offset = offset, .length = (uint32_t)length };
	int rc;
	if (length > UINT32_MAX) return EINVAL;
	m = request(NICSIM_OP_MEMCPY_TO_DM);
	PUT(&m, q);
	put(&m, host_addr, length);
	rc = call(to_nctx(dm->context), &m);
	done(&m);
	return rc;
}

static int memcpy_from_dm(void *host_addr, struct ibv_dm *dm, uint64_t offset, size_t length) {
	struct msg m;
	struct nicsim_wire_dm_copy_request q = { .dm = dm->handle, .dm_offset = offset, .length = (uint32_t)length };
	uint32_t n;
	int rc;
	if (length > UINT32_MAX) return EINVAL;
	m = request(NICSIM_OP_MEMCPY_FROM_DM);
	PUT(&m, q);
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
	struct nicsim_wire_alloc_dm_request q = { .length = attr->length, .log_align_req = attr->log_align_req };
	struct nicsim_wire_handle r;
	m = request(NICSIM_OP_ALLOC_DM);
	PUT(&m, q);
	rc = call(to_nctx(c), &m);
	if (rc) { done(&m); free(dm); errno = rc; return NULL; }
	GET(&m, r);
	dm->handle = r.handle;
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
	struct nicsim_wire_reg_dm_mr_request q = {
		.pd = pd_handle(pd), .dm = dm->handle, .dm_offset = offset, .length = length, .access = access,
	};
	m = request(NICSIM_OP_REG_DM_MR);
	PUT(&m, q);
	rc = registered(pd, &m, mr);
	if (rc) { free(mr); errno = rc; return NULL; }
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

/* ---- a shared context's objects (ibv_import_pd, _mr, _dm; ibv_import_device: interpose/nicsim-import.c) ---- */

/* Asks whether the shared context has an object of kind op under handle: 0 with the reply in *m, or the errno. */
static int named(struct ibv_context *c, uint32_t op, uint32_t handle, struct msg *m) {
	struct nicsim_wire_handle q = { .handle = handle };
	int rc;
	*m = request(op);
	PUT(m, q);
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
	struct nicsim_wire_import_mr_reply r;
	struct msg m;
	int rc = named(pd->context, NICSIM_OP_IMPORT_MR, handle, &m);
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
