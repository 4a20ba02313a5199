/*
 * The ibv_wr_* API (struct ibv_qp_ex) over the provider's post: wr_start opens a list, each
 * wr_<opcode> begins a work request with the QP's wr_id and wr_flags, the setters fill its
 * scatter list, inline data and destination, and wr_complete posts the list as ibv_post_send would
 * (nothing of it if any request was refused while it was built). For a DC initiator,
 * mlx5dv_wr_set_dc_addr names each request's target.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "nicsim-provider.h"

static struct nicsim_ibv_qp *of(struct ibv_qp_ex *qpx) { return to_nqp_ex(qpx); }

void nicsim_wr_clear(struct nicsim_ibv_qp *qp) {
	for (size_t i = 0; i < qp->nwr; i++) {
		free(qp->wrs[i].sges);
		free(qp->wrs[i].inline_data);
		free(qp->wrs[i].umr.klm);
	}
	qp->nwr = 0;
	qp->wr_error = 0;
}

static void wr_start(struct ibv_qp_ex *qpx) { nicsim_wr_clear(of(qpx)); }

static void wr_abort(struct ibv_qp_ex *qpx) { nicsim_wr_clear(of(qpx)); }

/* A new work request of the list, or NULL (out of memory, recorded for wr_complete). */
static struct nicsim_wr *begin(struct ibv_qp_ex *qpx, enum ibv_wr_opcode opcode) {
	struct nicsim_ibv_qp *qp = of(qpx);
	struct nicsim_wr *w;
	if (qp->nwr == qp->cap && qp->staging_fixed) { qp->wr_error = ENOMEM; return NULL; } /* the send queue is full */
	if (qp->nwr == qp->cap) {
		size_t cap = qp->cap ? qp->cap * 2 : 16;
		struct nicsim_wr *b = realloc(qp->wrs, cap * sizeof(*b));
		if (!b) { qp->wr_error = ENOMEM; return NULL; }
		qp->wrs = b;
		qp->cap = cap;
	}
	w = &qp->wrs[qp->nwr++];
	memset(w, 0, sizeof(*w));
	w->wr.wr_id = qpx->wr_id;
	w->wr.send_flags = qpx->wr_flags;
	w->wr.opcode = opcode;
	w->dc.ah = NICSIM_NONE;
	w->umr.mkey = NICSIM_NONE;
	return w;
}

/* The request the setters fill: the newest, or NULL (none begun: EINVAL at wr_complete). */
static struct nicsim_wr *current(struct ibv_qp_ex *qpx) {
	struct nicsim_ibv_qp *qp = of(qpx);
	if (!qp->nwr) { qp->wr_error = EINVAL; return NULL; }
	return &qp->wrs[qp->nwr - 1];
}

static void wr_send(struct ibv_qp_ex *qpx) { begin(qpx, IBV_WR_SEND); }

static void wr_send_imm(struct ibv_qp_ex *qpx, __be32 imm) {
	struct nicsim_wr *w = begin(qpx, IBV_WR_SEND_WITH_IMM);
	if (w) w->wr.imm_data = imm;
}

static void wr_send_inv(struct ibv_qp_ex *qpx, uint32_t rkey) {
	struct nicsim_wr *w = begin(qpx, IBV_WR_SEND_WITH_INV);
	if (w) w->wr.invalidate_rkey = rkey;
}

static void rdma(struct ibv_qp_ex *qpx, enum ibv_wr_opcode op, uint32_t rkey, uint64_t addr, __be32 imm) {
	struct nicsim_wr *w = begin(qpx, op);
	if (!w) return;
	w->wr.wr.rdma.rkey = rkey;
	w->wr.wr.rdma.remote_addr = addr;
	w->wr.imm_data = imm;
}

static void wr_rdma_write(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t addr) {
	rdma(qpx, IBV_WR_RDMA_WRITE, rkey, addr, 0);
}

static void wr_rdma_write_imm(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t addr, __be32 imm) {
	rdma(qpx, IBV_WR_RDMA_WRITE_WITH_IMM, rkey, addr, imm);
}

static void wr_rdma_read(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t addr) {
	rdma(qpx, IBV_WR_RDMA_READ, rkey, addr, 0);
}

static void atomic(struct ibv_qp_ex *qpx, enum ibv_wr_opcode op, uint32_t rkey, uint64_t addr, uint64_t compare_add,
		   uint64_t swap) {
	struct nicsim_wr *w = begin(qpx, op);
	if (!w) return;
	w->wr.wr.atomic.rkey = rkey;
	w->wr.wr.atomic.remote_addr = addr;
	w->wr.wr.atomic.compare_add = compare_add;
	w->wr.wr.atomic.swap = swap;
}

static void wr_atomic_cmp_swp(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t addr, uint64_t compare, uint64_t swap) {
	atomic(qpx, IBV_WR_ATOMIC_CMP_AND_SWP, rkey, addr, compare, swap);
}

static void wr_atomic_fetch_add(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t addr, uint64_t add) {
	atomic(qpx, IBV_WR_ATOMIC_FETCH_AND_ADD, rkey, addr, add, 0);
}

/* ibv_wr_bind_mw: the window takes rkey when the bind completes (ibv_wr_post(3)). */
static void wr_bind_mw(struct ibv_qp_ex *qpx, struct ibv_mw *mw, uint32_t rkey, const struct ibv_mw_bind_info *info) {
	struct nicsim_wr *w = begin(qpx, IBV_WR_BIND_MW);
	if (!w) return;
	w->wr.bind_mw.mw = mw;
	w->wr.bind_mw.rkey = rkey;
	w->wr.bind_mw.bind_info = *info;
}

static void wr_local_inv(struct ibv_qp_ex *qpx, uint32_t rkey) {
	struct nicsim_wr *w = begin(qpx, IBV_WR_LOCAL_INV);
	if (w) w->wr.invalidate_rkey = rkey;
}

static void wr_set_sge_list(struct ibv_qp_ex *qpx, size_t n, const struct ibv_sge *list) {
	struct nicsim_wr *w = current(qpx);
	if (!w) return;
	free(w->sges);
	w->sges = n ? malloc(n * sizeof(*list)) : NULL;
	if (n && !w->sges) { of(qpx)->wr_error = ENOMEM; return; }
	if (n) memcpy(w->sges, list, n * sizeof(*list));
	w->wr.num_sge = (int)n;
	w->wr.send_flags &= ~(unsigned)IBV_SEND_INLINE;
}

static void wr_set_sge(struct ibv_qp_ex *qpx, uint32_t lkey, uint64_t addr, uint32_t length) {
	struct ibv_sge s = { .addr = addr, .length = length, .lkey = lkey };
	wr_set_sge_list(qpx, 1, &s);
}

/*
 * Inline data is copied now, as the API requires (the program may reuse its buffers at once), and posted as one
 * inline SGE.
 */
static void wr_set_inline_data_list(struct ibv_qp_ex *qpx, size_t n, const struct ibv_data_buf *bufs) {
	struct nicsim_wr *w = current(qpx);
	size_t len = 0, at = 0;
	if (!w) return;
	for (size_t i = 0; i < n; i++) len += bufs[i].length;
	free(w->inline_data);
	free(w->sges);
	w->sges = NULL;
	w->wr.num_sge = 0;
	w->inline_data = malloc(len ? len : 1);
	if (!w->inline_data) { of(qpx)->wr_error = ENOMEM; return; }
	for (size_t i = 0; i < n; i++) {
		memcpy(w->inline_data + at, bufs[i].addr, bufs[i].length);
		at += bufs[i].length;
	}
	if (len) {
		struct ibv_sge s = { .addr = (uint64_t)(uintptr_t)w->inline_data, .length = (uint32_t)len, .lkey = 0 };
		w->sges = malloc(sizeof(s));
		if (!w->sges) { of(qpx)->wr_error = ENOMEM; return; }
		*w->sges = s;
		w->wr.num_sge = 1;
	}
	w->wr.send_flags |= IBV_SEND_INLINE;
}

static void wr_set_inline_data(struct ibv_qp_ex *qpx, void *addr, size_t length) {
	struct ibv_data_buf b = { .addr = addr, .length = length };
	wr_set_inline_data_list(qpx, 1, &b);
}

static void wr_set_ud_addr(struct ibv_qp_ex *qpx, struct ibv_ah *ah, uint32_t qpn, uint32_t qkey) {
	struct nicsim_wr *w = current(qpx);
	if (!w) return;
	w->wr.wr.ud.ah = ah;
	w->wr.wr.ud.remote_qpn = qpn;
	w->wr.wr.ud.remote_qkey = qkey;
}

static void wr_set_xrc_srqn(struct ibv_qp_ex *qpx, uint32_t srqn) {
	struct nicsim_wr *w = current(qpx);
	if (w) w->wr.qp_type.xrc.remote_srqn = srqn;
}

static int wr_complete(struct ibv_qp_ex *qpx) {
	struct nicsim_ibv_qp *qp = of(qpx);
	struct ibv_send_wr *bad = NULL;
	int rc = qp->wr_error;
	if (!rc && qp->nwr) {
		for (size_t i = 0; i < qp->nwr; i++) {
			struct nicsim_wr *w = &qp->wrs[i];
			w->wr.sg_list = w->sges;
			w->wr.next = i + 1 < qp->nwr ? &qp->wrs[i + 1].wr : NULL;
		}
		rc = nicsim_post_wrs(&qp->vqp.qp, &qp->wrs[0].wr, qp->wrs, &bad);
	}
	nicsim_wr_clear(qp);
	return rc;
}

/* mlx5dv_wr_set_dc_addr: the target of the request being built. */
static void wr_set_dc_addr(struct mlx5dv_qp_ex *dv, struct ibv_ah *ah, uint32_t dctn, uint64_t key) {
	struct nicsim_ibv_qp *qp = to_nqp_dv(dv);
	struct nicsim_wr *w = current(&qp->vqp.qp_ex);
	if (!w) return;
	w->dc.ah = ah ? ah_handle(ah) : NICSIM_NONE;
	w->dc.dctn = dctn;
	w->dc.key = key;
}

/*
 * A layout UMR (mlx5dv_wr_mr_list, mlx5dv_wr_mr_interleaved): a work request of its own, opcode
 * IBV_WR_DRIVER1, whose completion is MLX5DV_WC_UMR. As mlx5's, it needs IBV_SEND_INLINE in
 * wr_flags (EOPNOTSUPP at wr_complete otherwise); the simulator checks the rest.
 */
static struct nicsim_wr *umr(struct mlx5dv_qp_ex *dv, struct mlx5dv_mkey *mkey, uint32_t access, uint32_t repeat,
			     uint16_t n) {
	struct nicsim_ibv_qp *qp = to_nqp_dv(dv);
	struct nicsim_wr *w;
	if (!(qp->vqp.qp_ex.wr_flags & IBV_SEND_INLINE)) { qp->wr_error = EOPNOTSUPP; return NULL; }
	w = begin(&qp->vqp.qp_ex, IBV_WR_DRIVER1);
	if (!w) return NULL;
	w->umr.mkey = mkey_handle(mkey);
	w->umr.access = access;
	w->umr.repeat = repeat;
	w->umr.n = n;
	w->umr.klm = calloc(n ? n : 1, sizeof(*w->umr.klm));
	if (!w->umr.klm) { qp->wr_error = ENOMEM; return NULL; }
	if (!mkey) qp->wr_error = EINVAL;
	return w;
}

static void wr_mr_list(struct mlx5dv_qp_ex *dv, struct mlx5dv_mkey *mkey, uint32_t access, uint16_t n,
		       struct ibv_sge *sge) {
	struct nicsim_wr *w = umr(dv, mkey, access, 0, n);
	for (uint16_t i = 0; w && i < n; i++)
		w->umr.klm[i] = (struct nicsim_klm){ sge[i].addr, sge[i].length, sge[i].lkey, 0 };
}

static void wr_mr_interleaved(struct mlx5dv_qp_ex *dv, struct mlx5dv_mkey *mkey, uint32_t access, uint32_t repeat,
			      uint16_t n, struct mlx5dv_mr_interleaved *data) {
	struct nicsim_wr *w = umr(dv, mkey, access, repeat, n);
	for (uint16_t i = 0; w && i < n; i++)
		w->umr.klm[i] = (struct nicsim_klm){ data[i].addr, data[i].bytes_count, data[i].lkey, data[i].bytes_skip };
}

uint64_t nicsim_wr_ops_offered(enum ibv_qp_type t, uint32_t dc_type) {
	uint64_t sends = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM;
	uint64_t writes = IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM;
	uint64_t reads = IBV_QP_EX_WITH_RDMA_READ | IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP | IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD;
	uint64_t keys = IBV_QP_EX_WITH_LOCAL_INV | IBV_QP_EX_WITH_SEND_WITH_INV | IBV_QP_EX_WITH_BIND_MW;
	switch (t) {
	case IBV_QPT_RC: case IBV_QPT_XRC_SEND: return sends | writes | reads | keys;
	case IBV_QPT_UC: return sends | writes | keys;
	case IBV_QPT_UD: return sends;
	case IBV_QPT_DRIVER: return dc_type == MLX5DV_DCTYPE_DCI ? sends | writes | reads : 0;
	default: return 0;
	}
}

/* The operations asked for, and only those: an operation not asked for stays NULL, as on rxe and mlx5. */
void nicsim_wr_init(struct nicsim_ibv_qp *qp, uint64_t ops) {
	struct ibv_qp_ex *x = &qp->vqp.qp_ex;
	if (ops & IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP) x->wr_atomic_cmp_swp = wr_atomic_cmp_swp;
	if (ops & IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD) x->wr_atomic_fetch_add = wr_atomic_fetch_add;
	if (ops & IBV_QP_EX_WITH_LOCAL_INV) x->wr_local_inv = wr_local_inv;
	if (ops & IBV_QP_EX_WITH_BIND_MW) x->wr_bind_mw = wr_bind_mw;
	if (ops & IBV_QP_EX_WITH_RDMA_READ) x->wr_rdma_read = wr_rdma_read;
	if (ops & IBV_QP_EX_WITH_RDMA_WRITE) x->wr_rdma_write = wr_rdma_write;
	if (ops & IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM) x->wr_rdma_write_imm = wr_rdma_write_imm;
	if (ops & IBV_QP_EX_WITH_SEND) x->wr_send = wr_send;
	if (ops & IBV_QP_EX_WITH_SEND_WITH_IMM) x->wr_send_imm = wr_send_imm;
	if (ops & IBV_QP_EX_WITH_SEND_WITH_INV) x->wr_send_inv = wr_send_inv;
	x->wr_set_ud_addr = wr_set_ud_addr;
	x->wr_set_xrc_srqn = wr_set_xrc_srqn;
	x->wr_set_inline_data = wr_set_inline_data;
	x->wr_set_inline_data_list = wr_set_inline_data_list;
	x->wr_set_sge = wr_set_sge;
	x->wr_set_sge_list = wr_set_sge_list;
	x->wr_start = wr_start;
	x->wr_complete = wr_complete;
	x->wr_abort = wr_abort;
	qp->vqp.comp_mask |= VERBS_QP_EX; /* ibv_qp_to_qp_ex gives this ibv_qp_ex */
	if (qp->dc_type == MLX5DV_DCTYPE_DCI) qp->dv.wr_set_dc_addr = wr_set_dc_addr;
	if (qp->vqp.qp.qp_type == IBV_QPT_RC) {
		qp->dv.wr_mr_list = wr_mr_list;
		qp->dv.wr_mr_interleaved = wr_mr_interleaved;
	}
}
