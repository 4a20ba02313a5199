/*
 * The provider on libnicsim (the default; NICSIM_DRIVER=java forwards verbs instead): its PDs,
 * MRs, CQs and QPs are made by the device's own commands through a user context
 * (nicsim_open_context), as mlx5's are through the kernel; it writes WQEs into rings in its own
 * memory, rings doorbells, and polls CQEs by their owner bit.
 * No verb of these goes to the simulator's Java verbs library.
 */
#ifndef NICSIM_HW_H
#define NICSIM_HW_H

#include <pthread.h>
#include "nicsim-backend.h"
#include "nicsim/queues.h"

/*
 * A kernel driver's user context (the kern back end, nicsim-kern.c): its UAR page mapped into the
 * process (doorbells), and what ALLOC_UCONTEXT's udata told of the device.
 */
struct nicsim_kern {
	volatile uint8_t *uar_map;
	size_t uar_len;
	uint32_t bf_size, max_inline, max_sge, max_qp_wr, max_cqe, lid;
};

/*
 * A context's C driver: its user context, UAR, and QPs by number (a CQE names its QP so). The kern
 * back end keeps one too, for the QPs and the lock the shared data path uses: its dev is NULL and
 * kern says where the kernel mapped the UAR.
 */
struct nicsim_hw {
	struct nicsim_dev *dev;
	struct nicsim_kern *kern;
	struct nicsim_context *ctx;
	pid_t pid;     /* the process whose connection dev is: a forked child makes its own (nicsim_hw_lock) */
	unsigned forks; /* the process's fork count (nicsim_hw_lock) when dev was its own */
	pid_t opener;  /* the process that opened it, whose UAR it allocated */
	int node;
	uint32_t uar;
	pthread_mutex_t lock; /* one request at a time on the user context's socket */
	struct nicsim_ibv_qp **qps;
	uint32_t nqps, cap;
	struct nicsim_ibv_srq **srqs; /* its SRQs, which an async event names by number */
	uint32_t nsrqs;
};

/* A window bind posted: the window takes rkey when the bind completes; or (layout) an mkey's layout UMR. */
struct nicsim_hw_bind { struct ibv_mw *mw; uint32_t rkey; int layout; };

/* A QP's rings and the work requests in them. */
struct nicsim_hw_qp {
	struct nicsim_qp q;
	uint32_t sq_size, rq_size, max_send_wr, max_recv_wr, state, sig_all;
	uint64_t *wrid, *rwrid;	/* by ring slot */
	struct nicsim_hw_bind *bind; /* by ring slot: the window a bind names, or none */
	uint32_t *next_head;	/* the send head after the WQE at each slot */
	uint64_t *seq;		/* each slot's WQE's number among those posted */
	uint64_t posted, retired; /* send WQEs posted and completed, in order */
	uint32_t rq_tail;
	void *map;		/* a kern QP's rings and record, mapped from the kernel (map_len bytes) */
	size_t map_len;
};

/* A QP's bookkeeping for rings of sq_size WQEBBs and rq_size receives (no rings yet); NULL if out of memory. */
struct nicsim_hw_qp *nicsim_hw_qp_alloc(uint32_t sq_size, uint32_t rq_size);
void nicsim_hw_qp_free(struct nicsim_hw_qp *h);
/* qp is in state s now (hw's lock held): a reset one's rings start over and its unpolled completions go. */
void nicsim_hw_qp_moved(struct nicsim_ibv_qp *qp, enum ibv_qp_state s);
/* Adds qp to hw's QPs (hw's lock held): 0, or ENOMEM. nicsim_hw_forget_qp removes it. */
int nicsim_hw_know_qp(struct nicsim_hw *hw, struct nicsim_ibv_qp *qp);
void nicsim_hw_forget_qp(struct nicsim_hw *hw, struct nicsim_ibv_qp *qp);

/* A CQ's ring; a kern CQ's was mapped from the kernel (map_len bytes at q.ring). */
/* A kern CQ's mappings: its first (ring and record) at map, and a resized ring's at q.ring (ring_len bytes). */
struct nicsim_hw_cq { struct nicsim_cq q; size_t map_len; uint8_t *map; size_t ring_len; };

/* An SRQ's ring and the receives in it, taken in order; a tag-matching SRQ's list (nicsim-hw-tm.c). */
struct nicsim_hw_srq {
	struct nicsim_srq q;
	uint64_t *wrid; /* by ring slot */
	uint32_t size, max_wr, tail;
	struct nicsim_hw_tm *tm;
	size_t map_len;	/* a kern SRQ's ring and record, mapped from the kernel at q.ring */
};

static inline struct nicsim_hw *hw_of(struct ibv_context *c) { return to_nctx(c)->hw; }

/* The smallest power of two >= v, and the log2 of a power of two: ring sizes, as the Java driver rounds them. */
static inline uint32_t nicsim_pow2_at_least(uint32_t v) {
	uint32_t p = 1;
	while (p < v)
		p <<= 1;
	return p;
}
static inline uint32_t nicsim_log2(uint32_t pow2) { return (uint32_t)__builtin_ctz(pow2); }
/* The log2 of the bytes of a receive WQE of max_sge segments (16 each, at least one). */
static inline uint32_t nicsim_recv_stride_log(uint32_t max_sge) {
	return nicsim_log2(nicsim_pow2_at_least(max_sge * 16 > 16 ? max_sge * 16 : 16));
}

/* The most segments a work request of the C driver's carries. */
#define NICSIM_HW_MAX_SGE 64
/* wr's n segments as WQE data segments into out; EINVAL if n is negative or above max (or the C driver's). */
int nicsim_hw_sges(const struct ibv_sge *list, int n, uint32_t max, struct nicsim_sge *out);

/*
 * Whether the provider runs on the C driver: yes unless NICSIM_DRIVER=java asks for the simulator's
 * Java verbs library (each verb a request). 1, 0, or -1 after naming a value that is neither.
 */
int nicsim_hw_wanted(void);

/*
 * Takes hw's lock, which every request on its user context holds. In a child forked after the
 * context was opened (the context is shared with it, as the kernel's uverbs file is), the child
 * first joins the user context from a connection of its own, so its requests never interleave
 * with its parent's.
 */
void nicsim_hw_lock(struct nicsim_hw *hw);
/* Opens ctx's C driver unless NICSIM_DRIVER=java: 0 (also then), or -1 after saying why. */
int nicsim_hw_open(struct nicsim_context *ctx);
void nicsim_hw_close(struct nicsim_context *ctx);

/* The QP of number qpn, or NULL. */
struct nicsim_ibv_qp *nicsim_hw_qp(struct nicsim_hw *hw, uint32_t qpn);
/* Whether NICSIM_VERBOSE asks the C driver to say on stderr which of the adapter's checks refused a command. */
int nicsim_hw_verbose(void);
/* Runs command `op` (nin words in, nout out) under hw's lock: 0, or the errno of its status or failure. */
int nicsim_hw_cmd(struct nicsim_hw *hw, uint32_t op, const uint64_t *in, int nin, uint64_t *out, int nout);
/* Frees object `handle` by destroying command `cmd` (its name: `what`) under hw's lock: 0 or an errno. */
int nicsim_hw_destroy(struct nicsim_hw *hw, uint32_t cmd, uint32_t handle, const char *what);
/* A command's result as an errno (with NICSIM_VERBOSE, saying on stderr which check refused it). */
int nicsim_hw_errno(const char *what, int rc);

/*
 * Opens the kern back end's context on a kernel uverbs device bound to nicsim_ib (nicsim-kern.c):
 * NULL with errno if the kernel refuses it. nicsim_kern_device says whether dev is such a device.
 */
struct verbs_context *nicsim_kern_open(struct ibv_device *dev, int cmd_fd);
bool nicsim_kern_device(struct ibv_device *dev);

/* Whether the user context (this process's, imported) has an object of kind destroy under handle: 0 or an errno. */
int nicsim_hw_import(struct ibv_context *c, uint32_t destroy, uint32_t handle, uint64_t *length);
/* The C driver's MRs and windows (nicsim-hw-mr.c), in its own verbs (nicsim-hw-verbs.c). */
struct ibv_mr *nicsim_hw_reg_mr(struct ibv_pd *pd, void *addr, size_t length, uint64_t iova, int access);
int nicsim_hw_dereg_mr(struct verbs_mr *vmr);
int nicsim_hw_rereg_mr(struct verbs_mr *vmr, int flags, struct ibv_pd *pd, void *addr, size_t length, int access);
int nicsim_hw_advise_mr(struct ibv_pd *pd, enum ibv_advise_mr_advice advice, uint32_t flags, struct ibv_sge *sg,
			uint32_t n);
struct ibv_mw *nicsim_hw_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type);
int nicsim_hw_dealloc_mw(struct ibv_mw *mw);
struct ibv_mr *nicsim_hw_import_mr(struct ibv_pd *pd, uint32_t handle);
/* Its device memory (nicsim-hw-dm.c). */
struct ibv_dm *nicsim_hw_alloc_dm(struct ibv_context *c, struct ibv_alloc_dm_attr *attr);
int nicsim_hw_free_dm(struct ibv_dm *dm);
struct ibv_mr *nicsim_hw_reg_dm_mr(struct ibv_pd *pd, struct ibv_dm *dm, uint64_t at, size_t n, unsigned int access);
struct ibv_dm *nicsim_hw_import_dm(struct ibv_context *c, uint32_t handle);
void nicsim_hw_unimport_dm(struct ibv_dm *dm);
/* Indirect mkeys (CREATE_INDIRECT_MKEY; NULL and errno on failure), and their destroying: 0 or an errno. */
struct nicsim_mkey *nicsim_hw_create_mkey(struct ibv_pd *pd, uint32_t create_flags, uint16_t max_entries);
int nicsim_hw_destroy_mkey(struct nicsim_mkey *k);
/* A layout UMR's WQE body (docs/device.md) for u on k's QP: its bytes into body (room for 1024), or -errno. */
int nicsim_hw_layout(const struct nicsim_umr *u, uint8_t *body);
/* An MR the adapter gave key: its handle and keys (one key for both, as the adapter's), its type and access. */
static inline void nicsim_hw_mr_keyed(struct nicsim_ibv_mr *mr, uint32_t key, int access) {
	mr->handle = mr->vmr.ibv_mr.handle = mr->vmr.ibv_mr.lkey = mr->vmr.ibv_mr.rkey = key;
	mr->vmr.mr_type = IBV_MR_TYPE_MR;
	mr->vmr.access = access;
}
/* An MR over device memory dm is gone (nicsim-hw-dm.c). */
void nicsim_hw_dm_unused(void *dm);

/* Its QPs (nicsim-hw-qp.c), reached from the provider's QP verbs: each returns 0 or an errno. */
int nicsim_hw_create_qp(struct ibv_context *c, struct ibv_pd *pd, struct ibv_xrcd *xrcd, struct ibv_qp_init_attr *init,
			uint32_t dc_type, uint64_t dct_key, struct nicsim_ibv_qp *qp);
int nicsim_hw_destroy_qp(struct nicsim_ibv_qp *qp);
int nicsim_hw_modify_qp(struct nicsim_ibv_qp *qp, struct ibv_qp_attr *attr, int mask);
int nicsim_hw_query_qp(struct nicsim_ibv_qp *qp, struct ibv_qp_attr *attr, int mask, struct ibv_qp_init_attr *init);
/* Posting (nicsim-hw-post.c): wr and those after it (ext: as nicsim_post_wrs's); *bad the one refused. */
int nicsim_hw_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, const struct nicsim_wr *ext,
			struct ibv_send_wr **bad);
int nicsim_hw_post_recv(struct nicsim_ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad);

/* Its SRQs (nicsim-hw-srq.c), reached from the provider's SRQ verbs (nicsim-srq.c): 0 or an errno. */
/* A basic SRQ, an XRC SRQ of domain xrcd completing to cq, or a tag-matching one (tm) completing to cq. */
int nicsim_hw_create_srq(struct ibv_pd *pd, struct ibv_srq_attr *attr, enum ibv_srq_type type, struct ibv_xrcd *xrcd,
			 struct ibv_cq *cq, const struct ibv_tm_cap *tm, struct nicsim_ibv_srq *srq);
/* Tag matching (nicsim-hw-tm.c): an SRQ's list state, kept and freed; ibv_post_srq_ops; 0 or an errno. */
int nicsim_hw_tm_init(struct nicsim_hw_srq *s, uint32_t max_tags, uint32_t max_ops);
void nicsim_hw_tm_free(struct nicsim_hw_srq *s);
int nicsim_hw_post_srq_ops(struct nicsim_ibv_srq *srq, struct ibv_ops_wr *op, struct ibv_ops_wr **bad);
/*
 * A tag-matching SRQ's CQE w as a work completion in wc (and tm): 1; 0 if it completes nothing the
 * program asked to hear of; -1 for an ordinary receive, which the caller takes from the SRQ's ring
 * and then passes to nicsim_hw_tm_plain for its opcode.
 */
int nicsim_hw_tm_wc(struct nicsim_hw_srq *s, const struct nicsim_wc *w, struct ibv_wc *wc, struct ibv_wc_tm_info *tm);
void nicsim_hw_tm_plain(const struct nicsim_wc *w, struct ibv_wc *wc);
/* The SRQ of number srqn, or NULL (hw->lock held). */
struct nicsim_ibv_srq *nicsim_hw_srq(struct nicsim_hw *hw, uint32_t srqn);
/* An XRC domain: a file's is the session's (the java back end's request), one of the context's own
 * ALLOC_XRCD's; NULL and errno on failure. Its close: 0 or an errno. */
struct ibv_xrcd *nicsim_hw_open_xrcd(struct ibv_context *c, const struct stat *file, int oflags);
int nicsim_hw_close_xrcd(struct nicsim_ibv_xrcd *x);
int nicsim_hw_destroy_srq(struct nicsim_ibv_srq *srq);
int nicsim_hw_modify_srq(struct nicsim_ibv_srq *srq, struct ibv_srq_attr *attr, int mask);
int nicsim_hw_query_srq(struct nicsim_ibv_srq *srq, struct ibv_srq_attr *attr);
int nicsim_hw_post_srq_recv(struct nicsim_ibv_srq *srq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad);

#endif
