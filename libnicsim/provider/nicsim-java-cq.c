/*
 * The java back end's completion queues (nicsim-backend.h): each verb a request to the simulator,
 * which keeps the CQ; its events name it by its handle.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "nicsim-backend.h"

struct nicsim_ibv_cq *nicsim_java_create_cq(struct ibv_context *c, int cqe, struct ibv_comp_channel *channel) {
	struct msg m = request(NICSIM_OP_CREATE_CQ);
	struct nicsim_ibv_cq *cq = calloc(1, sizeof(*cq));
	struct nicsim_wire_create_cq_request q = {
		/* the channel's socket: its number names it */
		.cqe = (uint32_t)cqe, .channel = channel ? (uint32_t)channel->fd : NICSIM_NONE,
	};
	struct nicsim_wire_create_cq_reply r;
	int rc;
	if (!cq) { done(&m); errno = ENOMEM; return NULL; }
	PUT(&m, q);
	rc = call(to_nctx(c), &m);
	if (rc) { done(&m); free(cq); errno = rc; return NULL; }
	GET(&m, r);
	cq->handle = r.handle;
	cq->cq.handle = cq->handle;
	cq->cq.cqe = (int)r.cqe;
	done(&m);
	nicsim_name(to_nctx(c), cq->handle, cq); /* events name it by its handle */
	return cq;
}

/*
 * Destroys cq once the events the program was given for it are acknowledged (ibv_destroy_cq(3));
 * those it was not given are dropped.
 */
int nicsim_java_destroy_cq(struct ibv_cq *cq) {
	struct nicsim_ibv_cq *c = to_ncq(cq);
	int rc = simple(cq->context, NICSIM_OP_DESTROY_CQ, c->handle);
	if (rc) return rc;
	nicsim_name(to_nctx(cq->context), c->handle, NULL);
	nicsim_await_acks(&cq->mutex, &cq->cond, &cq->comp_events_completed, c->comp_returned);
	nicsim_await_acks(&cq->mutex, &cq->cond, &cq->async_events_completed, c->async_returned);
	nicsim_domain_use(c->domain, -1);
	free(c);
	return 0;
}

int nicsim_java_resize_cq(struct nicsim_ibv_cq *c, int cqe) {
	struct ibv_cq *cq = &c->cq;
	struct msg m = request(NICSIM_OP_RESIZE_CQ);
	struct nicsim_wire_resize_cq_request q = { .cq = c->handle, .cqe = (uint32_t)cqe };
	struct nicsim_wire_cq_size r;
	int rc;
	if (cqe < 1) { done(&m); return EINVAL; } /* as the kernel's ib_resize_cq: cqe >= 1 */
	PUT(&m, q);
	rc = call(to_nctx(cq->context), &m);
	if (!rc) {
		GET(&m, r);
		cq->cqe = (int)r.cqe;
	}
	done(&m);
	return rc;
}

int nicsim_java_poll_cq(struct ibv_cq *cq, int max, struct ibv_wc *wc, struct nicsim_wc_extra *x) {
	struct msg m = request(NICSIM_OP_POLL_CQ);
	struct nicsim_wire_poll_cq_request q = { .cq = cq_handle(cq), .max = (uint32_t)max };
	uint32_t n, i;
	int rc;
	if (max < 0) { done(&m); return -EINVAL; }
	PUT(&m, q);
	rc = call(to_nctx(cq->context), &m);
	if (rc) { done(&m); return -rc; }
	n = get32(&m);
	for (i = 0; i < n && i < (uint32_t)max; i++) {
		struct nicsim_wire_work_completion r;
		struct ibv_wc *w = &wc[i];
		GET(&m, r);
		memset(w, 0, sizeof(*w));
		w->wr_id = r.wr_id;
		w->status = (enum ibv_wc_status)r.status;
		w->opcode = (enum ibv_wc_opcode)r.opcode;
		w->vendor_err = r.vendor_err;
		w->byte_len = r.byte_len;
		w->imm_data = r.imm_data;
		w->qp_num = r.qp_num;
		w->src_qp = r.src_qp;
		w->wc_flags = r.wc_flags;
		w->pkey_index = (uint16_t)r.pkey_index;
		w->slid = (uint16_t)r.slid;
		w->sl = (uint8_t)r.sl;
		w->dlid_path_bits = (uint8_t)r.dlid_path_bits;
		if (x) { x[i].tm.tag = r.tm_tag; x[i].tm.priv = r.tm_priv; x[i].timestamp = r.timestamp; }
	}
	rc = m.failed ? -EIO : (int)i;
	done(&m);
	return rc;
}

int nicsim_java_req_notify_cq(struct ibv_cq *cq, int solicited_only) {
	struct msg m = request(NICSIM_OP_REQ_NOTIFY_CQ);
	struct nicsim_wire_req_notify_cq_request q = { .cq = cq_handle(cq), .solicited = (uint32_t)solicited_only };
	int rc;
	PUT(&m, q);
	rc = call(to_nctx(cq->context), &m);
	done(&m);
	return rc;
}

/* The simulator keeps the CQ's arming itself: taking an event leaves nothing to note here. */
void nicsim_java_cq_event_taken(struct nicsim_ibv_cq *cq) { (void)cq; }
