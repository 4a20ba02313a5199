/*
 * The kern back end's PDs and AHs (nicsim-kern.c): made by the kernel driver's uverbs commands, the
 * PD's number and the AH's destination as the driver's udata gives them.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "nicsim-kern.h"

struct ibv_pd *nicsim_kern_alloc_pd(struct ibv_context *c) {
	struct nicsim_ibv_pd *pd = calloc(1, sizeof(*pd));
	struct ibv_alloc_pd cmd;
	struct { struct ib_uverbs_alloc_pd_resp ibv; struct nicsim_ibv_alloc_pd_resp drv; } resp;
	if (!pd) { errno = ENOMEM; return NULL; }
	memset(&resp, 0, sizeof(resp));
	int rc = ibv_cmd_alloc_pd(c, &pd->pd, &cmd, sizeof(cmd), &resp.ibv, sizeof(resp));
	if (rc) { free(pd); errno = rc; return NULL; }
	pd->handle = resp.drv.pdn;
	atomic_init(&pd->refcount, 1);
	return &pd->pd;
}

int nicsim_kern_dealloc_pd(struct ibv_pd *pd) {
	int rc = ibv_cmd_dealloc_pd(pd);
	if (!rc)
		free(to_npd(pd));
	return rc;
}

/* An AH is the driver's; a UD WQE carries the destination LID, which the shared post path takes from its handle. */
struct ibv_ah *nicsim_kern_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr) {
	struct nicsim_ibv_ah *ah = calloc(1, sizeof(*ah));
	struct ib_uverbs_create_ah_resp resp;
	if (!ah) { errno = ENOMEM; return NULL; }
	int rc = ibv_cmd_create_ah(pd, &ah->ah, attr, &resp, sizeof(resp));
	if (rc) { free(ah); errno = rc; return NULL; }
	ah->handle = attr->dlid;
	ah->is_global = attr->is_global;
	memcpy(ah->dgid, attr->grh.dgid.raw, 16);
	return &ah->ah;
}

int nicsim_kern_destroy_ah(struct ibv_ah *ah) {
	int rc = ibv_cmd_destroy_ah(ah);
	if (!rc)
		free(to_nah(ah));
	return rc;
}
