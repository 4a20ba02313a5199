/*
 * nicsim's provider for libibverbs (rdma-core 44): it makes a simulated nicsim adapter an RDMA
 * device that unmodified libibverbs programs find and use. Every verb goes to the simulator over
 * a Unix domain socket (NICSIM_SOCKET), as a request naming the node (NICSIM_NODE); the
 * simulator runs it on the adapter model, in simulated time, and the adapter's DMA reads and
 * writes this process's registered buffers themselves. Completions, errors and syndromes are the
 * model's.
 *
 * Loaded twice over, as one library: by libibverbs as the provider named in RDMAV_DRIVERS, and by
 * LD_PRELOAD, so that its completion channel verbs (which otherwise need the kernel) take the
 * place of libibverbs' own.
 *
 * Wire format: a request is u32 length (of what follows), u32 op, then the op's fields; a reply
 * is u32 length, u32 status (0 or an errno), then its fields; little-endian. The op numbers come
 * from nicsim-wire.h, generated from the simulator's definition.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <endian.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "nicsim-provider.h"

static const struct verbs_device_ops nicsim_device_ops;

bool nicsim_owns(struct ibv_context *c) { return ((struct verbs_device *)c->device)->ops == &nicsim_device_ops; }

/* The first context this program opened: the simulated clock is read through it. */
static struct nicsim_context *clock_ctx;

static void put_sges(struct msg *m, const struct ibv_sge *sg, int n);

int simple(struct ibv_context *c, uint32_t op, uint32_t handle) {
	struct msg m = request(op);
	int rc;
	put32(&m, handle);
	rc = call(ctx_of(c), &m);
	done(&m);
	return rc;
}

/* ---- device and context ---- */

/* Whether a caller's struct of attr_size bytes reaches past field f of struct ibv_device_attr_ex. */
#define HAS_EX_FIELD(attr_size, f) \
	((attr_size) >= offsetof(struct ibv_device_attr_ex, f) + sizeof(((struct ibv_device_attr_ex *)0)->f))

static void device_attr(struct ibv_device_attr *a, const struct nicsim_wire_query_device_reply *r) {
	a->node_guid = htobe64(r->node_guid); /* a GUID is kept in network order */
	a->sys_image_guid = htobe64(r->sys_image_guid);
	a->max_mr_size = r->max_mr_size;
	a->page_size_cap = r->page_size_cap;
	a->vendor_id = r->vendor_id;
	a->vendor_part_id = r->vendor_part_id;
	a->hw_ver = r->hw_ver;
	a->max_qp = (int)r->max_qp;
	a->max_qp_wr = (int)r->max_qp_wr;
	a->max_sge = (int)r->max_sge;
	a->max_cq = (int)r->max_cq;
	a->max_cqe = (int)r->max_cqe;
	a->max_mr = (int)r->max_mr;
	a->max_pd = (int)r->max_pd;
	a->max_qp_rd_atom = (int)r->max_qp_rd_atom;
	a->max_qp_init_rd_atom = (int)r->max_qp_init_rd_atom;
	a->max_res_rd_atom = a->max_qp * a->max_qp_rd_atom;
	a->max_srq = (int)r->max_srq;
	a->max_srq_wr = (int)r->max_srq_wr;
	a->max_srq_sge = (int)r->max_srq_sge;
	a->max_ah = (int)r->max_ah;
	a->atomic_cap = (enum ibv_atomic_cap)r->atomic_cap;
	a->phys_port_cnt = (uint8_t)r->phys_port_cnt;
	a->device_cap_flags = r->device_cap_flags;
	a->max_pkeys = 1;
	a->local_ca_ack_delay = 16;
	memcpy(a->fw_ver, r->fw_ver, sizeof(a->fw_ver) < sizeof(r->fw_ver) ? sizeof(a->fw_ver) : sizeof(r->fw_ver));
	a->fw_ver[sizeof(a->fw_ver) - 1] = 0;
}

/* The extended attributes, as far as the caller's struct of attr_size bytes reaches. */
static void device_attr_ex(struct ibv_device_attr_ex *x, size_t attr_size, const struct nicsim_wire_query_device_reply *r) {
	if (HAS_EX_FIELD(attr_size, phys_port_cnt_ex)) x->phys_port_cnt_ex = r->phys_port_cnt;
	if (HAS_EX_FIELD(attr_size, tm_caps)) {
		x->tm_caps.max_num_tags = r->tm_max_num_tags;
		x->tm_caps.max_ops = r->tm_max_ops;
		x->tm_caps.max_sge = r->tm_max_sge;
		x->tm_caps.max_rndv_hdr_size = r->tm_max_rndv_hdr_size;
		x->tm_caps.flags = r->tm_flags;
	}
	if (HAS_EX_FIELD(attr_size, odp_caps)) {
		x->odp_caps.general_caps = r->odp_general_caps;
		x->odp_caps.per_transport_caps.rc_odp_caps = r->odp_rc_caps;
		x->odp_caps.per_transport_caps.uc_odp_caps = r->odp_uc_caps;
		x->odp_caps.per_transport_caps.ud_odp_caps = r->odp_ud_caps;
	}
	if (HAS_EX_FIELD(attr_size, xrc_odp_caps)) x->xrc_odp_caps = r->odp_xrc_caps;
	if (HAS_EX_FIELD(attr_size, hca_core_clock)) {
		x->hca_core_clock = r->hca_core_clock;
		x->completion_timestamp_mask = r->completion_timestamp_mask;
	}
	if (HAS_EX_FIELD(attr_size, max_dm_size)) x->max_dm_size = r->max_dm_size;
}

static int query_device_ex(struct ibv_context *c, const struct ibv_query_device_ex_input *input,
			   struct ibv_device_attr_ex *attr, size_t attr_size) {
	struct msg m = request(NICSIM_OP_QUERY_DEVICE);
	struct nicsim_wire_query_device_reply r;
	int rc;
	(void)input;
	if (attr_size < sizeof(attr->orig_attr)) { done(&m); return EINVAL; }
	rc = call(ctx_of(c), &m);
	if (rc) { done(&m); return rc; }
	get(&m, &r, sizeof(r));
	rc = m.failed ? EIO : 0;
	done(&m);
	if (rc) return rc;
	memset(attr, 0, attr_size);
	device_attr(&attr->orig_attr, &r);
	device_attr_ex(attr, attr_size, &r);
	return 0;
}

uint64_t nicsim_clock_khz(struct ibv_context *c) {
	struct nicsim_context *ctx = ctx_of(c);
	if (!ctx->clock_khz) {
		struct ibv_device_attr_ex a;
		if (!query_device_ex(c, NULL, &a, sizeof(a))) ctx->clock_khz = a.hca_core_clock;
	}
	return ctx->clock_khz;
}

/* ibv_query_rt_values_ex: the adapter's free-running clock now, in core cycles (tv_nsec, as mlx5 gives it). */
static int query_rt_values(struct ibv_context *c, struct ibv_values_ex *values) {
	uint64_t khz = nicsim_clock_khz(c);
	int64_t ps;
	if (values->comp_mask & ~(uint32_t)IBV_VALUES_MASK_RAW_CLOCK) return EINVAL;
	if (!khz) return EIO;
	if (!(values->comp_mask & IBV_VALUES_MASK_RAW_CLOCK)) return 0;
	ps = nicsim_sim_now_ps_of(ctx_of(c));
	if (ps < 0) return EIO;
	values->raw_clock.tv_sec = 0;
	values->raw_clock.tv_nsec = (long)((uint64_t)ps / (1000000000ull / khz)); /* cycles of the core clock's period in ps */
	return 0;
}

static int query_port(struct ibv_context *c, uint8_t port, struct ibv_port_attr *a) {
	struct msg m = request(NICSIM_OP_QUERY_PORT);
	struct nicsim_wire_query_port_reply r;
	int rc;
	put32(&m, port);
	rc = call(ctx_of(c), &m);
	if (rc) { done(&m); return rc; }
	get(&m, &r, sizeof(r));
	rc = m.failed ? EIO : 0;
	done(&m);
	if (rc) return rc;
	memset(a, 0, sizeof(*a));
	a->state = (enum ibv_port_state)r.state;
	a->max_mtu = (enum ibv_mtu)r.max_mtu;
	a->active_mtu = (enum ibv_mtu)r.active_mtu;
	a->gid_tbl_len = (int)r.gid_tbl_len;
	a->port_cap_flags = r.port_cap_flags;
	a->max_msg_sz = r.max_msg_sz;
	a->lid = (uint16_t)r.lid;
	a->sm_lid = (uint16_t)r.sm_lid;
	a->lmc = (uint8_t)r.lmc;
	a->max_vl_num = (uint8_t)r.max_vl_num;
	a->sm_sl = (uint8_t)r.sm_sl;
	a->active_width = (uint8_t)r.active_width;
	a->active_speed = (uint8_t)r.active_speed;
	a->phys_state = (uint8_t)r.phys_state;
	a->link_layer = (uint8_t)r.link_layer;
	a->pkey_tbl_len = (uint16_t)r.pkey_tbl_len;
	return 0;
}

/* ---- protection domains, memory regions, address handles ---- */

/* Each verb that makes an object allocates its record first: a failure then leaves nothing in the simulator. */
static struct ibv_pd *alloc_pd(struct ibv_context *c) {
	struct nicsim_pd *pd = calloc(1, sizeof(*pd));
	struct msg m;
	int rc;
	if (!pd) { errno = ENOMEM; return NULL; }
	m = request(NICSIM_OP_ALLOC_PD);
	rc = call(ctx_of(c), &m);
	if (rc) { done(&m); free(pd); errno = rc; return NULL; }
	pd->handle = get32(&m);
	pd->pd.handle = pd->handle;
	atomic_init(&pd->refcount, 1);
	done(&m);
	return &pd->pd;
}

static uint32_t pd_handle(struct ibv_pd *pd) { return ((struct nicsim_pd *)pd)->handle; }

/* A parent domain is freed in the program; a PD a parent domain contains is EBUSY (as mlx5's). */
static int dealloc_pd(struct ibv_pd *pd) {
	struct nicsim_pd *parent = nicsim_parent_domain(pd);
	int rc;
	if (parent) return nicsim_dealloc_parent_domain(parent);
	if (atomic_load(&((struct nicsim_pd *)pd)->refcount) > 1) return EBUSY;
	rc = simple(pd->context, NICSIM_OP_DEALLOC_PD, pd_handle(pd));
	if (!rc) free(pd);
	return rc;
}

static struct ibv_mr *reg_mr(struct ibv_pd *pd, void *addr, size_t length, uint64_t iova, int access) {
	struct nicsim_mr *mr = calloc(1, sizeof(*mr));
	struct msg m;
	int rc;
	if (!mr) { errno = ENOMEM; return NULL; }
	m = request(NICSIM_OP_REG_MR);
	put32(&m, pd_handle(pd));
	put64(&m, (uint64_t)(uintptr_t)addr);
	put64(&m, length);
	put64(&m, iova);
	put32(&m, (uint32_t)access);
	rc = call(ctx_of(pd->context), &m);
	if (rc) { done(&m); free(mr); errno = rc; return NULL; }
	mr->handle = get32(&m);
	mr->vmr.ibv_mr.handle = mr->handle;
	mr->vmr.ibv_mr.lkey = get32(&m);
	mr->vmr.ibv_mr.rkey = get32(&m);
	mr->vmr.mr_type = IBV_MR_TYPE_MR;
	mr->vmr.access = access;
	done(&m);
	return &mr->vmr.ibv_mr;
}

/*
 * ibv_rereg_mr: libibverbs has checked the flags and, once this returns 0, sets the MR's PD, address
 * and length; the keys come back (the same: the adapter keeps them). errno is set too: libibverbs
 * reports the command's failure as IBV_REREG_MR_ERR_CMD, and programs read the reason from errno.
 */
static int rereg_mr(struct verbs_mr *vmr, int flags, struct ibv_pd *pd, void *addr, size_t length, int access) {
	struct nicsim_mr *mr = (struct nicsim_mr *)vmr;
	struct msg m = request(NICSIM_OP_REREG_MR);
	int rc;
	put32(&m, mr->handle);
	put32(&m, (uint32_t)flags);
	put32(&m, (flags & IBV_REREG_MR_CHANGE_PD) && pd ? pd_handle(pd) : NICSIM_NONE);
	put64(&m, (uint64_t)(uintptr_t)addr);
	put64(&m, length);
	put32(&m, (uint32_t)access);
	rc = call(ctx_of(vmr->ibv_mr.context), &m);
	if (rc) { done(&m); errno = rc; return rc; }
	vmr->ibv_mr.lkey = get32(&m);
	vmr->ibv_mr.rkey = get32(&m);
	if (flags & IBV_REREG_MR_CHANGE_ACCESS) vmr->access = access;
	done(&m);
	return 0;
}

/* ibv_advise_mr: the pages under each SGE brought in ahead (with IBV_ADVISE_MR_FLAG_FLUSH, before it returns). */
static int advise_mr(struct ibv_pd *pd, enum ibv_advise_mr_advice advice, uint32_t flags, struct ibv_sge *sg_list,
		     uint32_t num_sge) {
	struct msg m;
	int rc;
	if (num_sge == 0 || num_sge > 16) return EINVAL; /* the simulator takes up to 16, as a post's list */
	m = request(NICSIM_OP_ADVISE_MR);
	put32(&m, pd_handle(pd));
	put32(&m, advice);
	put32(&m, flags);
	put_sges(&m, sg_list, (int)num_sge);
	rc = call(ctx_of(pd->context), &m);
	done(&m);
	return rc;
}

static int dereg_mr(struct verbs_mr *vmr) {
	struct nicsim_mr *mr = (struct nicsim_mr *)vmr;
	int rc = simple(vmr->ibv_mr.context, NICSIM_OP_DEREG_MR, mr->handle);
	if (!rc) free(mr);
	return rc;
}

static struct ibv_ah *create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr) {
	struct nicsim_ah *ah = calloc(1, sizeof(*ah));
	struct msg m;
	int rc;
	if (!ah) { errno = ENOMEM; return NULL; }
	m = request(NICSIM_OP_CREATE_AH);
	put32(&m, pd_handle(pd));
	put32(&m, attr->dlid);
	put32(&m, attr->sl);
	put32(&m, attr->port_num);
	put32(&m, attr->is_global);
	rc = call(ctx_of(pd->context), &m);
	if (rc) { done(&m); free(ah); errno = rc; return NULL; }
	ah->handle = get32(&m);
	ah->ah.handle = ah->handle;
	done(&m);
	return &ah->ah;
}

/* ---- device memory: the adapter's on-chip memory, written and read through BAR0, reached by RDMA ---- */

int nicsim_memcpy_to_dm(struct ibv_dm *dm, uint64_t offset, const void *host_addr, size_t length) {
	struct msg m = request(NICSIM_OP_MEMCPY_TO_DM);
	int rc;
	if (length > UINT32_MAX) return EINVAL;
	put32(&m, dm->handle);
	put64(&m, offset);
	put32(&m, (uint32_t)length);
	put(&m, host_addr, length);
	rc = call(ctx_of(dm->context), &m);
	done(&m);
	return rc;
}

int nicsim_memcpy_from_dm(void *host_addr, struct ibv_dm *dm, uint64_t offset, size_t length) {
	struct msg m = request(NICSIM_OP_MEMCPY_FROM_DM);
	uint32_t n;
	int rc;
	if (length > UINT32_MAX) return EINVAL;
	put32(&m, dm->handle);
	put64(&m, offset);
	put32(&m, (uint32_t)length);
	rc = call(ctx_of(dm->context), &m);
	if (!rc) {
		n = get32(&m);
		if (n != length) rc = EIO;
		else get(&m, host_addr, length);
		if (m.failed) rc = EIO;
	}
	done(&m);
	return rc;
}

static struct ibv_dm *alloc_dm(struct ibv_context *c, struct ibv_alloc_dm_attr *attr) {
	struct ibv_dm *dm;
	struct msg m;
	int rc;
	if (attr->comp_mask) { errno = EINVAL; return NULL; }
	dm = calloc(1, sizeof(*dm));
	if (!dm) { errno = ENOMEM; return NULL; }
	m = request(NICSIM_OP_ALLOC_DM);
	put64(&m, attr->length);
	put32(&m, attr->log_align_req);
	rc = call(ctx_of(c), &m);
	if (rc) { done(&m); free(dm); errno = rc; return NULL; }
	dm->handle = get32(&m);
	dm->context = c;
	dm->memcpy_to_dm = nicsim_memcpy_to_dm;
	dm->memcpy_from_dm = nicsim_memcpy_from_dm;
	done(&m);
	return dm;
}

static int free_dm(struct ibv_dm *dm) {
	int rc = simple(dm->context, NICSIM_OP_FREE_DM, dm->handle);
	if (!rc) free(dm);
	return rc;
}

static struct ibv_mr *reg_dm_mr(struct ibv_pd *pd, struct ibv_dm *dm, uint64_t offset, size_t length, unsigned int access) {
	struct nicsim_mr *mr = calloc(1, sizeof(*mr));
	struct msg m;
	int rc;
	if (!mr) { errno = ENOMEM; return NULL; }
	m = request(NICSIM_OP_REG_DM_MR);
	put32(&m, pd_handle(pd));
	put32(&m, dm->handle);
	put64(&m, offset);
	put64(&m, length);
	put32(&m, access);
	rc = call(ctx_of(pd->context), &m);
	if (rc) { done(&m); free(mr); errno = rc; return NULL; }
	mr->handle = get32(&m);
	mr->vmr.ibv_mr.handle = mr->handle;
	mr->vmr.ibv_mr.lkey = get32(&m);
	mr->vmr.ibv_mr.rkey = get32(&m);
	mr->vmr.ibv_mr.context = pd->context; /* what ibv_cmd_reg_dm_mr fills (ibv_reg_dm_mr is libibverbs' inline) */
	mr->vmr.ibv_mr.pd = pd;
	mr->vmr.ibv_mr.addr = (void *)(uintptr_t)offset; /* zero-based: the region's byte X is iova X */
	mr->vmr.ibv_mr.length = length;
	mr->vmr.mr_type = IBV_MR_TYPE_MR;
	mr->vmr.access = (int)access;
	done(&m);
	return &mr->vmr.ibv_mr;
}

/* ---- memory windows ---- */

static struct ibv_mw *alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type) {
	struct nicsim_mw *mw = calloc(1, sizeof(*mw));
	struct msg m = request(NICSIM_OP_ALLOC_MW);
	int rc;
	if (!mw) { done(&m); errno = ENOMEM; return NULL; }
	put32(&m, pd_handle(pd));
	put32(&m, (uint32_t)type);
	rc = call(ctx_of(pd->context), &m);
	if (rc) { done(&m); free(mw); errno = rc; return NULL; }
	mw->mw.handle = get32(&m);
	mw->mw.rkey = get32(&m);
	mw->mw.context = pd->context;
	mw->mw.pd = pd;
	mw->mw.type = type;
	done(&m);
	return &mw->mw;
}

static int dealloc_mw(struct ibv_mw *mw) {
	int rc = simple(mw->context, NICSIM_OP_DEALLOC_MW, mw->handle);
	if (!rc) free(mw);
	return rc;
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

static int destroy_ah(struct ibv_ah *ah) {
	int rc = simple(ah->context, NICSIM_OP_DESTROY_AH, ((struct nicsim_ah *)ah)->handle);
	if (!rc) free(ah);
	return rc;
}

/* ---- completion queues ---- */

struct nicsim_cq *nicsim_create_cq(struct ibv_context *c, int cqe, struct ibv_comp_channel *channel) {
	struct msg m = request(NICSIM_OP_CREATE_CQ);
	struct nicsim_cq *cq = calloc(1, sizeof(*cq));
	int rc;
	if (!cq) { errno = ENOMEM; return NULL; }
	put32(&m, (uint32_t)cqe);
	put32(&m, channel ? (uint32_t)channel->fd : NICSIM_NONE); /* the channel's socket: its number names it */
	rc = call(ctx_of(c), &m);
	if (rc) { done(&m); free(cq); errno = rc; return NULL; }
	cq->handle = get32(&m);
	cq->cq.handle = cq->handle;
	cq->cq.cqe = (int)get32(&m);
	done(&m);
	nicsim_name(ctx_of(c), cq->handle, cq); /* events name it by its handle */
	return cq;
}

static struct ibv_cq *create_cq(struct ibv_context *c, int cqe, struct ibv_comp_channel *channel, int vector) {
	struct nicsim_cq *cq;
	if (vector < 0 || vector >= c->num_comp_vectors) { errno = EINVAL; return NULL; } /* as the kernel's create_cq */
	cq = nicsim_create_cq(c, cqe, channel);
	return cq ? &cq->cq : NULL;
}

static uint32_t cq_handle(struct ibv_cq *cq) { return cq ? ((struct nicsim_cq *)cq)->handle : NICSIM_NONE; }

/* Destroys cq once the events the program was given for it are acknowledged (ibv_destroy_cq(3)); those it was not given are dropped. */
static int destroy_cq(struct ibv_cq *cq) {
	struct nicsim_cq *c = (struct nicsim_cq *)cq;
	int rc = simple(cq->context, NICSIM_OP_DESTROY_CQ, c->handle);
	if (rc) return rc;
	nicsim_name(ctx_of(cq->context), c->handle, NULL);
	nicsim_await_acks(&cq->mutex, &cq->cond, &cq->comp_events_completed, c->comp_returned);
	nicsim_await_acks(&cq->mutex, &cq->cond, &cq->async_events_completed, c->async_returned);
	nicsim_domain_use(c->domain, -1);
	free(c);
	return 0;
}

/* ibv_resize_cq: at least cqe entries, the completions not yet polled kept; cq->cqe tells how many it got. */
static int resize_cq(struct ibv_cq *cq, int cqe) {
	struct nicsim_cq *c = (struct nicsim_cq *)cq;
	struct msg m = request(NICSIM_OP_RESIZE_CQ);
	int rc;
	if (cqe < 1) { done(&m); return EINVAL; } /* as the kernel's ib_resize_cq: cqe >= 1 */
	put32(&m, c->handle);
	put32(&m, (uint32_t)cqe);
	rc = call(ctx_of(cq->context), &m);
	if (!rc) cq->cqe = (int)get32(&m);
	done(&m);
	return rc;
}

/* Returns the completions taken, or a negative errno (as ibv_poll_cq does). */
int nicsim_poll(struct ibv_cq *cq, int max, struct ibv_wc *wc, struct nicsim_wc_extra *x) {
	struct msg m = request(NICSIM_OP_POLL_CQ);
	uint32_t n, i;
	int rc;
	if (max < 0) return -EINVAL;
	put32(&m, cq_handle(cq));
	put32(&m, (uint32_t)max);
	rc = call(ctx_of(cq->context), &m);
	if (rc) { done(&m); return -rc; }
	n = get32(&m);
	for (i = 0; i < n && i < (uint32_t)max; i++) {
		struct nicsim_wire_work_completion r;
		struct ibv_wc *w = &wc[i];
		get(&m, &r, sizeof(r));
		memset(w, 0, sizeof(*w));
		w->wr_id = r.wr_id;
		w->status = (enum ibv_wc_status)r.status;
		w->opcode = (enum ibv_wc_opcode)r.opcode;
		w->vendor_err = r.vendor_err;
		w->byte_len = r.byte_len;
		w->imm_data = r.imm_data;
		w->qp_num = r.qp_num;
		w->src_qp = r.src_qp;
		w->wc_flags = r.wc_flags;
		w->pkey_index = (uint16_t)r.pkey_index;
		w->slid = (uint16_t)r.slid;
		w->sl = (uint8_t)r.sl;
		w->dlid_path_bits = (uint8_t)r.dlid_path_bits;
		if (x) { x[i].tm.tag = r.tm_tag; x[i].tm.priv = r.tm_priv; x[i].timestamp = r.timestamp; }
	}
	rc = m.failed ? -EIO : (int)i;
	done(&m);
	return rc;
}

static int poll_cq(struct ibv_cq *cq, int max, struct ibv_wc *wc) { return nicsim_poll(cq, max, wc, NULL); }

static int req_notify_cq(struct ibv_cq *cq, int solicited_only) {
	struct msg m = request(NICSIM_OP_REQ_NOTIFY_CQ);
	int rc;
	put32(&m, cq_handle(cq));
	put32(&m, (uint32_t)solicited_only);
	rc = call(ctx_of(cq->context), &m);
	done(&m);
	return rc;
}

static void cq_event(struct ibv_cq *cq) { (void)cq; }

/* ---- shared receive queues ---- */

static uint32_t srq_handle(struct ibv_srq *srq) { return srq ? ((struct nicsim_srq *)srq)->handle : NICSIM_NONE; }

static uint32_t xrcd_handle(struct ibv_xrcd *x) { return x ? ((struct nicsim_xrcd *)x)->vxrcd.handle : NICSIM_NONE; }

/* An SRQ: basic, or of XRC domain xrcd with its own CQ; attr's max_wr and max_sge become what it got. */
static struct ibv_srq *make_srq(struct ibv_pd *pd, void *srq_context, struct ibv_srq_attr *attr, enum ibv_srq_type type,
				struct ibv_xrcd *xrcd, struct ibv_cq *cq, const struct ibv_tm_cap *tm) {
	struct msg m = request(NICSIM_OP_CREATE_SRQ);
	struct nicsim_srq *srq;
	int rc;
	srq = calloc(1, sizeof(*srq));
	if (!srq) { errno = ENOMEM; return NULL; }
	{
		struct nicsim_wire_create_srq_request q = {
			.pd = pd_handle(pd), .max_wr = attr->max_wr, .max_sge = attr->max_sge, .srq_limit = attr->srq_limit,
			.srq_type = type, .xrcd = xrcd_handle(xrcd), .cq = cq_handle(cq),
			.tm_max_num_tags = tm ? tm->max_num_tags : 0, .tm_max_ops = tm ? tm->max_ops : 0,
		};
		put(&m, &q, sizeof(q));
	}
	rc = call(ctx_of(pd->context), &m);
	if (rc) { done(&m); free(srq); errno = rc; return NULL; }
	{
		struct nicsim_wire_create_srq_reply r;
		get(&m, &r, sizeof(r));
		srq->handle = r.handle;
		attr->max_wr = r.max_wr;
		attr->max_sge = r.max_sge;
		srq->max_sge = attr->max_sge;
		srq->vsrq.srq_num = r.srq_num;
	}
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
	done(&m);
	nicsim_name(ctx_of(pd->context), srq->handle, &srq->vsrq.srq); /* events name it by its handle */
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
	for (struct ibv_ops_wr *o = op; o; o = o->next) {
		struct msg m = request(NICSIM_OP_POST_SRQ_OPS);
		int rc;
		put32(&m, srq_handle(srq));
		put32(&m, 1);
		put64(&m, o->wr_id);
		put32(&m, o->opcode);
		put32(&m, (uint32_t)o->flags);
		put32(&m, o->tm.unexpected_cnt);
		put32(&m, o->tm.handle);
		put64(&m, o->opcode == IBV_WR_TAG_ADD ? o->tm.add.recv_wr_id : 0);
		put64(&m, o->opcode == IBV_WR_TAG_ADD ? o->tm.add.tag : 0);
		put64(&m, o->opcode == IBV_WR_TAG_ADD ? o->tm.add.mask : 0);
		if (o->opcode == IBV_WR_TAG_ADD) put_sges(&m, o->tm.add.sg_list, o->tm.add.num_sge);
		else put32(&m, 0);
		rc = call(ctx_of(srq->context), &m);
		if (!rc && o->opcode == IBV_WR_TAG_ADD) o->tm.handle = get32(&m);
		done(&m);
		if (rc) { *bad = o; return rc; }
	}
	return 0;
}

static int get_srq_num(struct ibv_srq *srq, uint32_t *srq_num) {
	*srq_num = ((struct nicsim_srq *)srq)->vsrq.srq_num;
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
	struct nicsim_xrcd *x;
	struct stat st;
	int rc, by_file = (attr->comp_mask & IBV_XRCD_INIT_ATTR_FD) && attr->fd >= 0;
	/* as libibverbs' ibv_cmd_open_xrcd: an unknown bit is EOPNOTSUPP, a missing FD or OFLAGS EINVAL */
	if (attr->comp_mask >= IBV_XRCD_INIT_ATTR_RESERVED) { errno = EOPNOTSUPP; return NULL; }
	if (!(attr->comp_mask & IBV_XRCD_INIT_ATTR_FD) || !(attr->comp_mask & IBV_XRCD_INIT_ATTR_OFLAGS)) {
		errno = EINVAL;
		return NULL;
	}
	m = request(NICSIM_OP_OPEN_XRCD);
	memset(&st, 0, sizeof(st));
	if (by_file && fstat(attr->fd, &st)) { done(&m); errno = EBADF; return NULL; }
	put32(&m, (uint32_t)by_file);
	put64(&m, by_file ? (uint64_t)st.st_dev : 0);
	put64(&m, by_file ? (uint64_t)st.st_ino : 0);
	put32(&m, (attr->comp_mask & IBV_XRCD_INIT_ATTR_OFLAGS) ? (uint32_t)attr->oflags : 0);
	x = calloc(1, sizeof(*x));
	if (!x) { done(&m); errno = ENOMEM; return NULL; }
	rc = call(ctx_of(c), &m);
	if (rc) { done(&m); free(x); errno = rc; return NULL; }
	x->vxrcd.handle = get32(&m);
	x->vxrcd.xrcd.context = c;
	done(&m);
	return &x->vxrcd.xrcd;
}

static int close_xrcd(struct ibv_xrcd *x) {
	int rc = simple(x->context, NICSIM_OP_CLOSE_XRCD, xrcd_handle(x));
	if (!rc) free(x);
	return rc;
}

static int modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr, int mask) {
	struct msg m = request(NICSIM_OP_MODIFY_SRQ);
	int rc;
	put32(&m, srq_handle(srq));
	put32(&m, (uint32_t)mask);
	put32(&m, attr->max_wr);
	put32(&m, attr->srq_limit);
	rc = call(ctx_of(srq->context), &m);
	done(&m);
	return rc;
}

static int query_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr) {
	struct msg m = request(NICSIM_OP_QUERY_SRQ);
	int rc;
	put32(&m, srq_handle(srq));
	rc = call(ctx_of(srq->context), &m);
	if (!rc) {
		attr->max_wr = get32(&m);
		attr->max_sge = get32(&m);
		attr->srq_limit = get32(&m);
	}
	done(&m);
	return rc;
}

/* Destroys srq once the events the program was given for it are acknowledged; those it was not given are dropped. */
static int destroy_srq(struct ibv_srq *srq) {
	struct nicsim_srq *s = (struct nicsim_srq *)srq;
	int rc = simple(srq->context, NICSIM_OP_DESTROY_SRQ, s->handle);
	if (rc) return rc;
	nicsim_name(ctx_of(srq->context), s->handle, NULL);
	nicsim_await_acks(&srq->mutex, &srq->cond, &srq->events_completed, s->events_returned);
	free(s);
	return 0;
}

/* ---- queue pairs ---- */

static uint32_t qp_handle(struct ibv_qp *qp) { return ((struct nicsim_qp *)qp)->handle; }

/*
 * A QP of pd, or with none, of XRC domain xrcd (an XRC target); init's cap becomes what it got.
 * dc_type (mlx5dv_dc_type, 0: none) makes a DRIVER QP a DC target (with dct_key) or initiator;
 * wr_ops gives it the ibv_wr_* API with those operations (send_ops_flags; 0: no API).
 */
static struct ibv_qp *make_qp(struct ibv_context *c, struct ibv_pd *pd, struct ibv_xrcd *xrcd, struct ibv_qp_init_attr *init,
			      uint32_t dc_type, uint64_t dct_key, uint64_t wr_ops) {
	struct msg m = request(NICSIM_OP_CREATE_QP);
	struct nicsim_qp *qp = calloc(1, sizeof(*qp));
	struct ibv_qp *q;
	int rc;
	if (!qp) { errno = ENOMEM; return NULL; }
	{
		struct nicsim_wire_create_qp_request r = {
			.pd = pd ? pd_handle(pd) : NICSIM_NONE, .xrcd = xrcd_handle(xrcd), .qp_type = init->qp_type,
			.send_cq = cq_handle(init->send_cq), .recv_cq = cq_handle(init->recv_cq), .srq = srq_handle(init->srq),
			.max_send_wr = init->cap.max_send_wr, .max_recv_wr = init->cap.max_recv_wr,
			.max_send_sge = init->cap.max_send_sge, .max_recv_sge = init->cap.max_recv_sge,
			.max_inline_data = init->cap.max_inline_data, .sq_sig_all = (uint32_t)init->sq_sig_all,
			.dc_type = dc_type, .dct_access_key = dct_key,
		};
		put(&m, &r, sizeof(r));
	}
	rc = call(ctx_of(c), &m);
	if (rc) { done(&m); free(qp); errno = rc; return NULL; }
	q = &qp->vqp.qp;
	{
		struct nicsim_wire_create_qp_reply r;
		get(&m, &r, sizeof(r));
		qp->handle = r.handle;
		q->qp_num = r.qp_num;
		init->cap.max_send_wr = r.max_send_wr;
		init->cap.max_recv_wr = r.max_recv_wr;
		init->cap.max_send_sge = r.max_send_sge;
		init->cap.max_recv_sge = r.max_recv_sge;
		init->cap.max_inline_data = r.max_inline_data;
	}
	done(&m);
	qp->max_send_sge = init->cap.max_send_sge;
	qp->max_recv_sge = init->cap.max_recv_sge;
	qp->max_inline = init->cap.max_inline_data;
	/* what ibv_cmd_create_qp fills for a kernel provider */
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
	qp->dc_type = dc_type;
	if (nicsim_parent_domain(pd) && nicsim_parent_domain(pd)->alloc
	    && (errno = nicsim_staging_alloc(qp, nicsim_parent_domain(pd), init->cap.max_send_wr))) {
		int e = errno;
		simple(c, NICSIM_OP_DESTROY_QP, qp->handle);
		free(qp);
		errno = e;
		return NULL;
	}
	nicsim_domain_use(nicsim_parent_domain(pd), 1);
	if (wr_ops) nicsim_wr_init(qp, wr_ops);
	nicsim_name(ctx_of(c), qp->handle, q); /* events name it by its handle */
	return q;
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
	struct nicsim_mkey *k = calloc(1, sizeof(*k));
	struct msg m = request(NICSIM_OP_CREATE_MKEY);
	int rc;
	if (!k) { done(&m); errno = ENOMEM; return NULL; }
	put32(&m, pd_handle(pd));
	put32(&m, max_entries);
	put32(&m, create_flags);
	rc = call(ctx_of(pd->context), &m);
	if (rc) { done(&m); free(k); errno = rc; return NULL; }
	k->handle = get32(&m);
	k->dv.lkey = k->dv.rkey = get32(&m);
	k->context = pd->context;
	done(&m);
	return k;
}

int nicsim_destroy_mkey(struct nicsim_mkey *k) {
	int rc = simple(k->context, NICSIM_OP_DESTROY_MKEY, k->handle);
	if (!rc) free(k);
	return rc;
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

static int modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int mask) {
	struct msg m = request(NICSIM_OP_MODIFY_QP);
	int rc;
	put32(&m, qp_handle(qp));
	put32(&m, (uint32_t)mask);
	put_attr(&m, attr);
	rc = call(ctx_of(qp->context), &m);
	done(&m);
	return rc;
}

static int query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int mask, struct ibv_qp_init_attr *init) {
	struct msg m = request(NICSIM_OP_QUERY_QP);
	int rc;
	put32(&m, qp_handle(qp));
	put32(&m, (uint32_t)mask);
	rc = call(ctx_of(qp->context), &m);
	if (!rc) {
		memset(attr, 0, sizeof(*attr));
		struct nicsim_wire_qp_init_attr w;
		get_attr(&m, attr);
		get(&m, &w, sizeof(w));
		attr->cap.max_send_wr = w.max_send_wr;
		attr->cap.max_recv_wr = w.max_recv_wr;
		attr->cap.max_send_sge = w.max_send_sge;
		attr->cap.max_recv_sge = w.max_recv_sge;
		attr->cap.max_inline_data = w.max_inline_data;
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

/* Destroys qp once the events the program was given for it are acknowledged (ibv_destroy_qp(3)); those it was not given are dropped. */
static int destroy_qp(struct ibv_qp *qp) {
	struct nicsim_qp *q = (struct nicsim_qp *)qp;
	int rc = simple(qp->context, NICSIM_OP_DESTROY_QP, q->handle);
	if (rc) return rc;
	nicsim_name(ctx_of(qp->context), q->handle, NULL);
	nicsim_await_acks(&qp->mutex, &qp->cond, &qp->events_completed, q->events_returned);
	nicsim_wr_clear(q);
	nicsim_staging_free(q);
	nicsim_domain_use(nicsim_parent_domain(qp->pd), -1);
	free(q);
	return 0;
}

static void put_sges(struct msg *m, const struct ibv_sge *sg, int n) {
	put32(m, (uint32_t)n);
	for (int i = 0; i < n; i++) {
		put64(m, sg[i].addr);
		put32(m, sg[i].length);
		put32(m, sg[i].lkey);
	}
}

/*
 * Posts a list of work requests; on a refusal sets *bad to the one refused (those before it were
 * posted) and returns the errno.
 */
/*
 * The first request of the list the provider must refuse before reading it (more SGEs than the QP
 * has, or more inline bytes than it takes: reading them could run past the program's buffers), or
 * NULL; *before is how many precede it.
 */
static struct ibv_send_wr *unreadable(const struct nicsim_qp *q, struct ibv_send_wr *wr, uint32_t *before) {
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

int nicsim_post_wrs(struct ibv_qp *qp, struct ibv_send_wr *wr, const struct nicsim_wr *ext, struct ibv_send_wr **bad) {
	struct msg m;
	struct ibv_send_wr *w, *stop;
	uint32_t n = 0, refused, i = 0;
	int rc;
	stop = unreadable((struct nicsim_qp *)qp, wr, &n);
	if (stop && n == 0) { *bad = stop; return EINVAL; } /* as the kernel's and rxe's post checks: EINVAL */
	m = request(NICSIM_OP_POST_SEND);
	put32(&m, qp_handle(qp));
	if (!stop) for (n = 0, w = wr; w; w = w->next) n++;
	put32(&m, n);
	for (w = wr; w != stop; w = w->next, i++) {
		put64(&m, w->wr_id);
		put32(&m, w->opcode);
		put32(&m, w->send_flags);
		put32(&m, w->imm_data);
		if (w->opcode == IBV_WR_ATOMIC_CMP_AND_SWP || w->opcode == IBV_WR_ATOMIC_FETCH_AND_ADD) {
			put64(&m, w->wr.atomic.remote_addr); /* an atomic's rkey comes after its operands */
			put32(&m, w->wr.atomic.rkey);
			put64(&m, w->wr.atomic.compare_add);
			put64(&m, w->wr.atomic.swap);
		} else {
			put64(&m, w->wr.rdma.remote_addr);
			put32(&m, w->wr.rdma.rkey);
			put64(&m, 0);
			put64(&m, 0);
		}
		put32(&m, qp->qp_type == IBV_QPT_UD && w->wr.ud.ah ? ((struct nicsim_ah *)w->wr.ud.ah)->handle : NICSIM_NONE);
		put32(&m, qp->qp_type == IBV_QPT_UD ? w->wr.ud.remote_qpn : 0);
		put32(&m, qp->qp_type == IBV_QPT_UD ? w->wr.ud.remote_qkey : 0);
		put32(&m, w->opcode == IBV_WR_SEND_WITH_INV || w->opcode == IBV_WR_LOCAL_INV ? w->invalidate_rkey : 0);
		put32(&m, qp->qp_type == IBV_QPT_XRC_SEND ? w->qp_type.xrc.remote_srqn : 0);
		put32(&m, ext ? ext[i].dc.ah : NICSIM_NONE);
		put32(&m, ext ? ext[i].dc.dctn : 0);
		put64(&m, ext ? ext[i].dc.key : 0);
		put_sges(&m, w->sg_list, w->num_sge);
		if (w->send_flags & IBV_SEND_INLINE) /* the bytes now: the program may reuse its buffer on return */
			for (int i = 0; i < w->num_sge; i++) put(&m, (void *)(uintptr_t)w->sg_list[i].addr, w->sg_list[i].length);
		{ /* a layout UMR's mkey, access, repeat count and entries */
			const struct nicsim_umr *u = ext ? &ext[i].umr : NULL;
			put32(&m, u ? u->mkey : NICSIM_NONE);
			put32(&m, u ? u->access : 0);
			put32(&m, u ? u->repeat : 0);
			put32(&m, u ? u->n : 0);
			for (uint32_t k = 0; u && k < u->n; k++) {
				put64(&m, u->klm[k].addr);
				put32(&m, u->klm[k].length);
				put32(&m, u->klm[k].lkey);
				put32(&m, u->klm[k].skip);
			}
		}
		{ /* a window's bind: the window, its new rkey, the MR (none: unbind), range and access */
			const struct ibv_mw_bind_info *b = &w->bind_mw.bind_info;
			int bind = w->opcode == IBV_WR_BIND_MW;
			put32(&m, bind && w->bind_mw.mw ? w->bind_mw.mw->handle : NICSIM_NONE);
			put32(&m, bind ? w->bind_mw.rkey : 0);
			put32(&m, bind && b->mr ? b->mr->handle : NICSIM_NONE);
			put64(&m, bind ? b->addr : 0);
			put64(&m, bind ? b->length : 0);
			put32(&m, bind ? b->mw_access_flags : 0);
		}
	}
	rc = call(ctx_of(qp->context), &m);
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

static int post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad) { return nicsim_post_wrs(qp, wr, NULL, bad); }

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
	m = request(op);
	put32(&m, handle);
	put32(&m, n);
	for (w = wr; w != stop; w = w->next) {
		put64(&m, w->wr_id);
		put_sges(&m, w->sg_list, w->num_sge);
	}
	rc = call(ctx_of(c), &m);
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

static int post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad) {
	struct nicsim_qp *q = (struct nicsim_qp *)qp;
	return post_recv_to(qp->context, NICSIM_OP_POST_RECV, q->handle, q->max_recv_sge, wr, bad);
}

static int post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad) {
	struct nicsim_srq *s = (struct nicsim_srq *)srq;
	return post_recv_to(srq->context, NICSIM_OP_POST_SRQ_RECV, s->handle, s->max_sge, wr, bad);
}

/* ---- the simulated clock (for libnicsim-time.so, attach --sim-time) ---- */

/*
 * The simulation's time in nanoseconds, or -1 before the program has opened the device. Exported
 * for nicsim's clock library, which a program gets with attach --sim-time.
 */
__attribute__((visibility("default"))) int64_t nicsim_sim_now_ns(void) {
	int64_t ps = clock_ctx ? nicsim_sim_now_ps_of(clock_ctx) : -1;
	return ps < 0 ? -1 : ps / 1000;
}

int64_t nicsim_sim_now_ps_of(struct nicsim_context *ctx) {
	struct msg m = request(NICSIM_OP_TIME);
	int64_t ps;
	if (call(ctx, &m)) { done(&m); return -1; }
	ps = (int64_t)get64(&m);
	done(&m);
	return ps;
}

/* ---- context ---- */

static void free_context(struct ibv_context *c) {
	struct nicsim_context *ctx = ctx_of(c);
	if (clock_ctx == ctx) clock_ctx = NULL;
	close(ctx->vctx.context.async_fd);
	close(ctx->sock);
	pthread_mutex_destroy(&ctx->lock);
	pthread_mutex_destroy(&ctx->named.lock);
	free(ctx->named.at);
	verbs_uninit_context(&ctx->vctx);
	free(ctx);
}

static const struct verbs_context_ops nicsim_ops = {
	.advise_mr = advise_mr,
	.alloc_dm = alloc_dm,
	.import_dm = nicsim_import_dm,
	.import_mr = nicsim_import_mr,
	.import_pd = nicsim_import_pd,
	.unimport_dm = nicsim_unimport_dm,
	.unimport_mr = nicsim_unimport_mr,
	.unimport_pd = nicsim_unimport_pd,
	.alloc_mw = alloc_mw,
	.alloc_parent_domain = nicsim_alloc_parent_domain,
	.alloc_pd = alloc_pd,
	.alloc_td = nicsim_alloc_td,
	.bind_mw = bind_mw,
	.close_xrcd = close_xrcd,
	.cq_event = cq_event,
	.create_ah = create_ah,
	.create_cq = create_cq,
	.create_cq_ex = nicsim_create_cq_ex,
	.create_qp = create_qp,
	.create_qp_ex = create_qp_ex,
	.create_srq = create_srq,
	.create_srq_ex = create_srq_ex,
	.dealloc_mw = dealloc_mw,
	.dealloc_pd = dealloc_pd,
	.dealloc_td = nicsim_dealloc_td,
	.dereg_mr = dereg_mr,
	.destroy_ah = destroy_ah,
	.destroy_cq = destroy_cq,
	.destroy_qp = destroy_qp,
	.destroy_srq = destroy_srq,
	.free_context = free_context,
	.free_dm = free_dm,
	.get_srq_num = get_srq_num,
	.modify_qp = modify_qp,
	.modify_srq = modify_srq,
	.open_xrcd = open_xrcd,
	.poll_cq = poll_cq,
	.post_recv = post_recv,
	.post_send = post_send,
	.post_srq_ops = post_srq_ops,
	.post_srq_recv = post_srq_recv,
	.query_device_ex = query_device_ex,
	.query_port = query_port,
	.query_qp = query_qp,
	.query_rt_values = query_rt_values,
	.query_srq = query_srq,
	.reg_dm_mr = reg_dm_mr,
	.reg_mr = reg_mr,
	.req_notify_cq = req_notify_cq,
	.rereg_mr = rereg_mr,
	.resize_cq = resize_cq,
};

static struct verbs_context *alloc_context(struct ibv_device *dev, int cmd_fd, void *private_data) {
	struct nicsim_context *ctx;
	struct msg m;
	const char *node = getenv("NICSIM_NODE");
	char name[256] = "";
	uint32_t session;
	int rc;
	(void)private_data;
	ctx = _verbs_init_and_alloc_context(dev, cmd_fd, sizeof(*ctx), &((struct nicsim_context *)NULL)->vctx, 0);
	if (!ctx) return NULL;
	pthread_mutex_init(&ctx->lock, NULL);
	pthread_mutex_init(&ctx->named.lock, NULL);
	/* the simulator's DMA reads and writes this process's memory through /proc/<pid>/mem */
	prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
	prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
	if (nicsim_importing) { /* ibv_import_device: the context another opened, from a connection of our own */
		ctx->session = nicsim_importing->session;
		ctx->pid = (pid_t)nicsim_importing->pid;
		ctx->sock = -1;
		if (nicsim_rejoin(ctx)) goto fail;
		/* the kernel writes a context's async events to its first async file only: this one stays quiet */
		ctx->vctx.context.async_fd = eventfd(0, EFD_CLOEXEC);
		if (ctx->vctx.context.async_fd < 0) { close(ctx->sock); goto fail; }
		ctx->vctx.context.num_comp_vectors = 1;
		verbs_set_ops(&ctx->vctx, &nicsim_ops);
		return &ctx->vctx;
	}
	ctx->sock = connect_simulator();
	if (ctx->sock < 0) goto fail;
	ctx->pid = getpid();
	if (readlink("/proc/self/exe", name, sizeof(name) - 1) < 0) strcpy(name, "?");
	m = request(NICSIM_OP_HELLO);
	put32(&m, NICSIM_WIRE_VERSION);
	put32(&m, node ? (uint32_t)atoi(node) : 0);
	put32(&m, (uint32_t)getpid());
	put32(&m, (uint32_t)ctx->sock); /* a thread of ours asleep reading it waits for the simulator */
	put32(&m, (uint32_t)cmd_fd);    /* ibv_import_device, given a duplicate of it, finds this context by it */
	put32(&m, (uint32_t)strlen(name));
	put(&m, name, strlen(name));
	rc = call(ctx, &m);
	session = rc ? 0 : get32(&m);
	ctx->session = session;
	done(&m);
	if (rc) {
		fprintf(stderr, "nicsim: the simulator refused this process (node %s): %s\n", node ? node : "0", strerror(rc));
		close(ctx->sock);
		goto fail;
	}
	/*
	 * Asynchronous events come on a second connection, which the simulator writes as the kernel
	 * writes its async file: one struct ib_uverbs_async_event_desc per event, naming the object by
	 * its handle (ibv_get_async_event, nicsim-events.c, turns it into the object).
	 */
	ctx->vctx.context.async_fd = connect_simulator();
	if (ctx->vctx.context.async_fd < 0) { close(ctx->sock); goto fail; }
	m = request(NICSIM_OP_EVENTS);
	put32(&m, session);
	put32(&m, (uint32_t)getpid());
	rc = send_only(ctx->vctx.context.async_fd, &m);
	done(&m);
	if (rc) { close(ctx->vctx.context.async_fd); close(ctx->sock); goto fail; }
	ctx->vctx.context.num_comp_vectors = 1;
	verbs_set_ops(&ctx->vctx, &nicsim_ops);
	if (!clock_ctx) clock_ctx = ctx;
	return &ctx->vctx;
fail:
	verbs_uninit_context(&ctx->vctx);
	free(ctx);
	return NULL;
}

/* ---- the device ---- */

static bool match_device(struct verbs_sysfs_dev *d) { return strncmp(d->ibdev_name, "nicsim", 6) == 0; }

static struct verbs_device *alloc_device(struct verbs_sysfs_dev *d) {
	struct verbs_device *dev = calloc(1, sizeof(*dev));
	(void)d;
	return dev;
}

static void uninit_device(struct verbs_device *dev) { free(dev); }

static const struct verbs_device_ops nicsim_device_ops = {
	.name = "nicsim",
	.match_min_abi_version = 1,
	.match_max_abi_version = 1,
	.match_device = match_device,
	.alloc_context = alloc_context,
	.alloc_device = alloc_device,
	.uninit_device = uninit_device,
};

__attribute__((constructor)) static void register_nicsim(void) {
	static int once;
	if (!once++) verbs_register_driver_34(&nicsim_device_ops);
}
