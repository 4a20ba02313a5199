/*
 * The provider's shared receive queues, XRC domains, queue pairs and indirect mkeys (its CQs:
 * nicsim-cq.c): made, moved, queried and destroyed by the simulator's adapter.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "nicsim-hw.h"

/* ---- shared receive queues ---- */

/* Asks the simulator for the SRQ: its handle and number, and what it got of attr; 0 or an errno. */
static int ask_srq(struct ibv_pd *pd, struct ibv_srq_attr *attr, enum ibv_srq_type type, struct ibv_xrcd *xrcd,
		   struct ibv_cq *cq, const struct ibv_tm_cap *tm, struct nicsim_ibv_srq *srq) {
	struct msg m = request(NICSIM_OP_CREATE_SRQ);
	struct nicsim_wire_create_srq_request q = {
		.pd = pd_handle(pd), .max_wr = attr->max_wr, .max_sge = attr->max_sge, .srq_limit = attr->srq_limit,
		.srq_type = type, .xrcd = xrcd_handle(xrcd), .cq = cq_handle(cq),
		.tm_max_num_tags = tm ? tm->max_num_tags : 0, .tm_max_ops = tm ? tm->max_ops : 0,
	};
	struct nicsim_wire_create_srq_reply r;
	int rc;
	if (to_nctx(pd->context)->hw) { /* the C driver makes it */
		done(&m);
		return nicsim_hw_create_srq(pd, attr, type, xrcd, cq, tm, srq);
	}
	PUT(&m, q);
	rc = call(to_nctx(pd->context), &m);
	if (rc) { done(&m); return rc; }
	GET(&m, r);
	done(&m);
	srq->handle = r.handle;
	attr->max_wr = r.max_wr;
	attr->max_sge = r.max_sge;
	srq->max_sge = attr->max_sge;
	srq->vsrq.srq_num = r.srq_num;
	return 0;
}

/* An SRQ: basic, or of XRC domain xrcd with its own CQ; attr's max_wr and max_sge become what it got. */
static struct ibv_srq *make_srq(struct ibv_pd *pd, void *srq_context, struct ibv_srq_attr *attr, enum ibv_srq_type type,
				struct ibv_xrcd *xrcd, struct ibv_cq *cq, const struct ibv_tm_cap *tm) {
	struct nicsim_ibv_srq *srq = calloc(1, sizeof(*srq));
	int rc;
	if (!srq) { errno = ENOMEM; return NULL; }
	if ((rc = ask_srq(pd, attr, type, xrcd, cq, tm, srq))) { free(srq); errno = rc; return NULL; }
	srq->vsrq.srq.context = pd->context;
	srq->vsrq.srq.srq_context = srq_context;
	srq->vsrq.srq.pd = pd;
	srq->vsrq.srq.handle = srq->handle;
	srq->vsrq.srq.events_completed = 0;
	pthread_mutex_init(&srq->vsrq.srq.mutex, NULL);
	pthread_cond_init(&srq->vsrq.srq.cond, NULL);
	srq->vsrq.srq_type = type;
	srq->vsrq.xrcd = (struct verbs_xrcd *)xrcd;
	srq->vsrq.cq = cq;
	if (!to_nctx(pd->context)->hw) /* events name it by its handle (a C driver's: only its CQs, by number) */
		nicsim_name(to_nctx(pd->context), srq->handle, &srq->vsrq.srq);
	return &srq->vsrq.srq;
}

static struct ibv_srq *create_srq(struct ibv_pd *pd, struct ibv_srq_init_attr *init) {
	return make_srq(pd, init->srq_context, &init->attr, IBV_SRQT_BASIC, NULL, NULL, NULL);
}

/* ibv_create_srq_ex: XRC and tag-matching SRQs (a basic one with only a PD comes through create_srq). */
static struct ibv_srq *create_srq_ex(struct ibv_context *c, struct ibv_srq_init_attr_ex *init) {
	uint32_t known = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ | IBV_SRQ_INIT_ATTR_TM;
	enum ibv_srq_type type = (init->comp_mask & IBV_SRQ_INIT_ATTR_TYPE) ? init->srq_type : IBV_SRQT_BASIC;
	/* as libibverbs' ibv_cmd_create_srq_ex: an XRC SRQ names its domain and its CQ */
	if (type == IBV_SRQT_XRC && (~init->comp_mask & (IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ))) {
		errno = EINVAL;
		return NULL;
	}
	if ((init->comp_mask & ~known) || !(init->comp_mask & IBV_SRQ_INIT_ATTR_PD)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (init->pd->context != c || (type == IBV_SRQT_TM) != !!(init->comp_mask & IBV_SRQ_INIT_ATTR_TM)) { errno = EINVAL; return NULL; }
	return make_srq(init->pd, init->srq_context, &init->attr, type,
			(init->comp_mask & IBV_SRQ_INIT_ATTR_XRCD) ? init->xrcd : NULL,
			(init->comp_mask & IBV_SRQ_INIT_ATTR_CQ) ? init->cq : NULL,
			type == IBV_SRQT_TM ? &init->tm_cap : NULL);
}

/*
 * ibv_post_srq_ops on a tag-matching SRQ, one operation per request, so that each TAG_ADD's handle
 * is known before the next is sent; on a refusal *bad is the one refused.
 */
static int post_srq_ops(struct ibv_srq *srq, struct ibv_ops_wr *op, struct ibv_ops_wr **bad) {
	if (to_nsrq(srq)->hw) return nicsim_hw_post_srq_ops(to_nsrq(srq), op, bad);
	for (struct ibv_ops_wr *o = op; o; o = o->next) {
		struct msg m = request(NICSIM_OP_POST_SRQ_OPS);
		bool add = o->opcode == IBV_WR_TAG_ADD;
		struct nicsim_wire_post_request q = { .target = srq_handle(srq), .n = 1 };
		struct nicsim_wire_srq_op w = {
			.wr_id = o->wr_id, .opcode = o->opcode, .flags = (uint32_t)o->flags,
			.unexpected_cnt = o->tm.unexpected_cnt, .handle = o->tm.handle,
			.recv_wr_id = add ? o->tm.add.recv_wr_id : 0, .tag = add ? o->tm.add.tag : 0,
			.mask = add ? o->tm.add.mask : 0,
		};
		int rc;
		PUT(&m, q);
		PUT(&m, w);
		if (o->opcode == IBV_WR_TAG_ADD) put_sges(&m, o->tm.add.sg_list, o->tm.add.num_sge);
		else put32(&m, 0);
		rc = call(to_nctx(srq->context), &m);
		if (!rc && o->opcode == IBV_WR_TAG_ADD) o->tm.handle = get32(&m);
		done(&m);
		if (rc) { *bad = o; return rc; }
	}
	return 0;
}

static int get_srq_num(struct ibv_srq *srq, uint32_t *srq_num) {
	*srq_num = to_nsrq(srq)->vsrq.srq_num;
	return 0;
}

/* ---- XRC domains ---- */

/*
 * ibv_open_xrcd: with a file descriptor, the node's domain of that file (made with O_CREAT, joined
 * by every program that opens the same file, as the kernel keeps one per inode); without (fd -1),
 * a domain of this program's own.
 */
static struct ibv_xrcd *open_xrcd(struct ibv_context *c, struct ibv_xrcd_init_attr *attr) {
	struct msg m;
	struct nicsim_wire_open_xrcd_request q;
	struct nicsim_wire_open_xrcd_reply r;
	struct nicsim_ibv_xrcd *x;
	struct stat st;
	int rc, by_file = (attr->comp_mask & IBV_XRCD_INIT_ATTR_FD) && attr->fd >= 0;
	/* as libibverbs' ibv_cmd_open_xrcd: an unknown bit is EOPNOTSUPP, a missing FD or OFLAGS EINVAL */
	if (attr->comp_mask >= IBV_XRCD_INIT_ATTR_RESERVED) { errno = EOPNOTSUPP; return NULL; }
	if (!(attr->comp_mask & IBV_XRCD_INIT_ATTR_FD) || !(attr->comp_mask & IBV_XRCD_INIT_ATTR_OFLAGS)) {
		errno = EINVAL;
		return NULL;
	}
	if (to_nctx(c)->hw && !by_file) return nicsim_hw_open_xrcd(c); /* the C driver's own, by ALLOC_XRCD */
	m = request(NICSIM_OP_OPEN_XRCD);
	memset(&st, 0, sizeof(st));
	if (by_file && fstat(attr->fd, &st)) { done(&m); errno = EBADF; return NULL; }
	q = (struct nicsim_wire_open_xrcd_request){
		.file = (uint32_t)by_file, .dev = by_file ? (uint64_t)st.st_dev : 0,
		.ino = by_file ? (uint64_t)st.st_ino : 0,
		.oflags = (attr->comp_mask & IBV_XRCD_INIT_ATTR_OFLAGS) ? (uint32_t)attr->oflags : 0,
	};
	PUT(&m, q);
	x = calloc(1, sizeof(*x));
	if (!x) { done(&m); errno = ENOMEM; return NULL; }
	rc = call(to_nctx(c), &m);
	if (rc) { done(&m); free(x); errno = rc; return NULL; }
	GET(&m, r);
	x->vxrcd.handle = r.handle;
	x->xrcdn = r.xrcdn;
	x->vxrcd.xrcd.context = c;
	done(&m);
	return &x->vxrcd.xrcd;
}

static int close_xrcd(struct ibv_xrcd *x) {
	if (to_nxrcd(x)->own) return nicsim_hw_close_xrcd(to_nxrcd(x));
	int rc = simple(x->context, NICSIM_OP_CLOSE_XRCD, xrcd_handle(x));
	if (!rc) free(x);
	return rc;
}

static int modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr, int mask) {
	if (to_nsrq(srq)->hw) return nicsim_hw_modify_srq(to_nsrq(srq), attr, mask);
	struct msg m = request(NICSIM_OP_MODIFY_SRQ);
	struct nicsim_wire_modify_srq_request q = {
		.srq = srq_handle(srq), .srq_attr_mask = (uint32_t)mask, .max_wr = attr->max_wr,
		.srq_limit = attr->srq_limit,
	};
	int rc;
	PUT(&m, q);
	rc = call(to_nctx(srq->context), &m);
	done(&m);
	return rc;
}

static int query_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr) {
	if (to_nsrq(srq)->hw) return nicsim_hw_query_srq(to_nsrq(srq), attr);
	struct msg m = request(NICSIM_OP_QUERY_SRQ);
	struct nicsim_wire_handle q = { .handle = srq_handle(srq) };
	struct nicsim_wire_srq_attr r;
	int rc;
	PUT(&m, q);
	rc = call(to_nctx(srq->context), &m);
	if (!rc) {
		GET(&m, r);
		attr->max_wr = r.max_wr;
		attr->max_sge = r.max_sge;
		attr->srq_limit = r.srq_limit;
	}
	done(&m);
	return rc;
}

/* Destroys srq once the events the program was given for it are acknowledged; those it was not given are dropped. */
static int destroy_srq(struct ibv_srq *srq) {
	struct nicsim_ibv_srq *s = to_nsrq(srq);
	int rc = s->hw ? nicsim_hw_destroy_srq(s) : simple(srq->context, NICSIM_OP_DESTROY_SRQ, s->handle);
	if (rc) return rc;
	if (!to_nctx(srq->context)->hw) nicsim_name(to_nctx(srq->context), s->handle, NULL);
	nicsim_await_acks(&srq->mutex, &srq->cond, &srq->events_completed, s->events_returned);
	free(s);
	return 0;
}

/* ---- queue pairs ---- */

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
static struct ibv_qp *make_qp(struct ibv_context *c, struct ibv_pd *pd, struct ibv_xrcd *xrcd, struct ibv_qp_init_attr *init,
			      uint32_t dc_type, uint64_t dct_key, uint64_t wr_ops) {
	struct nicsim_ibv_qp *qp = calloc(1, sizeof(*qp));
	struct nicsim_ibv_pd *domain = nicsim_parent_domain(pd);
	int rc;
	if (!qp) { errno = ENOMEM; return NULL; }
	rc = to_nctx(c)->ops->create_qp(c, pd, xrcd, init, dc_type, dct_key, qp);
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
 * kernel and rxe refuse them (flags 0 asks for nothing and is accepted).
 */
struct ibv_qp *nicsim_make_qp_ex(struct ibv_context *c, struct ibv_qp_init_attr_ex *init, uint32_t dc_type, uint64_t dct_key) {
	uint32_t known = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_XRCD | IBV_QP_INIT_ATTR_CREATE_FLAGS | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	uint64_t ops = (init->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) ? init->send_ops_flags : 0;
	struct ibv_qp_init_attr a;
	struct ibv_qp *q;
	if ((init->comp_mask & ~known) || ((init->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) && init->create_flags)
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

struct nicsim_mkey *nicsim_create_mkey(struct ibv_pd *pd, uint32_t create_flags, uint16_t max_entries) {
	if (to_nctx(pd->context)->hw) return nicsim_hw_create_mkey(pd, max_entries);
	struct nicsim_mkey *k = calloc(1, sizeof(*k));
	struct msg m = request(NICSIM_OP_CREATE_MKEY);
	struct nicsim_wire_create_mkey_request q = {
		.pd = pd_handle(pd), .max_entries = max_entries, .create_flags = create_flags,
	};
	struct nicsim_wire_create_mkey_reply r;
	int rc;
	if (!k) { done(&m); errno = ENOMEM; return NULL; }
	PUT(&m, q);
	rc = call(to_nctx(pd->context), &m);
	if (rc) { done(&m); free(k); errno = rc; return NULL; }
	GET(&m, r);
	k->handle = r.handle;
	k->dv.lkey = k->dv.rkey = r.lkey;
	k->context = pd->context;
	done(&m);
	return k;
}

int nicsim_destroy_mkey(struct nicsim_mkey *k) {
	if (to_nctx(k->context)->hw) return nicsim_hw_destroy_mkey(k);
	int rc = simple(k->context, NICSIM_OP_DESTROY_MKEY, k->handle);
	if (!rc) free(k);
	return rc;
}

static int modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int mask) {
	return to_nctx(qp->context)->ops->modify_qp(to_nqp(qp), attr, mask);
}

static int query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int mask, struct ibv_qp_init_attr *init) {
	return to_nctx(qp->context)->ops->query_qp(to_nqp(qp), attr, mask, init);
}

/* Destroys qp once the events the program was given for it are acknowledged (ibv_destroy_qp(3)); those it was not given are dropped. */
static int destroy_qp(struct ibv_qp *qp) {
	struct nicsim_ibv_qp *q = to_nqp(qp);
	int rc = to_nctx(qp->context)->ops->destroy_qp(q);
	if (rc) return rc;
	nicsim_await_acks(&qp->mutex, &qp->cond, &qp->events_completed, q->events_returned);
	nicsim_wr_clear(q);
	nicsim_staging_free(q);
	nicsim_domain_use(nicsim_parent_domain(qp->pd), -1);
	free(q);
	return 0;
}

const struct verbs_context_ops nicsim_queue_ops = {
	.close_xrcd = close_xrcd,
	.create_qp = create_qp,
	.create_qp_ex = create_qp_ex,
	.create_srq = create_srq,
	.create_srq_ex = create_srq_ex,
	.destroy_qp = destroy_qp,
	.destroy_srq = destroy_srq,
	.get_srq_num = get_srq_num,
	.modify_qp = modify_qp,
	.modify_srq = modify_srq,
	.open_xrcd = open_xrcd,
	.post_srq_ops = post_srq_ops,
	.query_qp = query_qp,
	.query_srq = query_srq,
};
