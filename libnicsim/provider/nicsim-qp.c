/*
 * Queue pairs: libibverbs' QP verbs (and mlx5dv_create_qp's), each checked as the kernel checks
 * it and filled as ibv_cmd_create_qp fills it, then handed to the context's back end
 * (nicsim-backend.h), which makes, moves, queries and destroys the QP.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "nicsim-backend.h"

/* What ibv_cmd_create_qp fills in for a kernel provider. */
static void fill_qp(struct nicsim_ibv_qp *qp, struct ibv_context *c, struct ibv_pd *pd, struct ibv_xrcd *xrcd,
		    const struct ibv_qp_init_attr *init) {
	struct ibv_qp *q = &qp->vqp.qp;
	q->context = c;
	q->qp_context = init->qp_context;
	q->pd = pd;
	q->send_cq = init->send_cq;
	q->recv_cq = init->recv_cq;
	q->srq = init->srq;
	q->handle = qp->handle;
	q->qp_type = init->qp_type;
	q->state = IBV_QPS_RESET;
	q->events_completed = 0;
	pthread_mutex_init(&q->mutex, NULL);
	pthread_cond_init(&q->cond, NULL);
	qp->vqp.comp_mask = 0;
	qp->vqp.xrcd = (struct verbs_xrcd *)xrcd;
}

/*
 * A QP of pd, or with none, of XRC domain xrcd (an XRC target); init's cap becomes what it got.
 * dc_type (mlx5dv_dc_type, 0: none) makes a DRIVER QP a DC target (with dct_key) or initiator;
 * wr_ops gives it the ibv_wr_* API with those operations (send_ops_flags; 0: no API).
 */
static struct ibv_qp *make_qp(struct ibv_context *c, struct ibv_pd *pd, struct ibv_xrcd *xrcd,
			      struct ibv_qp_init_attr *init, uint32_t dc_type, uint64_t dct_key, uint64_t wr_ops) {
	struct nicsim_ibv_qp *qp = calloc(1, sizeof(*qp));
	/* an XRC target belongs to its domain: a PD given with it (librdmacm's rdma_create_qp_ex gives its
	 * identifier's) is only kept in ibv_qp, as libibverbs keeps it, never handed to the device */
	struct ibv_pd *owner = init->qp_type == IBV_QPT_XRC_RECV ? NULL : pd;
	struct nicsim_ibv_pd *domain = nicsim_parent_domain(owner);
	int rc;
	if (!qp) { errno = ENOMEM; return NULL; }
	rc = to_nctx(c)->ops->create_qp(c, owner, xrcd, init, dc_type, dct_key, qp);
	if (rc) { free(qp); errno = rc; return NULL; }
	fill_qp(qp, c, pd, xrcd, init);
	qp->dc_type = dc_type;
	if (domain && domain->alloc && (rc = nicsim_staging_alloc(qp, domain, init->cap.max_send_wr))) {
		to_nctx(c)->ops->destroy_qp(qp);
		free(qp);
		errno = rc;
		return NULL;
	}
	nicsim_domain_use(domain, 1);
	if (wr_ops) nicsim_wr_init(qp, wr_ops);
	return &qp->vqp.qp;
}

static struct ibv_qp *create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *init) {
	return make_qp(pd->context, pd, NULL, init, 0, 0, 0);
}

/*
 * ibv_create_qp_ex, and mlx5dv_create_qp's: an XRC target names its domain and no PD;
 * send_ops_flags asks for the ibv_wr_* API with those operations; a DC QP is DRIVER with its
 * dc_type. Creation flags, fields and operations nicsim does not offer are EOPNOTSUPP, as the
 * kernel and rxe refuse them (flags 0 asks for nothing and is accepted, as is BLOCK_SELF_MCAST_LB).
 */
struct ibv_qp *nicsim_make_qp_ex(struct ibv_context *c, struct ibv_qp_init_attr_ex *init, uint32_t dc_type,
				 uint64_t dct_key) {
	uint32_t known = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_XRCD | IBV_QP_INIT_ATTR_CREATE_FLAGS
			 | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	uint64_t ops = (init->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) ? init->send_ops_flags : 0;
	struct ibv_qp_init_attr a;
	struct ibv_qp *q;
	/* BLOCK_SELF_MCAST_LB asks for what every nicsim QP does: the sending QP never gets its own multicast */
	uint32_t flags = (init->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) ? init->create_flags : 0;
	if ((init->comp_mask & ~known) || (flags & ~(uint32_t)IBV_QP_CREATE_BLOCK_SELF_MCAST_LB)
	    || (ops & ~nicsim_wr_ops_offered(init->qp_type, dc_type))) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	memset(&a, 0, sizeof(a));
	a.qp_context = init->qp_context;
	a.send_cq = init->send_cq;
	a.recv_cq = init->recv_cq;
	a.srq = init->srq;
	a.cap = init->cap;
	a.qp_type = init->qp_type;
	a.sq_sig_all = init->sq_sig_all;
	q = make_qp(c, (init->comp_mask & IBV_QP_INIT_ATTR_PD) ? init->pd : NULL,
		    (init->comp_mask & IBV_QP_INIT_ATTR_XRCD) ? init->xrcd : NULL, &a, dc_type, dct_key, ops);
	if (q) init->cap = a.cap;
	return q;
}

static struct ibv_qp *create_qp_ex(struct ibv_context *c, struct ibv_qp_init_attr_ex *init) {
	return nicsim_make_qp_ex(c, init, 0, 0);
}

static int modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int mask) {
	return to_nctx(qp->context)->ops->modify_qp(to_nqp(qp), attr, mask);
}

static int query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int mask, struct ibv_qp_init_attr *init) {
	return to_nctx(qp->context)->ops->query_qp(to_nqp(qp), attr, mask, init);
}

/*
 * Destroys qp once the events the program was given for it are acknowledged (ibv_destroy_qp(3));
 * those it was not given are dropped.
 */
static int destroy_qp(struct ibv_qp *qp) {
	struct nicsim_ibv_qp *q = to_nqp(qp);
	int rc = to_nctx(qp->context)->ops->destroy_qp(q);
	if (rc) return rc;
	nicsim_await_acks(&qp->mutex, &qp->cond, &qp->events_completed, q->events_returned);
	nicsim_wr_clear(q);
	nicsim_staging_free(q);
	if (qp->qp_type != IBV_QPT_XRC_RECV) nicsim_domain_use(nicsim_parent_domain(qp->pd), -1); /* as make_qp */
	free(q);
	return 0;
}

/*
 * ibv_attach_mcast / ibv_detach_mcast: a UD QP and a multicast GID and LID, as the kernel's
 * ib_attach_mcast checks them (EINVAL), then the back end's.
 */
static int mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid, int attach) {
	if (!gid || gid->raw[0] != 0xff || lid < 0xc000 || lid == 0xffff || qp->qp_type != IBV_QPT_UD)
		return EINVAL;
	return to_nctx(qp->context)->ops->mcast(to_nqp(qp), gid, lid, attach);
}

static int attach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid) { return mcast(qp, gid, lid, 1); }
static int detach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid) { return mcast(qp, gid, lid, 0); }

const struct verbs_context_ops nicsim_qp_ops = {
	.attach_mcast = attach_mcast,
	.detach_mcast = detach_mcast,
	.create_qp = create_qp,
	.create_qp_ex = create_qp_ex,
	.destroy_qp = destroy_qp,
	.modify_qp = modify_qp,
	.query_qp = query_qp,
};
