/*
 * The java back end's protection domains and address handles (nicsim-backend.h), each made by the
 * simulator's adapter and named here by the handle it gave, and a shared context's PD
 * (ibv_import_pd); with the question every import asks the simulator first.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "nicsim-backend.h"

/* Each verb that makes an object allocates its record first: a failure then leaves nothing in the simulator. */
struct ibv_pd *nicsim_java_alloc_pd(struct ibv_context *c) {
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
int nicsim_java_dealloc_pd(struct ibv_pd *pd) {
	struct nicsim_ibv_pd *parent = nicsim_parent_domain(pd);
	int rc;
	if (parent) return nicsim_dealloc_parent_domain(parent);
	if (atomic_load(&to_npd(pd)->refcount) > 1) return EBUSY;
	rc = simple(pd->context, NICSIM_OP_DEALLOC_PD, pd_handle(pd));
	if (!rc) free(pd);
	return rc;
}

struct ibv_ah *nicsim_java_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr) {
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

int nicsim_java_destroy_ah(struct ibv_ah *ah) {
	int rc = simple(ah->context, NICSIM_OP_DESTROY_AH, ah_handle(ah));
	if (!rc) free(ah);
	return rc;
}

/* Asks whether the shared context has an object of kind op under handle: 0 with the reply in *m, or the errno. */
int nicsim_java_named(struct ibv_context *c, uint32_t op, uint32_t handle, struct msg *m) {
	struct nicsim_wire_handle q = { .handle = handle };
	int rc;
	*m = request(op);
	PUT(m, q);
	rc = call(to_nctx(c), m);
	if (rc) done(m);
	return rc;
}

struct ibv_pd *nicsim_java_import_pd(struct ibv_context *c, uint32_t handle) {
	struct msg m;
	int rc = nicsim_java_named(c, NICSIM_OP_IMPORT_PD, handle, &m);
	if (rc) { errno = rc; return NULL; }
	done(&m);
	return nicsim_imported_pd(c, handle);
}
