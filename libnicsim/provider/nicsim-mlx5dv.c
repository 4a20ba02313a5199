/*
 * mlx5's direct verbs for nicsim's adapters. mlx5's own library (libmlx5.so.1) serves mlx5 devices
 * only, so a program that creates DC QPs or indirect mkeys with mlx5dv_* would find none on a
 * simulated adapter. The provider is preloaded, so these definitions, under mlx5's own symbol
 * versions, come before the real library's in every program that binds them:
 *   mlx5dv_create_qp            DC targets and initiators (and plain QPs) on a nicsim context;
 *   mlx5dv_qp_ex_from_ibv_qp_ex the extension whose wr_set_dc_addr names a DC request's target, and
 *                               whose wr_mr_list and wr_mr_interleaved lay out an indirect mkey;
 *   mlx5dv_create_mkey          indirect mkeys (and mlx5dv_destroy_mkey);
 *   mlx5dv_query_device         no mlx5-specific capability;
 *   mlx5dv_get_clock_info       the core clock, for mlx5dv_ts_to_ns (completion timestamps to ns).
 * For anything that is not nicsim's (a real ConnectX beside it), each one calls the real library's
 * own entry point, found in the loaded libmlx5.so.1 under the same version; every other mlx5dv_*
 * entry point is the real library's, untouched, and says EOPNOTSUPP for a nicsim device, as mlx5's
 * library does for any device that is not an mlx5.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "nicsim-backend.h"

/* The real libmlx5's definition of name@version, if the program has loaded it (NULL with errno EOPNOTSUPP if not). */
static void *real(const char *name, const char *version) {
	void *lib = dlopen("libmlx5.so.1", RTLD_LAZY | RTLD_NOLOAD);
	void *f = lib ? dlvsym(lib, name, version) : NULL;
	if (lib) dlclose(lib);
	if (!f) errno = EOPNOTSUPP;
	return f;
}

/* The indirect mkeys made here: mlx5dv_destroy_mkey tells them from the real library's by this list. */
static struct nicsim_mkey *mkeys;
static pthread_mutex_t mkeys_lock = PTHREAD_MUTEX_INITIALIZER;

static struct nicsim_mkey *take_mkey(struct mlx5dv_mkey *dv) {
	struct nicsim_mkey **at, *k = NULL;
	pthread_mutex_lock(&mkeys_lock);
	for (at = &mkeys; *at; at = &(*at)->next)
		if (&(*at)->dv == dv) { k = *at; *at = k->next; break; }
	pthread_mutex_unlock(&mkeys_lock);
	return k;
}

__attribute__((visibility("default")))
struct ibv_qp *mlx5dv_create_qp(struct ibv_context *context, struct ibv_qp_init_attr_ex *qp_attr,
				struct mlx5dv_qp_init_attr *mlx5_qp_attr) {
	uint32_t dc_type = 0;
	uint64_t key = 0;
	if (!nicsim_owns(context)) {
		struct ibv_qp *(*f)(struct ibv_context *, struct ibv_qp_init_attr_ex *, struct mlx5dv_qp_init_attr *) =
			real("mlx5dv_create_qp", "MLX5_1.3");
		return f ? f(context, qp_attr, mlx5_qp_attr) : NULL;
	}
	if (mlx5_qp_attr) {
		uint64_t known = MLX5DV_QP_INIT_ATTR_MASK_DC | MLX5DV_QP_INIT_ATTR_MASK_QP_CREATE_FLAGS
				 | MLX5DV_QP_INIT_ATTR_MASK_SEND_OPS_FLAGS;
		if (mlx5_qp_attr->comp_mask & ~known) { errno = EOPNOTSUPP; return NULL; }
		/* creation flags that change nothing here: nicsim scatters to the CQE only when a QP asks (ibv verbs) */
		if ((mlx5_qp_attr->comp_mask & MLX5DV_QP_INIT_ATTR_MASK_QP_CREATE_FLAGS)
		    && (mlx5_qp_attr->create_flags & ~(uint32_t)MLX5DV_QP_CREATE_DISABLE_SCATTER_TO_CQE)) {
			errno = EOPNOTSUPP;
			return NULL;
		}
		if (mlx5_qp_attr->comp_mask & MLX5DV_QP_INIT_ATTR_MASK_DC) {
			dc_type = mlx5_qp_attr->dc_init_attr.dc_type;
			if (dc_type != MLX5DV_DCTYPE_DCT && dc_type != MLX5DV_DCTYPE_DCI) { errno = EINVAL; return NULL; }
			if (qp_attr->qp_type != IBV_QPT_DRIVER) { errno = EINVAL; return NULL; }
			if (dc_type == MLX5DV_DCTYPE_DCT) key = mlx5_qp_attr->dc_init_attr.dct_access_key;
		}
	}
	return nicsim_make_qp_ex(context, qp_attr, dc_type, key);
}

__attribute__((visibility("default")))
struct mlx5dv_qp_ex *mlx5dv_qp_ex_from_ibv_qp_ex(struct ibv_qp_ex *qp) {
	if (!nicsim_owns(qp->qp_base.context)) {
		struct mlx5dv_qp_ex *(*f)(struct ibv_qp_ex *) = real("mlx5dv_qp_ex_from_ibv_qp_ex", "MLX5_1.10");
		return f ? f(qp) : NULL;
	}
	return &to_nqp_ex(qp)->dv;
}

/* Indirect mkeys (UMR): their layouts are posted with mlx5dv_wr_mr_list / _interleaved. */
__attribute__((visibility("default")))
struct mlx5dv_mkey *mlx5dv_create_mkey(struct mlx5dv_mkey_init_attr *attr) {
	struct nicsim_mkey *k;
	if (!nicsim_owns(attr->pd->context)) {
		struct mlx5dv_mkey *(*f)(struct mlx5dv_mkey_init_attr *) = real("mlx5dv_create_mkey", "MLX5_1.10");
		return f ? f(attr) : NULL;
	}
	/* no signature or crypto mkeys */
	if (attr->create_flags != MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT) { errno = EOPNOTSUPP; return NULL; }
	k = to_nctx(attr->pd->context)->ops->create_mkey(attr->pd, attr->create_flags, attr->max_entries);
	if (!k) return NULL;
	pthread_mutex_lock(&mkeys_lock);
	k->next = mkeys;
	mkeys = k;
	pthread_mutex_unlock(&mkeys_lock);
	return &k->dv;
}

__attribute__((visibility("default")))
int mlx5dv_destroy_mkey(struct mlx5dv_mkey *dv) {
	struct nicsim_mkey *k = take_mkey(dv);
	int rc;
	if (!k) {
		int (*f)(struct mlx5dv_mkey *) = real("mlx5dv_destroy_mkey", "MLX5_1.10");
		return f ? f(dv) : EOPNOTSUPP;
	}
	rc = to_nctx(k->context)->ops->destroy_mkey(k);
	if (rc) { /* still there: it stays on the list */
		pthread_mutex_lock(&mkeys_lock);
		k->next = mkeys;
		mkeys = k;
		pthread_mutex_unlock(&mkeys_lock);
	}
	return rc;
}

__attribute__((visibility("default")))
int mlx5dv_query_device(struct ibv_context *ctx, struct mlx5dv_context *attrs_out) {
	if (!nicsim_owns(ctx)) {
		int (*f)(struct ibv_context *, struct mlx5dv_context *) = real("mlx5dv_query_device", "MLX5_1.0");
		return f ? f(ctx, attrs_out) : EOPNOTSUPP;
	}
	attrs_out->version = 0;
	attrs_out->flags = 0;
	attrs_out->comp_mask = 0; /* none of the optional capabilities asked for */
	return 0;
}

/* The clock behind completion timestamps: ns = cycles * mult >> shift, from 0 at the simulation's start. */
__attribute__((visibility("default")))
int mlx5dv_get_clock_info(struct ibv_context *ctx, struct mlx5dv_clock_info *clock_info) {
	uint64_t khz;
	if (!nicsim_owns(ctx)) {
		int (*f)(struct ibv_context *, struct mlx5dv_clock_info *) = real("mlx5dv_get_clock_info", "MLX5_1.4");
		return f ? f(ctx, clock_info) : EOPNOTSUPP;
	}
	khz = nicsim_clock_khz(ctx);
	if (!khz) return EIO;
	memset(clock_info, 0, sizeof(*clock_info));
	clock_info->shift = 20;
	clock_info->mult = (uint32_t)((1000000ull << 20) / khz);
	clock_info->mask = ~0ull;
	return 0;
}
