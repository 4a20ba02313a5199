/*
 * What the provider's files share: its QP (a verbs_qp, with the work-request list the ibv_wr_*
 * API builds and, for a DC initiator, mlx5dv's extension), and the post that sends a list of work
 * requests to the simulator.
 */
#ifndef NICSIM_PROVIDER_H
#define NICSIM_PROVIDER_H

#include <pthread.h>
#include <stdatomic.h>
#include <infiniband/mlx5dv.h>
#include "provider-abi.h"
#include "nicsim-msg.h"

#define NICSIM_NONE 0xffffffffu

/*
 * The objects events name, by the simulator's handle of each (nicsim-events.c): an event for one
 * destroyed meanwhile is dropped, as the kernel drops a destroyed object's unread events.
 */
struct nicsim_registry { void **at; uint32_t cap; pthread_mutex_t lock; };

/* A device context: its socket to the simulator (one request at a time), its session there, its objects. */
struct nicsim_context {
	struct verbs_context vctx;
	int sock;
	uint32_t session;
	pid_t pid;                  /* the process whose connection sock is: a forked child makes its own (nicsim-msg.c) */
	uint64_t clock_khz;         /* hca_core_clock, once asked */
	pthread_mutex_t lock;
	struct nicsim_registry named;
	struct nicsim_hw *hw;       /* hw's and kern's user context (the rings), or NULL (java): verbs are requests */
	const struct nicsim_backend_ops *ops; /* its back end's table, set once at open (nicsim-backend.h) */
};

/* The struct of type that holds member at ptr. */
#define container_of(ptr, type, member) ((type *)((char *)(ptr) - offsetof(type, member)))

static inline struct nicsim_context *to_nctx(struct ibv_context *c) {
	return container_of(c, struct nicsim_context, vctx.context);
}

/* Registers obj under its handle, or (obj NULL) forgets the handle: events for it are dropped from then on. */
void nicsim_name(struct nicsim_context *ctx, uint32_t handle, void *obj);

/* The object registered under handle, or NULL; under ctx->named.lock (nicsim-events.c). */
void *nicsim_named(struct nicsim_context *ctx, uint32_t handle);

/* Waits until *completed (a counter libibverbs' ack calls raise under mu, signalling cv) reaches returned. */
void nicsim_await_acks(pthread_mutex_t *mu, pthread_cond_t *cv, const unsigned int *completed, uint32_t returned);

/* The simulation's time in ps, read through ctx at the next moment every program waits; -1 if it cannot be had. */
int64_t nicsim_sim_now_ps_of(struct nicsim_context *ctx);

/* Ties ctx to its session from a connection of this process's own (JOIN): 0, or -1. */
int nicsim_rejoin(struct nicsim_context *ctx);

/*
 * The context ibv_import_device (interpose/nicsim-import.c) is importing (its session and opener),
 * while it opens the device; else NULL. nicsim-provider.c's, which reads it as the context opens.
 */
struct nicsim_import { uint32_t session, pid; };
extern __thread const struct nicsim_import *nicsim_importing;

/*
 * A shared context's PD of handle, which the back end found there (ibv_import_pd): this process's
 * record of it, NULL with errno; and the unimports of a PD and an MR, which free only that record
 * (nicsim-domain.c).
 */
struct ibv_pd *nicsim_imported_pd(struct ibv_context *c, uint32_t handle);
void nicsim_unimport_pd(struct ibv_pd *pd);
void nicsim_unimport_mr(struct ibv_mr *mr);

/* Runs a request whose reply carries nothing: 0 or an errno. */
int simple(struct ibv_context *c, uint32_t op, uint32_t handle);

/* A DC initiator's target for one work request (mlx5dv_wr_set_dc_addr); ah NICSIM_NONE: none. */
struct nicsim_dc_addr { uint32_t ah, dctn; uint64_t key; };

/*
 * An indirect mkey (mlx5dv_create_mkey): mlx5dv's keys, the simulator's handle of it (the C driver's:
 * its key), the next one made, and the entries a layout may use (the C driver checks them).
 */
struct nicsim_mkey {
	struct mlx5dv_mkey dv;
	uint32_t handle;
	struct ibv_context *context;
	struct nicsim_mkey *next;
	uint16_t max_entries;
};

/*
 * One entry of a layout UMR: length bytes at addr under lkey; in an interleaved layout, skip bytes follow before
 * the next repetition's.
 */
struct nicsim_klm { uint64_t addr; uint32_t length, lkey, skip; };

/*
 * A layout UMR (mlx5dv_wr_mr_list, mlx5dv_wr_mr_interleaved): the mkey's handle (NICSIM_NONE: not a UMR), access,
 * repeat (0: a list).
 */
struct nicsim_umr { uint32_t mkey, access, repeat, n; struct nicsim_klm *klm; };

/*
 * One work request the ibv_wr_* API is building: the classic form, what its pointers point to, its DC target, its
 * layout.
 */
struct nicsim_wr {
	struct ibv_send_wr wr;
	struct ibv_sge *sges;
	uint8_t *inline_data;
	struct nicsim_dc_addr dc;
	struct nicsim_umr umr;
};

struct nicsim_ibv_qp {
	struct verbs_qp vqp;
	uint32_t handle;
	uint32_t events_returned;   /* async events ibv_get_async_event gave the program for it */
	uint32_t dc_type;           /* mlx5dv_dc_type, 0: not a DC QP */
	struct mlx5dv_qp_ex dv;     /* mlx5dv's extension of the ibv_qp_ex (a DCI's wr_set_dc_addr) */
	struct nicsim_wr *wrs;      /* between wr_start and wr_complete */
	size_t nwr, cap;
	bool staging_fixed;         /* wrs holds cap requests and does not grow (a parent domain's allocator gave it) */
	bool staging_custom;        /* wrs came from the parent domain's allocator: its free callback takes it back */
	int wr_error;               /* an errno met while building: wr_complete returns it and posts nothing */
	uint32_t max_send_sge, max_recv_sge, max_inline; /* as created: a request past them is refused before it is read */
	struct nicsim_hw_qp *hw;    /* its rings, when the C driver made it */
};

/* An address handle: the simulator's handle (the C driver's: the LID), its GRH's destination (a group's MGID). */
struct nicsim_ibv_ah { struct ibv_ah ah; uint32_t handle; int is_global; uint8_t dgid[16]; };
/* A thread domain: what uses it (parent domains) holds a count. */
struct nicsim_ibv_td { struct ibv_td td; atomic_int refcount; };

/*
 * A PD, or a parent domain (protection: the PD it contains, whose handle it has; td: its thread
 * domain or NULL; alloc/free: its allocators or NULL). refcount: 1, plus one per parent domain
 * containing it, or per QP and CQ made on the parent domain (nicsim-domain.c).
 */
struct nicsim_ibv_pd {
	struct ibv_pd pd;
	uint32_t handle;
	atomic_int refcount;
	struct nicsim_ibv_pd *protection;
	struct nicsim_ibv_td *td;
	void *(*alloc)(struct ibv_pd *pd, void *pd_context, size_t size, size_t alignment, uint64_t resource_type);
	void (*free)(struct ibv_pd *pd, void *pd_context, void *ptr, uint64_t resource_type);
	void *pd_context;
};
/* A region; the C driver's also keeps the pages it mapped for the adapter (hw_len 0: none). */
/*
 * An MR; the C driver's: the pages it mapped (hw_base, hw_len at bus address hw_iova), the address its
 * key names first, and the device memory it is over (hw_dm, then nothing is mapped).
 */
struct nicsim_ibv_mr {
	struct verbs_mr vmr;
	uint32_t handle;
	uint64_t hw_iova, hw_len, hw_start;
	void *hw_base, *hw_dm;
};
struct nicsim_ibv_srq {
	struct verbs_srq vsrq;
	uint32_t handle;
	uint32_t events_returned;
	uint32_t max_sge;
	struct nicsim_hw_srq *hw; /* its ring, when the C driver made it */
};
/* An XRC domain: its number on the adapter (xrcdn); own: made by the C driver's ALLOC_XRCD, not a session's. */
struct nicsim_ibv_xrcd { struct verbs_xrcd vxrcd; uint32_t xrcdn; int own; };
struct nicsim_ibv_mw { struct ibv_mw mw; };

/* The provider's object of each libibverbs object it made (typed downcasts, as rdma-core's providers). */
static inline struct nicsim_ibv_qp *to_nqp(struct ibv_qp *qp) { return container_of(qp, struct nicsim_ibv_qp, vqp.qp); }
static inline struct nicsim_ibv_qp *to_nqp_ex(struct ibv_qp_ex *qpx) {
	return container_of(qpx, struct nicsim_ibv_qp, vqp.qp_ex);
}
static inline struct nicsim_ibv_qp *to_nqp_dv(struct mlx5dv_qp_ex *dv) {
	return container_of(dv, struct nicsim_ibv_qp, dv);
}
static inline struct nicsim_ibv_ah *to_nah(struct ibv_ah *ah) { return container_of(ah, struct nicsim_ibv_ah, ah); }
static inline struct nicsim_ibv_td *to_ntd(struct ibv_td *td) { return container_of(td, struct nicsim_ibv_td, td); }
static inline struct nicsim_ibv_pd *to_npd(struct ibv_pd *pd) { return container_of(pd, struct nicsim_ibv_pd, pd); }
static inline struct nicsim_ibv_mr *to_nmr(struct ibv_mr *mr) {
	return container_of(mr, struct nicsim_ibv_mr, vmr.ibv_mr);
}
static inline struct nicsim_ibv_mr *to_nvmr(struct verbs_mr *vmr) {
	return container_of(vmr, struct nicsim_ibv_mr, vmr);
}
static inline struct nicsim_ibv_srq *to_nsrq(struct ibv_srq *srq) {
	return container_of(srq, struct nicsim_ibv_srq, vsrq.srq);
}
static inline struct nicsim_ibv_xrcd *to_nxrcd(struct ibv_xrcd *x) {
	return container_of(x, struct nicsim_ibv_xrcd, vxrcd.xrcd);
}
static inline struct nicsim_mkey *to_nmkey(struct mlx5dv_mkey *k) { return container_of(k, struct nicsim_mkey, dv); }

/* The simulator's handle of each object, or NICSIM_NONE for none (a NULL pointer). */
static inline uint32_t pd_handle(struct ibv_pd *pd) { return pd ? to_npd(pd)->handle : NICSIM_NONE; }
static inline uint32_t qp_handle(struct ibv_qp *qp) { return qp ? to_nqp(qp)->handle : NICSIM_NONE; }
static inline uint32_t ah_handle(struct ibv_ah *ah) { return ah ? to_nah(ah)->handle : NICSIM_NONE; }
static inline uint32_t srq_handle(struct ibv_srq *srq) { return srq ? to_nsrq(srq)->handle : NICSIM_NONE; }
static inline uint32_t xrcd_handle(struct ibv_xrcd *x) { return x ? to_nxrcd(x)->vxrcd.handle : NICSIM_NONE; }
static inline uint32_t mkey_handle(struct mlx5dv_mkey *k) { return k ? to_nmkey(k)->handle : NICSIM_NONE; }

/*
 * What a completion carries that struct ibv_wc has no room for: tag-matching info, and when the adapter wrote it
 * (core clock cycles).
 */
struct nicsim_wc_extra { struct ibv_wc_tm_info tm; uint64_t timestamp; };

/* A CQ; one made by ibv_create_cq_ex is polled through the ibv_cq_ex calls, one completion at a time. */
struct nicsim_ibv_cq {
	union { struct ibv_cq cq; struct ibv_cq_ex cq_ex; };
	uint32_t handle;
	uint32_t comp_returned, async_returned; /* events ibv_get_cq_event and ibv_get_async_event gave the program for it */
	struct ibv_wc cur;          /* the completion ibv_start_poll / ibv_next_poll took */
	struct nicsim_wc_extra cur_x;
	struct nicsim_ibv_pd *domain;   /* the parent domain it was made on (IBV_CQ_INIT_ATTR_MASK_PD), or NULL */
	uint64_t clock_khz;         /* for a completion's wallclock time */
	struct nicsim_hw_cq *hw;    /* its ring, when the C driver made it */
};

static inline struct nicsim_ibv_cq *to_ncq(struct ibv_cq *cq) { return container_of(cq, struct nicsim_ibv_cq, cq); }
static inline struct nicsim_ibv_cq *to_ncq_ex(struct ibv_cq_ex *cq) {
	return container_of(cq, struct nicsim_ibv_cq, cq_ex);
}
static inline uint32_t cq_handle(struct ibv_cq *cq) { return cq ? to_ncq(cq)->handle : NICSIM_NONE; }

/*
 * Polls up to max completions of cq (nicsim-cq.c); x (if not NULL) gets what struct ibv_wc lacks
 * of each. Returns the count or -errno.
 */
int nicsim_poll(struct ibv_cq *cq, int max, struct ibv_wc *wc, struct nicsim_wc_extra *x);

/* The adapter's core clock in kHz (hca_core_clock), asked once per context; 0 if it cannot be had (nicsim-device.c). */
uint64_t nicsim_clock_khz(struct ibv_context *c);

/* ibv_query_device_ex, ibv_query_port and ibv_query_rt_values_ex of a context under serve (nicsim-device.c). */
int nicsim_query_device_ex(struct ibv_context *c, const struct ibv_query_device_ex_input *input,
			   struct ibv_device_attr_ex *attr, size_t attr_size);
int nicsim_query_port(struct ibv_context *c, uint8_t port, struct ibv_port_attr *a);
int nicsim_query_rt_values(struct ibv_context *c, struct ibv_values_ex *values);

/* Makes a CQ of cqe entries (channel may be NULL); NULL with errno set on failure. */
struct nicsim_ibv_cq *nicsim_create_cq(struct ibv_context *c, int cqe, struct ibv_comp_channel *channel);

/* Posts wr and those after it (ext: each one's DC target and layout, or NULL); on a refusal *bad is the one refused. */
int nicsim_post_wrs(struct ibv_qp *qp, struct ibv_send_wr *wr, const struct nicsim_wr *ext, struct ibv_send_wr **bad);

/*
 * The ibv_wr_* operations (IBV_QP_EX_WITH_*) a QP of type t (dc_type: mlx5dv's, 0 if none) can
 * offer; a create asking for others is refused with EOPNOTSUPP.
 */
uint64_t nicsim_wr_ops_offered(enum ibv_qp_type t, uint32_t dc_type);

/*
 * Gives qp the ibv_wr_* API with the operations in ops (send_ops_flags) and only those, and
 * mlx5dv's: wr_set_dc_addr for a DC initiator, wr_mr_list and wr_mr_interleaved for RC.
 */
void nicsim_wr_init(struct nicsim_ibv_qp *qp, uint64_t ops);

/* Whether c is a context of nicsim's provider (and not of another device beside it). */
bool nicsim_owns(struct ibv_context *c);

/* ibv_create_qp_ex, and mlx5dv_create_qp's on a nicsim context: a DC QP when dc_type is mlx5dv's DCT or DCI. */
struct ibv_qp *nicsim_make_qp_ex(struct ibv_context *c, struct ibv_qp_init_attr_ex *init, uint32_t dc_type,
				 uint64_t dct_key);

/* Frees what a list being built holds. */
void nicsim_wr_clear(struct nicsim_ibv_qp *qp);

/* Thread and parent domains (nicsim-domain.c). */
struct ibv_td *nicsim_alloc_td(struct ibv_context *c, struct ibv_td_init_attr *attr);
int nicsim_dealloc_td(struct ibv_td *td);
struct ibv_pd *nicsim_alloc_parent_domain(struct ibv_context *c, struct ibv_parent_domain_init_attr *attr);

/* Frees parent domain pd: 0, or EBUSY while a QP or CQ uses it. */
int nicsim_dealloc_parent_domain(struct nicsim_ibv_pd *pd);

/* pd as a parent domain, or NULL if it is a plain PD (or NULL). */
struct nicsim_ibv_pd *nicsim_parent_domain(struct ibv_pd *pd);

/* Counts a QP or CQ made on parent domain pd (delta 1) or destroyed (-1); nothing if pd is NULL. */
void nicsim_domain_use(struct nicsim_ibv_pd *pd, int delta);

/* Gives qp a staging buffer for entries requests from pd's allocator (or malloc): 0 or ENOMEM. */
int nicsim_staging_alloc(struct nicsim_ibv_qp *qp, struct nicsim_ibv_pd *pd, uint32_t entries);

/* Gives qp's staging buffer back to where it came from. */
void nicsim_staging_free(struct nicsim_ibv_qp *qp);

/* The front end's verbs, each file's (nicsim-cq.c, nicsim-cqex.c, nicsim-qp.c, nicsim-srq.c, nicsim-post.c). */
extern const struct verbs_context_ops nicsim_cq_ops, nicsim_cqex_ops, nicsim_qp_ops, nicsim_srq_ops, nicsim_post_ops;

/* A gather list on the wire: its count, then each entry's address, length and lkey. */
static inline void put_sges(struct msg *m, const struct ibv_sge *sg, int n) {
	put32(m, (uint32_t)n);
	for (int i = 0; i < n; i++) {
		struct nicsim_wire_sge e = { .addr = sg[i].addr, .length = sg[i].length, .lkey = sg[i].lkey };
		PUT(m, e);
	}
}

#endif
