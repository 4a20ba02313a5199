/* Each back end's table (nicsim-backend.h), and the entries of the kinds a back end does not offer. */
#include <errno.h>

#include "nicsim-hw.h"

int nicsim_no_create_srq(struct ibv_pd *pd, struct ibv_srq_attr *attr, enum ibv_srq_type type, struct ibv_xrcd *xrcd,
			 struct ibv_cq *cq, const struct ibv_tm_cap *tm, struct nicsim_ibv_srq *srq) {
	(void)pd; (void)attr; (void)type; (void)xrcd; (void)cq; (void)tm; (void)srq;
	return EOPNOTSUPP;
}

struct ibv_xrcd *nicsim_no_open_xrcd(struct ibv_context *c, const struct stat *file, int oflags) {
	(void)c; (void)file; (void)oflags;
	errno = EOPNOTSUPP;
	return NULL;
}

int nicsim_no_close_xrcd(struct nicsim_ibv_xrcd *x) {
	(void)x;
	return EOPNOTSUPP;
}

struct nicsim_mkey *nicsim_no_create_mkey(struct ibv_pd *pd, uint32_t create_flags, uint16_t max_entries) {
	(void)pd; (void)create_flags; (void)max_entries;
	errno = EOPNOTSUPP;
	return NULL;
}

int nicsim_no_destroy_mkey(struct nicsim_mkey *k) {
	(void)k;
	return EOPNOTSUPP;
}

int nicsim_no_resize_cq(struct nicsim_ibv_cq *cq, int cqe) {
	(void)cq; (void)cqe;
	return EOPNOTSUPP;
}

const struct nicsim_backend_ops nicsim_java_backend = {
	.create_cq = nicsim_java_create_cq,
	.destroy_cq = nicsim_java_destroy_cq,
	.resize_cq = nicsim_java_resize_cq,
	.poll_cq = nicsim_java_poll_cq,
	.req_notify_cq = nicsim_java_req_notify_cq,
	.cq_event_taken = nicsim_java_cq_event_taken,
	.create_qp = nicsim_java_create_qp,
	.destroy_qp = nicsim_java_destroy_qp,
	.modify_qp = nicsim_java_modify_qp,
	.query_qp = nicsim_java_query_qp,
	.post_send = nicsim_java_post_send,
	.post_recv = nicsim_java_post_recv,
	.post_srq_recv = nicsim_java_post_srq_recv,
	.create_srq = nicsim_java_create_srq,
	.destroy_srq = nicsim_java_destroy_srq,
	.modify_srq = nicsim_java_modify_srq,
	.query_srq = nicsim_java_query_srq,
	.post_srq_ops = nicsim_java_post_srq_ops,
	.open_xrcd = nicsim_java_open_xrcd,
	.close_xrcd = nicsim_java_close_xrcd,
	.create_mkey = nicsim_java_create_mkey,
	.destroy_mkey = nicsim_java_destroy_mkey,
	.event_qp = nicsim_named_qp,
	.event_srq = nicsim_named_srq,
	.verbs = &nicsim_java_verbs,
};

const struct nicsim_backend_ops nicsim_hw_backend = {
	.create_cq = nicsim_hw_create_cq,
	.destroy_cq = nicsim_hw_destroy_cq,
	.resize_cq = nicsim_hw_resize_cq,
	.poll_cq = nicsim_hw_poll,
	.req_notify_cq = nicsim_hw_req_notify_cq,
	.cq_event_taken = nicsim_hw_cq_event,
	.create_qp = nicsim_hw_create_qp,
	.destroy_qp = nicsim_hw_destroy_qp,
	.modify_qp = nicsim_hw_modify_qp,
	.query_qp = nicsim_hw_query_qp,
	.post_send = nicsim_hw_post_send,
	.post_recv = nicsim_hw_post_recv,
	.post_srq_recv = nicsim_hw_post_srq_recv,
	.create_srq = nicsim_hw_create_srq,
	.destroy_srq = nicsim_hw_destroy_srq,
	.modify_srq = nicsim_hw_modify_srq,
	.query_srq = nicsim_hw_query_srq,
	.post_srq_ops = nicsim_hw_post_srq_ops,
	.open_xrcd = nicsim_hw_open_xrcd,
	.close_xrcd = nicsim_hw_close_xrcd,
	.create_mkey = nicsim_hw_create_mkey,
	.destroy_mkey = nicsim_hw_destroy_mkey,
	.event_qp = nicsim_hw_event_qp,
	.event_srq = nicsim_hw_event_srq,
	.verbs = &nicsim_hw_verbs,
};

/*
 * The kernel driver's: objects by uverbs commands, the data path the hw back end's rings. Not
 * offered through it yet: CQ resize, XRC and tag-matching SRQs, XRC domains, indirect mkeys.
 */
const struct nicsim_backend_ops nicsim_kern_backend = {
	.create_cq = nicsim_kern_create_cq,
	.destroy_cq = nicsim_kern_destroy_cq,
	.resize_cq = nicsim_no_resize_cq,
	.poll_cq = nicsim_ring_poll,
	.req_notify_cq = nicsim_hw_req_notify_cq, /* the arm word in the record and on the UAR page */
	.cq_event_taken = nicsim_hw_cq_event,
	.create_qp = nicsim_kern_create_qp,
	.destroy_qp = nicsim_kern_destroy_qp,
	.modify_qp = nicsim_kern_modify_qp,
	.query_qp = nicsim_kern_query_qp,
	.post_send = nicsim_hw_post_send,
	.post_recv = nicsim_hw_post_recv,
	.post_srq_recv = nicsim_hw_post_srq_recv,
	.create_srq = nicsim_kern_create_srq,
	.destroy_srq = nicsim_kern_destroy_srq,
	.modify_srq = nicsim_kern_modify_srq,
	.query_srq = nicsim_kern_query_srq,
	.post_srq_ops = nicsim_hw_post_srq_ops, /* EINVAL: none of its SRQs matches tags */
	.open_xrcd = nicsim_no_open_xrcd,
	.close_xrcd = nicsim_no_close_xrcd,
	.create_mkey = nicsim_no_create_mkey,
	.destroy_mkey = nicsim_no_destroy_mkey,
	.event_qp = nicsim_hw_event_qp,
	.event_srq = nicsim_hw_event_srq,
	.verbs = &nicsim_kern_verbs,
};

void nicsim_set_backend(struct nicsim_context *ctx, const struct nicsim_backend_ops *ops) {
	ctx->ops = ops;
	verbs_set_ops(&ctx->vctx, &nicsim_cq_ops);
	verbs_set_ops(&ctx->vctx, &nicsim_qp_ops);
	verbs_set_ops(&ctx->vctx, &nicsim_srq_ops);
	verbs_set_ops(&ctx->vctx, &nicsim_post_ops);
	verbs_set_ops(&ctx->vctx, ops->verbs);
}
