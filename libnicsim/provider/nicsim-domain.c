/*
 * Thread domains and parent domains (ibv_alloc_td(3), ibv_alloc_parent_domain(3)), kept in the
 * program as mlx5 keeps them: a parent domain is a PD interchangeable with the one it contains
 * (same handle), and each holds a count of what uses it, so that freeing one still in use is
 * EBUSY. A QP made on a parent domain with allocators gets its work-request staging buffer (the
 * one memory nicsim's provider keeps per queue in the program) from the allocator, sized for the
 * send queue's capacity, and gives it back through the free callback; an allocator returning
 * NULL makes the create fail with ENOMEM, one returning IBV_ALLOCATOR_USE_DEFAULT means malloc.
 * A thread domain asks nothing of the simulator: nicsim has no doorbell pages to dedicate.
 * Here too, below the back ends that make PDs and MRs, the record of a PD or MR another process's
 * context holds (ibv_import_pd(3), ibv_import_mr(3)): freeing it leaves the object.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "nicsim-provider.h"

struct ibv_td *nicsim_alloc_td(struct ibv_context *c, struct ibv_td_init_attr *attr) {
	struct nicsim_ibv_td *td;
	if (attr->comp_mask) { errno = EINVAL; return NULL; }
	td = calloc(1, sizeof(*td));
	if (!td) { errno = ENOMEM; return NULL; }
	td->td.context = c;
	atomic_init(&td->refcount, 1);
	return &td->td;
}

int nicsim_dealloc_td(struct ibv_td *t) {
	struct nicsim_ibv_td *td = to_ntd(t);
	if (atomic_load(&td->refcount) > 1) return EBUSY;
	free(td);
	return 0;
}

struct ibv_pd *nicsim_alloc_parent_domain(struct ibv_context *c, struct ibv_parent_domain_init_attr *attr) {
	uint32_t known = IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS | IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT;
	struct nicsim_ibv_pd *pd, *inner;
	if (!attr->pd || (attr->comp_mask & ~known)) { errno = EINVAL; return NULL; }
	inner = to_npd(attr->pd);
	if (inner->protection || attr->pd->context != c || (attr->td && attr->td->context != c)) {
		errno = EINVAL; /* a parent domain contains a plain PD of the same context */
		return NULL;
	}
	if ((attr->comp_mask & IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS) && (!attr->alloc || !attr->free)) {
		errno = EINVAL;
		return NULL;
	}
	pd = calloc(1, sizeof(*pd));
	if (!pd) { errno = ENOMEM; return NULL; }
	pd->protection = inner;
	pd->handle = inner->handle;
	pd->pd.context = c;
	pd->pd.handle = inner->pd.handle;
	atomic_init(&pd->refcount, 1);
	atomic_fetch_add(&inner->refcount, 1);
	if (attr->td) {
		pd->td = to_ntd(attr->td);
		atomic_fetch_add(&pd->td->refcount, 1);
	}
	if (attr->comp_mask & IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS) {
		pd->alloc = attr->alloc;
		pd->free = attr->free;
	}
	if (attr->comp_mask & IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT) pd->pd_context = attr->pd_context;
	return &pd->pd;
}

int nicsim_dealloc_parent_domain(struct nicsim_ibv_pd *pd) {
	if (atomic_load(&pd->refcount) > 1) return EBUSY;
	atomic_fetch_sub(&pd->protection->refcount, 1);
	if (pd->td) atomic_fetch_sub(&pd->td->refcount, 1);
	free(pd);
	return 0;
}

struct nicsim_ibv_pd *nicsim_parent_domain(struct ibv_pd *pd) {
	struct nicsim_ibv_pd *p = to_npd(pd);
	return p && p->protection ? p : NULL;
}

void nicsim_domain_use(struct nicsim_ibv_pd *pd, int delta) {
	if (pd) atomic_fetch_add(&pd->refcount, delta);
}

int nicsim_staging_alloc(struct nicsim_ibv_qp *qp, struct nicsim_ibv_pd *pd, uint32_t entries) {
	size_t size = (size_t)(entries ? entries : 1) * sizeof(struct nicsim_wr);
	void *b = IBV_ALLOCATOR_USE_DEFAULT;
	if (pd && pd->alloc) b = pd->alloc(&pd->pd, pd->pd_context, size, 64, MLX5DV_RES_TYPE_QP);
	if (!b) return ENOMEM;
	if (b == IBV_ALLOCATOR_USE_DEFAULT) {
		b = malloc(size);
		if (!b) return ENOMEM;
		qp->staging_custom = false;
	} else {
		qp->staging_custom = true;
	}
	qp->wrs = b;
	qp->cap = size / sizeof(struct nicsim_wr);
	qp->staging_fixed = true;
	return 0;
}

void nicsim_staging_free(struct nicsim_ibv_qp *qp) {
	struct nicsim_ibv_pd *pd = nicsim_parent_domain(qp->vqp.qp.pd);
	if (qp->staging_custom && pd) pd->free(&pd->pd, pd->pd_context, qp->wrs, MLX5DV_RES_TYPE_QP);
	else free(qp->wrs);
	qp->wrs = NULL;
}

struct ibv_pd *nicsim_imported_pd(struct ibv_context *c, uint32_t handle) {
	struct nicsim_ibv_pd *pd = calloc(1, sizeof(*pd));
	if (!pd) { errno = ENOMEM; return NULL; }
	pd->handle = handle;
	pd->pd.handle = handle;
	pd->pd.context = c;
	atomic_init(&pd->refcount, 1);
	return &pd->pd;
}

void nicsim_unimport_pd(struct ibv_pd *pd) { free(to_npd(pd)); }

void nicsim_unimport_mr(struct ibv_mr *mr) { free(to_nmr(mr)); }
