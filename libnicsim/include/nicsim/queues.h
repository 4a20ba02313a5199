/*
 * libnicsim's objects: what a user-space provider keeps of each (mlx5-style) and the commands that
 * make them. A CQ and a QP own their rings and doorbell records in DMA-mapped memory; posting
 * writes a WQE into the ring, the doorbell record, then the doorbell (BlueFlame for a one-WQEBB
 * WQE); polling reads CQEs by their owner bit. docs/device.md describes every byte.
 *
 * Calls return 0 or a negative errno; a command the adapter refused returns the errno of its
 * status and, through nicsim_last_syndrome, says which check failed.
 */
#ifndef NICSIM_QUEUES_H
#define NICSIM_QUEUES_H

#include "nicsim/nicsim.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The syndrome of the last command refused on this thread (docs/device.md, "Syndromes"). */
uint32_t nicsim_last_syndrome(void);

int nicsim_alloc_uar(struct nicsim_dev *dev, uint32_t *uar);
int nicsim_alloc_pd(struct nicsim_dev *dev, uint32_t *pd);
/* An XRC domain: the XRC SRQs and target QPs that may serve each other (DEALLOC_XRCD frees it). */
int nicsim_alloc_xrcd(struct nicsim_dev *dev, uint32_t *xrcd);
/* Frees a UAR, PD, XRC domain, MR (by its key), CQ, QP (by number): `cmd` is the DEALLOC/DESTROY opcode. */
int nicsim_destroy(struct nicsim_dev *dev, uint32_t cmd, uint32_t handle);

/* A memory region over [addr, addr + len) of DMA-mapped memory at bus address iova. */
struct nicsim_mr {
	uint32_t key;
	void *addr;
	uint64_t len;
};
int nicsim_mr_create(struct nicsim_dev *dev, uint32_t pd, void *addr, uint64_t iova, uint64_t len, uint32_t access,
		     struct nicsim_mr *mr);
/* As nicsim_mr_create, the region's addresses starting at `start` (ibv_reg_mr_iova's IOVA; 0: zero-based). */
int nicsim_mr_create_at(struct nicsim_dev *dev, uint32_t pd, void *addr, uint64_t start, uint64_t iova, uint64_t len,
			uint32_t access, struct nicsim_mr *mr);
/*
 * With NICSIM_ACCESS_ON_DEMAND a region's pages are listed not present: the adapter's first touch
 * of each faults it in through the kernel (a translation miss), as on-demand paging does.
 */
/*
 * An implicit on-demand region (CREATE_IMPLICIT_MKEY): one key for the whole address space from 0,
 * whose 2 MB pages the kernel brings in as the adapter touches them (a page nothing of the process
 * is mapped at fails the access). Only a user context's kernel can page for it.
 */
int nicsim_mr_create_implicit(struct nicsim_dev *dev, uint32_t pd, uint32_t access, struct nicsim_mr *mr);
/* The region's key given a new PD, translation or access (REREG_MKEY): as nicsim_mr_create_at, the key kept. */
int nicsim_mr_rereg(struct nicsim_dev *dev, struct nicsim_mr *mr, uint32_t pd, void *addr, uint64_t start,
		    uint64_t iova, uint64_t len, uint32_t access);

struct nicsim_cq {
	struct nicsim_dev *dev;
	uint32_t cqn, uar, log_size, ci, arm_sn;
	uint8_t *ring, *db;
	uint64_t ring_iova, db_iova;
	/* A kernel driver's CQ (dev NULL): its UAR page mapped into the process, where the arm doorbell goes. */
	volatile uint8_t *uar_map;
};
/* A CQ of 2^log_size CQEs whose armed completions raise MSI-X vector `vector`. */
int nicsim_cq_create(struct nicsim_dev *dev, uint32_t uar, uint32_t log_size, uint32_t vector, struct nicsim_cq *cq);
int nicsim_cq_destroy(struct nicsim_cq *cq);
/*
 * Moves the CQ to a new ring of 2^log_size CQEs (RESIZE_CQ): the completions not yet polled go to
 * its first entries, and polling goes on from there.
 */
int nicsim_cq_resize(struct nicsim_cq *cq, uint32_t log_size);

/* One completion, as a CQE gives it. */
struct nicsim_wc {
	uint32_t opcode;	/* NICSIM_CQE_REQ, NICSIM_CQE_RESP_SEND... */
	uint32_t qpn, byte_len, syndrome;
	uint16_t wqe_counter;
	uint8_t wqe_opcode;	/* a requester's: the WQE's opcode (NICSIM_WQE_OP_*) */
	uint8_t vendor_err;	/* an error's vendor syndrome */
	uint8_t solicited;
	uint32_t imm;		/* immediate data (or invalidated rkey) as the CQE's bytes 36..39 hold it: network order */
	uint32_t src_qp, slid;	/* a UD receive's source */
	uint8_t grh;		/* a GRH came with it (a multicast receive): in the buffer's first 40 bytes */
	uint32_t srqn;
	uint64_t timestamp;	/* when the adapter wrote it, in core clock cycles (not in an error's) */
	/* a tag-matching SRQ's: what it reports (NICSIM_CQE_TM_*), its flags (libibverbs' IBV_WC_TM_*), tag, app context */
	uint8_t tm_kind, tm_flags;
	uint64_t tm_tag;
	uint32_t tm_priv;
};
/* Up to `max` new completions: how many. */
int nicsim_cq_poll(struct nicsim_cq *cq, struct nicsim_wc *wc, int max);
/*
 * Removes the completions of QP `qpn` software has not taken (as mlx5's __mlx5_cq_clean when a QP
 * is reset): how many; *receives (if not NULL) says how many of them were receives.
 */
int nicsim_cq_clean(struct nicsim_cq *cq, uint32_t qpn, int *receives);
/* Arms the CQ: its next completion (or next solicited one) raises its vector once. */
int nicsim_cq_arm(struct nicsim_cq *cq, int solicited_only);
/* The driver took one of the CQ's events: the next arm carries the next sequence number. */
void nicsim_cq_event(struct nicsim_cq *cq);

struct nicsim_qp {
	struct nicsim_dev *dev;
	uint32_t qpn, uar, log_sq, log_rq, log_stride, sq_head, rq_head, type;
	uint32_t dc_type;	/* a DRIVER QP's: NICSIM_DC_TARGET or NICSIM_DC_INITIATOR */
	uint8_t *sq, *rq, *db;
	uint64_t sq_iova, rq_iova, db_iova;
	/*
	 * A kernel driver's QP (dev NULL): its UAR page mapped into the process. Its doorbell is one
	 * 8-byte store of the last WQE's first 8 bytes there, as the kernel driver rings its own.
	 */
	volatile uint8_t *uar_map;
};
/* An RC or UC QP (NICSIM_QPT_RC...) on its own rings of 2^log_sq WQEBBs and 2^log_rq receives. */
int nicsim_qp_create(struct nicsim_dev *dev, uint32_t type, uint32_t pd, const struct nicsim_cq *send_cq,
		     const struct nicsim_cq *recv_cq, uint32_t uar, uint32_t log_sq, uint32_t log_rq, struct nicsim_qp *qp);

/* A DRIVER QP's DC role (mlx5dv's numbers): a target, reached through its SRQ, or an initiator. */
enum { NICSIM_DC_TARGET = 1, NICSIM_DC_INITIATOR = 2 };

/* What CREATE_QP takes, beyond nicsim_qp_create's: receives of 2^log_stride bytes, flags, an SRQ. */
struct nicsim_qp_init {
	uint32_t type, pd, send_cqn, recv_cqn, uar, log_sq, log_rq, log_stride;
	uint64_t flags;		/* CREATE_QP's flags word (1: every send completes) */
	uint32_t srqn;
	uint32_t dc_type;	/* a DRIVER QP's DC role */
	uint64_t dct_key;	/* a DC target's access key, which each initiator's request must carry */
};
int nicsim_qp_create_ex(struct nicsim_dev *dev, const struct nicsim_qp_init *init, struct nicsim_qp *qp);
int nicsim_qp_destroy(struct nicsim_qp *qp);
/*
 * RESET -> INIT -> RTR -> RTS by three MODIFY_QP commands, connected to QP `dest_qpn` at LID `dlid`:
 * MTU 1024, local and remote write access, PSNs 0. nicsim_rc_connect does it to QP `qpn` by number.
 */
int nicsim_qp_connect(struct nicsim_qp *qp, uint32_t dest_qpn, uint32_t dlid);
int nicsim_rc_connect(struct nicsim_dev *dev, uint32_t qpn, uint32_t dest_qpn, uint32_t dlid);

/* Flags of nicsim_post_send. */
enum {
	NICSIM_SEND_SIGNALED = 1,	/* a CQE when it completes */
	NICSIM_SEND_INLINE = 2,		/* the bytes in the WQE: the adapter does not read them (at most 44 here) */
};
/*
 * One send WQE of one WQEBB: SEND, RDMA_WRITE (remote address and rkey) and the like, its data one
 * segment of `mr` (or inline: `mr` may be NULL). BlueFlame rings it.
 */
int nicsim_post_send(struct nicsim_qp *qp, uint32_t opcode, const struct nicsim_mr *mr, void *addr, uint32_t len,
		     uint64_t remote_addr, uint32_t rkey, int flags);
/* One receive of one data segment. */
int nicsim_post_recv(struct nicsim_qp *qp, const struct nicsim_mr *mr, void *addr, uint32_t len);

/* ---- WQEs of any shape: write several, then ring once ---- */

/* A data segment: len bytes at addr (a virtual address the lkey's region covers). */
struct nicsim_sge {
	uint64_t addr;
	uint32_t len, lkey;
};

/* Control segment flags (byte 11, fm_ce_se). */
enum { NICSIM_FM_SOLICITED = 0x02, NICSIM_FM_SIGNALED = 0x08, NICSIM_FM_FENCE = 0x80 };

/* A send work request as its WQE carries it (docs/device.md, "Send queues"). */
struct nicsim_send_wr {
	uint32_t opcode;	/* NICSIM_WQE_OP_* */
	uint32_t fm_ce_se;	/* NICSIM_FM_* */
	uint32_t imm;		/* bytes 12..15 as they are to be sent: immediate data in network order, or a key */
	uint64_t remote_addr;	/* a window bind (NICSIM_WQE_OP_UMR): the window's address */
	uint32_t rkey;		/* and its new rkey */
	uint64_t swap_add, compare; /* a bind: the window's length, and the MR's lkey << 32 | its access flags */
	const struct nicsim_sge *sge;
	int num_sge;
	int inline_data;	/* the segments' bytes go in the WQE (read from their addresses now) */
	uint32_t dest_qpn, qkey, dlid; /* a UD QP's address vector; a DC initiator's: the target's DCT and LID */
	int grh;		/* a UD send's packet carries a GRH to dgid (a multicast group's MGID) */
	uint8_t dgid[16];
	uint64_t dc_key;	/* a DC initiator's: the target's access key */
	uint32_t xrc_srqn;	/* an XRC_SEND QP's: the XRC SRQ at the target that takes it */
};

/*
 * Writes wr's WQE at the send queue's head and moves the head past it: the WQE's bytes (whole
 * WQEBBs, at most 16) are also left in `copy` (1024 bytes) for the doorbell. Its size in bytes, or
 * -EINVAL if it does not fit a WQE.
 */
int nicsim_wqe_put(struct nicsim_qp *qp, const struct nicsim_send_wr *wr, uint8_t *copy);
/*
 * Writes a WQE of any other shape at the send queue's head: a control segment (opcode, opmod in its
 * first byte, fm_ce_se, imm as bytes 12..15 are to hold it) and `body` (a multiple of 16 bytes)
 * after it, such as a UMR's mkey layout (docs/device.md). Its size in bytes, or -EINVAL.
 */
int nicsim_wqe_put_raw(struct nicsim_qp *qp, uint32_t opcode, uint32_t opmod, const void *body, uint32_t body_bytes,
		       uint32_t fm_ce_se, uint32_t imm, uint8_t *copy);
/*
 * Publishes the producer counter and rings the doorbell for the `count` WQEs put since the last
 * ring: a lone WQE of at most max(64, bf_size) bytes whole (BlueFlame), else the last one's first
 * 8 bytes. `last`/`last_bytes`: the last WQE, as nicsim_wqe_put left it.
 */
int nicsim_sq_ring(struct nicsim_qp *qp, int count, const uint8_t *last, int last_bytes);
/* Writes a receive WQE scattering to `sge` at the receive queue's head (-EINVAL if they do not fit its stride). */
int nicsim_recv_put(struct nicsim_qp *qp, const struct nicsim_sge *sge, int num_sge);
/* Publishes the receive counter: the WQEs put so far are the adapter's. */
void nicsim_rq_publish(struct nicsim_qp *qp);

/* A shared receive queue: 2^log_size receives of 2^log_stride bytes, and its doorbell record. */
struct nicsim_srq {
	struct nicsim_dev *dev;
	uint32_t srqn, log_size, log_stride, head;
	uint8_t *ring, *db;
	uint64_t ring_iova, db_iova;
};
/* An SRQ of PD `pd` whose limit event is armed at `limit` (0: not armed). */
int nicsim_srq_create(struct nicsim_dev *dev, uint32_t pd, uint32_t log_size, uint32_t log_stride, uint32_t limit,
		      struct nicsim_srq *srq);
/* An XRC SRQ of domain `xrcd` (nicsim_alloc_xrcd) whose receives complete to CQ `cqn`. */
int nicsim_xrc_srq_create(struct nicsim_dev *dev, uint32_t pd, uint32_t log_size, uint32_t log_stride, uint32_t limit,
			  uint32_t xrcd, uint32_t cqn, struct nicsim_srq *srq);
/*
 * A tag-matching SRQ whose completions go to CQ `cqn`: a list of up to max_tags tagged buffers, and
 * up to max_ops signaled list operations (TM_OP commands) outstanding.
 */
int nicsim_tm_srq_create(struct nicsim_dev *dev, uint32_t pd, uint32_t log_size, uint32_t log_stride, uint32_t limit,
			 uint32_t cqn, uint32_t max_tags, uint32_t max_ops, struct nicsim_srq *srq);
int nicsim_srq_destroy(struct nicsim_srq *srq);
/* Writes a receive WQE at the SRQ's head; nicsim_srq_publish makes those put the adapter's. */
int nicsim_srq_recv_put(struct nicsim_srq *srq, const struct nicsim_sge *sge, int num_sge);
void nicsim_srq_publish(struct nicsim_srq *srq);

#ifdef __cplusplus
}
#endif
#endif
