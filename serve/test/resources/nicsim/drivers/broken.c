/*
 * A driver with one bug, chosen by argv[1], for the device to catch (PciFaceTest): it brings the
 * adapter up with libnicsim, makes its one mistake, lets the device see it, and cleans up.
 *   doorbell-no-queue  a BlueFlame doorbell naming a QP that does not exist
 *   no-register        a write to an offset of BAR0 where no register is
 *   past-bar           a write past the end of BAR0
 *   arm-no-cq          an arm doorbell for a CQ that does not exist
 *   dma-unmapped       an MR whose page list is in a page it has unmapped
 *   cq-overrun         eight completions into a CQ of two entries it never polls
 *   ci-past-pi         a CQ consumer index in the doorbell record past every completion written
 *   destroyed-qp       a doorbell for a QP it has destroyed
 *   left-up            exits with the adapter up (no TEARDOWN_HCA)
 *   destroyed-cq       an arm doorbell for a CQ it has destroyed
 *   bad-ds             a SEND WQE whose ctrl segment counts no segments (ds 0) in the ring
 *   bad-opcode         a WQE whose opcode the adapter does not have
 *   ring-early         a doorbell rung before its WQE's bytes are in the ring
 *   destroyed-mr       a SEND whose data segment names an MR it has destroyed
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "nicsim/device.h"
#include "nicsim/nicsim.h"
#include "nicsim/queues.h"

static int check(const char *what, int rc) {
	if (rc < 0)
		fprintf(stderr, "broken: %s: %s\n", what, strerror(-rc));
	return rc < 0;
}

/* Two RC QPs of PD `pd` on one CQ of 2^log_cq entries, each connected to the other on this adapter. */
static int loop_pair(struct nicsim_dev *d, uint32_t uar, uint32_t pd, uint32_t log_cq, struct nicsim_cq *cq,
		     struct nicsim_qp *a, struct nicsim_qp *b) {
	uint32_t lid = nicsim_caps(d)->lid;
	int rc;
	if ((rc = nicsim_cq_create(d, uar, log_cq, 1, cq)) ||
	    (rc = nicsim_qp_create(d, NICSIM_QPT_RC, pd, cq, cq, uar, 4, 4, a)) ||
	    (rc = nicsim_qp_create(d, NICSIM_QPT_RC, pd, cq, cq, uar, 4, 4, b)) ||
	    (rc = nicsim_qp_connect(a, b->qpn, lid)) || (rc = nicsim_qp_connect(b, a->qpn, lid)))
		return rc < 0 ? rc : -1;
	return 0;
}

/* Destroys what loop_pair made, and the PD. */
static int loop_pair_destroy(struct nicsim_dev *d, uint32_t pd, struct nicsim_cq *cq, struct nicsim_qp *a,
			     struct nicsim_qp *b) {
	int rc;
	if ((rc = nicsim_qp_destroy(a)) || (rc = nicsim_qp_destroy(b)) || (rc = nicsim_cq_destroy(cq)))
		return rc;
	return nicsim_destroy(d, NICSIM_CMD_DEALLOC_PD, pd);
}

/* A page of data, its MR, and two looped-back QPs of PD `pd` on one CQ of 2^log_cq entries. */
struct rig {
	uint8_t *buf;
	uint64_t iova;
	uint32_t pd;
	struct nicsim_mr mr;
	struct nicsim_cq cq;
	struct nicsim_qp a, b;
};

static int rig_up(struct nicsim_dev *d, uint32_t uar, uint32_t log_cq, struct rig *r) {
	int rc = -1;
	if (!(r->buf = nicsim_dma_alloc(d, 4096, &r->iova)) || (rc = nicsim_alloc_pd(d, &r->pd)) ||
	    (rc = nicsim_mr_create(d, r->pd, r->buf, r->iova, 4096, NICSIM_ACCESS_LOCAL_WRITE, &r->mr)) ||
	    (rc = loop_pair(d, uar, r->pd, log_cq, &r->cq, &r->a, &r->b)))
		return rc < 0 ? rc : -1;
	return 0;
}

/* Lets the device see what was done (50 us), then takes the rig down (its MR too, unless already gone). */
static int rig_down(struct nicsim_dev *d, struct rig *r, int mr_gone) {
	uint32_t vectors[4];
	int rc;
	if ((rc = nicsim_wait(d, 50000000, vectors, 4, NULL)) < 0)
		return rc;
	if ((rc = nicsim_qp_destroy(&r->a)) || (rc = nicsim_qp_destroy(&r->b)) || (rc = nicsim_cq_destroy(&r->cq)) ||
	    (!mr_gone && (rc = nicsim_destroy(d, NICSIM_CMD_DESTROY_MKEY, r->mr.key))) ||
	    (rc = nicsim_destroy(d, NICSIM_CMD_DEALLOC_PD, r->pd)))
		return rc;
	return 0;
}

/*
 * Two QPs of one CQ of two entries, looped back; eight signaled SENDs, and the CQ never polled
 * (with `claim`, its doorbell record first claims 100 completions consumed).
 */
static int overrun(struct nicsim_dev *d, uint32_t uar, int claim) {
	struct rig r;
	int rc = rig_up(d, uar, 1, &r);
	if (rc)
		return rc;
	if (claim)
		nicsim_put32(r.cq.db, 100);
	for (int i = 0; i < 4; i++)
		if ((rc = nicsim_post_recv(&r.b, &r.mr, r.buf + 2048, 64)) ||
		    (rc = nicsim_post_send(&r.a, NICSIM_WQE_OP_SEND, &r.mr, r.buf, 8, 0, 0,
					   NICSIM_SEND_SIGNALED | NICSIM_SEND_INLINE)))
			return rc;
	return rig_down(d, &r, 0);
}

/* Two looped-back QPs; a SEND of 8 bytes from an MR destroyed just before (its lkey, no longer the adapter's). */
static int destroyed_mr(struct nicsim_dev *d, uint32_t uar) {
	struct rig r;
	int rc;
	if ((rc = rig_up(d, uar, 4, &r)) || (rc = nicsim_destroy(d, NICSIM_CMD_DESTROY_MKEY, r.mr.key)))
		return rc;
	if ((rc = nicsim_post_send(&r.a, NICSIM_WQE_OP_SEND, &r.mr, r.buf, 8, 0, 0, NICSIM_SEND_SIGNALED))) /* the bug */
		return rc;
	return rig_down(d, &r, 1);
}

/*
 * Two looped-back QPs; one SEND WQE written into the ring by hand with the mistake `bug` names,
 * the doorbell record updated (but with stale-dbrec), and an 8-byte doorbell (no BlueFlame: the
 * adapter reads the ring).
 */
static int raw_wqe(struct nicsim_dev *d, uint32_t uar, const char *bug) {
	uint32_t pd;
	struct nicsim_cq cq;
	struct nicsim_qp a, b;
	int rc;
	if ((rc = nicsim_alloc_pd(d, &pd)) || (rc = loop_pair(d, uar, pd, 4, &cq, &a, &b)))
		return rc < 0 ? rc : -1;
	uint8_t ctrl[8], *wqe = a.sq + NICSIM_WQEBB * (a.sq_head & ((1u << a.log_sq) - 1));
	nicsim_put32(ctrl, (a.sq_head & 0xffff) << 8 | (!strcmp(bug, "bad-opcode") ? 0x1fu : NICSIM_WQE_OP_SEND));
	nicsim_put32(ctrl + 4, a.qpn << 8 | 2);
	memset(wqe, 0, NICSIM_WQEBB);
	if (strcmp(bug, "ring-early")) { /* the WQE: ctrl, then 8 bytes inline */
		memcpy(wqe, ctrl, 8);
		if (!strcmp(bug, "bad-ds"))
			wqe[7] = 0; /* the WQE's own ds counts no segments (the doorbell said 2) */
		wqe[11] = 0x08;
		nicsim_put32(wqe + 16, 8 | 0x80000000u);
		memcpy(wqe + 20, "mistake!", 8);
	}
	a.sq_head = (a.sq_head + 1) & 0xffff;
	if (strcmp(bug, "stale-dbrec"))
		nicsim_put32(a.db + 4, a.sq_head);
	if ((rc = nicsim_mmio_write(d, nicsim_uar_offset(d, uar) + NICSIM_UAR_BF_OFFSET, ctrl, 8)))
		return rc;
	uint32_t vectors[4];
	if ((rc = nicsim_wait(d, 20000000, vectors, 4, NULL)) < 0)
		return rc;
	return loop_pair_destroy(d, pd, &cq, &a, &b);
}

/* A QP made and destroyed, then rung as if it were still there. */
static int destroyed(struct nicsim_dev *d, uint32_t uar) {
	uint32_t pd;
	struct nicsim_cq cq;
	struct nicsim_qp qp;
	uint8_t ctrl[8];
	int rc;
	if ((rc = nicsim_alloc_pd(d, &pd)) || (rc = nicsim_cq_create(d, uar, 1, 1, &cq)) ||
	    (rc = nicsim_qp_create(d, NICSIM_QPT_RC, pd, &cq, &cq, uar, 4, 4, &qp)))
		return rc;
	uint32_t qpn = qp.qpn;
	if ((rc = nicsim_qp_destroy(&qp)))
		return rc;
	nicsim_put32(ctrl, 0 << 8 | NICSIM_WQE_OP_SEND);
	nicsim_put32(ctrl + 4, qpn << 8 | 2);
	if ((rc = nicsim_mmio_write(d, nicsim_uar_offset(d, uar) + NICSIM_UAR_BF_OFFSET, ctrl, 8)))
		return rc;
	if ((rc = nicsim_cq_destroy(&cq)) || (rc = nicsim_destroy(d, NICSIM_CMD_DEALLOC_PD, pd)))
		return rc;
	return 0;
}

int main(int argc, char **argv) {
	struct nicsim_dev *d;
	const char *bug = argc > 1 ? argv[1] : "";
	uint64_t out[1];
	if (check("open", nicsim_open(&d, -1)) || check("probe", nicsim_probe(d)))
		return 1;
	if (nicsim_cmd(d, NICSIM_CMD_ALLOC_UAR, NULL, 0, out, 1, NULL) != 0)
		return 1;
	uint32_t uar = (uint32_t)out[0];
	uint64_t page = nicsim_uar_offset(d, uar);
	uint8_t b[8];
	int rc = 0;
	if (!strcmp(bug, "doorbell-no-queue")) {
		nicsim_put32(b, 0 << 8 | NICSIM_WQE_OP_SEND);
		nicsim_put32(b + 4, 0x7777u << 8 | 2);
		rc = nicsim_mmio_write(d, page + NICSIM_UAR_BF_OFFSET, b, 8);
	} else if (!strcmp(bug, "no-register")) {
		nicsim_put32(b, 1);
		rc = nicsim_mmio_write(d, 0x60, b, 4);
	} else if (!strcmp(bug, "past-bar")) {
		nicsim_put32(b, 1);
		rc = nicsim_mmio_write(d, nicsim_bar0_size(d) + 64, b, 4);
	} else if (!strcmp(bug, "arm-no-cq")) {
		nicsim_put32(b, 0);
		nicsim_put32(b + 4, 55);
		rc = nicsim_mmio_write(d, page + NICSIM_UAR_CQ_DOORBELL, b, 8);
	} else if (!strcmp(bug, "dma-unmapped")) {
		uint64_t pd, gone, mk[NICSIM_CREATE_MKEY_IN_WORDS] = {0};
		void *list = nicsim_dma_alloc(d, 4096, &gone);
		if (!list || nicsim_cmd(d, NICSIM_CMD_ALLOC_PD, NULL, 0, &pd, 1, NULL) != 0)
			return 1;
		nicsim_dma_free(d, list, 4096, gone); /* the bug: the list's page is unmapped before the command */
		mk[NICSIM_CREATE_MKEY_IN_PD] = pd;
		mk[NICSIM_CREATE_MKEY_IN_START] = 0x10000;
		mk[NICSIM_CREATE_MKEY_IN_LENGTH] = 4096;
		mk[NICSIM_CREATE_MKEY_IN_ACCESS] = NICSIM_ACCESS_LOCAL_WRITE;
		mk[NICSIM_CREATE_MKEY_IN_PAGE_SHIFT] = 12;
		mk[NICSIM_CREATE_MKEY_IN_PAGES] = 1;
		mk[NICSIM_CREATE_MKEY_IN_PAGE_LIST] = gone;
		rc = nicsim_cmd(d, NICSIM_CMD_CREATE_MKEY, mk, NICSIM_CREATE_MKEY_IN_WORDS, out, 1, NULL);
		if (rc == 0) { /* the adapter took it: give it back */
			uint64_t key = out[0];
			nicsim_cmd(d, NICSIM_CMD_DESTROY_MKEY, &key, 1, NULL, 0, NULL);
		}
		rc = rc < 0 ? rc : 0;
		nicsim_cmd(d, NICSIM_CMD_DEALLOC_PD, &pd, 1, NULL, 0, NULL);
	} else if (!strcmp(bug, "cq-overrun")) {
		rc = overrun(d, uar, 0);
	} else if (!strcmp(bug, "destroyed-qp")) {
		rc = destroyed(d, uar);
	} else if (!strcmp(bug, "ci-past-pi")) {
		rc = overrun(d, uar, 1);
	} else if (!strcmp(bug, "destroyed-cq")) {
		struct nicsim_cq cq;
		if ((rc = nicsim_cq_create(d, uar, 1, 1, &cq)) == 0) {
			uint32_t cqn = cq.cqn;
			if ((rc = nicsim_cq_destroy(&cq)) == 0) { /* the bug: its number armed after */
				nicsim_put32(b, 0);
				nicsim_put32(b + 4, cqn);
				rc = nicsim_mmio_write(d, page + NICSIM_UAR_CQ_DOORBELL, b, 8);
			}
		}
	} else if (!strcmp(bug, "destroyed-mr")) {
		rc = destroyed_mr(d, uar);
	} else if (!strcmp(bug, "bad-command")) { /* CREATE_CQ naming MSI-X vector 999: the adapter has fewer */
		uint64_t in[NICSIM_CREATE_CQ_IN_WORDS] = {0}, iova, out;
		uint8_t *ring = nicsim_dma_alloc(d, 4096, &iova);
		in[NICSIM_CREATE_CQ_IN_UAR] = uar;
		in[NICSIM_CREATE_CQ_IN_RING] = iova;
		in[NICSIM_CREATE_CQ_IN_LOG_SIZE] = 4;
		in[NICSIM_CREATE_CQ_IN_VECTOR] = 999;
		in[NICSIM_CREATE_CQ_IN_DBREC] = iova + 1024;
		rc = ring && nicsim_cmd(d, NICSIM_CMD_CREATE_CQ, in, NICSIM_CREATE_CQ_IN_WORDS, &out, 1, NULL) > 0 ? 0 : -EPROTO;
	} else if (!strcmp(bug, "bad-ds") || !strcmp(bug, "bad-opcode") || !strcmp(bug, "ring-early") ||
		   !strcmp(bug, "stale-dbrec")) {
		rc = raw_wqe(d, uar, bug);
	} else if (strcmp(bug, "left-up")) {
		fprintf(stderr, "broken: no bug named \"%s\"\n", bug);
		return 2;
	}
	uint32_t vectors[4];
	if (check("the mistake", rc) || check("waiting", nicsim_wait(d, 10000000, vectors, 4, NULL)))
		return 3;
	if (!strcmp(bug, "left-up"))
		return 0;
	uint64_t h = uar;
	if (nicsim_cmd(d, NICSIM_CMD_DEALLOC_UAR, &h, 1, NULL, 0, NULL) != 0 || check("teardown", nicsim_teardown(d)))
		return 4;
	nicsim_close(d);
	printf("broken: %s done\n", bug);
	return 0;
}
