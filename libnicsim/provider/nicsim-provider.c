/*
 * nicsim's provider for libibverbs (rdma-core 44): it makes a simulated nicsim adapter an RDMA
 * device that unmodified libibverbs programs find and use. Under attach every verb goes to the
 * simulator over a Unix domain socket (NICSIM_SOCKET), as a request naming the node (NICSIM_NODE),
 * or to libnicsim's C driver on serve's PCI face; the simulator runs it on the adapter model, in
 * simulated time, and the adapter's DMA reads and writes this process's registered buffers
 * themselves. Completions, errors and syndromes are the model's. In a guest whose kernel runs
 * nicsim_ib, the same library is that driver's user-space half (the kern back end, nicsim-kern.c);
 * nicsim-backend.h says how the back end is chosen.
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

#include "nicsim-hw.h"

static const struct verbs_device_ops nicsim_device_ops;

bool nicsim_owns(struct ibv_context *c) { return ((struct verbs_device *)c->device)->ops == &nicsim_device_ops; }

/* The first context this program opened: the simulated clock is read through it. */
static struct nicsim_context *clock_ctx;

int simple(struct ibv_context *c, uint32_t op, uint32_t handle) {
	struct msg m = request(op);
	int rc;
	put32(&m, handle);
	rc = call(to_nctx(c), &m);
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
	a->max_mcast_grp = (int)r->max_mcast_grp;
	a->max_mcast_qp_attach = (int)r->max_mcast_qp_attach;
	a->max_total_mcast_qp_attach = a->max_mcast_grp * a->max_mcast_qp_attach;
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
	rc = call(to_nctx(c), &m);
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
	struct nicsim_context *ctx = to_nctx(c);
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
	ps = nicsim_sim_now_ps_of(to_nctx(c));
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
	rc = call(to_nctx(c), &m);
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
	struct nicsim_context *ctx = to_nctx(c);
	nicsim_hw_close(ctx);
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
	.import_dm = nicsim_import_dm,
	.import_mr = nicsim_import_mr,
	.import_pd = nicsim_import_pd,
	.unimport_dm = nicsim_unimport_dm,
	.unimport_mr = nicsim_unimport_mr,
	.unimport_pd = nicsim_unimport_pd,
	.alloc_parent_domain = nicsim_alloc_parent_domain,
	.alloc_td = nicsim_alloc_td,
	.create_cq_ex = nicsim_create_cq_ex,
	.dealloc_td = nicsim_dealloc_td,
	.free_context = free_context,
	.query_device_ex = query_device_ex,
	.query_port = query_port,
	.query_rt_values = query_rt_values,
};

/* The verbs of each of the provider's files. */
static void set_ops(struct nicsim_context *ctx) {
	verbs_set_ops(&ctx->vctx, &nicsim_ops);
	verbs_set_ops(&ctx->vctx, &nicsim_memory_ops);
	verbs_set_ops(&ctx->vctx, &nicsim_cq_ops);
	verbs_set_ops(&ctx->vctx, &nicsim_queue_ops);
	verbs_set_ops(&ctx->vctx, &nicsim_post_ops);
	if (!ctx->hw) return;
	verbs_set_ops(&ctx->vctx, &nicsim_hw_ops); /* the C driver's own */
	verbs_set_ops(&ctx->vctx, &nicsim_hw_memory_ops);
	verbs_set_ops(&ctx->vctx, &nicsim_hw_dm_ops);
}

/* Ties an imported context (ibv_import_device) to the session another opened: 0, or -1. */
static int join_imported(struct nicsim_context *ctx) {
	ctx->session = nicsim_importing->session;
	ctx->pid = (pid_t)nicsim_importing->pid;
	ctx->sock = -1;
	if (nicsim_rejoin(ctx)) return -1;
	/* the kernel writes a context's async events to its first async file only: this one stays quiet */
	ctx->vctx.context.async_fd = eventfd(0, EFD_CLOEXEC);
	if (ctx->vctx.context.async_fd < 0) { close(ctx->sock); return -1; }
	/* the C driver joins the opener's user context: the same objects, this process's own memory and waits */
	if (nicsim_hw_open(ctx)) { close(ctx->vctx.context.async_fd); close(ctx->sock); return -1; }
	return 0;
}

/* Opens a session of this process's own on node NICSIM_NODE (HELLO): 0, or -1 after saying why. */
static int hello(struct nicsim_context *ctx, int cmd_fd) {
	const char *node = getenv("NICSIM_NODE");
	char name[256] = "";
	struct msg m;
	int rc;
	ctx->sock = connect_simulator();
	if (ctx->sock < 0) return -1;
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
	put32(&m, nicsim_hw_wanted() == 1 ? NICSIM_HELLO_OWN_RINGS : 0); /* the C driver makes its objects itself */
	rc = call(ctx, &m);
	ctx->session = rc ? 0 : get32(&m);
	done(&m);
	if (!rc) return 0;
	fprintf(stderr, "nicsim: the simulator refused this process (node %s): %s\n", node ? node : "0", strerror(rc));
	close(ctx->sock);
	return -1;
}

/*
 * Asynchronous events come on a second connection, which the simulator writes as the kernel
 * writes its async file: one struct ib_uverbs_async_event_desc per event, naming the object by
 * its handle (ibv_get_async_event, nicsim-events.c, turns it into the object). 0, or -1.
 */
static int open_async_file(struct nicsim_context *ctx) {
	struct msg m;
	int rc;
	ctx->vctx.context.async_fd = connect_simulator();
	if (ctx->vctx.context.async_fd < 0) return -1;
	m = request(NICSIM_OP_EVENTS);
	put32(&m, ctx->session);
	put32(&m, (uint32_t)getpid());
	rc = send_only(ctx->vctx.context.async_fd, &m);
	done(&m);
	if (rc) close(ctx->vctx.context.async_fd);
	return rc ? -1 : 0;
}

static struct verbs_context *alloc_context(struct ibv_device *dev, int cmd_fd, void *private_data) {
	struct nicsim_context *ctx;
	(void)private_data;
	/* the one choice of back end: the kernel's driver (a guest's own uverbs device), else serve's */
	if (!nicsim_importing && nicsim_kern_device(dev))
		return nicsim_kern_open(dev, cmd_fd);
	ctx = verbs_init_and_alloc_context(dev, cmd_fd, ctx, vctx, 0);
	if (!ctx) return NULL;
	pthread_mutex_init(&ctx->lock, NULL);
	pthread_mutex_init(&ctx->named.lock, NULL);
	/* the simulator's DMA reads and writes this process's memory through /proc/<pid>/mem */
	prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
	prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
	if (nicsim_importing) { /* ibv_import_device: the context another opened, from a connection of our own */
		if (join_imported(ctx)) goto fail;
	} else {
		if (nicsim_hw_wanted() < 0) { errno = EINVAL; goto fail; }
		if (hello(ctx, cmd_fd)) goto fail;
		if (open_async_file(ctx)) { close(ctx->sock); goto fail; }
		if (nicsim_hw_open(ctx)) { close(ctx->vctx.context.async_fd); close(ctx->sock); goto fail; }
		if (!clock_ctx) clock_ctx = ctx;
	}
	ctx->vctx.context.num_comp_vectors = 1;
	ctx->ops = ctx->hw ? &nicsim_hw_backend : &nicsim_java_backend; /* serve's: the C driver's, or the Java one's */
	set_ops(ctx);
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
