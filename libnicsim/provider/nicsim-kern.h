/*
 * What the kern back end's files share (nicsim-kern.c and one file per object kind): the kernel's
 * user context of a context, the mapping of a kernel object's pages, and each kind's entries of
 * the back end's tables, which nicsim-kern.c assembles.
 */
#ifndef NICSIM_KERN_H
#define NICSIM_KERN_H

#include <sys/mman.h>
#include <rdma/nicsim-abi.h>

#include "nicsim-hw.h"

static inline struct nicsim_kern *kern_of(struct ibv_context *c) { return to_nctx(c)->hw->kern; }

/* Maps len bytes of the kernel's object at key: the mapping, or NULL with errno. */
static inline void *kern_map(struct ibv_context *c, uint64_t key, size_t len) {
	void *at = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, c->cmd_fd, (off_t)key);
	return at == MAP_FAILED ? NULL : at;
}

/* PDs and AHs (nicsim-kern-pd.c). */
struct ibv_pd *nicsim_kern_alloc_pd(struct ibv_context *c);
int nicsim_kern_dealloc_pd(struct ibv_pd *pd);
struct ibv_ah *nicsim_kern_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr);
int nicsim_kern_destroy_ah(struct ibv_ah *ah);

/* MRs and memory windows (nicsim-kern-mr.c). */
struct ibv_mr *nicsim_kern_reg_mr(struct ibv_pd *pd, void *addr, size_t len, uint64_t hca_va, int access);
int nicsim_kern_dereg_mr(struct verbs_mr *vmr);
struct ibv_mw *nicsim_kern_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type);
int nicsim_kern_dealloc_mw(struct ibv_mw *mw);

/* CQs (nicsim-kern-cq.c): as struct nicsim_backend_ops' entries. */
struct nicsim_ibv_cq *nicsim_kern_create_cq(struct ibv_context *c, int cqe, struct ibv_comp_channel *channel);
int nicsim_kern_destroy_cq(struct ibv_cq *cq);
int nicsim_kern_resize_cq(struct nicsim_ibv_cq *cq, int cqe);

/* QPs and multicast (nicsim-kern-qp.c): as struct nicsim_backend_ops' entries. */
int nicsim_kern_create_qp(struct ibv_context *c, struct ibv_pd *pd, struct ibv_xrcd *xrcd,
			  struct ibv_qp_init_attr *init, uint32_t dc_type, uint64_t dct_key, struct nicsim_ibv_qp *qp);
int nicsim_kern_destroy_qp(struct nicsim_ibv_qp *qp);
int nicsim_kern_modify_qp(struct nicsim_ibv_qp *qp, struct ibv_qp_attr *attr, int mask);
int nicsim_kern_query_qp(struct nicsim_ibv_qp *qp, struct ibv_qp_attr *attr, int mask,
			 struct ibv_qp_init_attr *init);
int nicsim_kern_mcast(struct nicsim_ibv_qp *qp, const union ibv_gid *gid, uint16_t lid, int attach);

/* Basic SRQs (nicsim-kern-srq.c): as struct nicsim_backend_ops' entries. */
int nicsim_kern_create_srq(struct ibv_pd *pd, struct ibv_srq_attr *attr, enum ibv_srq_type type,
			   struct ibv_xrcd *xrcd, struct ibv_cq *cq, const struct ibv_tm_cap *tm,
			   struct nicsim_ibv_srq *srq);
int nicsim_kern_destroy_srq(struct nicsim_ibv_srq *srq);
int nicsim_kern_modify_srq(struct nicsim_ibv_srq *srq, struct ibv_srq_attr *attr, int mask);
int nicsim_kern_query_srq(struct nicsim_ibv_srq *srq, struct ibv_srq_attr *attr);

#endif
