/*
 * The provider's back ends: where a verb goes once libibverbs has handed it to nicsim. One table
 * each, chosen once when the context opens (nicsim-provider.c) and never changed after:
 *   java  requests on the context's socket, which serve's Java driver answers (NICSIM_DRIVER=java);
 *   hw    libnicsim's C driver on the device: the provider makes the rings in its own memory,
 *         writes WQEs and rings doorbells itself, and the device's commands make the objects;
 *   kern  the kernel's nicsim_ib driver (a guest's /dev/infiniband/uverbsN): the objects are made
 *         by uverbs commands (ibv_cmd_*, udata in rdma/nicsim-abi.h), their rings mapped from the
 *         kernel, and WQEs, CQEs and doorbells are the hw back end's ring code (nicsim-kern.c).
 * An object kind converted to the table keeps its verbs in a file that dispatches (CQs:
 * nicsim-cq.c; QPs: nicsim-queues.c; posting: nicsim-post.c) and each back end's half beside that
 * back end's other code. PDs, MRs, AHs and device memory are each back end's verbs_context_ops
 * (set over the shared ones at open); SRQs, XRC domains and mkeys still test ctx->hw at each verb
 * (issue 55), and the kern back end answers those verbs with its own table entries.
 */
#ifndef NICSIM_BACKEND_H
#define NICSIM_BACKEND_H

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
	/* Multicast: UD QP qp joins (attach) or leaves group gid of MLID lid, checked already: 0 or an errno. */
	int (*mcast)(struct nicsim_ibv_qp *qp, const union ibv_gid *gid, uint16_t lid, int attach);
};

/* The tables (nicsim-backend.c). */
extern const struct nicsim_backend_ops nicsim_java_backend, nicsim_hw_backend, nicsim_kern_backend;

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

/* The java back end's posting (nicsim-post.c). */
int nicsim_java_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, const struct nicsim_wr *ext,
			  struct ibv_send_wr **bad);
int nicsim_java_post_recv(struct nicsim_ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad);
int nicsim_java_post_srq_recv(struct nicsim_ibv_srq *srq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad);

/* The hw back end's multicast (nicsim-hw-qp.c): ATTACH_MCAST and DETACH_MCAST. */
int nicsim_hw_mcast(struct nicsim_ibv_qp *qp, const union ibv_gid *gid, uint16_t lid, int attach);

/* The hw back end's CQs (nicsim-hw.c). */
struct nicsim_ibv_cq *nicsim_hw_create_cq(struct ibv_context *c, int cqe, struct ibv_comp_channel *channel);
int nicsim_hw_destroy_cq(struct ibv_cq *cq);
int nicsim_hw_resize_cq(struct nicsim_ibv_cq *cq, int cqe);
int nicsim_hw_poll(struct ibv_cq *cq, int max, struct ibv_wc *wc, struct nicsim_wc_extra *x);
int nicsim_hw_req_notify_cq(struct ibv_cq *cq, int solicited_only);
void nicsim_hw_cq_event(struct nicsim_ibv_cq *cq);

/* The kern back end's CQs and QPs (nicsim-kern.c); its polling and posting are the hw back end's. */
struct nicsim_ibv_cq *nicsim_kern_create_cq(struct ibv_context *c, int cqe, struct ibv_comp_channel *channel);
int nicsim_kern_destroy_cq(struct ibv_cq *cq);
int nicsim_kern_resize_cq(struct nicsim_ibv_cq *cq, int cqe);
int nicsim_kern_create_qp(struct ibv_context *c, struct ibv_pd *pd, struct ibv_xrcd *xrcd,
			  struct ibv_qp_init_attr *init, uint32_t dc_type, uint64_t dct_key, struct nicsim_ibv_qp *qp);
int nicsim_kern_destroy_qp(struct nicsim_ibv_qp *qp);
int nicsim_kern_modify_qp(struct nicsim_ibv_qp *qp, struct ibv_qp_attr *attr, int mask);
int nicsim_kern_query_qp(struct nicsim_ibv_qp *qp, struct ibv_qp_attr *attr, int mask, struct ibv_qp_init_attr *init);

#endif
