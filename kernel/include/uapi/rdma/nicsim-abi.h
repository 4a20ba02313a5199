/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause) */
/*
 * The ABI between nicsim_ib and its rdma-core provider: the udata of each
 * uverbs command. Rings and doorbell records are host memory the driver
 * allocates contiguous on the bus (the adapter takes one address per ring);
 * the provider maps each object's buffer, and its context's UAR page, by the
 * mmap keys below, then writes WQEs, doorbell records and BAR0 doorbells
 * itself, as docs/device.md describes.
 */
#ifndef NICSIM_ABI_USER_H
#define NICSIM_ABI_USER_H

#include <linux/types.h>

#define NICSIM_UVERBS_ABI_VERSION 1

struct nicsim_ibv_alloc_ucontext_resp {
	__u32 comp_mask;
	__u32 uar;		/* the context's UAR page index */
	__aligned_u64 uar_mmap_key;	/* mmap offset of that page */
	__u32 uar_page_size;
	__u32 bf_size;		/* the largest WQE one doorbell write carries */
	__u32 max_inline;
	__u32 max_sge;
	__u32 max_qp_wr;
	__u32 max_cqe;
	__u32 lid;
	__u32 reserved;
};

struct nicsim_ibv_alloc_pd_resp {
	__u32 comp_mask;
	__u32 pdn;
};

/* A CQ: the ring of 2^log_size CQEs at 0, its doorbell record at dbrec_offset. */
struct nicsim_ibv_create_cq_resp {
	__u32 comp_mask;
	__u32 cqn;
	__u32 log_size;
	__u32 dbrec_offset;
	__aligned_u64 mmap_key;
	__aligned_u64 mmap_size;
};

/*
 * A CQ resized: its new ring of 2^log_size CQEs, mapped by mmap_key. The
 * doorbell record stays in the CQ's first mapping; polling starts again at
 * the new ring's first entry, where the completions not yet polled are.
 */
struct nicsim_ibv_resize_cq_resp {
	__u32 comp_mask;
	__u32 log_size;
	__aligned_u64 mmap_key;
	__aligned_u64 mmap_size;
};

/*
 * A QP: the send ring (2^sq_log_size 64-byte WQEBBs) at sq_offset, the
 * receive ring (2^rq_log_size WQEs of 2^rq_stride_log bytes) at rq_offset,
 * the doorbell record at dbrec_offset; doorbells go to UAR page uar.
 */
struct nicsim_ibv_create_qp_resp {
	__u32 comp_mask;
	__u32 qpn;
	__u32 uar;
	__u32 sq_log_size;
	__u32 rq_log_size;
	__u32 rq_stride_log;
	__u32 sq_offset;
	__u32 rq_offset;
	__u32 dbrec_offset;
	__u32 reserved;
	__aligned_u64 mmap_key;
	__aligned_u64 mmap_size;
};

/* An SRQ: 2^log_size WQEs of 2^stride_log bytes at 0, the record at dbrec_offset. */
struct nicsim_ibv_create_srq_resp {
	__u32 comp_mask;
	__u32 srqn;
	__u32 log_size;
	__u32 stride_log;
	__u32 dbrec_offset;
	__u32 reserved;
	__aligned_u64 mmap_key;
	__aligned_u64 mmap_size;
};

#endif /* NICSIM_ABI_USER_H */
