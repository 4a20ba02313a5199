/*
 * The java back end's shared receive queues and tag-matching operations
 * (nicsim-backend.h): each verb a request to the simulator, which keeps the object; events name
 * an SRQ by its handle.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "nicsim-backend.h"

/* Asks the simulator for the SRQ: its handle and number, and what it got of attr; 0 or an errno. */
int nicsim_java_create_srq(struct ibv_pd *pd, struct ibv_srq_attr *attr, enum ibv_srq_type type, struct ibv_xrcd *xrcd,
			   struct ibv_cq *cq, const struct ibv_tm_cap *tm, struct nicsim_ibv_srq *srq) {
	struct msg m = request(NICSIM_OP_CREATE_SRQ);
	struct nicsim_wire_create_srq_request q = {
		.pd = pd_handle(pd), .max_wr = attr->max_wr, .max_sge = attr->max_sge, .srq_limit = attr->srq_limit,
		.srq_type = type, .xrcd = xrcd_handle(xrcd), .cq = cq_handle(cq),
		.tm_max_num_tags = tm ? tm->max_num_tags : 0, .tm_max_ops = tm ? tm->max_ops : 0,
	};
	struct nicsim_wire_create_srq_reply r;
	int rc;
	PUT(&m, q);
	rc = call(to_nctx(pd->context), &m);
	if (rc) { done(&m); return rc; }
	GET(&m, r);
	done(&m);
	srq->handle = r.handle;
	srq->vsrq.srq.handle = r.handle;
	attr->max_wr = r.max_wr;
	attr->max_sge = r.max_sge;
	srq->max_sge = attr->max_sge;
	srq->vsrq.srq_num = r.srq_num;
	nicsim_name(to_nctx(pd->context), srq->handle, &srq->vsrq.srq); /* events name it by its handle */
	return 0;
}

int nicsim_java_destroy_srq(struct nicsim_ibv_srq *srq) {
	struct ibv_context *c = srq->vsrq.srq.context;
	int rc = simple(c, NICSIM_OP_DESTROY_SRQ, srq->handle);
	if (!rc) nicsim_name(to_nctx(c), srq->handle, NULL);
	return rc;
}

int nicsim_java_modify_srq(struct nicsim_ibv_srq *srq, struct ibv_srq_attr *attr, int mask) {
	struct msg m = request(NICSIM_OP_MODIFY_SRQ);
	struct nicsim_wire_modify_srq_request q = {
		.srq = srq->handle, .srq_attr_mask = (uint32_t)mask, .max_wr = attr->max_wr,
		.srq_limit = attr->srq_limit,
	};
	int rc;
	PUT(&m, q);
	rc = call(to_nctx(srq->vsrq.srq.context), &m);
	done(&m);
	return rc;
}

int nicsim_java_query_srq(struct nicsim_ibv_srq *srq, struct ibv_srq_attr *attr) {
	struct msg m = request(NICSIM_OP_QUERY_SRQ);
	struct nicsim_wire_handle q = { .handle = srq->handle };
	struct nicsim_wire_srq_attr r;
	int rc;
	PUT(&m, q);
	rc = call(to_nctx(srq->vsrq.srq.context), &m);
	if (!rc) {
		GET(&m, r);
		attr->max_wr = r.max_wr;
		attr->max_sge = r.max_sge;
		attr->srq_limit = r.srq_limit;
	}
	done(&m);
	return rc;
}

/* One operation per request, so that each TAG_ADD's handle is known before the next is sent. */
int nicsim_java_post_srq_ops(struct nicsim_ibv_srq *srq, struct ibv_ops_wr *op, struct ibv_ops_wr **bad) {
	for (struct ibv_ops_wr *o = op; o; o = o->next) {
		struct msg m = request(NICSIM_OP_POST_SRQ_OPS);
		int add = o->opcode == IBV_WR_TAG_ADD;
		struct nicsim_wire_post_request q = { .target = srq->handle, .n = 1 };
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
		rc = call(to_nctx(srq->vsrq.srq.context), &m);
		if (!rc && o->opcode == IBV_WR_TAG_ADD) o->tm.handle = get32(&m);
		done(&m);
		if (rc) { *bad = o; return rc; }
	}
	return 0;
}
