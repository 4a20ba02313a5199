/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * nicsim_selftest: a kernel RDMA consumer that checks nicsim_ib against the
 * device (see st_main.c). The context of one device's run, and the steps
 * each file offers.
 */
#ifndef _NICSIM_SELFTEST_H_
#define _NICSIM_SELFTEST_H_

#include <linux/completion.h>
#include <rdma/ib_verbs.h>

#define ST_BYTES	4096
#define ST_WAIT_MS	20000
/* how long a solicited-only arm must stay quiet after an unsolicited SEND */
#define ST_QUIET_MS	300

/* The first async event an object's handler got */
struct st_ev {
	struct completion done;
	enum ib_event_type type;
	bool got;
};

struct st_ctx {
	struct ib_device *dev;
	struct ib_pd *pd;
	struct ib_cq *cq;
	struct ib_qp *qp[2];
	void *buf[2];
	u64 dma[2];
	struct completion event;
	u16 lid;
	/* UD QPs, and an RC pair whose receiver takes from an SRQ */
	struct ib_qp *ud[2];
	struct ib_ah *ah;
	struct ib_srq *srq;
	struct ib_qp *sq[2];
	struct ib_qp *uc[2];
	struct completion srq_event;
	/* st_srq.c: two RC receivers on one SRQ, a receive CQ each */
	struct ib_srq *so_srq;
	struct ib_cq *so_cq[2];
	struct ib_qp *so_tx[2];
	struct ib_qp *so_rx[2];
	/* st_events.c: two RC pairs, and what each QP's handler got */
	struct ib_qp *ev_qp[4];
	struct st_ev ev[4];
};

/* st_main.c */
int st_poll(struct st_ctx *c, struct ib_wc *wc);
int st_connect(struct ib_qp *qp, u32 dest_qpn, u16 lid);

/* st_rc.c: on the connected RC pair */
int st_send(struct st_ctx *c, u32 len, u32 off, bool arm);
int st_solicited(struct st_ctx *c, u32 len);
int st_write(struct st_ctx *c, u32 len, u32 off);
int st_imm_inline(struct st_ctx *c, u32 len);
int st_refused(struct st_ctx *c);
int st_read_atomic(struct st_ctx *c);

/* st_queues.c: QPs of their own */
int st_ud(struct st_ctx *c, u32 len);
int st_uc(struct st_ctx *c, u32 len);
int st_srq(struct st_ctx *c, u32 len);

/* st_srq.c: an SRQ's receives completing out of order, a QP's left unpolled */
int st_srq_order(struct st_ctx *c);
int st_srq_clean(struct st_ctx *c);
void st_srq_order_teardown(struct st_ctx *c);

/* st_events.c: QP async events on the consumer's handlers */
int st_events(struct st_ctx *c);
void st_events_teardown(struct st_ctx *c);

/* st_cq.c: ib_resize_cq with completions waiting */
int st_resize(struct st_ctx *c, u32 len);

/* st_fr.c: fast registration on the RC pair, which it leaves in error */
int st_fastreg(struct st_ctx *c);

/* st_peer.c: the two-node mode, one QP to another guest's adapter */
extern bool st_two_node;
int st_peer_add(struct st_ctx *c);
void st_peer_remove(struct st_ctx *c);

#endif /* _NICSIM_SELFTEST_H_ */
