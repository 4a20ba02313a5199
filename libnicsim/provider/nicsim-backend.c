/* Each back end's table (nicsim-backend.h): what it does for each object kind converted so far. */
#include "nicsim-hw.h"

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
	.mcast = nicsim_hw_mcast,
};

/* The kernel driver's: objects by uverbs commands, the data path the hw back end's rings. */
const struct nicsim_backend_ops nicsim_kern_backend = {
	.create_cq = nicsim_kern_create_cq,
	.destroy_cq = nicsim_kern_destroy_cq,
	.resize_cq = nicsim_kern_resize_cq,
	.poll_cq = nicsim_hw_poll,
	.req_notify_cq = nicsim_hw_req_notify_cq, /* the arm word in the record and on the UAR page */
	.cq_event_taken = nicsim_hw_cq_event,
	.create_qp = nicsim_kern_create_qp,
	.destroy_qp = nicsim_kern_destroy_qp,
	.modify_qp = nicsim_kern_modify_qp,
	.query_qp = nicsim_kern_query_qp,
	.post_send = nicsim_hw_post_send,
	.post_recv = nicsim_hw_post_recv,
	.post_srq_recv = nicsim_hw_post_srq_recv,
};
