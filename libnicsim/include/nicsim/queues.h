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
/* Frees a UAR, PD, MR (by its key), CQ, QP (by number): `cmd` is the DEALLOC/DESTROY opcode. */
int nicsim_destroy(struct nicsim_dev *dev, uint32_t cmd, uint32_t handle);

/* A memory region over [addr, addr + len) of DMA-mapped memory at bus address iova. */
struct nicsim_mr {
	uint32_t key;
	void *addr;
	uint64_t len;
};
int nicsim_mr_create(struct nicsim_dev *dev, uint32_t pd, void *addr, uint64_t iova, uint64_t len, uint32_t access,
		     struct nicsim_mr *mr);

struct nicsim_cq {
	struct nicsim_dev *dev;
	uint32_t cqn, uar, log_size, ci, arm_sn;
	uint8_t *ring, *db;
	uint64_t ring_iova, db_iova;
};
/* A CQ of 2^log_size CQEs whose armed completions raise MSI-X vector `vector`. */
int nicsim_cq_create(struct nicsim_dev *dev, uint32_t uar, uint32_t log_size, uint32_t vector, struct nicsim_cq *cq);
int nicsim_cq_destroy(struct nicsim_cq *cq);

/* One completion, as a CQE gives it. */
struct nicsim_wc {
	uint32_t opcode;	/* NICSIM_CQE_REQ, NICSIM_CQE_RESP_SEND... */
	uint32_t qpn, byte_len, syndrome;
	uint16_t wqe_counter;
};
/* Up to `max` new completions: how many. */
int nicsim_cq_poll(struct nicsim_cq *cq, struct nicsim_wc *wc, int max);
/* Arms the CQ: its next completion (or next solicited one) raises its vector once. */
int nicsim_cq_arm(struct nicsim_cq *cq, int solicited_only);

struct nicsim_qp {
	struct nicsim_dev *dev;
	uint32_t qpn, uar, log_sq, log_rq, sq_head, rq_head;
	uint8_t *sq, *rq, *db;
	uint64_t sq_iova, rq_iova, db_iova;
};
/* An RC or UC QP (NICSIM_QPT_RC...) on its own rings of 2^log_sq WQEBBs and 2^log_rq receives. */
int nicsim_qp_create(struct nicsim_dev *dev, uint32_t type, uint32_t pd, const struct nicsim_cq *send_cq,
		     const struct nicsim_cq *recv_cq, uint32_t uar, uint32_t log_sq, uint32_t log_rq, struct nicsim_qp *qp);
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

#ifdef __cplusplus
}
#endif
#endif
