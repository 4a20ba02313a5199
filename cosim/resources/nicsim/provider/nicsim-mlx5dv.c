/*
 * nicsim's stand-in for mlx5's direct-verbs library (libmlx5.so.1), which ./nicsim attach puts
 * first on the program's library path. mlx5's own library serves only mlx5 devices, so a program
 * that creates DC QPs with mlx5dv_create_qp would find none on a simulated adapter. Here:
 *   mlx5dv_create_qp            DC targets and initiators (and plain QPs) through nicsim's provider;
 *   mlx5dv_qp_ex_from_ibv_qp_ex the extension whose wr_set_dc_addr names a DC request's target, and
 *                               whose wr_mr_list and wr_mr_interleaved lay out an indirect mkey;
 *   mlx5dv_create_mkey          indirect mkeys (and mlx5dv_destroy_mkey);
 *   mlx5dv_query_device         no mlx5-specific capability;
 * and every other entry point Debian's programs are linked against (they bind at load time),
 * answering EOPNOTSUPP as mlx5's library does for a device that is not an mlx5. The symbol
 * versions are mlx5's, so the programs load unchanged.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stddef.h>
#include <infiniband/mlx5dv.h>

/* nicsim's provider, preloaded by attach, does the work; found at run time, as it is loaded beside us. */
static void *provider(const char *name) {
	void *f = dlsym(RTLD_DEFAULT, name);
	if (!f) errno = EOPNOTSUPP;
	return f;
}

struct ibv_qp *mlx5dv_create_qp(struct ibv_context *context, struct ibv_qp_init_attr_ex *qp_attr, struct mlx5dv_qp_init_attr *mlx5_qp_attr) {
	struct ibv_qp *(*create)(struct ibv_context *, struct ibv_qp_init_attr_ex *, uint32_t, uint64_t) = provider("nicsim_dv_create_qp");
	uint32_t dc_type = 0;
	uint64_t key = 0;
	if (!create) return NULL;
	if (mlx5_qp_attr) {
		uint64_t known = MLX5DV_QP_INIT_ATTR_MASK_DC | MLX5DV_QP_INIT_ATTR_MASK_QP_CREATE_FLAGS | MLX5DV_QP_INIT_ATTR_MASK_SEND_OPS_FLAGS;
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
	return create(context, qp_attr, dc_type, key);
}

struct mlx5dv_qp_ex *mlx5dv_qp_ex_from_ibv_qp_ex(struct ibv_qp_ex *qp) {
	struct mlx5dv_qp_ex *(*of)(struct ibv_qp_ex *) = provider("nicsim_dv_qp_ex");
	return of ? of(qp) : NULL;
}

/* Indirect mkeys (UMR): created and destroyed through nicsim's provider; their layouts are posted with mlx5dv_wr_mr_list/_interleaved. */
struct mlx5dv_mkey *mlx5dv_create_mkey(struct mlx5dv_mkey_init_attr *attr) {
	struct mlx5dv_mkey *(*create)(struct ibv_pd *, uint32_t, uint16_t) = provider("nicsim_dv_create_mkey");
	if (!create) return NULL;
	if (attr->create_flags != MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT) { errno = EOPNOTSUPP; return NULL; } /* no signature or crypto mkeys */
	return create(attr->pd, attr->create_flags, attr->max_entries);
}

int mlx5dv_destroy_mkey(struct mlx5dv_mkey *mkey) {
	int (*destroy)(struct mlx5dv_mkey *) = provider("nicsim_dv_destroy_mkey");
	return destroy ? destroy(mkey) : EOPNOTSUPP;
}

int mlx5dv_query_device(struct ibv_context *ctx_in, struct mlx5dv_context *attrs_out) {
	(void)ctx_in;
	attrs_out->version = 0;
	attrs_out->flags = 0;
	attrs_out->comp_mask = 0; /* none of the optional capabilities asked for */
	return 0;
}

/* ---- mlx5 features nicsim does not model: what mlx5's library says of a device that is not an mlx5 ---- */

struct ibv_context *mlx5dv_open_device(struct ibv_device *device, struct mlx5dv_context_attr *attr) {
	(void)device; (void)attr; errno = EOPNOTSUPP; return NULL;
}
int mlx5dv_devx_general_cmd(struct ibv_context *context, const void *in, size_t inlen, void *out, size_t outlen) {
	(void)context; (void)in; (void)inlen; (void)out; (void)outlen; return EOPNOTSUPP;
}
int mlx5dv_crypto_login(struct ibv_context *context, struct mlx5dv_crypto_login_attr *login_attr) {
	(void)context; (void)login_attr; return EOPNOTSUPP;
}
struct mlx5dv_dek *mlx5dv_dek_create(struct ibv_context *context, struct mlx5dv_dek_init_attr *init_attr) {
	(void)context; (void)init_attr; errno = EOPNOTSUPP; return NULL;
}
int mlx5dv_dek_destroy(struct mlx5dv_dek *dek) { (void)dek; return EOPNOTSUPP; }
