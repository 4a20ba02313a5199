// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Async events and completion events.
 *
 * The adapter raises MSI-X vector 0 for each event queue entry and a CQ's
 * vector for an armed CQ's next completion. A QEMU guest's proxied function
 * delivers no interrupts under TCG (no MSI-X, INTx only through KVM); the
 * bridge's doorbell function carries them instead (nicsim_irq.c), and then
 * its interrupts run the work below. Without it, the work runs every
 * poll_interval_ms: it looks at the event queue and at every armed kernel
 * CQ, reading only host memory (no BAR access), so an idle poll costs the
 * guest no MMIO exit.
 */
#include <linux/module.h>

#include "nicsim.h"

static unsigned int poll_interval_ms = 1;
module_param(poll_interval_ms, uint, 0444);
MODULE_PARM_DESC(poll_interval_ms,
		 "How often the driver looks for events and completions (ms, default 1)");

#define NICSIM_EQ_LOG_SIZE	8

static void nicsim_poll(struct work_struct *work);

int nicsim_eq_init(struct nicsim_dev *dev)
{
	dev->eq_log_size = NICSIM_EQ_LOG_SIZE;
	dev->eq_ci = 0;
	INIT_LIST_HEAD(&dev->armed_cqs);
	spin_lock_init(&dev->armed_lock);
	INIT_DELAYED_WORK(&dev->poll_work, nicsim_poll);
	return nicsim_buf_alloc(dev, &dev->eq,
				NICSIM_EQE_BYTES << NICSIM_EQ_LOG_SIZE);
}

void nicsim_eq_cleanup(struct nicsim_dev *dev)
{
	nicsim_buf_free(dev, &dev->eq);
}

/* The entry at the consumer counter when the adapter has written it, or NULL. */
static u8 *nicsim_eq_next(struct nicsim_dev *dev)
{
	u32 mask = (1U << dev->eq_log_size) - 1;
	u8 *eqe = dev->eq.va + NICSIM_EQE_BYTES * (dev->eq_ci & mask);
	u8 own = READ_ONCE(eqe[NICSIM_EQE_OWNER]);
	u8 pass = (dev->eq_ci >> dev->eq_log_size) & 1;

	if (!(own & NICSIM_EQE_WRITTEN) || (own & 1) != pass)
		return NULL;
	/* the rest of the entry only after its owner byte */
	dma_rmb();
	return eqe;
}

static void nicsim_qp_event(struct nicsim_dev *dev, u32 qpn,
			    enum ib_event_type type)
{
	struct ib_event ev = { .device = &dev->ibdev, .event = type };
	struct nicsim_qp *qp;

	/* destroy_qp erases under the same lock: no event after it */
	xa_lock(&dev->qps);
	qp = xa_load(&dev->qps, qpn);
	if (qp && qp->ibqp.event_handler) {
		ev.element.qp = &qp->ibqp;
		qp->ibqp.event_handler(&ev, qp->ibqp.qp_context);
	}
	xa_unlock(&dev->qps);
	if (!qp)
		dev_warn(&dev->pdev->dev, "event %u for unknown QP 0x%x\n",
			 type, qpn);
}

static void nicsim_cq_event(struct nicsim_dev *dev, u32 cqn,
			    enum ib_event_type type)
{
	struct ib_event ev = { .device = &dev->ibdev, .event = type };
	struct nicsim_cq *cq;

	xa_lock(&dev->cqs);
	cq = xa_load(&dev->cqs, cqn);
	if (cq && cq->ibcq.event_handler) {
		ev.element.cq = &cq->ibcq;
		cq->ibcq.event_handler(&ev, cq->ibcq.cq_context);
	}
	xa_unlock(&dev->cqs);
	if (!cq)
		dev_warn(&dev->pdev->dev, "event %u for unknown CQ 0x%x\n",
			 type, cqn);
}

static void nicsim_srq_event(struct nicsim_dev *dev, u32 srqn,
			     enum ib_event_type type)
{
	struct ib_event ev = { .device = &dev->ibdev, .event = type };
	struct nicsim_srq *srq;

	xa_lock(&dev->srqs);
	srq = xa_load(&dev->srqs, srqn);
	if (srq && srq->ibsrq.event_handler) {
		ev.element.srq = &srq->ibsrq;
		srq->ibsrq.event_handler(&ev, srq->ibsrq.srq_context);
	}
	xa_unlock(&dev->srqs);
	if (!srq)
		dev_warn(&dev->pdev->dev, "event %u for unknown SRQ 0x%x\n",
			 type, srqn);
}

/* An entry's byte 0 is libibverbs' ibv_event_type, the kernel's numbering too. */
static void nicsim_eq_dispatch(struct nicsim_dev *dev, const u8 *eqe)
{
	enum ib_event_type type = eqe[NICSIM_EQE_TYPE];
	u32 res = be32_to_cpup((const __be32 *)(eqe + NICSIM_EQE_RESOURCE));
	struct ib_event ev = { .device = &dev->ibdev, .event = type };

	switch (type) {
	case IB_EVENT_QP_FATAL:
	case IB_EVENT_QP_REQ_ERR:
	case IB_EVENT_QP_ACCESS_ERR:
	case IB_EVENT_COMM_EST:
	case IB_EVENT_SQ_DRAINED:
	case IB_EVENT_PATH_MIG:
	case IB_EVENT_PATH_MIG_ERR:
	case IB_EVENT_QP_LAST_WQE_REACHED:
		nicsim_qp_event(dev, res & 0xffffff, type);
		break;
	case IB_EVENT_CQ_ERR:
		nicsim_cq_event(dev, res & 0xffffff, type);
		break;
	case IB_EVENT_SRQ_ERR:
	case IB_EVENT_SRQ_LIMIT_REACHED:
		nicsim_srq_event(dev, res & 0xffffff, type);
		break;
	case IB_EVENT_PORT_ACTIVE:
	case IB_EVENT_PORT_ERR:
		/* query_port reads it: a consumer told of the change finds it */
		WRITE_ONCE(dev->port_active, type == IB_EVENT_PORT_ACTIVE);
		ev.element.port_num = NICSIM_PORT;
		ib_dispatch_event(&ev);
		break;
	case IB_EVENT_DEVICE_FATAL:
	case IB_EVENT_LID_CHANGE:
	case IB_EVENT_PKEY_CHANGE:
	case IB_EVENT_SM_CHANGE:
	case IB_EVENT_CLIENT_REREGISTER:
	case IB_EVENT_GID_CHANGE:
		ev.element.port_num = NICSIM_PORT;
		ib_dispatch_event(&ev);
		break;
	default:
		dev_warn(&dev->pdev->dev, "unknown event type %u, resource 0x%x\n",
			 type, res);
	}
}

static void nicsim_poll_cqs(struct nicsim_dev *dev)
{
	struct nicsim_cq *cq, *tmp;
	LIST_HEAD(fired);
	unsigned long flags;

	spin_lock_irqsave(&dev->armed_lock, flags);
	list_for_each_entry_safe(cq, tmp, &dev->armed_cqs, armed) {
		if (cq->entry) { /* a user CQ stays on the list: its process arms it */
			if (nicsim_user_cq_fires(cq) && cq->ibcq.comp_handler)
				cq->ibcq.comp_handler(&cq->ibcq,
						      cq->ibcq.cq_context);
			continue;
		}
		if (nicsim_cq_poll_event(dev, cq)) {
			cq->is_armed = false;
			list_move_tail(&cq->armed, &fired);
		}
	}
	/*
	 * The handlers run with armed_lock held: destroy_cq takes it to
	 * unlink the CQ, so no handler runs on a CQ being destroyed.
	 */
	list_for_each_entry_safe(cq, tmp, &fired, armed) {
		list_del_init(&cq->armed);
		cq->arm_sn++;
		if (cq->ibcq.comp_handler)
			cq->ibcq.comp_handler(&cq->ibcq, cq->ibcq.cq_context);
	}
	spin_unlock_irqrestore(&dev->armed_lock, flags);
}

static void nicsim_poll(struct work_struct *work)
{
	struct nicsim_dev *dev = container_of(to_delayed_work(work),
					      struct nicsim_dev, poll_work);
	u8 *eqe;

	while ((eqe = nicsim_eq_next(dev))) {
		nicsim_eq_dispatch(dev, eqe);
		dev->eq_ci++;
	}
	nicsim_poll_cqs(dev);
	if (!dev->irq)
		schedule_delayed_work(&dev->poll_work,
				      msecs_to_jiffies(poll_interval_ms));
}

/* Interrupts when the doorbell function is there, else the poll. */
void nicsim_eq_start(struct nicsim_dev *dev)
{
	dev->irq = nicsim_irq_init(dev);
	if (!dev->irq)
		dev_info(&dev->pdev->dev, "no interrupts: polling every %u ms\n",
			 poll_interval_ms);
	/* once at least: what came before the vectors were taken */
	schedule_delayed_work(&dev->poll_work, 0);
}

void nicsim_eq_stop(struct nicsim_dev *dev)
{
	/* no interrupt may queue the work again once it is cancelled */
	nicsim_irq_cleanup(dev);
	cancel_delayed_work_sync(&dev->poll_work);
}
