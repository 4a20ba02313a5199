/*
 * The provider's posts: each verb handed to the context's back end (nicsim-backend.h), a window's
 * bind among them (a BIND_MW work request, which every back end posts as it posts the others).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>

#include "nicsim-backend.h"

/*
 * Posts a list of work requests through the context's back end; on a refusal sets *bad to the one
 * refused (those before it were posted) and returns the errno.
 */
int nicsim_post_wrs(struct ibv_qp *qp, struct ibv_send_wr *wr, const struct nicsim_wr *ext, struct ibv_send_wr **bad) {
	return to_nctx(qp->context)->ops->post_send(qp, wr, ext, bad);
}

static int post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad) {
	return nicsim_post_wrs(qp, wr, NULL, bad);
}

static int post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad) {
	return to_nctx(qp->context)->ops->post_recv(to_nqp(qp), wr, bad);
}

static int post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad) {
	return to_nctx(srq->context)->ops->post_srq_recv(to_nsrq(srq), wr, bad);
}

/*
 * ibv_bind_mw (type 1): a BIND_MW work request with the window's next rkey, which the window takes
 * at once (ibv_bind_mw(3): after an error completion the program undoes it).
 */
static int bind_mw(struct ibv_qp *qp, struct ibv_mw *mw, struct ibv_mw_bind *bind) {
	struct ibv_send_wr w, *bad;
	int rc;
	if (bind->bind_info.mw_access_flags & IBV_ACCESS_ZERO_BASED) return EINVAL; /* as mlx5: not for type 1 */
	memset(&w, 0, sizeof(w));
	w.wr_id = bind->wr_id;
	w.opcode = IBV_WR_BIND_MW;
	w.send_flags = bind->send_flags;
	w.bind_mw.mw = mw;
	w.bind_mw.rkey = ibv_inc_rkey(mw->rkey);
	w.bind_mw.bind_info = bind->bind_info;
	rc = nicsim_post_wrs(qp, &w, NULL, &bad);
	if (!rc) mw->rkey = w.bind_mw.rkey;
	return rc;
}

const struct verbs_context_ops nicsim_post_ops = {
	.bind_mw = bind_mw,
	.post_recv = post_recv,
	.post_send = post_send,
	.post_srq_recv = post_srq_recv,
};
