/*
 * The java back end's device memory (nicsim-backend.h): the adapter's on-chip memory, written and
 * read through BAR0 by the simulator, reached by RDMA through an MR over it; and a shared
 * context's (ibv_import_dm).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "nicsim-backend.h"

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

struct ibv_dm *nicsim_java_alloc_dm(struct ibv_context *c, struct ibv_alloc_dm_attr *attr) {
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

int nicsim_java_free_dm(struct ibv_dm *dm) {
	int rc = simple(dm->context, NICSIM_OP_FREE_DM, dm->handle);
	if (!rc) free(dm);
	return rc;
}

struct ibv_mr *nicsim_java_reg_dm_mr(struct ibv_pd *pd, struct ibv_dm *dm, uint64_t offset, size_t length,
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
	rc = nicsim_java_registered(pd, &m, mr);
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

struct ibv_dm *nicsim_java_import_dm(struct ibv_context *c, uint32_t handle) {
	struct ibv_dm *dm;
	struct msg m;
	int rc = nicsim_java_named(c, NICSIM_OP_IMPORT_DM, handle, &m);
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

void nicsim_java_unimport_dm(struct ibv_dm *dm) { free(dm); }
