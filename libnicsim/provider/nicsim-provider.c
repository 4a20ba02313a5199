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

__thread const struct nicsim_import *nicsim_importing;

/* The first context this program opened: the simulated clock is read through it. */
static struct nicsim_context *clock_ctx;

/* ---- the simulated clock (for libnicsim-time.so, attach --sim-time) ---- */

/*
 * A reading taken before the program opened its device: TIME on a connection of this process's own that is no
 * session (no HELLO), which serve answers at once with the simulation's time. Nothing of it shows in `rdma res`,
 * the counters or serve's log of programs, as a context opened for the clock would (and a child reading the
 * clock would attach). -1 if serve cannot be reached (said once).
 */
static int64_t unattached_now_ps(void) {
	static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
	static int fd = -1;
	static pid_t owner;
	struct msg m = request(NICSIM_OP_TIME);
	struct nicsim_wire_time r = { 0 };
	int rc = -1;
	pthread_mutex_lock(&mu);
	if (fd >= 0 && owner != getpid()) { real_close(fd); fd = -1; } /* a forked child's copy: a connection of its own */
	if (fd == -1) {
		fd = connect_simulator();
		owner = getpid();
		if (fd < 0) fd = -2; /* no retrying: connect_simulator said why */
	}
	if (fd >= 0) rc = nicsim_exchange(fd, &m);
	pthread_mutex_unlock(&mu);
	if (!rc) GET(&m, r);
	rc = rc || m.failed;
	done(&m);
	return rc ? -1 : (int64_t)r.ps;
}

/*
 * The simulation's time in nanoseconds, read through the first context the program opened, or before it opened
 * one on a connection for the clock alone (so every reading is simulated time); -1 if serve cannot answer.
 * Exported for nicsim's clock library, which a program gets with attach --sim-time.
 */
__attribute__((visibility("default"))) int64_t nicsim_sim_now_ns(void) {
	int64_t ps = clock_ctx ? nicsim_sim_now_ps_of(clock_ctx) : unattached_now_ps();
	return ps < 0 ? -1 : ps / 1000;
}

/* ---- context ---- */


static void free_context(struct ibv_context *c) {
	struct nicsim_context *ctx = to_nctx(c);
	nicsim_hw_close(ctx);
	if (clock_ctx == ctx) clock_ctx = NULL;
	real_close(ctx->vctx.context.async_fd);
	real_close(ctx->sock);
	pthread_mutex_destroy(&ctx->lock);
	pthread_mutex_destroy(&ctx->named.lock);
	free(ctx->named.at);
	verbs_uninit_context(&ctx->vctx);
	free(ctx);
}

/* The context's verbs under serve, either back end's: the device, the clock, thread and parent domains. */
static const struct verbs_context_ops nicsim_serve_ops = {
	.alloc_parent_domain = nicsim_alloc_parent_domain,
	.alloc_td = nicsim_alloc_td,
	.dealloc_td = nicsim_dealloc_td,
	.free_context = free_context,
	.query_device_ex = nicsim_query_device_ex,
	.query_port = nicsim_query_port,
	.query_rt_values = nicsim_query_rt_values,
};

/* Ties an imported context (ibv_import_device) to the session another opened: 0, or -1. */
static int join_imported(struct nicsim_context *ctx) {
	ctx->session = nicsim_importing->session;
	ctx->pid = (pid_t)nicsim_importing->pid;
	ctx->sock = -1;
	if (nicsim_rejoin(ctx)) return -1;
	/* the kernel writes a context's async events to its first async file only: this one stays quiet */
	ctx->vctx.context.async_fd = eventfd(0, EFD_CLOEXEC);
	if (ctx->vctx.context.async_fd < 0) { real_close(ctx->sock); return -1; }
	/* the C driver joins the opener's user context: the same objects, this process's own memory and waits */
	if (nicsim_hw_open(ctx)) { real_close(ctx->vctx.context.async_fd); real_close(ctx->sock); return -1; }
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
	struct nicsim_wire_hello_request q = {
		.version = NICSIM_WIRE_VERSION, .node = node ? (uint32_t)atoi(node) : 0, .pid = (uint32_t)getpid(),
		.socket_fd = (uint32_t)ctx->sock, /* a thread of ours asleep reading it waits for the simulator */
		/* ibv_import_device, given a duplicate of cmd_fd, finds this context by it */
		.cmd_fd = (uint32_t)cmd_fd,
	};
	/* the C driver makes its objects itself */
	struct nicsim_wire_open_argument flags = { .value = nicsim_hw_wanted() == 1 ? NICSIM_HELLO_OWN_RINGS : 0 };
	struct nicsim_wire_opened opened;
	m = request(NICSIM_OP_HELLO);
	PUT(&m, q);
	put32(&m, (uint32_t)strlen(name));
	put(&m, name, strlen(name));
	PUT(&m, flags);
	rc = call(ctx, &m);
	if (!rc) GET(&m, opened);
	ctx->session = rc ? 0 : opened.number;
	done(&m);
	if (!rc) return 0;
	fprintf(stderr, "nicsim: the simulator refused this process (node %s): %s\n", node ? node : "0", strerror(rc));
	real_close(ctx->sock);
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
	struct nicsim_wire_event_file_request q = { .session = ctx->session, .pid = (uint32_t)getpid() };
	m = request(NICSIM_OP_EVENTS);
	PUT(&m, q);
	rc = send_only(ctx->vctx.context.async_fd, &m);
	done(&m);
	if (rc) real_close(ctx->vctx.context.async_fd);
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
		if (open_async_file(ctx)) { real_close(ctx->sock); goto fail; }
		if (nicsim_hw_open(ctx)) { real_close(ctx->vctx.context.async_fd); real_close(ctx->sock); goto fail; }
		if (!clock_ctx) clock_ctx = ctx;
	}
	ctx->vctx.context.num_comp_vectors = 1;
	verbs_set_ops(&ctx->vctx, &nicsim_serve_ops);
	nicsim_set_backend(ctx, ctx->hw ? &nicsim_hw_backend : &nicsim_java_backend); /* the C driver's, or Java's */
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
