/*
 * The java back end's posts: work requests read from the program's lists and sent to serve's Java
 * driver as one request per list, one helper per part of a request (its header and destination,
 * gather list or inline bytes, layout, window bind), each part a struct generated from the
 * simulator's list of its fields (nicsim-wire.h), sent whole.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "nicsim-backend.h"

/*
 * The first request of the list the provider must refuse before reading it (more SGEs than the QP
 * has, or more inline bytes than it takes: reading them could run past the program's buffers), or
 * NULL; *before is how many precede it.
 */
static struct ibv_send_wr *unreadable(const struct nicsim_ibv_qp *q, struct ibv_send_wr *wr, uint32_t *before) {
	*before = 0;
	for (struct ibv_send_wr *w = wr; w; w = w->next, (*before)++) {
		uint64_t inl = 0;
		if (w->num_sge < 0 || (uint32_t)w->num_sge > q->max_send_sge) return w;
		if (!(w->send_flags & IBV_SEND_INLINE)) continue;
		for (int i = 0; i < w->num_sge; i++) inl += w->sg_list[i].length;
		if (inl > q->max_inline) return w;
	}
	return NULL;
}

/* A request's fixed part: its header, and where it goes (a UD destination, the rkey a SEND invalidates, an XRC SRQ,
 * a DC target; dc NULL: none). An atomic's remote address and rkey are in its own union member. */
static void put_wr_header(struct msg *m, const struct ibv_qp *qp, const struct ibv_send_wr *w,
			  const struct nicsim_dc_addr *dc) {
	bool atomic = w->opcode == IBV_WR_ATOMIC_CMP_AND_SWP || w->opcode == IBV_WR_ATOMIC_FETCH_AND_ADD;
	bool ud = qp->qp_type == IBV_QPT_UD;
	struct nicsim_wire_send_wr r = {
		.wr_id = w->wr_id, .opcode = w->opcode, .send_flags = w->send_flags, .imm_data = w->imm_data,
		.remote_addr = atomic ? w->wr.atomic.remote_addr : w->wr.rdma.remote_addr,
		.rkey = atomic ? w->wr.atomic.rkey : w->wr.rdma.rkey,
		.compare_add = atomic ? w->wr.atomic.compare_add : 0, .swap = atomic ? w->wr.atomic.swap : 0,
		.ah = ud ? ah_handle(w->wr.ud.ah) : NICSIM_NONE, .remote_qpn = ud ? w->wr.ud.remote_qpn : 0,
		.remote_qkey = ud ? w->wr.ud.remote_qkey : 0,
		.invalidate_rkey = w->opcode == IBV_WR_SEND_WITH_INV || w->opcode == IBV_WR_LOCAL_INV ? w->invalidate_rkey : 0,
		.remote_srqn = qp->qp_type == IBV_QPT_XRC_SEND ? w->qp_type.xrc.remote_srqn : 0,
		.dc_ah = dc ? dc->ah : NICSIM_NONE, .dc_remote_dctn = dc ? dc->dctn : 0, .dc_remote_dc_key = dc ? dc->key : 0,
	};
	PUT(m, r);
}

/* Its gather list, and with IBV_SEND_INLINE the bytes now: the program may reuse its buffer on return. */
static void put_wr_data(struct msg *m, const struct ibv_send_wr *w) {
	put_sges(m, w->sg_list, w->num_sge);
	if (!(w->send_flags & IBV_SEND_INLINE)) return;
	for (int i = 0; i < w->num_sge; i++) put(m, (void *)(uintptr_t)w->sg_list[i].addr, w->sg_list[i].length);
}

/* A layout UMR's mkey, access, repeat count and entries (u NULL: none). */
static void put_wr_layout(struct msg *m, const struct nicsim_umr *u) {
	struct nicsim_wire_umr h = {
		.mkey = u ? u->mkey : NICSIM_NONE, .access = u ? u->access : 0, .repeat = u ? u->repeat : 0,
		.entries = u ? u->n : 0,
	};
	PUT(m, h);
	for (uint32_t k = 0; u && k < u->n; k++) {
		struct nicsim_wire_umr_entry e = {
			.addr = u->klm[k].addr, .length = u->klm[k].length, .lkey = u->klm[k].lkey, .skip = u->klm[k].skip,
		};
		PUT(m, e);
	}
}

/* A window's bind: the window, its new rkey, the MR (none: unbind), range and access. */
static void put_wr_bind(struct msg *m, const struct ibv_send_wr *w) {
	const struct ibv_mw_bind_info *b = &w->bind_mw.bind_info;
	bool bind = w->opcode == IBV_WR_BIND_MW;
	struct nicsim_wire_window_bind r = {
		.mw = bind && w->bind_mw.mw ? w->bind_mw.mw->handle : NICSIM_NONE, .rkey = bind ? w->bind_mw.rkey : 0,
		.mr = bind && b->mr ? b->mr->handle : NICSIM_NONE, .addr = bind ? b->addr : 0,
		.length = bind ? b->length : 0, .access = bind ? b->mw_access_flags : 0,
	};
	PUT(m, r);
}

/* The java back end's post_send: the list as one request, each work request's fields on the wire. */
int nicsim_java_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, const struct nicsim_wr *ext,
			  struct ibv_send_wr **bad) {
	struct msg m;
	struct nicsim_wire_post_request q = { .target = qp_handle(qp) };
	struct ibv_send_wr *w, *stop;
	uint32_t n = 0, refused, i = 0;
	int rc;
	stop = unreadable(to_nqp(qp), wr, &n);
	if (stop && n == 0) { *bad = stop; return EINVAL; } /* as the kernel's and rxe's post checks: EINVAL */
	m = request(NICSIM_OP_POST_SEND);
	if (!stop) for (n = 0, w = wr; w; w = w->next) n++;
	q.n = n;
	PUT(&m, q);
	for (w = wr; w != stop; w = w->next, i++) {
		put_wr_header(&m, qp, w, ext ? &ext[i].dc : NULL);
		put_wr_data(&m, w);
		put_wr_layout(&m, ext ? &ext[i].umr : NULL);
		put_wr_bind(&m, w);
	}
	rc = call(to_nctx(qp->context), &m);
	refused = rc ? get32(&m) : 0;
	done(&m);
	if (rc) {
		for (w = wr; w && refused; w = w->next) refused--;
		*bad = w ? w : wr;
	} else if (stop) { /* those before it went */
		*bad = stop;
		rc = EINVAL;
	}
	return rc;
}

/* Posts receives to a QP or SRQ whose WQEs hold max_sge SGEs: a request with more is EINVAL before it is read. */
static int post_recv_to(struct ibv_context *c, uint32_t op, uint32_t handle, uint32_t max_sge, struct ibv_recv_wr *wr,
			struct ibv_recv_wr **bad) {
	struct msg m;
	struct ibv_recv_wr *w, *stop = NULL;
	uint32_t n = 0, refused;
	int rc;
	for (w = wr; w && !stop; w = w->next) {
		if (w->num_sge < 0 || (uint32_t)w->num_sge > max_sge) stop = w;
		else n++;
	}
	if (stop && n == 0) { *bad = stop; return EINVAL; }
	struct nicsim_wire_post_request q = { .target = handle, .n = n };
	m = request(op);
	PUT(&m, q);
	for (w = wr; w != stop; w = w->next) {
		struct nicsim_wire_recv_wr r = { .wr_id = w->wr_id };
		PUT(&m, r);
		put_sges(&m, w->sg_list, w->num_sge);
	}
	rc = call(to_nctx(c), &m);
	refused = rc ? get32(&m) : 0;
	done(&m);
	if (rc) {
		for (w = wr; w && refused; w = w->next) refused--;
		*bad = w ? w : wr;
	} else if (stop) {
		*bad = stop;
		rc = EINVAL;
	}
	return rc;
}

int nicsim_java_post_recv(struct nicsim_ibv_qp *q, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad) {
	return post_recv_to(q->vqp.qp.context, NICSIM_OP_POST_RECV, q->handle, q->max_recv_sge, wr, bad);
}

int nicsim_java_post_srq_recv(struct nicsim_ibv_srq *s, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad) {
	return post_recv_to(s->vsrq.srq.context, NICSIM_OP_POST_SRQ_RECV, s->handle, s->max_sge, wr, bad);
}
