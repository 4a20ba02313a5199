/*
 * The java back end's table (nicsim-backend.h): every verb a request on the context's socket, which
 * serve's Java driver answers (NICSIM_DRIVER=java); its CQs nicsim-java-cq.c, QPs nicsim-java-qp.c,
 * posting nicsim-java-post.c, SRQs nicsim-java-srq.c, XRC domains serve's (nicsim-xrcd.c), its own verbs
 * nicsim-java-memory.c.
 */
#include "nicsim-backend.h"

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
	.mcast = nicsim_java_mcast,
	.create_srq = nicsim_java_create_srq,
	.destroy_srq = nicsim_java_destroy_srq,
	.modify_srq = nicsim_java_modify_srq,
	.query_srq = nicsim_java_query_srq,
	.post_srq_ops = nicsim_java_post_srq_ops,
	.open_xrcd = nicsim_serve_open_xrcd,
	.close_xrcd = nicsim_serve_close_xrcd,
	.create_mkey = nicsim_java_create_mkey,
	.destroy_mkey = nicsim_java_destroy_mkey,
	.event_qp = nicsim_named_qp,
	.event_srq = nicsim_named_srq,
	.verbs = &nicsim_java_verbs,
};
