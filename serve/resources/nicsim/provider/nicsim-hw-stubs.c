/*
 * What the provider on libnicsim does not build yet (NICSIM_DRIVER=c): each verb says so once on
 * stderr and fails with EOPNOTSUPP, rather than reach objects the C driver did not make.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>

#include "nicsim-hw.h"

static void *unbuilt(const char *verb) {
	static __thread const char *told;
	if (told != verb)
		fprintf(stderr, "nicsim: %s is not built in the C driver yet (NICSIM_DRIVER=c)\n", verb);
	told = verb;
	errno = EOPNOTSUPP;
	return NULL;
}

static struct ibv_dm *alloc_dm(struct ibv_context *c, struct ibv_alloc_dm_attr *a) {
	(void)c; (void)a;
	return unbuilt("ibv_alloc_dm");
}

static struct ibv_mr *reg_dm_mr(struct ibv_pd *pd, struct ibv_dm *dm, uint64_t offset, size_t length,
				unsigned int access) {
	(void)pd; (void)dm; (void)offset; (void)length; (void)access;
	return unbuilt("ibv_reg_dm_mr");
}

const struct verbs_context_ops nicsim_hw_unbuilt_ops = {
	.alloc_dm = alloc_dm,
	.reg_dm_mr = reg_dm_mr,
};
