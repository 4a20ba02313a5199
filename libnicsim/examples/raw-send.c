/*
 * raw-send: one SEND between two RC queue pairs of one adapter, with no libibverbs: the driver
 * writes the WQEs, rings the doorbells and polls the CQEs itself (docs/device.md is the manual).
 *
 *   ./nicsim serve &   then   ./nicsim attach -- raw-send [message]
 *
 * Prints what it did and exits 0 when the message arrived intact.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nicsim/device.h"
#include "nicsim/nicsim.h"
#include "nicsim/queues.h"

#define LOG_RING 6 /* 64 WQEBBs a send queue, 64 receives, 64 CQEs */
#define RECV_STRIDE 32

static struct nicsim_dev *dev;

static void die(const char *what, int rc) {
	fprintf(stderr, "raw-send: %s: %s\n", what, strerror(rc < 0 ? -rc : rc));
	exit(1);
}

/* Runs a command; on failure, says which check the adapter's firmware made fail, and exits. */
static uint64_t cmd(const char *name, uint32_t opcode, const uint64_t *in, int nin, int nout) {
	uint64_t out[2] = {0, 0};
	uint32_t syndrome;
	int st = nicsim_cmd(dev, opcode, in, nin, out, nout, &syndrome);
	if (st < 0)
		die(name, st);
	if (st) {
		fprintf(stderr, "raw-send: %s failed: status 0x%x, syndrome %u (%s)\n", name, st, syndrome,
			nicsim_syndrome_name(syndrome));
		exit(1);
	}
	return out[0];
}

static void *dma(uint64_t len, uint64_t *iova) {
	void *p = nicsim_dma_alloc(dev, len, iova);
	if (!p)
		die("DMA memory", errno);
	return p;
}

struct qp {
	uint32_t qpn;
	uint8_t *sq, *rq, *dbrec;
	uint64_t sq_iova, rq_iova, dbrec_iova;
};

static void create_qp(struct qp *q, uint32_t pd, uint32_t cq, uint32_t uar) {
	q->sq = dma((uint64_t)NICSIM_WQEBB << LOG_RING, &q->sq_iova);
	q->rq = dma(RECV_STRIDE << LOG_RING, &q->rq_iova);
	q->dbrec = dma(64, &q->dbrec_iova);
	uint64_t in[NICSIM_CREATE_QP_IN_WORDS] = {0};
	in[NICSIM_CREATE_QP_IN_TYPE] = NICSIM_QPT_RC;
	in[NICSIM_CREATE_QP_IN_PD] = pd;
	in[NICSIM_CREATE_QP_IN_SEND_CQ] = cq;
	in[NICSIM_CREATE_QP_IN_RECV_CQ] = cq;
	in[NICSIM_CREATE_QP_IN_UAR] = uar;
	in[NICSIM_CREATE_QP_IN_SQ_ADDR] = q->sq_iova;
	in[NICSIM_CREATE_QP_IN_SQ_LOG_SIZE] = LOG_RING;
	in[NICSIM_CREATE_QP_IN_RQ_ADDR] = q->rq_iova;
	in[NICSIM_CREATE_QP_IN_RQ_LOG_SIZE] = LOG_RING;
	in[NICSIM_CREATE_QP_IN_RQ_STRIDE_LOG] = 5; /* RECV_STRIDE */
	in[NICSIM_CREATE_QP_IN_DBREC] = q->dbrec_iova;
	q->qpn = (uint32_t)cmd("CREATE_QP", NICSIM_CMD_CREATE_QP, in, NICSIM_CREATE_QP_IN_WORDS, 1);
}

/* A 16-byte data segment: byte count, lkey, address. */
static void data_seg(uint8_t *s, uint32_t len, uint32_t lkey, uint64_t addr) {
	nicsim_put32(s + NICSIM_WQE_DATA_SEG_BYTE_COUNT, len);
	nicsim_put32(s + NICSIM_WQE_DATA_SEG_LKEY, lkey);
	nicsim_put64(s + NICSIM_WQE_DATA_SEG_ADDR, addr);
}

int main(int argc, char **argv) {
	const char *msg = argc > 1 ? argv[1] : "hello from a driver of my own";
	uint32_t len = (uint32_t)strlen(msg) + 1;
	int rc;
	if ((rc = nicsim_open(&dev, -1)) || (rc = nicsim_probe(dev)))
		die("bringing the adapter up", rc);
	const struct nicsim_caps *caps = nicsim_caps(dev);
	printf("adapter up: LID %u, %u QPs, UAR pages at BAR0 + 0x%llx\n", caps->lid, caps->max_qp,
	       (unsigned long long)caps->uar_base);

	uint32_t uar = (uint32_t)cmd("ALLOC_UAR", NICSIM_CMD_ALLOC_UAR, NULL, 0, 1);
	uint32_t pd = (uint32_t)cmd("ALLOC_PD", NICSIM_CMD_ALLOC_PD, NULL, 0, 1);

	/* one MR over two pages: the message to send, and where it lands */
	uint64_t buf_iova, list_iova;
	uint8_t *buf = dma(8192, &buf_iova);
	uint8_t *list = dma(16, &list_iova);
	nicsim_put64(list, buf_iova);
	nicsim_put64(list + NICSIM_MTT_BYTES, buf_iova + 4096);
	uint64_t mk[NICSIM_CREATE_MKEY_IN_WORDS] = {0};
	mk[NICSIM_CREATE_MKEY_IN_PD] = pd;
	mk[NICSIM_CREATE_MKEY_IN_START] = (uint64_t)(uintptr_t)buf;
	mk[NICSIM_CREATE_MKEY_IN_LENGTH] = 8192;
	mk[NICSIM_CREATE_MKEY_IN_ACCESS] = NICSIM_ACCESS_LOCAL_WRITE;
	mk[NICSIM_CREATE_MKEY_IN_PAGE_SHIFT] = 12;
	mk[NICSIM_CREATE_MKEY_IN_PAGES] = 2;
	mk[NICSIM_CREATE_MKEY_IN_PAGE_LIST] = list_iova;
	uint32_t lkey = (uint32_t)cmd("CREATE_MKEY", NICSIM_CMD_CREATE_MKEY, mk, NICSIM_CREATE_MKEY_IN_WORDS, 1);

	/* one CQ for both: every CQE starts invalid and owned by the adapter (owner bit 1 for pass 0) */
	uint64_t cq_iova, cq_db_iova;
	uint8_t *cqes = dma((uint64_t)NICSIM_CQE_BYTES << LOG_RING, &cq_iova), *cq_db = dma(64, &cq_db_iova);
	for (int i = 0; i < 1 << LOG_RING; i++)
		cqes[NICSIM_CQE_BYTES * i + NICSIM_CQE_OP_OWN] = NICSIM_CQE_INVALID << 4 | 1;
	uint64_t cqin[NICSIM_CREATE_CQ_IN_WORDS] = {0};
	cqin[NICSIM_CREATE_CQ_IN_UAR] = uar;
	cqin[NICSIM_CREATE_CQ_IN_RING] = cq_iova;
	cqin[NICSIM_CREATE_CQ_IN_LOG_SIZE] = LOG_RING;
	cqin[NICSIM_CREATE_CQ_IN_VECTOR] = 1;
	cqin[NICSIM_CREATE_CQ_IN_DBREC] = cq_db_iova;
	uint32_t cqn = (uint32_t)cmd("CREATE_CQ", NICSIM_CMD_CREATE_CQ, cqin, NICSIM_CREATE_CQ_IN_WORDS, 1);

	/* MSI-X vector 1 for the CQ: its table entry (little-endian address, data, control), then the arm:
	 * (sn << 28 | cmd | ci) and the CQN, big-endian, to the UAR page's CQ doorbell */
	uint32_t msix[4] = {(uint32_t)nicsim_msi_address(dev), (uint32_t)(nicsim_msi_address(dev) >> 32), 1, 0};
	uint8_t arm[8];
	nicsim_put32(arm + NICSIM_UAR_CQ_DOORBELL_ARM, 0 << NICSIM_CQ_ARM_SN_SHIFT | 0 | 0);
	nicsim_put32(arm + NICSIM_UAR_CQ_DOORBELL_CQN, cqn);
	if ((rc = nicsim_mmio_write(dev, NICSIM_REG_MSIX_TABLE + 16, msix, sizeof(msix))) ||
	    (rc = nicsim_mmio_write(dev, nicsim_uar_offset(dev, uar) + NICSIM_UAR_CQ_DOORBELL, arm, 8)))
		die("arming the CQ", rc);

	struct qp a, b;
	create_qp(&a, pd, cqn, uar);
	create_qp(&b, pd, cqn, uar);
	/* RESET -> INIT -> RTR -> RTS: three MODIFY_QP commands each, to each other on this adapter's port */
	if ((rc = nicsim_rc_connect(dev, a.qpn, b.qpn, caps->lid)) || (rc = nicsim_rc_connect(dev, b.qpn, a.qpn, caps->lid)))
		die("MODIFY_QP", rc);
	printf("CQ %u, QPs %u -> %u, lkey 0x%x\n", cqn, a.qpn, b.qpn, lkey);

	/* b's receive: one data segment into the second page, then its counter in the doorbell record */
	data_seg(b.rq, 4096, lkey, (uint64_t)(uintptr_t)(buf + 4096));
	data_seg(b.rq + NICSIM_WQE_DS_UNIT, 0, NICSIM_RECV_END_LKEY, 0); /* the end of the list */
	__atomic_thread_fence(__ATOMIC_RELEASE);
	nicsim_put32(b.dbrec + NICSIM_DBREC_RECV, 1);

	/* a's SEND: control segment and one data segment, one WQEBB, asking for a completion */
	memcpy(buf, msg, len);
	uint8_t *wqe = a.sq;
	memset(wqe, 0, NICSIM_WQEBB);
	nicsim_put32(wqe + NICSIM_WQE_CTRL_SEG_OPMOD, 0 << 8 | NICSIM_WQE_OP_SEND); /* opmod, index 0, opcode */
	nicsim_put32(wqe + NICSIM_WQE_CTRL_SEG_QPN, a.qpn << 8 | 2); /* QPN, DS: two 16-byte units */
	wqe[NICSIM_WQE_CTRL_SEG_FM_CE_SE] = NICSIM_WQE_CTRL_CQ_UPDATE;
	data_seg(wqe + NICSIM_WQE_CTRL_SEG_BYTES, len, lkey, (uint64_t)(uintptr_t)buf);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	nicsim_put32(a.dbrec + NICSIM_DBREC_SEND, 1);
	/* BlueFlame: the whole one-WQEBB WQE to the UAR page's register; the adapter does not fetch it */
	if ((rc = nicsim_mmio_write(dev, nicsim_uar_offset(dev, uar) + NICSIM_UAR_BF_OFFSET, wqe, NICSIM_WQEBB)))
		die("doorbell", rc);

	/* two completions: the send's and the receive's */
	uint64_t now = 0;
	int seen = 0, got_send = 0, got_recv = 0, interrupts = 0;
	uint32_t vectors[8], bytes = 0;
	while (seen < 2) {
		uint8_t *cqe = cqes + NICSIM_CQE_BYTES * (seen & ((1 << LOG_RING) - 1));
		uint8_t own = __atomic_load_n(&cqe[NICSIM_CQE_OP_OWN], __ATOMIC_ACQUIRE);
		if ((own & 1) != ((seen >> LOG_RING) & 1) || own >> 4 == NICSIM_CQE_INVALID) {
			if ((rc = nicsim_wait(dev, 1000000000ull, vectors, 8, &now)) < 0)
				die("waiting", rc);
			for (int i = 0; i < rc && i < 8; i++)
				if (vectors[i] == 1 && !interrupts++)
					printf("interrupt: the CQ's vector 1 at %.3f us simulated\n", now / 1e6);
			if (now > 10000000000000ull) {
				fprintf(stderr, "raw-send: no completion after 10 simulated seconds\n");
				return 1;
			}
			continue;
		}
		int op = own >> 4;
		uint32_t qpn = nicsim_get32(cqe + NICSIM_CQE_SOP_QPN) & 0xffffff;
		if (op == NICSIM_CQE_REQ && qpn == a.qpn) {
			got_send = 1;
		} else if (op == NICSIM_CQE_RESP_SEND && qpn == b.qpn) {
			got_recv = 1;
			bytes = nicsim_get32(cqe + NICSIM_CQE_BYTE_CNT);
		} else {
			fprintf(stderr, "raw-send: unexpected CQE opcode %d for QP %u (syndrome 0x%x)\n", op, qpn,
				cqe[NICSIM_CQE_SYNDROME]);
			return 1;
		}
		seen++;
		nicsim_put32(cq_db + NICSIM_DBREC_CQ_CI, (uint32_t)seen & NICSIM_CQ_CI_MASK);
	}
	int same = bytes == len && memcmp(buf + 4096, msg, len) == 0;
	printf("send completion: %s; receive completion: %s, %u bytes at %.3f us simulated\n", got_send ? "yes" : "no",
	       got_recv ? "yes" : "no", bytes, now / 1e6);
	printf("received \"%s\": %s\n", (char *)(buf + 4096), same ? "intact" : "DIFFERENT");

	/* everything back, in the reverse order, and the adapter down: the next driver finds it as we did */
	uint64_t h[1];
	h[0] = a.qpn;
	cmd("DESTROY_QP", NICSIM_CMD_DESTROY_QP, h, 1, 0);
	h[0] = b.qpn;
	cmd("DESTROY_QP", NICSIM_CMD_DESTROY_QP, h, 1, 0);
	h[0] = cqn;
	cmd("DESTROY_CQ", NICSIM_CMD_DESTROY_CQ, h, 1, 0);
	h[0] = lkey;
	cmd("DESTROY_MKEY", NICSIM_CMD_DESTROY_MKEY, h, 1, 0);
	h[0] = pd;
	cmd("DEALLOC_PD", NICSIM_CMD_DEALLOC_PD, h, 1, 0);
	h[0] = uar;
	cmd("DEALLOC_UAR", NICSIM_CMD_DEALLOC_UAR, h, 1, 0);
	if ((rc = nicsim_teardown(dev)))
		die("TEARDOWN_HCA", rc);
	nicsim_close(dev);
	return same ? 0 : 1;
}
