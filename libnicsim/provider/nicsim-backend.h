/*
 * The provider's back ends: where a verb goes once libibverbs has handed it to nicsim. One table
 * each, chosen once when the context opens (nicsim-provider.c, nicsim-kern.c) and never changed after:
 *   java  requests on the context's socket, which serve's Java driver answers (NICSIM_DRIVER=java);
 *   hw    libnicsim's C driver on the device: the provider makes the rings in its own memory,
 *         writes WQEs and rings doorbells itself, and the device's commands make the objects;
 *   kern  the kernel's nicsim_ib driver (a guest's /dev/infiniband/uverbsN): the objects are made
 *         by uverbs commands (ibv_cmd_*, udata in rdma/nicsim-abi.h), their rings mapped from the
 *         kernel, and WQEs, CQEs and doorbells are the hw back end's ring code (nicsim-kern.c,
 *         its objects nicsim-kern-*.c).
 * The verbs with work of their own before or after the back end's (checks as the kernel makes
 * them, the libibverbs object filled, events awaited) are the front end's files, which reach the
 * back end only through this table: CQs nicsim-cq.c (extended ones nicsim-cqex.c), QPs nicsim-qp.c,
 * SRQs and XRC domains nicsim-srq.c, posting and window binds nicsim-post.c, mkeys nicsim-mlx5dv.c,
 * async events nicsim-events.c. The verbs a back end answers alone (PDs, MRs, windows, AHs,
 * device memory, imports) are its own verbs_context_ops, `verbs`, set over the front end's at
 * open. A kind a back end does not offer is an entry that answers EOPNOTSUPP (nicsim_no_*), never
 * a test of the back end at the verb.
 * Files call downward only: the open code (nicsim-provider.c, nicsim-kern.c) and the tables reach
 * the back ends' files, those reach the shared ones (nicsim-events.c's registry, nicsim-msg.c,
 * nicsim-domain.c, nicsim-xrcd.c, nicsim-hw.c's user context), and the front end reaches a back end
 * through the table alone. scripts/c-circles.py prints any circle of calls between the files.
 */
#ifndef NICSIM_BACKEND_H
#define NICSIM_BACKEND_H

#include <sys/stat.h>

#include "nicsim-provider.h"

struct nicsim_backend_ops {
	/* Completion queues. create_cq: NULL with errno; the others return 0 or an errno, but
	 * poll_cq, which returns the completions taken or a negative errno (x, if not NULL, gets
	 * what struct ibv_wc lacks of each). cq_event_taken: a completion event of cq was given to
	 * the program (ibv_get_cq_event), under ctx->named.lock. */
	struct nicsim_ibv_cq *(*create_cq)(struct ibv_context *c, int cqe, struct ibv_comp_channel *channel);
	int (*destroy_cq)(struct ibv_cq *cq);
	int (*resize_cq)(struct nicsim_ibv_cq *cq, int cqe);
	int (*poll_cq)(struct ibv_cq *cq, int max, struct ibv_wc *wc, struct nicsim_wc_extra *x);
	int (*req_notify_cq)(struct ibv_cq *cq, int solicited_only);
	void (*cq_event_taken)(struct nicsim_ibv_cq *cq);
	/* Queue pairs: 0 or an errno. create_qp fills qp (zeroed) for init, whose cap becomes what it
	 * got (xrcd, dc_type and dct_key as nicsim_make_qp_ex's). */
	int (*create_qp)(struct ibv_context *c, struct ibv_pd *pd, struct ibv_xrcd *xrcd, struct ibv_qp_init_attr *init,
			 uint32_t dc_type, uint64_t dct_key, struct nicsim_ibv_qp *qp);
	int (*destroy_qp)(struct nicsim_ibv_qp *qp);
	int (*modify_qp)(struct nicsim_ibv_qp *qp, struct ibv_qp_attr *attr, int mask);
	int (*query_qp)(struct nicsim_ibv_qp *qp, struct ibv_qp_attr *attr, int mask, struct ibv_qp_init_attr *init);
	/* Posting: 0, or the errno of the work request *bad refused (those before it were posted).
	 * post_send's ext: what the ibv_wr_* API added to each (nicsim_post_wrs), or NULL. */
	int (*post_send)(struct ibv_qp *qp, struct ibv_send_wr *wr, const struct nicsim_wr *ext,
			 struct ibv_send_wr **bad);
	int (*post_recv)(struct nicsim_ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad);
	int (*post_srq_recv)(struct nicsim_ibv_srq *srq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad);
	/* Shared receive queues: create_srq fills srq (its context, srq_context and pd already set)
	 * with its handles and max_sge and attr with what it got; a basic SRQ, an XRC one of xrcd
	 * completing to cq, or a tag-matching one (tm) completing to cq. The others return 0 or an
	 * errno; post_srq_ops (ibv_post_srq_ops) sets *bad to the operation refused. */
	int (*create_srq)(struct ibv_pd *pd, struct ibv_srq_attr *attr, enum ibv_srq_type type, struct ibv_xrcd *xrcd,
			  struct ibv_cq *cq, const struct ibv_tm_cap *tm, struct nicsim_ibv_srq *srq);
	int (*destroy_srq)(struct nicsim_ibv_srq *srq);
	int (*modify_srq)(struct nicsim_ibv_srq *srq, struct ibv_srq_attr *attr, int mask);
	int (*query_srq)(struct nicsim_ibv_srq *srq, struct ibv_srq_attr *attr);
	int (*post_srq_ops)(struct nicsim_ibv_srq *srq, struct ibv_ops_wr *op, struct ibv_ops_wr **bad);
	/* XRC domains: the node's domain of a file (file: its fstat) or, file NULL, one of the
	 * context's own; NULL with errno. close_xrcd: 0 or an errno (then x stays). */
	struct ibv_xrcd *(*open_xrcd)(struct ibv_context *c, const struct stat *file, int oflags);
	int (*close_xrcd)(struct nicsim_ibv_xrcd *x);
	/* Indirect mkeys (mlx5dv_create_mkey): NULL with errno; destroy_mkey 0 or an errno (then k stays). */
	struct nicsim_mkey *(*create_mkey)(struct ibv_pd *pd, uint32_t create_flags, uint16_t max_entries);
	int (*destroy_mkey)(struct nicsim_mkey *k);
	/* The QP or SRQ an async event names by its element, or NULL; under ctx->named.lock. */
	struct ibv_qp *(*event_qp)(struct nicsim_context *ctx, uint32_t element);
	struct ibv_srq *(*event_srq)(struct nicsim_context *ctx, uint32_t element);
	/* The verbs the back end answers alone, set over the front end's at open. */
	const struct verbs_context_ops *verbs;
	/* Multicast: UD QP qp joins (attach) or leaves group gid of MLID lid, checked already: 0 or an errno. */
	int (*mcast)(struct nicsim_ibv_qp *qp, const union ibv_gid *gid, uint16_t lid, int attach);
};

/* The tables: nicsim-java.c, nicsim-hw-verbs.c, nicsim-kern.c. */
extern const struct nicsim_backend_ops nicsim_java_backend, nicsim_hw_backend, nicsim_kern_backend;

/* Gives ctx its back end, once, as it opens: the table, and the front end's verbs with the back end's over them. */
void nicsim_set_backend(struct nicsim_context *ctx, const struct nicsim_backend_ops *ops);

/* The java back end's CQs (nicsim-java-cq.c). */
struct nicsim_ibv_cq *nicsim_java_create_cq(struct ibv_context *c, int cqe, struct ibv_comp_channel *channel);
int nicsim_java_destroy_cq(struct ibv_cq *cq);
int nicsim_java_resize_cq(struct nicsim_ibv_cq *cq, int cqe);
int nicsim_java_poll_cq(struct ibv_cq *cq, int max, struct ibv_wc *wc, struct nicsim_wc_extra *x);
int nicsim_java_req_notify_cq(struct ibv_cq *cq, int solicited_only);
void nicsim_java_cq_event_taken(struct nicsim_ibv_cq *cq);

/* The java back end's QPs (nicsim-java-qp.c). */
int nicsim_java_create_qp(struct ibv_context *c, struct ibv_pd *pd, struct ibv_xrcd *xrcd,
			  struct ibv_qp_init_attr *init, uint32_t dc_type, uint64_t dct_key, struct nicsim_ibv_qp *qp);
int nicsim_java_destroy_qp(struct nicsim_ibv_qp *qp);
int nicsim_java_modify_qp(struct nicsim_ibv_qp *qp, struct ibv_qp_attr *attr, int mask);
int nicsim_java_query_qp(struct nicsim_ibv_qp *qp, struct ibv_qp_attr *attr, int mask, struct ibv_qp_init_attr *init);
int nicsim_java_mcast(struct nicsim_ibv_qp *qp, const union ibv_gid *gid, uint16_t lid, int attach);

/* The java back end's posting (nicsim-java-post.c). */
int nicsim_java_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, const struct nicsim_wr *ext,
			  struct ibv_send_wr **bad);
int nicsim_java_post_recv(struct nicsim_ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad);
int nicsim_java_post_srq_recv(struct nicsim_ibv_srq *srq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad);

/* The java back end's SRQs and tag-matching operations (nicsim-java-srq.c). */
int nicsim_java_create_srq(struct ibv_pd *pd, struct ibv_srq_attr *attr, enum ibv_srq_type type, struct ibv_xrcd *xrcd,
			   struct ibv_cq *cq, const struct ibv_tm_cap *tm, struct nicsim_ibv_srq *srq);
int nicsim_java_destroy_srq(struct nicsim_ibv_srq *srq);
int nicsim_java_modify_srq(struct nicsim_ibv_srq *srq, struct ibv_srq_attr *attr, int mask);
int nicsim_java_query_srq(struct nicsim_ibv_srq *srq, struct ibv_srq_attr *attr);
int nicsim_java_post_srq_ops(struct nicsim_ibv_srq *srq, struct ibv_ops_wr *op, struct ibv_ops_wr **bad);

/* The XRC domains serve keeps for the session (nicsim-xrcd.c): the java back end's, and the hw one's of a file. */
struct ibv_xrcd *nicsim_serve_open_xrcd(struct ibv_context *c, const struct stat *file, int oflags);
int nicsim_serve_close_xrcd(struct nicsim_ibv_xrcd *x);

/*
 * The java back end's PDs and AHs (nicsim-java-pd.c), with the question an import asks first (named:
 * 0 with the reply in *m, or the errno).
 */
struct ibv_pd *nicsim_java_alloc_pd(struct ibv_context *c);
int nicsim_java_dealloc_pd(struct ibv_pd *pd);
struct ibv_ah *nicsim_java_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr);
int nicsim_java_destroy_ah(struct ibv_ah *ah);
struct ibv_pd *nicsim_java_import_pd(struct ibv_context *c, uint32_t handle);
int nicsim_java_named(struct ibv_context *c, uint32_t op, uint32_t handle, struct msg *m);

/*
 * The java back end's MRs, windows and mkeys (nicsim-java-mr.c), with the reply every registration
 * takes (registered: 0, or the errno with m done).
 */
int nicsim_java_registered(struct ibv_pd *pd, struct msg *m, struct nicsim_ibv_mr *mr);
struct ibv_mr *nicsim_java_reg_mr(struct ibv_pd *pd, void *addr, size_t length, uint64_t iova, int access);
int nicsim_java_rereg_mr(struct verbs_mr *vmr, int flags, struct ibv_pd *pd, void *addr, size_t length, int access);
int nicsim_java_advise_mr(struct ibv_pd *pd, enum ibv_advise_mr_advice advice, uint32_t flags, struct ibv_sge *sg_list,
			  uint32_t num_sge);
int nicsim_java_dereg_mr(struct verbs_mr *vmr);
struct ibv_mw *nicsim_java_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type);
int nicsim_java_dealloc_mw(struct ibv_mw *mw);
struct ibv_mr *nicsim_java_import_mr(struct ibv_pd *pd, uint32_t handle);
struct nicsim_mkey *nicsim_java_create_mkey(struct ibv_pd *pd, uint32_t create_flags, uint16_t max_entries);
int nicsim_java_destroy_mkey(struct nicsim_mkey *k);

/* The java back end's device memory (nicsim-java-dm.c). */
struct ibv_dm *nicsim_java_alloc_dm(struct ibv_context *c, struct ibv_alloc_dm_attr *attr);
int nicsim_java_free_dm(struct ibv_dm *dm);
struct ibv_mr *nicsim_java_reg_dm_mr(struct ibv_pd *pd, struct ibv_dm *dm, uint64_t offset, size_t length,
				     unsigned int access);
struct ibv_dm *nicsim_java_import_dm(struct ibv_context *c, uint32_t handle);
void nicsim_java_unimport_dm(struct ibv_dm *dm);

/* The objects an event names by its handle in the context's registry (nicsim-events.c): java's. */
struct ibv_qp *nicsim_named_qp(struct nicsim_context *ctx, uint32_t handle);
struct ibv_srq *nicsim_named_srq(struct nicsim_context *ctx, uint32_t handle);

/* What a back end answers for a kind it does not offer (nicsim-backend.c): EOPNOTSUPP. */
struct ibv_xrcd *nicsim_no_open_xrcd(struct ibv_context *c, const struct stat *file, int oflags);
int nicsim_no_close_xrcd(struct nicsim_ibv_xrcd *x);
struct nicsim_mkey *nicsim_no_create_mkey(struct ibv_pd *pd, uint32_t create_flags, uint16_t max_entries);
int nicsim_no_destroy_mkey(struct nicsim_mkey *k);
int nicsim_no_resize_cq(struct nicsim_ibv_cq *cq, int cqe);

/* The hw back end's multicast (nicsim-hw-qp.c): ATTACH_MCAST and DETACH_MCAST. */
int nicsim_hw_mcast(struct nicsim_ibv_qp *qp, const union ibv_gid *gid, uint16_t lid, int attach);

/* The hw back end's CQs (nicsim-hw-cq.c): nicsim_hw_poll lets simulated time move when the ring is
 * empty; nicsim_ring_poll only takes what the ring holds (the kern back end's: time is the guest's). */
struct nicsim_ibv_cq *nicsim_hw_create_cq(struct ibv_context *c, int cqe, struct ibv_comp_channel *channel);
int nicsim_hw_destroy_cq(struct ibv_cq *cq);
int nicsim_hw_resize_cq(struct nicsim_ibv_cq *cq, int cqe);
int nicsim_hw_poll(struct ibv_cq *cq, int max, struct ibv_wc *wc, struct nicsim_wc_extra *x);
int nicsim_ring_poll(struct ibv_cq *cq, int max, struct ibv_wc *wc, struct nicsim_wc_extra *x);
int nicsim_hw_req_notify_cq(struct ibv_cq *cq, int solicited_only);
void nicsim_hw_cq_event(struct nicsim_ibv_cq *cq);
/* The QP or SRQ of the number an event of the adapter names, or NULL (nicsim-hw-verbs.c; the kern back end's too). */
struct ibv_qp *nicsim_hw_event_qp(struct nicsim_context *ctx, uint32_t qpn);
struct ibv_srq *nicsim_hw_event_srq(struct nicsim_context *ctx, uint32_t srqn);

#endif
