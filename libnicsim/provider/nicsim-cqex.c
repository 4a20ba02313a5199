/*
 * Extended CQs (ibv_create_cq_ex): the ibv_start_poll / ibv_next_poll / ibv_end_poll loop and
 * the ibv_wc_read_* accessors, over the provider's poll. Each start or next takes one completion
 * from the simulator; the accessors read it. The fields offered are those ibv_wc has, and the
 * tag-matching info (IBV_WC_EX_WITH_TM_INFO), and when the adapter wrote the completion: in core
 * clock cycles (IBV_WC_EX_WITH_COMPLETION_TIMESTAMP) or ns (_WALLCLOCK), both since the
 * simulation began. A CQ asking for others (flow tags, VLANs) is refused with EOPNOTSUPP.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "nicsim-provider.h"

static struct nicsim_ibv_cq *of(struct ibv_cq_ex *cq) { return to_ncq_ex(cq); }

/* Takes the next completion: 0, ENOENT if there is none, or an errno. */
static int take(struct ibv_cq_ex *cq) {
	struct nicsim_ibv_cq *c = of(cq);
	int n = nicsim_poll(&c->cq, 1, &c->cur, &c->cur_x);
	if (n < 0) return -n;
	if (n == 0) return ENOENT;
	cq->status = c->cur.status;
	cq->wr_id = c->cur.wr_id;
	return 0;
}

static int start_poll(struct ibv_cq_ex *cq, struct ibv_poll_cq_attr *attr) {
	if (attr->comp_mask) return EINVAL;
	return take(cq);
}

static int next_poll(struct ibv_cq_ex *cq) { return take(cq); }
static void end_poll(struct ibv_cq_ex *cq) { (void)cq; }
static enum ibv_wc_opcode read_opcode(struct ibv_cq_ex *cq) { return of(cq)->cur.opcode; }
static uint32_t read_vendor_err(struct ibv_cq_ex *cq) { return of(cq)->cur.vendor_err; }
static uint32_t read_byte_len(struct ibv_cq_ex *cq) { return of(cq)->cur.byte_len; }
static __be32 read_imm_data(struct ibv_cq_ex *cq) { return of(cq)->cur.imm_data; }
static uint32_t read_qp_num(struct ibv_cq_ex *cq) { return of(cq)->cur.qp_num; }
static uint32_t read_src_qp(struct ibv_cq_ex *cq) { return of(cq)->cur.src_qp; }
static unsigned int read_wc_flags(struct ibv_cq_ex *cq) { return of(cq)->cur.wc_flags; }
static uint32_t read_slid(struct ibv_cq_ex *cq) { return of(cq)->cur.slid; }
static uint8_t read_sl(struct ibv_cq_ex *cq) { return of(cq)->cur.sl; }
static uint8_t read_dlid_path_bits(struct ibv_cq_ex *cq) { return of(cq)->cur.dlid_path_bits; }
static void read_tm_info(struct ibv_cq_ex *cq, struct ibv_wc_tm_info *tm) { *tm = of(cq)->cur_x.tm; }
static uint64_t read_completion_ts(struct ibv_cq_ex *cq) { return of(cq)->cur_x.timestamp; }

/* The completion's time in ns since the simulation began (the core clock's cycles, scaled by its frequency). */
static uint64_t read_completion_wallclock_ns(struct ibv_cq_ex *cq) {
	uint64_t khz = of(cq)->clock_khz;
	return khz ? of(cq)->cur_x.timestamp * 1000000 / khz : 0;
}

/* The ibv_cq_ex calls that poll one completion at a time and read its fields. */
static void set_poll_ops(struct ibv_cq_ex *x) {
	x->start_poll = start_poll;
	x->next_poll = next_poll;
	x->end_poll = end_poll;
	x->read_opcode = read_opcode;
	x->read_vendor_err = read_vendor_err;
	x->read_byte_len = read_byte_len;
	x->read_imm_data = read_imm_data;
	x->read_qp_num = read_qp_num;
	x->read_src_qp = read_src_qp;
	x->read_wc_flags = read_wc_flags;
	x->read_slid = read_slid;
	x->read_sl = read_sl;
	x->read_dlid_path_bits = read_dlid_path_bits;
	x->read_tm_info = read_tm_info;
	x->read_completion_ts = read_completion_ts;
	x->read_completion_wallclock_ns = read_completion_wallclock_ns;
}

static struct ibv_cq_ex *create_cq_ex(struct ibv_context *c, struct ibv_cq_init_attr_ex *attr) {
	uint64_t offered = IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_IMM | IBV_WC_EX_WITH_QP_NUM | IBV_WC_EX_WITH_SRC_QP
			   | IBV_WC_EX_WITH_SLID | IBV_WC_EX_WITH_SL | IBV_WC_EX_WITH_DLID_PATH_BITS | IBV_WC_EX_WITH_TM_INFO
			   | IBV_WC_EX_WITH_COMPLETION_TIMESTAMP | IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK;
	struct nicsim_ibv_cq *cq;
	struct ibv_cq_ex *x;
	uint32_t masks = IBV_CQ_INIT_ATTR_MASK_FLAGS | IBV_CQ_INIT_ATTR_MASK_PD;
	struct nicsim_ibv_pd *domain = NULL;
	if ((attr->wc_flags & ~offered) || (attr->comp_mask & ~masks)) { errno = EOPNOTSUPP; return NULL; }
	if ((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) && attr->flags & ~(uint32_t)IBV_CREATE_CQ_ATTR_SINGLE_THREADED) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_PD) { /* it must be a parent domain (as mlx5) */
		domain = nicsim_parent_domain(attr->parent_domain);
		if (!domain) { errno = EINVAL; return NULL; }
	}
	if (attr->comp_vector >= (uint32_t)c->num_comp_vectors) { /* as the kernel's create_cq */
		errno = EINVAL;
		return NULL;
	}
	cq = nicsim_create_cq(c, (int)attr->cqe, attr->channel);
	if (!cq) return NULL;
	x = &cq->cq_ex;
	/* what verbs_init_cq fills (libibverbs fills it again on return from here) */
	x->context = c;
	x->channel = attr->channel;
	x->cq_context = attr->cq_context;
	x->comp_events_completed = 0;
	x->async_events_completed = 0;
	/* the channel's count: libibverbs' own ibv_create_cq_ex wrapper raises it, as ibv_destroy_cq lowers it */
	pthread_mutex_init(&x->mutex, NULL);
	pthread_cond_init(&x->cond, NULL);
	set_poll_ops(x);
	cq->clock_khz = nicsim_clock_khz(c);
	cq->domain = domain;
	nicsim_domain_use(domain, 1);
	return x;
}

/* The extended CQ on the back end's create_cq, every back end's (nicsim_set_backend). */
const struct verbs_context_ops nicsim_cqex_ops = {
	.create_cq_ex = create_cq_ex,
};
