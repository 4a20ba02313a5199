/*
 * The kern back end (nicsim-backend.h): the provider on the kernel's nicsim_ib driver, in a guest
 * whose /dev/infiniband/uverbsN is that driver's. It talks to the driver only as every rdma-core
 * provider does: uverbs commands through libibverbs' ibv_cmd_* with rdma/nicsim-abi.h as their
 * udata, then mmap of the context's UAR page and of each CQ's and QP's ring by the keys the udata
 * returns. From there posting and polling are the hw back end's (nicsim-hw-post.c, nicsim-hw.c) on
 * libnicsim's ring code (nicsim/queues.h): WQEs into the mapped rings, the doorbell record, one
 * 8-byte doorbell store into the mapped UAR page, CQEs by their owner bit (docs/device.md).
 *
 * Not offered here yet (EOPNOTSUPP from its table, nicsim-backend.c, or libibverbs' own answer for
 * a verb left out of its verbs): XRC and tag-matching SRQs (ibv_create_srq_ex), XRC domains, DC,
 * indirect mkeys, device memory, imports, and the simulator's clock.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <rdma/nicsim-abi.h>

#include "nicsim-hw.h"

/* The driver the kern back end talks to: the name the kernel binds it by. */
#define KERN_DRIVER "nicsim_ib"

bool nicsim_kern_device(struct ibv_device *dev) {
	const struct verbs_sysfs_dev *s = ((struct verbs_device *)dev)->sysfs;
	char link[PATH_MAX], target[PATH_MAX];
	if (!s || getenv("NICSIM_SOCKET")) /* a socket to serve: attach's devices, even beside a kernel's */
		return false;
	snprintf(link, sizeof(link), "%s/device/driver", s->ibdev_path);
	ssize_t n = readlink(link, target, sizeof(target) - 1);
	if (n <= 0)
		return false;
	target[n] = 0;
	const char *base = strrchr(target, '/');
	return strcmp(base ? base + 1 : target, KERN_DRIVER) == 0;
}

static struct nicsim_kern *kern_of(struct ibv_context *c) { return to_nctx(c)->hw->kern; }

/* Maps len bytes of the kernel's object at key: the mapping, or NULL with errno. */
static void *map(struct ibv_context *c, uint64_t key, size_t len) {
	void *at = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, c->cmd_fd, (off_t)key);
	return at == MAP_FAILED ? NULL : at;
}

/* ---- device, port, context ---- */

static int query_device_ex(struct ibv_context *c, const struct ibv_query_device_ex_input *input,
			   struct ibv_device_attr_ex *attr, size_t attr_size) {
	struct ib_uverbs_ex_query_device_resp resp;
	size_t resp_size = sizeof(resp);
	int rc = ibv_cmd_query_device_any(c, input, attr, attr_size, &resp, &resp_size);
	if (rc)
		return rc;
	uint64_t rev = resp.base.fw_ver; /* the firmware revision register: major << 16 | minor, as the driver's fw_ver */
	snprintf(attr->orig_attr.fw_ver, sizeof(attr->orig_attr.fw_ver), "%u.%u", (unsigned)(rev >> 16) & 0xffff,
		 (unsigned)rev & 0xffff);
	return 0;
}

static int query_port(struct ibv_context *c, uint8_t port, struct ibv_port_attr *attr) {
	struct ibv_query_port cmd;
	return ibv_cmd_query_port(c, port, attr, &cmd, sizeof(cmd));
}

static void free_context(struct ibv_context *c) {
	struct nicsim_context *ctx = to_nctx(c);
	struct nicsim_hw *hw = ctx->hw;
	munmap((void *)hw->kern->uar_map, hw->kern->uar_len);
	pthread_mutex_destroy(&hw->lock);
	free(hw->qps);
	free(hw->kern);
	free(hw);
	pthread_mutex_destroy(&ctx->lock);
	pthread_mutex_destroy(&ctx->named.lock);
	verbs_uninit_context(&ctx->vctx);
	free(ctx);
}

/* ---- PDs, MRs, AHs ---- */

static struct ibv_pd *alloc_pd(struct ibv_context *c) {
	struct nicsim_ibv_pd *pd = calloc(1, sizeof(*pd));
	struct ibv_alloc_pd cmd;
	struct { struct ib_uverbs_alloc_pd_resp ibv; struct nicsim_ibv_alloc_pd_resp drv; } resp;
	if (!pd) { errno = ENOMEM; return NULL; }
	memset(&resp, 0, sizeof(resp));
	int rc = ibv_cmd_alloc_pd(c, &pd->pd, &cmd, sizeof(cmd), &resp.ibv, sizeof(resp));
	if (rc) { free(pd); errno = rc; return NULL; }
	pd->handle = resp.drv.pdn;
	atomic_init(&pd->refcount, 1);
	return &pd->pd;
}

static int dealloc_pd(struct ibv_pd *pd) {
	int rc = ibv_cmd_dealloc_pd(pd);
	if (!rc)
		free(to_npd(pd));
	return rc;
}

static struct ibv_mr *reg_mr(struct ibv_pd *pd, void *addr, size_t len, uint64_t hca_va, int access) {
	struct nicsim_ibv_mr *mr = calloc(1, sizeof(*mr));
	struct ibv_reg_mr cmd;
	struct ib_uverbs_reg_mr_resp resp;
	if (!mr) { errno = ENOMEM; return NULL; }
	int rc = ibv_cmd_reg_mr(pd, addr, len, hca_va, access, &mr->vmr, &cmd, sizeof(cmd), &resp, sizeof(resp));
	if (rc) { free(mr); errno = rc; return NULL; }
	mr->handle = mr->vmr.ibv_mr.lkey;
	return &mr->vmr.ibv_mr;
}

static int dereg_mr(struct verbs_mr *vmr) {
	int rc = ibv_cmd_dereg_mr(vmr);
	if (!rc)
		free(to_nvmr(vmr));
	return rc;
}

/* An AH is the driver's; a UD WQE carries the destination LID, which the shared post path takes from its handle. */
static struct ibv_ah *create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr) {
	struct nicsim_ibv_ah *ah = calloc(1, sizeof(*ah));
	struct ib_uverbs_create_ah_resp resp;
	if (!ah) { errno = ENOMEM; return NULL; }
	int rc = ibv_cmd_create_ah(pd, &ah->ah, attr, &resp, sizeof(resp));
	if (rc) { free(ah); errno = rc; return NULL; }
	ah->handle = attr->dlid;
	ah->is_global = attr->is_global;
	memcpy(ah->dgid, attr->grh.dgid.raw, 16);
	return &ah->ah;
}

static int destroy_ah(struct ibv_ah *ah) {
	int rc = ibv_cmd_destroy_ah(ah);
	if (!rc)
		free(to_nah(ah));
	return rc;
}

/* ---- CQs ---- */

static struct nicsim_ibv_cq *kern_create_cq(struct ibv_context *c, int cqe, struct ibv_comp_channel *channel) {
	struct nicsim_ibv_cq *cq = calloc(1, sizeof(*cq));
	struct nicsim_hw_cq *h = calloc(1, sizeof(*h));
	struct ibv_create_cq cmd;
	struct { struct ib_uverbs_create_cq_resp ibv; struct nicsim_ibv_create_cq_resp drv; } resp;
	if (!cq || !h) { free(cq); free(h); errno = ENOMEM; return NULL; }
	memset(&resp, 0, sizeof(resp));
	int rc = ibv_cmd_create_cq(c, cqe, channel, 0, &cq->cq, &cmd, sizeof(cmd), &resp.ibv, sizeof(resp));
	if (rc) { free(cq); free(h); errno = rc; return NULL; }
	uint8_t *ring = map(c, resp.drv.mmap_key, resp.drv.mmap_size);
	if (!ring) {
		rc = errno;
		ibv_cmd_destroy_cq(&cq->cq);
		free(cq); free(h); errno = rc; return NULL;
	}
	h->map_len = resp.drv.mmap_size;
	h->map = ring;
	h->q.cqn = resp.drv.cqn;
	h->q.log_size = resp.drv.log_size;
	h->q.ring = ring;
	h->q.db = ring + resp.drv.dbrec_offset;
	h->q.uar_map = kern_of(c)->uar_map;
	cq->hw = h;
	cq->handle = h->q.cqn; /* the CQ's number, as CQEs and events name it; cq->cq.handle is the kernel's */
	return cq;
}

static int kern_destroy_cq(struct ibv_cq *cq) {
	struct nicsim_ibv_cq *c = to_ncq(cq);
	int rc = ibv_cmd_destroy_cq(cq);
	if (rc)
		return rc;
	if (c->hw->ring_len)
		munmap(c->hw->q.ring, c->hw->ring_len);
	munmap(c->hw->map, c->hw->map_len);
	free(c->hw);
	free(c);
	return 0;
}

/*
 * ibv_resize_cq: the driver's RESIZE_CQ (the adapter moves what was not polled to the new ring's
 * first entries), then the new ring mapped; the record stays in the first mapping. Polling holds
 * the context's lock, so none runs while the ring moves. A ring the kernel moved but this process
 * cannot map leaves the CQ unusable (ENOMEM).
 */
static int kern_resize_cq(struct nicsim_ibv_cq *cq, int cqe) {
	struct ibv_context *c = cq->cq.context;
	struct nicsim_hw *hw = to_nctx(c)->hw;
	struct nicsim_hw_cq *h = cq->hw;
	struct ibv_resize_cq cmd;
	struct { struct ib_uverbs_resize_cq_resp ibv; struct nicsim_ibv_resize_cq_resp drv; } resp;
	if (cqe < 1)
		return EINVAL;
	memset(&resp, 0, sizeof(resp));
	pthread_mutex_lock(&hw->lock);
	nicsim_put32(h->q.db, h->q.ci & 0xffffff); /* what was taken: the adapter moves the rest */
	int rc = ibv_cmd_resize_cq(&cq->cq, cqe, &cmd, sizeof(cmd), &resp.ibv, sizeof(resp));
	uint8_t *ring = rc ? NULL : map(c, resp.drv.mmap_key, resp.drv.mmap_size);
	if (!rc && !ring)
		rc = ENOMEM;
	if (ring) {
		if (h->ring_len)
			munmap(h->q.ring, h->ring_len);
		h->q.ring = ring;
		h->ring_len = resp.drv.mmap_size;
		h->q.log_size = resp.drv.log_size;
		h->q.ci = 0;
	}
	pthread_mutex_unlock(&hw->lock);
	return rc;
}

/* ---- QPs ---- */

static int kern_create_qp(struct ibv_context *c, struct ibv_pd *pd, struct ibv_xrcd *xrcd,
			  struct ibv_qp_init_attr *init, uint32_t dc_type, uint64_t dct_key, struct nicsim_ibv_qp *qp) {
	struct nicsim_hw *hw = to_nctx(c)->hw;
	enum ibv_qp_type t = init->qp_type;
	struct ibv_create_qp cmd;
	struct { struct ib_uverbs_create_qp_resp ibv; struct nicsim_ibv_create_qp_resp drv; } resp;
	(void)dct_key;
	if (xrcd || dc_type || (t != IBV_QPT_RC && t != IBV_QPT_UC && t != IBV_QPT_UD))
		return EOPNOTSUPP; /* XRC and DC: not through the kernel driver yet */
	if (!pd || !init->send_cq || !init->recv_cq || !to_ncq(init->send_cq)->hw || !to_ncq(init->recv_cq)->hw ||
	    (init->srq && !to_nsrq(init->srq)->hw))
		return EINVAL;
	memset(&resp, 0, sizeof(resp));
	int rc = ibv_cmd_create_qp(pd, &qp->vqp.qp, init, &cmd, sizeof(cmd), &resp.ibv, sizeof(resp));
	if (rc)
		return rc;
	struct nicsim_hw_qp *h = nicsim_hw_qp_alloc(1u << resp.drv.sq_log_size, 1u << resp.drv.rq_log_size);
	uint8_t *m = h ? map(c, resp.drv.mmap_key, resp.drv.mmap_size) : NULL;
	pthread_mutex_lock(&hw->lock);
	rc = !h || !m ? ENOMEM : nicsim_hw_know_qp(hw, qp);
	pthread_mutex_unlock(&hw->lock);
	if (rc) {
		if (m)
			munmap(m, resp.drv.mmap_size);
		if (h)
			nicsim_hw_qp_free(h);
		ibv_cmd_destroy_qp(&qp->vqp.qp);
		return rc;
	}
	h->map = m;
	h->map_len = resp.drv.mmap_size;
	h->q.qpn = resp.drv.qpn;
	h->q.uar = resp.drv.uar;
	h->q.type = (uint32_t)t;
	h->q.log_sq = resp.drv.sq_log_size;
	h->q.log_rq = resp.drv.rq_log_size;
	h->q.log_stride = resp.drv.rq_stride_log;
	h->q.sq = m + resp.drv.sq_offset;
	h->q.rq = m + resp.drv.rq_offset;
	h->q.db = m + resp.drv.dbrec_offset;
	h->q.uar_map = kern_of(c)->uar_map;
	h->max_send_wr = init->cap.max_send_wr; /* as the kernel gave them back */
	h->max_recv_wr = init->cap.max_recv_wr;
	h->sig_all = init->sq_sig_all != 0;
	h->state = IBV_QPS_RESET;
	qp->hw = h;
	qp->handle = qp->vqp.qp.handle;
	qp->max_send_sge = init->cap.max_send_sge;
	qp->max_recv_sge = init->cap.max_recv_sge;
	qp->max_inline = init->cap.max_inline_data;
	return 0;
}

static int kern_destroy_qp(struct nicsim_ibv_qp *qp) {
	struct nicsim_hw *hw = to_nctx(qp->vqp.qp.context)->hw;
	int rc = ibv_cmd_destroy_qp(&qp->vqp.qp);
	if (rc)
		return rc;
	pthread_mutex_lock(&hw->lock);
	nicsim_hw_forget_qp(hw, qp);
	pthread_mutex_unlock(&hw->lock);
	munmap(qp->hw->map, qp->hw->map_len);
	nicsim_hw_qp_free(qp->hw);
	qp->hw = NULL;
	return 0;
}

static int kern_modify_qp(struct nicsim_ibv_qp *qp, struct ibv_qp_attr *attr, int mask) {
	struct nicsim_hw *hw = to_nctx(qp->vqp.qp.context)->hw;
	struct ibv_modify_qp cmd;
	int rc = ibv_cmd_modify_qp(&qp->vqp.qp, attr, mask, &cmd, sizeof(cmd));
	if (rc || !(mask & IBV_QP_STATE))
		return rc;
	pthread_mutex_lock(&hw->lock);
	nicsim_hw_qp_moved(qp, attr->qp_state);
	pthread_mutex_unlock(&hw->lock);
	return 0;
}

static int kern_query_qp(struct nicsim_ibv_qp *qp, struct ibv_qp_attr *attr, int mask, struct ibv_qp_init_attr *init) {
	struct ibv_query_qp cmd;
	struct ibv_qp_init_attr ignored;
	return ibv_cmd_query_qp(&qp->vqp.qp, attr, mask, init ? init : &ignored, &cmd, sizeof(cmd));
}

/* ---- SRQs: basic ones (their receives posted by the hw back end's code, nicsim-hw-srq.c) ---- */

static int kern_create_srq(struct ibv_pd *pd, struct ibv_srq_attr *attr, enum ibv_srq_type type, struct ibv_xrcd *xrcd,
			   struct ibv_cq *cq, const struct ibv_tm_cap *tm, struct nicsim_ibv_srq *srq) {
	struct nicsim_hw *hw = to_nctx(pd->context)->hw;
	struct ibv_srq_init_attr init = {.srq_context = srq->vsrq.srq.srq_context, .attr = *attr};
	struct ibv_create_srq cmd;
	struct { struct ib_uverbs_create_srq_resp ibv; struct nicsim_ibv_create_srq_resp drv; } resp;
	(void)xrcd; (void)cq; (void)tm;
	if (type != IBV_SRQT_BASIC)
		return EOPNOTSUPP; /* XRC and tag-matching SRQs: not through the kernel driver yet */
	struct nicsim_hw_srq *h = calloc(1, sizeof(*h));
	if (!h)
		return ENOMEM;
	memset(&resp, 0, sizeof(resp));
	int rc = ibv_cmd_create_srq(pd, &srq->vsrq.srq, &init, &cmd, sizeof(cmd), &resp.ibv, sizeof(resp));
	if (rc) { free(h); return rc; }
	*attr = init.attr; /* as the kernel gave it back */
	h->size = 1u << resp.drv.log_size;
	h->max_wr = attr->max_wr < h->size ? attr->max_wr : h->size;
	h->wrid = calloc(h->size, sizeof(*h->wrid));
	uint8_t *ring = h->wrid ? map(pd->context, resp.drv.mmap_key, resp.drv.mmap_size) : NULL;
	pthread_mutex_lock(&hw->lock);
	struct nicsim_ibv_srq **grown = ring ? realloc(hw->srqs, (hw->nsrqs + 1) * sizeof(*grown)) : NULL;
	if (grown) {
		hw->srqs = grown;
		hw->srqs[hw->nsrqs++] = srq;
	}
	pthread_mutex_unlock(&hw->lock);
	if (!grown) {
		if (ring)
			munmap(ring, resp.drv.mmap_size);
		ibv_cmd_destroy_srq(&srq->vsrq.srq);
		free(h->wrid); free(h);
		return ENOMEM;
	}
	h->map_len = resp.drv.mmap_size;
	h->q.srqn = resp.drv.srqn;
	h->q.log_size = resp.drv.log_size;
	h->q.log_stride = resp.drv.stride_log;
	h->q.ring = ring;
	h->q.db = ring + resp.drv.dbrec_offset;
	srq->hw = h;
	srq->handle = h->q.srqn; /* the SRQ's number, as CQEs and events name it; srq.handle is the kernel's */
	srq->max_sge = attr->max_sge;
	srq->vsrq.srq_num = h->q.srqn;
	return 0;
}

static int kern_destroy_srq(struct nicsim_ibv_srq *srq) {
	struct nicsim_hw *hw = to_nctx(srq->vsrq.srq.context)->hw;
	int rc = ibv_cmd_destroy_srq(&srq->vsrq.srq);
	if (rc)
		return rc;
	pthread_mutex_lock(&hw->lock);
	for (uint32_t i = 0; i < hw->nsrqs; i++)
		if (hw->srqs[i] == srq) {
			hw->srqs[i] = hw->srqs[--hw->nsrqs];
			break;
		}
	pthread_mutex_unlock(&hw->lock);
	munmap(srq->hw->q.ring, srq->hw->map_len);
	free(srq->hw->wrid);
	free(srq->hw);
	srq->hw = NULL;
	return 0;
}

/* The limit (the driver's ARM_SRQ); an SRQ is not resized. */
static int kern_modify_srq(struct nicsim_ibv_srq *srq, struct ibv_srq_attr *attr, int mask) {
	struct ibv_modify_srq cmd;
	return ibv_cmd_modify_srq(&srq->vsrq.srq, attr, mask, &cmd, sizeof(cmd));
}

static int kern_query_srq(struct nicsim_ibv_srq *srq, struct ibv_srq_attr *attr) {
	struct ibv_query_srq cmd;
	return ibv_cmd_query_srq(&srq->vsrq.srq, attr, &cmd, sizeof(cmd));
}

/* ---- memory windows: ALLOC_MW through the driver; binds are the hw back end's WQEs ---- */

static struct ibv_mw *alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type) {
	struct nicsim_ibv_mw *mw = calloc(1, sizeof(*mw));
	struct ibv_alloc_mw cmd;
	struct ib_uverbs_alloc_mw_resp resp;
	if (!mw) { errno = ENOMEM; return NULL; }
	int rc = ibv_cmd_alloc_mw(pd, type, &mw->mw, &cmd, sizeof(cmd), &resp, sizeof(resp));
	if (rc) { free(mw); errno = rc; return NULL; }
	return &mw->mw;
}

static int dealloc_mw(struct ibv_mw *mw) {
	int rc = ibv_cmd_dealloc_mw(mw);
	if (!rc)
		free(mw); /* the nicsim_ibv_mw it is the first member of */
	return rc;
}

/* The verbs the kern back end answers alone; what it leaves out is libibverbs' answer (EOPNOTSUPP). */
static const struct verbs_context_ops kern_verbs = {
	.alloc_mw = alloc_mw,
	.alloc_pd = alloc_pd,
	.dealloc_mw = dealloc_mw,
	.create_ah = create_ah,
	.dealloc_pd = dealloc_pd,
	.dereg_mr = dereg_mr,
	.destroy_ah = destroy_ah,
	.free_context = free_context,
	.query_device_ex = query_device_ex,
	.query_port = query_port,
	.reg_mr = reg_mr,
};

/* ibv_attach_mcast / ibv_detach_mcast: the kernel driver's attach_mcast / detach_mcast (uverbs). */
static int kern_mcast(struct nicsim_ibv_qp *qp, const union ibv_gid *gid, uint16_t lid, int attach) {
	return attach ? ibv_cmd_attach_mcast(&qp->vqp.qp, gid, lid) : ibv_cmd_detach_mcast(&qp->vqp.qp, gid, lid);
}

/*
 * The kernel driver's: objects by uverbs commands, the data path the hw back end's rings. Not
 * offered through it yet: XRC and tag-matching SRQs, XRC domains, indirect mkeys.
 */
const struct nicsim_backend_ops nicsim_kern_backend = {
	.create_cq = kern_create_cq,
	.destroy_cq = kern_destroy_cq,
	.resize_cq = kern_resize_cq,
	.poll_cq = nicsim_ring_poll,
	.req_notify_cq = nicsim_hw_req_notify_cq, /* the arm word in the record and on the UAR page */
	.cq_event_taken = nicsim_hw_cq_event,
	.create_qp = kern_create_qp,
	.destroy_qp = kern_destroy_qp,
	.modify_qp = kern_modify_qp,
	.query_qp = kern_query_qp,
	.post_send = nicsim_hw_post_send,
	.post_recv = nicsim_hw_post_recv,
	.post_srq_recv = nicsim_hw_post_srq_recv,
	.mcast = kern_mcast,
	.create_srq = kern_create_srq,
	.destroy_srq = kern_destroy_srq,
	.modify_srq = kern_modify_srq,
	.query_srq = kern_query_srq,
	.post_srq_ops = nicsim_hw_post_srq_ops, /* EINVAL: none of its SRQs matches tags */
	.open_xrcd = nicsim_no_open_xrcd,
	.close_xrcd = nicsim_no_close_xrcd,
	.create_mkey = nicsim_no_create_mkey,
	.destroy_mkey = nicsim_no_destroy_mkey,
	.event_qp = nicsim_hw_event_qp,
	.event_srq = nicsim_hw_event_srq,
	.verbs = &kern_verbs,
};

/* ---- the context ---- */

/* The context's user context in the kernel (GET_CONTEXT) and its UAR page mapped: 0, or an errno. */
static int open_ucontext(struct nicsim_context *ctx, struct nicsim_kern *k) {
	struct ibv_get_context cmd;
	struct { struct ib_uverbs_get_context_resp ibv; struct nicsim_ibv_alloc_ucontext_resp drv; } resp;
	memset(&resp, 0, sizeof(resp));
	int rc = ibv_cmd_get_context(&ctx->vctx, &cmd, sizeof(cmd), &resp.ibv, sizeof(resp));
	if (rc)
		return rc;
	k->uar_len = resp.drv.uar_page_size > (uint32_t)getpagesize() ? resp.drv.uar_page_size : (size_t)getpagesize();
	k->uar_map = map(&ctx->vctx.context, resp.drv.uar_mmap_key, k->uar_len);
	if (!k->uar_map)
		return errno;
	k->bf_size = resp.drv.bf_size;
	k->max_inline = resp.drv.max_inline;
	k->max_sge = resp.drv.max_sge;
	k->max_qp_wr = resp.drv.max_qp_wr;
	k->max_cqe = resp.drv.max_cqe;
	k->lid = resp.drv.lid;
	ctx->hw->uar = resp.drv.uar;
	return 0;
}

struct verbs_context *nicsim_kern_open(struct ibv_device *dev, int cmd_fd) {
	struct nicsim_context *ctx = verbs_init_and_alloc_context(dev, cmd_fd, ctx, vctx, 0);
	if (!ctx)
		return NULL;
	struct nicsim_hw *hw = calloc(1, sizeof(*hw));
	struct nicsim_kern *k = calloc(1, sizeof(*k));
	int rc = hw && k ? 0 : ENOMEM;
	if (!rc) {
		pthread_mutex_init(&hw->lock, NULL);
		hw->ctx = ctx;
		hw->kern = k;
		ctx->hw = hw;
		rc = open_ucontext(ctx, k);
	}
	if (rc) {
		free(hw);
		free(k);
		verbs_uninit_context(&ctx->vctx);
		free(ctx);
		errno = rc;
		return NULL;
	}
	pthread_mutex_init(&ctx->lock, NULL);
	pthread_mutex_init(&ctx->named.lock, NULL);
	ctx->sock = -1;
	ctx->pid = getpid();
	nicsim_set_backend(ctx, &nicsim_kern_backend);
	return &ctx->vctx;
}
