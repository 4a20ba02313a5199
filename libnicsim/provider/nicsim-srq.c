/*
 * Shared receive queues and XRC domains: libibverbs' verbs, each checked as the kernel checks it,
 * then handed to the context's back end (nicsim-backend.h), which makes and keeps the object.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "nicsim-backend.h"

static const struct nicsim_backend_ops *ops_of(struct ibv_context *c) { return to_nctx(c)->ops; }

/* An SRQ: basic, or of XRC domain xrcd with its own CQ; attr's max_wr and max_sge become what it got. */
static struct ibv_srq *make_srq(struct ibv_pd *pd, void *srq_context, struct ibv_srq_attr *attr, enum ibv_srq_type type,
				struct ibv_xrcd *xrcd, struct ibv_cq *cq, const struct ibv_tm_cap *tm) {
	struct nicsim_ibv_srq *srq = calloc(1, sizeof(*srq));
	int rc;
	if (!srq) { errno = ENOMEM; return NULL; }
	srq->vsrq.srq.context = pd->context;
	srq->vsrq.srq.srq_context = srq_context;
	srq->vsrq.srq.pd = pd;
	if ((rc = ops_of(pd->context)->create_srq(pd, attr, type, xrcd, cq, tm, srq))) {
		free(srq);
		errno = rc;
		return NULL;
	}
	srq->vsrq.srq.events_completed = 0;
	pthread_mutex_init(&srq->vsrq.srq.mutex, NULL);
	pthread_cond_init(&srq->vsrq.srq.cond, NULL);
	srq->vsrq.srq_type = type;
	srq->vsrq.xrcd = (struct verbs_xrcd *)xrcd;
	srq->vsrq.cq = cq;
	return &srq->vsrq.srq;
}

static struct ibv_srq *create_srq(struct ibv_pd *pd, struct ibv_srq_init_attr *init) {
	return make_srq(pd, init->srq_context, &init->attr, IBV_SRQT_BASIC, NULL, NULL, NULL);
}

/* ibv_create_srq_ex: XRC and tag-matching SRQs (a basic one with only a PD comes through create_srq). */
static struct ibv_srq *create_srq_ex(struct ibv_context *c, struct ibv_srq_init_attr_ex *init) {
	uint32_t known = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ
			 | IBV_SRQ_INIT_ATTR_TM;
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
	if (init->pd->context != c || (type == IBV_SRQT_TM) != !!(init->comp_mask & IBV_SRQ_INIT_ATTR_TM)) {
		errno = EINVAL;
		return NULL;
	}
	return make_srq(init->pd, init->srq_context, &init->attr, type,
			(init->comp_mask & IBV_SRQ_INIT_ATTR_XRCD) ? init->xrcd : NULL,
			(init->comp_mask & IBV_SRQ_INIT_ATTR_CQ) ? init->cq : NULL,
			type == IBV_SRQT_TM ? &init->tm_cap : NULL);
}

/* ibv_post_srq_ops on a tag-matching SRQ; on a refusal *bad is the one refused. */
static int post_srq_ops(struct ibv_srq *srq, struct ibv_ops_wr *op, struct ibv_ops_wr **bad) {
	return ops_of(srq->context)->post_srq_ops(to_nsrq(srq), op, bad);
}

static int get_srq_num(struct ibv_srq *srq, uint32_t *srq_num) {
	*srq_num = to_nsrq(srq)->vsrq.srq_num;
	return 0;
}

static int modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr, int mask) {
	return ops_of(srq->context)->modify_srq(to_nsrq(srq), attr, mask);
}

static int query_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr) {
	return ops_of(srq->context)->query_srq(to_nsrq(srq), attr);
}

/* Destroys srq once the events the program was given for it are acknowledged; those it was not given are dropped. */
static int destroy_srq(struct ibv_srq *srq) {
	struct nicsim_ibv_srq *s = to_nsrq(srq);
	int rc = ops_of(srq->context)->destroy_srq(s);
	if (rc) return rc;
	nicsim_await_acks(&srq->mutex, &srq->cond, &srq->events_completed, s->events_returned);
	free(s);
	return 0;
}

/*
 * ibv_open_xrcd: with a file descriptor, the node's domain of that file (made with O_CREAT, joined
 * by every program that opens the same file, as the kernel keeps one per inode); without (fd -1),
 * a domain of this program's own.
 */
static struct ibv_xrcd *open_xrcd(struct ibv_context *c, struct ibv_xrcd_init_attr *attr) {
	struct stat st;
	int by_file = (attr->comp_mask & IBV_XRCD_INIT_ATTR_FD) && attr->fd >= 0;
	/* as libibverbs' ibv_cmd_open_xrcd: an unknown bit is EOPNOTSUPP, a missing FD or OFLAGS EINVAL */
	if (attr->comp_mask >= IBV_XRCD_INIT_ATTR_RESERVED) { errno = EOPNOTSUPP; return NULL; }
	if (!(attr->comp_mask & IBV_XRCD_INIT_ATTR_FD) || !(attr->comp_mask & IBV_XRCD_INIT_ATTR_OFLAGS)) {
		errno = EINVAL;
		return NULL;
	}
	memset(&st, 0, sizeof(st));
	if (by_file && fstat(attr->fd, &st)) { errno = EBADF; return NULL; }
	return ops_of(c)->open_xrcd(c, by_file ? &st : NULL, attr->oflags);
}

static int close_xrcd(struct ibv_xrcd *x) { return ops_of(x->context)->close_xrcd(to_nxrcd(x)); }

const struct verbs_context_ops nicsim_srq_ops = {
	.close_xrcd = close_xrcd,
	.create_srq = create_srq,
	.create_srq_ex = create_srq_ex,
	.destroy_srq = destroy_srq,
	.get_srq_num = get_srq_num,
	.modify_srq = modify_srq,
	.open_xrcd = open_xrcd,
	.post_srq_ops = post_srq_ops,
	.query_srq = query_srq,
};
