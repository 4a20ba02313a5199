/*
 * The java back end's table (nicsim-backend.h): every verb a request on the context's socket, which
 * serve's Java driver answers (NICSIM_DRIVER=java); its CQs nicsim-java-cq.c, QPs nicsim-java-qp.c,
 * posting nicsim-java-post.c, SRQs nicsim-java-srq.c, XRC domains serve's (nicsim-xrcd.c), and its own
 * verbs: PDs and AHs nicsim-java-pd.c, MRs, windows and mkeys nicsim-java-mr.c, device memory nicsim-java-dm.c.
 */
#include "nicsim-backend.h"

/* The verbs the java back end answers alone, each a request of its own. */
static const struct verbs_context_ops java_verbs = {
	.advise_mr = nicsim_java_advise_mr,
	.alloc_dm = nicsim_java_alloc_dm,
	.alloc_mw = nicsim_java_alloc_mw,
	.alloc_pd = nicsim_java_alloc_pd,
	.create_ah = nicsim_java_create_ah,
	.dealloc_mw = nicsim_java_dealloc_mw,
	.dealloc_pd = nicsim_java_dealloc_pd,
	.dereg_mr = nicsim_java_dereg_mr,
	.destroy_ah = nicsim_java_destroy_ah,
	.free_dm = nicsim_java_free_dm,
	.import_dm = nicsim_java_import_dm,
	.import_mr = nicsim_java_import_mr,
	.import_pd = nicsim_java_import_pd,
	.reg_dm_mr = nicsim_java_reg_dm_mr,
	.reg_mr = nicsim_java_reg_mr,
	.rereg_mr = nicsim_java_rereg_mr,
	.unimport_dm = nicsim_java_unimport_dm,
	.unimport_mr = nicsim_unimport_mr,
	.unimport_pd = nicsim_unimport_pd,
};

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
	.verbs = &java_verbs,
};
