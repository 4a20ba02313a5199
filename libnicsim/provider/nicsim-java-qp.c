/*
 * The java back end's QPs (nicsim-backend.h): each verb a request on the context's socket, which
 * serve's Java driver answers; the provider's QP verbs (nicsim-qp.c) reach these through the table.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>

#include "nicsim-backend.h"

/* What a QP got of the capacities asked for, as create_qp's and query_qp's replies carry it. */
static void get_caps(struct msg *m, struct ibv_qp_cap *cap) {
	struct nicsim_wire_qp_caps w;
	get(m, &w, sizeof(w));
	cap->max_send_wr = w.max_send_wr;
	cap->max_recv_wr = w.max_recv_wr;
	cap->max_send_sge = w.max_send_sge;
	cap->max_recv_sge = w.max_recv_sge;
	cap->max_inline_data = w.max_inline_data;
}

/* A QP asked of the simulator: its handle, number and what it got of init's cap; 0 or an errno. */
int nicsim_java_create_qp(struct ibv_context *c, struct ibv_pd *pd, struct ibv_xrcd *xrcd,
			  struct ibv_qp_init_attr *init, uint32_t dc_type, uint64_t dct_key, struct nicsim_ibv_qp *qp) {
	struct msg m = request(NICSIM_OP_CREATE_QP);
	struct nicsim_wire_create_qp_request q = {
		.pd = pd_handle(pd), .xrcd = xrcd_handle(xrcd), .qp_type = init->qp_type,
		.send_cq = cq_handle(init->send_cq), .recv_cq = cq_handle(init->recv_cq), .srq = srq_handle(init->srq),
		.max_send_wr = init->cap.max_send_wr, .max_recv_wr = init->cap.max_recv_wr,
		.max_send_sge = init->cap.max_send_sge, .max_recv_sge = init->cap.max_recv_sge,
		.max_inline_data = init->cap.max_inline_data, .sq_sig_all = (uint32_t)init->sq_sig_all,
		.dc_type = dc_type, .dct_access_key = dct_key,
	};
	struct nicsim_wire_create_qp_reply r;
	struct ibv_qp_cap got;
	int rc;
	put(&m, &q, sizeof(q));
	rc = call(to_nctx(c), &m);
	if (!rc) {
		get(&m, &r, sizeof(r));
		get_caps(&m, &got);
	}
	if (!rc && m.failed) rc = EIO;
	done(&m);
	if (rc) return rc; /* init stays as the program gave it */
	qp->handle = r.handle;
	qp->vqp.qp.qp_num = r.qp_num;
	init->cap = got;
	qp->max_send_sge = init->cap.max_send_sge;
	qp->max_recv_sge = init->cap.max_recv_sge;
	qp->max_inline = init->cap.max_inline_data;
	nicsim_name(to_nctx(c), qp->handle, &qp->vqp.qp); /* events name it by its handle */
	return 0;
}

static void put_attr(struct msg *m, const struct ibv_qp_attr *a) {
	struct nicsim_wire_qp_attr w = {
		.qp_state = a->qp_state, .cur_qp_state = a->cur_qp_state, .path_mtu = a->path_mtu, .qkey = a->qkey,
		.rq_psn = a->rq_psn, .sq_psn = a->sq_psn, .dest_qp_num = a->dest_qp_num,
		.qp_access_flags = (uint32_t)a->qp_access_flags, .pkey_index = a->pkey_index, .port_num = a->port_num,
		.max_rd_atomic = a->max_rd_atomic, .max_dest_rd_atomic = a->max_dest_rd_atomic,
		.min_rnr_timer = a->min_rnr_timer, .timeout = a->timeout, .retry_cnt = a->retry_cnt,
		.rnr_retry = a->rnr_retry, .sq_draining = a->sq_draining, .ah_dlid = a->ah_attr.dlid,
		.ah_sl = a->ah_attr.sl, .ah_src_path_bits = a->ah_attr.src_path_bits,
		.ah_static_rate = a->ah_attr.static_rate, .ah_is_global = a->ah_attr.is_global,
		.ah_port_num = a->ah_attr.port_num,
	};
	put(m, &w, sizeof(w));
}

static void get_attr(struct msg *m, struct ibv_qp_attr *a) {
	struct nicsim_wire_qp_attr w;
	get(m, &w, sizeof(w));
	a->qp_state = (enum ibv_qp_state)w.qp_state;
	a->cur_qp_state = (enum ibv_qp_state)w.cur_qp_state;
	a->path_mtu = (enum ibv_mtu)w.path_mtu;
	a->qkey = w.qkey;
	a->rq_psn = w.rq_psn;
	a->sq_psn = w.sq_psn;
	a->dest_qp_num = w.dest_qp_num;
	a->qp_access_flags = (unsigned int)w.qp_access_flags;
	a->pkey_index = (uint16_t)w.pkey_index;
	a->port_num = (uint8_t)w.port_num;
	a->max_rd_atomic = (uint8_t)w.max_rd_atomic;
	a->max_dest_rd_atomic = (uint8_t)w.max_dest_rd_atomic;
	a->min_rnr_timer = (uint8_t)w.min_rnr_timer;
	a->timeout = (uint8_t)w.timeout;
	a->retry_cnt = (uint8_t)w.retry_cnt;
	a->rnr_retry = (uint8_t)w.rnr_retry;
	a->sq_draining = (uint8_t)w.sq_draining;
	a->ah_attr.dlid = (uint16_t)w.ah_dlid;
	a->ah_attr.sl = (uint8_t)w.ah_sl;
	a->ah_attr.src_path_bits = (uint8_t)w.ah_src_path_bits;
	a->ah_attr.static_rate = (uint8_t)w.ah_static_rate;
	a->ah_attr.is_global = (uint8_t)w.ah_is_global;
	a->ah_attr.port_num = (uint8_t)w.ah_port_num;
}

int nicsim_java_modify_qp(struct nicsim_ibv_qp *q, struct ibv_qp_attr *attr, int mask) {
	struct ibv_qp *qp = &q->vqp.qp;
	struct msg m = request(NICSIM_OP_MODIFY_QP);
	int rc;
	put32(&m, qp_handle(qp));
	put32(&m, (uint32_t)mask);
	put_attr(&m, attr);
	rc = call(to_nctx(qp->context), &m);
	done(&m);
	return rc;
}

int nicsim_java_query_qp(struct nicsim_ibv_qp *q, struct ibv_qp_attr *attr, int mask, struct ibv_qp_init_attr *init) {
	struct ibv_qp *qp = &q->vqp.qp;
	struct msg m = request(NICSIM_OP_QUERY_QP);
	int rc;
	put32(&m, qp_handle(qp));
	put32(&m, (uint32_t)mask);
	rc = call(to_nctx(qp->context), &m);
	if (!rc) {
		memset(attr, 0, sizeof(*attr));
		struct nicsim_wire_qp_init_attr w;
		get_attr(&m, attr);
		get_caps(&m, &attr->cap);
		get(&m, &w, sizeof(w));
		if (init) {
			memset(init, 0, sizeof(*init));
			init->qp_context = qp->qp_context;
			init->send_cq = qp->send_cq;
			init->recv_cq = qp->recv_cq;
			init->srq = qp->srq;
			init->qp_type = qp->qp_type;
			init->cap = attr->cap;
			init->sq_sig_all = (int)w.sq_sig_all;
		}
		if (m.failed) rc = EIO;
	}
	done(&m);
	return rc;
}

int nicsim_java_mcast(struct nicsim_ibv_qp *q, const union ibv_gid *gid, uint16_t lid, int attach) {
	struct msg m = request(NICSIM_OP_MCAST);
	put32(&m, q->handle);
	put32(&m, (uint32_t)attach);
	put(&m, gid->raw, 16);
	put32(&m, lid);
	int rc = call(to_nctx(q->vqp.qp.context), &m);
	done(&m);
	return rc;
}

int nicsim_java_destroy_qp(struct nicsim_ibv_qp *q) {
	int rc = simple(q->vqp.qp.context, NICSIM_OP_DESTROY_QP, q->handle);
	if (!rc)
		nicsim_name(to_nctx(q->vqp.qp.context), q->handle, NULL); /* its events are dropped from now on */
	return rc;
}
