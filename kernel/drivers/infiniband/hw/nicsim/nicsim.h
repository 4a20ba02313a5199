/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * nicsim_ib: the kernel driver of nicsim's simulated RDMA adapter.
 * Objects, and the functions the driver's files offer each other.
 */
#ifndef _NICSIM_H_
#define _NICSIM_H_

#include <linux/bitmap.h>
#include <linux/pci.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>
#include <rdma/ib_verbs.h>
#include <rdma/ib_umem.h>
#include <rdma/uverbs_ioctl.h>

#include "nicsim_hw.h"

#define DRV_MODULE_NAME		"nicsim_ib"
#define NICSIM_PORT		1

/* what QUERY_HCA_CAP answers */
struct nicsim_caps {
	u32 max_qp;
	u32 max_cq;
	u32 max_mkey;
	u32 max_pd;
	u32 max_uar;
	u32 max_qp_wr;
	u32 max_cqe;
	u32 max_sge;
	u32 max_inline;
	u32 max_mtu;
	u32 lid;
	u32 max_rd_atomic;
	u32 max_msg_size;
	u32 max_dm;
	u64 uar_base;
	u32 uar_page_size;
	u64 dm_base;
	u32 bf_size;
	u32 max_page_shift;
	u32 sm_lid;
	u64 node_guid;
};

/* host memory the adapter reaches by DMA: coherent, contiguous on the bus */
struct nicsim_buf {
	void *va;
	dma_addr_t dma;
	size_t size;
};

struct nicsim_dev {
	struct ib_device ibdev;
	struct pci_dev *pdev;
	void __iomem *bar0;
	resource_size_t bar0_start;
	resource_size_t bar0_len;
	struct nicsim_caps caps;

	/* one command at a time: the entry and both mailboxes are shared */
	struct mutex cmd_lock;
	struct nicsim_buf cmd;
	u32 cmd_token;

	/* INIT_HCA's tables; the adapter owns them until TEARDOWN_HCA */
	struct nicsim_buf eq;
	struct nicsim_buf mtt;
	struct nicsim_buf qpc;
	struct nicsim_buf mkc;
	u32 eq_log_size;
	u32 eq_ci;
	bool up;

	/* the UAR page kernel CQs and QPs ring */
	u32 kuar;
	spinlock_t kuar_lock; /* one BlueFlame/arm write at a time */

	/*
	 * The work that reads the event queue and the armed CQs: run by the
	 * doorbell function's interrupts when irq (nicsim_irq.c), else every
	 * poll_interval_ms (nicsim_eq.c)
	 */
	bool irq;
	struct delayed_work poll_work;
	struct list_head armed_cqs;
	spinlock_t armed_lock; /* armed_cqs, and each CQ's armed and is_armed */

	/*
	 * The port's CapabilityMask as the adapter's SMA reports it, from the
	 * last MODIFY_PORT's answer: query_port may not sleep for a command.
	 */
	struct mutex port_lock; /* MODIFY_PORT and its answer's store */
	u32 port_cap_flags;
	/*
	 * Whether the port is ACTIVE, as the event queue last said: true from
	 * INIT_HCA (an adapter whose link is down then writes PORT_ERR first),
	 * false from a PORT_ERR until a PORT_ACTIVE.
	 */
	bool port_active;

	/* objects by number, for async events */
	struct xarray cqs;
	struct xarray qps;
	struct xarray srqs;
};

struct nicsim_ucontext {
	struct ib_ucontext ibucontext;
	u32 uar;
	struct rdma_user_mmap_entry *uar_entry;
};

enum nicsim_mmap_type {
	NICSIM_MMAP_IO,		/* a UAR page of BAR0 */
	NICSIM_MMAP_DMA,	/* a ring and its doorbell record */
};

/*
 * What user space maps. A DMA entry owns its buffer: the buffer is freed in
 * mmap_free, once the object is destroyed and no mapping is left.
 */
struct nicsim_mmap_entry {
	struct rdma_user_mmap_entry rdma_entry;
	struct nicsim_dev *dev;
	enum nicsim_mmap_type type;
	u64 pfn;
	struct nicsim_buf buf;
};

struct nicsim_pd {
	struct ib_pd ibpd;
	u32 pdn;
	/*
	 * The key every fast-registration MR's layout names for its pages: all
	 * of memory, mapped to itself, with every right (nicsim_mr.c). Made
	 * with the PD's first such MR, destroyed with its last.
	 */
	u32 fr_key;
	u32 fr_users;
};

struct nicsim_mr {
	struct ib_mr ibmr;
	struct ib_umem *umem;
	u32 mkey;
	/*
	 * A fast-registration MR (alloc_mr): an indirect mkey of max_pages
	 * entries, and what map_mr_sg gave it: the pages' DMA addresses and
	 * the DMA address of its first byte (ibmr.iova starts as it, but a
	 * ULP may change it: it is the key's start address, not memory's).
	 */
	u64 *pages;
	u32 max_pages;
	u32 npages;
	u64 first;
};

struct nicsim_mw {
	struct ib_mw ibmw;
	u32 handle;	/* the window's first rkey */
};

struct nicsim_ah {
	struct ib_ah ibah;
	u16 dlid;
	bool grh;		/* sends carry a GRH to dgid: a multicast group */
	union ib_gid dgid;
};

/*
 * A CQ: one coherent buffer holds the ring, then the doorbell record in its
 * own page (so user space maps both with one mmap).
 */
struct nicsim_cq {
	struct ib_cq ibcq;
	struct nicsim_buf buf;
	void *va;	/* the ring: a user CQ's buf went to its mmap entry */
	u32 cqn;
	u32 log_size;
	u32 ci;		/* the consumer counter (kernel CQs) */
	u32 arm_sn;	/* events taken, modulo 4 */
	u32 arm_word;	/* a kernel CQ: its last arm (consumer counter, cmd) */
	spinlock_t lock; /* ci and arm_sn: polling and arming */
	struct list_head armed;	/* on nicsim_dev.armed_cqs while armed */
	bool is_armed;
	u32 user_arm;	/* a user CQ: the arm word its last event answered */
	struct rdma_user_mmap_entry *entry;
	/* in buf after the first ring: RESIZE_CQ moves the ring, not it */
	__be32 *dbrec;
	/* the ring after a resize: a kernel CQ's, or a user CQ's mapping */
	struct nicsim_buf ring;
	struct rdma_user_mmap_entry *ring_entry;
	bool resizing;	/* poll_cq takes nothing while RESIZE_CQ moves it */
};

struct nicsim_wq {
	u32 log_size;	/* WQEBBs (send) or WQEs (receive), log2 */
	u32 head;	/* producer counter */
	u32 tail;	/* consumer counter: what completed */
	u64 *wr_ids;	/* by producer counter modulo the size */
	u32 offset;	/* of the ring in the QP's buffer */
};

/* A QP: SQ ring, RQ ring and doorbell record in one coherent buffer. */
struct nicsim_qp {
	struct ib_qp ibqp;
	struct nicsim_buf buf;
	u32 qpn;
	u32 uar;
	u32 rq_stride_log;
	u32 dbrec_offset;
	struct nicsim_wq sq;
	struct nicsim_wq rq;
	u16 *sq_wqebbs;	/* WQEBBs of the WQE at each SQ index */
	struct ib_qp_cap cap;
	bool signal_all;
	spinlock_t sq_lock; /* sq, sq_wqebbs and the send doorbell */
	spinlock_t rq_lock; /* rq */
	enum ib_qp_state state;
	struct rdma_user_mmap_entry *entry;
};

struct nicsim_srq {
	struct ib_srq ibsrq;
	struct nicsim_buf buf;
	u32 srqn;
	u32 stride_log;
	u32 dbrec_offset;
	struct nicsim_wq wq;
	/*
	 * A kernel SRQ's slots whose receive has not completed yet, one bit
	 * each: set by post_srq_recv, cleared by the poll of the CQE naming
	 * the slot. The adapter takes WQEs in ring order, so the next post
	 * goes to slot head modulo the size and must wait while that slot's
	 * receive, taken by one QP, has not completed, even if others did.
	 */
	unsigned long *busy;
	u32 max_sge;
	u32 limit;
	spinlock_t lock; /* wq's head and wr_ids of free slots */
	struct rdma_user_mmap_entry *entry;
};

/* QP0 (SMI) and QP1 (GSI): the port's special QPs, UD on the wire */
static inline bool nicsim_qp_special(enum ib_qp_type type)
{
	return type == IB_QPT_SMI || type == IB_QPT_GSI;
}

/* A QP whose WQEs carry an address vector */
static inline bool nicsim_qp_type_ud(enum ib_qp_type type)
{
	return type == IB_QPT_UD || nicsim_qp_special(type);
}

static inline struct nicsim_dev *to_ndev(struct ib_device *ibdev)
{
	return container_of(ibdev, struct nicsim_dev, ibdev);
}

static inline struct nicsim_ucontext *to_nuctx(struct ib_ucontext *uctx)
{
	return container_of(uctx, struct nicsim_ucontext, ibucontext);
}

static inline struct nicsim_pd *to_npd(struct ib_pd *pd)
{
	return container_of(pd, struct nicsim_pd, ibpd);
}

static inline struct nicsim_mr *to_nmr(struct ib_mr *mr)
{
	return container_of(mr, struct nicsim_mr, ibmr);
}

static inline struct nicsim_mw *to_nmw(struct ib_mw *mw)
{
	return container_of(mw, struct nicsim_mw, ibmw);
}

static inline struct nicsim_ah *to_nah(struct ib_ah *ah)
{
	return container_of(ah, struct nicsim_ah, ibah);
}

static inline struct nicsim_cq *to_ncq(struct ib_cq *cq)
{
	return container_of(cq, struct nicsim_cq, ibcq);
}

static inline struct nicsim_qp *to_nqp(struct ib_qp *qp)
{
	return container_of(qp, struct nicsim_qp, ibqp);
}

static inline struct nicsim_srq *to_nsrq(struct ib_srq *srq)
{
	return container_of(srq, struct nicsim_srq, ibsrq);
}

static inline struct nicsim_mmap_entry *
to_nentry(struct rdma_user_mmap_entry *entry)
{
	return container_of(entry, struct nicsim_mmap_entry, rdma_entry);
}

/* nicsim_cmd.c */
int nicsim_cmd_init(struct nicsim_dev *dev);
void nicsim_cmd_cleanup(struct nicsim_dev *dev);
int nicsim_cmd_exec(struct nicsim_dev *dev, u32 opcode, const u64 *in,
		    int nin, u64 *out, int nout);
int nicsim_cmd_handle(struct nicsim_dev *dev, u32 opcode, const u64 *in,
		      int nin, u32 *handle);
int nicsim_cmd_destroy(struct nicsim_dev *dev, u32 opcode, u32 handle);
int nicsim_query_caps(struct nicsim_dev *dev);
int nicsim_buf_alloc(struct nicsim_dev *dev, struct nicsim_buf *buf,
		     size_t size);
int nicsim_buf_alloc_gfp(struct nicsim_dev *dev, struct nicsim_buf *buf,
			 size_t size, gfp_t gfp);
void nicsim_buf_free(struct nicsim_dev *dev, struct nicsim_buf *buf);

/* nicsim_irq.c: the adapter's first vectors (0: events, 1: kernel CQs) */
#define NICSIM_IRQ_VECTORS	2
extern struct pci_driver nicsim_doorbell_driver;
bool nicsim_irq_init(struct nicsim_dev *dev);
void nicsim_irq_cleanup(struct nicsim_dev *dev);

/* nicsim_eq.c */
int nicsim_eq_init(struct nicsim_dev *dev);
void nicsim_eq_start(struct nicsim_dev *dev);
void nicsim_eq_stop(struct nicsim_dev *dev);
void nicsim_eq_cleanup(struct nicsim_dev *dev);

/* nicsim_verbs.c */
void nicsim_get_fw_str(struct ib_device *ibdev, char *str);
int nicsim_query_device(struct ib_device *ibdev, struct ib_device_attr *props,
			struct ib_udata *udata);
int nicsim_query_port(struct ib_device *ibdev, u32 port,
		      struct ib_port_attr *props);
int nicsim_query_gid(struct ib_device *ibdev, u32 port, int index,
		     union ib_gid *gid);
int nicsim_query_pkey(struct ib_device *ibdev, u32 port, u16 index,
		      u16 *pkey);
int nicsim_get_port_immutable(struct ib_device *ibdev, u32 port,
			      struct ib_port_immutable *immutable);
int nicsim_port_caps(struct nicsim_dev *dev, u32 set, u32 clear);
int nicsim_modify_port(struct ib_device *ibdev, u32 port, int mask,
		       struct ib_port_modify *props);
int nicsim_alloc_ucontext(struct ib_ucontext *uctx, struct ib_udata *udata);
void nicsim_dealloc_ucontext(struct ib_ucontext *uctx);
int nicsim_mmap(struct ib_ucontext *uctx, struct vm_area_struct *vma);
void nicsim_mmap_free(struct rdma_user_mmap_entry *entry);
struct rdma_user_mmap_entry *
nicsim_mmap_insert_io(struct ib_ucontext *uctx, u64 pfn, u64 *key);
struct rdma_user_mmap_entry *
nicsim_mmap_insert_buf(struct ib_ucontext *uctx, struct nicsim_buf *buf,
		       u64 *key);
int nicsim_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata);
int nicsim_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata);
int nicsim_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init_attr,
		     struct ib_udata *udata);
int nicsim_query_ah(struct ib_ah *ibah, struct rdma_ah_attr *attr);
int nicsim_destroy_ah(struct ib_ah *ibah, u32 flags);
int nicsim_attach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid);
int nicsim_detach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid);

/* nicsim_mr.c */
struct ib_mr *nicsim_get_dma_mr(struct ib_pd *ibpd, int access);
struct ib_mr *nicsim_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length,
				 u64 virt_addr, int access,
				 struct ib_udata *udata);
int nicsim_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata);
struct ib_mr *nicsim_alloc_mr(struct ib_pd *ibpd, enum ib_mr_type type,
			      u32 max_num_sg);
int nicsim_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sg, int sg_nents,
		     unsigned int *sg_offset);
int nicsim_mr_layout(struct nicsim_mr *mr, int access, u8 *body, size_t room);
extern unsigned int nicsim_fr_pages;
int nicsim_alloc_mw(struct ib_mw *ibmw, struct ib_udata *udata);
int nicsim_dealloc_mw(struct ib_mw *ibmw);

/* nicsim_cq.c */
int nicsim_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		     struct ib_udata *udata);
int nicsim_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata);
int nicsim_poll_cq(struct ib_cq *ibcq, int num_entries, struct ib_wc *wc);
int nicsim_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags);
void nicsim_cq_ring_init(void *ring, u32 log_size);
void nicsim_cq_clean(struct nicsim_cq *cq, u32 qpn, struct nicsim_srq *srq);

/* nicsim_cq_resize.c */
int nicsim_resize_cq(struct ib_cq *ibcq, int cqe, struct ib_udata *udata);
bool nicsim_cq_poll_event(struct nicsim_dev *dev, struct nicsim_cq *cq);
bool nicsim_user_cq_fires(struct nicsim_cq *cq);

/* nicsim_qp.c */
int nicsim_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *attr,
		     struct ib_udata *udata);
int nicsim_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr,
		     int mask, struct ib_udata *udata);
int nicsim_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		    struct ib_qp_init_attr *init_attr);
int nicsim_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata);

/* nicsim_post.c */
int nicsim_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		     const struct ib_send_wr **bad_wr);
int nicsim_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		     const struct ib_recv_wr **bad_wr);
int nicsim_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
			 const struct ib_recv_wr **bad_wr);

/* nicsim_srq.c */
int nicsim_create_srq(struct ib_srq *ibsrq, struct ib_srq_init_attr *attr,
		      struct ib_udata *udata);
int nicsim_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		      enum ib_srq_attr_mask mask, struct ib_udata *udata);
int nicsim_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr);
int nicsim_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata);

#endif /* _NICSIM_H_ */
