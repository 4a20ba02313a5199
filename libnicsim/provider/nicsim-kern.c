/*
 * The kern back end (nicsim-backend.h): the provider on the kernel's nicsim_ib driver, in a guest
 * whose /dev/infiniband/uverbsN is that driver's. It talks to the driver only as every rdma-core
 * provider does: uverbs commands through libibverbs' ibv_cmd_* with rdma/nicsim-abi.h as their
 * udata, then mmap of the context's UAR page and of each CQ's and QP's ring by the keys the udata
 * returns. From there posting and polling are the hw back end's (nicsim-hw-post.c, nicsim-hw.c) on
 * libnicsim's ring code (nicsim/queues.h): WQEs into the mapped rings, the doorbell record, one
 * 8-byte doorbell store into the mapped UAR page, CQEs by their owner bit (docs/device.md).
 *
 * Its objects, one file each: PDs and AHs nicsim-kern-pd.c, MRs and windows nicsim-kern-mr.c, CQs
 * nicsim-kern-cq.c, QPs nicsim-kern-qp.c, SRQs nicsim-kern-srq.c; here, the context and the tables.
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

#include "nicsim-kern.h"

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

/* The verbs the kern back end answers alone; what it leaves out is libibverbs' answer (EOPNOTSUPP). */
static const struct verbs_context_ops kern_verbs = {
	.alloc_mw = nicsim_kern_alloc_mw,
	.alloc_pd = nicsim_kern_alloc_pd,
	.dealloc_mw = nicsim_kern_dealloc_mw,
	.create_ah = nicsim_kern_create_ah,
	.dealloc_pd = nicsim_kern_dealloc_pd,
	.dereg_mr = nicsim_kern_dereg_mr,
	.destroy_ah = nicsim_kern_destroy_ah,
	.free_context = free_context,
	.query_device_ex = query_device_ex,
	.query_port = query_port,
	.reg_mr = nicsim_kern_reg_mr,
};

/*
 * The kernel driver's: objects by uverbs commands, the data path the hw back end's rings. Not
 * offered through it yet: XRC and tag-matching SRQs, XRC domains, indirect mkeys.
 */
const struct nicsim_backend_ops nicsim_kern_backend = {
	.create_cq = nicsim_kern_create_cq,
	.destroy_cq = nicsim_kern_destroy_cq,
	.resize_cq = nicsim_kern_resize_cq,
	.poll_cq = nicsim_ring_poll,
	.req_notify_cq = nicsim_hw_req_notify_cq, /* the arm word in the record and on the UAR page */
	.cq_event_taken = nicsim_hw_cq_event,
	.create_qp = nicsim_kern_create_qp,
	.destroy_qp = nicsim_kern_destroy_qp,
	.modify_qp = nicsim_kern_modify_qp,
	.query_qp = nicsim_kern_query_qp,
	.post_send = nicsim_hw_post_send,
	.post_recv = nicsim_hw_post_recv,
	.post_srq_recv = nicsim_hw_post_srq_recv,
	.mcast = nicsim_kern_mcast,
	.create_srq = nicsim_kern_create_srq,
	.destroy_srq = nicsim_kern_destroy_srq,
	.modify_srq = nicsim_kern_modify_srq,
	.query_srq = nicsim_kern_query_srq,
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
	k->uar_map = kern_map(&ctx->vctx.context, resp.drv.uar_mmap_key, k->uar_len);
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
