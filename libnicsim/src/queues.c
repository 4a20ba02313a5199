/* libnicsim's objects: commands that make them, WQEs posted, CQEs polled (nicsim/queues.h). */
#include <errno.h>
#include <string.h>

#include "nicsim/device.h"
#include "nicsim/queues.h"

#define RECV_STRIDE_LOG 5 /* a receive: one data segment and the list's end */

static __thread uint32_t last_syndrome;

uint32_t nicsim_last_syndrome(void) { return last_syndrome; }

/* Runs a command: 0, or the errno of its status (the syndrome kept), or the transport's. */
static int run(struct nicsim_dev *d, uint32_t op, const uint64_t *in, int nin, uint64_t *out, int nout) {
	uint32_t syndrome = 0;
	int st = nicsim_cmd(d, op, in, nin, out, nout, &syndrome);
	if (st <= 0)
		return st;
	last_syndrome = syndrome;
	errno = nicsim_status_errno(st);
	return -errno;
}

static int handle(struct nicsim_dev *d, uint32_t op, const uint64_t *in, int nin, uint32_t *h) {
	uint64_t out = 0;
	int rc = run(d, op, in, nin, &out, 1);
	if (!rc)
		*h = (uint32_t)out;
	return rc;
}

int nicsim_alloc_uar(struct nicsim_dev *d, uint32_t *uar) { return handle(d, NICSIM_CMD_ALLOC_UAR, NULL, 0, uar); }
int nicsim_alloc_pd(struct nicsim_dev *d, uint32_t *pd) { return handle(d, NICSIM_CMD_ALLOC_PD, NULL, 0, pd); }

int nicsim_alloc_xrcd(struct nicsim_dev *d, uint32_t *x) { return handle(d, NICSIM_CMD_ALLOC_XRCD, NULL, 0, x); }

int nicsim_destroy(struct nicsim_dev *d, uint32_t cmd, uint32_t h) {
	uint64_t in = h;
	return run(d, cmd, &in, 1, NULL, 0);
}

int nicsim_mr_create(struct nicsim_dev *d, uint32_t pd, void *addr, uint64_t iova, uint64_t len, uint32_t access,
		     struct nicsim_mr *mr) {
	return nicsim_mr_create_at(d, pd, addr, (uintptr_t)addr, iova, len, access, mr);
}

/*
 * The largest translation page (log2, 12 up to the adapter's max_page_shift) for pinned memory whose
 * 4 KiB page at virtual `va` sits at bus address `iova`, the rest following it contiguously: the
 * largest in which both addresses sit at the same offset, so every page is whole on the bus (as
 * mlx5's kernel picks one, ib_umem_find_best_pgsz). On-demand memory faults in 4 KiB pages.
 */
static unsigned page_shift(const struct nicsim_dev *d, uint64_t va, uint64_t iova, uint32_t access) {
	unsigned shift = nicsim_caps(d)->max_page_shift;
	if (access & NICSIM_ACCESS_ON_DEMAND)
		return 12;
	while (shift > 12 && ((va ^ iova) & ((1ull << shift) - 1)))
		shift--;
	return shift < 12 ? 12 : shift;
}

/* CREATE_MKEY for [addr, addr + len) at bus address iova, named from `start`; with rereg, REREG_MKEY of its key. */
static int mkey_cmd(struct nicsim_dev *d, const uint32_t *rereg, uint32_t pd, void *addr, uint64_t start, uint64_t iova,
		    uint64_t len, uint32_t access, uint32_t *key) {
	uint64_t small = (uintptr_t)addr & ~4095ull, bus = iova & ~4095ull, list_iova;
	unsigned shift = page_shift(d, small, bus, access);
	uint64_t page = 1ull << shift, first = (uintptr_t)addr & ~(page - 1);
	uint64_t pages = ((uintptr_t)addr + len - first + page - 1) / page;
	if (!pages)
		pages = 1; /* a region of no bytes (mlx5 registers device memory so) still names its page */
	uint64_t list_len = pages * NICSIM_MTT_BYTES;
	uint8_t *list = nicsim_dma_alloc(d, list_len, &list_iova);
	if (!list)
		return -errno;
	uint64_t absent = access & NICSIM_ACCESS_ON_DEMAND ? NICSIM_MTT_NOT_PRESENT : 0; /* faulted in when touched */
	access &= ~(uint32_t)NICSIM_ACCESS_ON_DEMAND;
	for (uint64_t i = 0; i < pages; i++) /* the buffer's pages are contiguous in bus addresses */
		nicsim_put64(list + NICSIM_MTT_BYTES * i, (bus - (small - first) + page * i) | absent);
	uint64_t words[1 + NICSIM_CREATE_MKEY_IN_WORDS] = {0}, *in = words + 1; /* REREG_MKEY: the key, then these */
	in[NICSIM_CREATE_MKEY_IN_PD] = pd;
	in[NICSIM_CREATE_MKEY_IN_START] = start;
	in[NICSIM_CREATE_MKEY_IN_LENGTH] = len;
	in[NICSIM_CREATE_MKEY_IN_ACCESS] = access;
	in[NICSIM_CREATE_MKEY_IN_PAGE_SHIFT] = shift;
	in[NICSIM_CREATE_MKEY_IN_PAGE_OFFSET] = (uintptr_t)addr - first;
	in[NICSIM_CREATE_MKEY_IN_PAGES] = pages;
	in[NICSIM_CREATE_MKEY_IN_PAGE_LIST] = list_iova;
	int rc;
	if (rereg) {
		words[NICSIM_REREG_MKEY_IN_MKEY] = *rereg;
		rc = run(d, NICSIM_CMD_REREG_MKEY, words, NICSIM_REREG_MKEY_IN_WORDS, NULL, 0);
	} else {
		rc = handle(d, NICSIM_CMD_CREATE_MKEY, in, NICSIM_CREATE_MKEY_IN_WORDS, key);
	}
	nicsim_dma_free(d, list, list_len, list_iova); /* the adapter copied it before it answered */
	return rc;
}

int nicsim_mr_create_at(struct nicsim_dev *d, uint32_t pd, void *addr, uint64_t start, uint64_t iova, uint64_t len,
			uint32_t access, struct nicsim_mr *mr) {
	int rc = mkey_cmd(d, NULL, pd, addr, start, iova, len, access, &mr->key);
	mr->addr = addr;
	mr->len = len;
	return rc;
}

int nicsim_mr_create_implicit(struct nicsim_dev *d, uint32_t pd, uint32_t access, struct nicsim_mr *mr) {
	uint64_t in[NICSIM_CREATE_IMPLICIT_MKEY_IN_WORDS] = {0};
	in[NICSIM_CREATE_IMPLICIT_MKEY_IN_PD] = pd;
	in[NICSIM_CREATE_IMPLICIT_MKEY_IN_LENGTH] = NICSIM_IMPLICIT_LENGTH;
	in[NICSIM_CREATE_IMPLICIT_MKEY_IN_ACCESS] = access & ~(uint32_t)NICSIM_ACCESS_ON_DEMAND;
	in[NICSIM_CREATE_IMPLICIT_MKEY_IN_PAGE_SHIFT] = NICSIM_IMPLICIT_PAGE_SHIFT;
	in[NICSIM_CREATE_IMPLICIT_MKEY_IN_PAGES] = NICSIM_IMPLICIT_LENGTH >> NICSIM_IMPLICIT_PAGE_SHIFT;
	mr->addr = NULL;
	mr->len = NICSIM_IMPLICIT_LENGTH;
	return handle(d, NICSIM_CMD_CREATE_IMPLICIT_MKEY, in, NICSIM_CREATE_IMPLICIT_MKEY_IN_WORDS, &mr->key);
}

int nicsim_mr_rereg(struct nicsim_dev *d, struct nicsim_mr *mr, uint32_t pd, void *addr, uint64_t start, uint64_t iova,
		    uint64_t len, uint32_t access) {
	int rc = mkey_cmd(d, &mr->key, pd, addr, start, iova, len, access, NULL);
	if (!rc) {
		mr->addr = addr;
		mr->len = len;
	}
	return rc;
}

/* A ring of 2^log_size CQEs, every one invalid and the adapter's for pass 0, mapped to wake a wait. */
static uint8_t *cq_ring(struct nicsim_dev *d, uint32_t log_size, uint64_t *iova) {
	uint8_t *ring = nicsim_dma_alloc_flags(d, (uint64_t)NICSIM_CQE_BYTES << log_size,
					       NICSIM_DMA_WRITABLE | NICSIM_DMA_WAKE, iova);
	for (uint32_t i = 0; ring && i < 1u << log_size; i++)
		ring[NICSIM_CQE_BYTES * i + NICSIM_CQE_OP_OWN] = NICSIM_CQE_INVALID << 4 | 1;
	return ring;
}

int nicsim_cq_create(struct nicsim_dev *d, uint32_t uar, uint32_t log_size, uint32_t vector, struct nicsim_cq *cq) {
	memset(cq, 0, sizeof(*cq));
	cq->dev = d;
	cq->uar = uar;
	cq->log_size = log_size;
	cq->ring = cq_ring(d, log_size, &cq->ring_iova);
	cq->db = nicsim_dma_alloc(d, 64, &cq->db_iova);
	if (!cq->ring || !cq->db)
		return -errno;
	uint64_t in[NICSIM_CREATE_CQ_IN_WORDS] = {0};
	in[NICSIM_CREATE_CQ_IN_UAR] = uar;
	in[NICSIM_CREATE_CQ_IN_RING] = cq->ring_iova;
	in[NICSIM_CREATE_CQ_IN_LOG_SIZE] = log_size;
	in[NICSIM_CREATE_CQ_IN_VECTOR] = vector;
	in[NICSIM_CREATE_CQ_IN_DBREC] = cq->db_iova;
	return handle(d, NICSIM_CMD_CREATE_CQ, in, NICSIM_CREATE_CQ_IN_WORDS, &cq->cqn);
}

int nicsim_cq_resize(struct nicsim_cq *cq, uint32_t log_size) {
	if (log_size == cq->log_size)
		return 0;
	uint64_t iova;
	uint8_t *ring = cq_ring(cq->dev, log_size, &iova);
	if (!ring)
		return -errno;
	/* what software has taken: the adapter moves the rest */
	nicsim_put32(cq->db + NICSIM_DBREC_CQ_CI, cq->ci & NICSIM_CQ_CI_MASK);
	uint64_t in[NICSIM_RESIZE_CQ_IN_WORDS] = {0};
	in[NICSIM_RESIZE_CQ_IN_CQN] = cq->cqn;
	in[NICSIM_RESIZE_CQ_IN_RING] = iova;
	in[NICSIM_RESIZE_CQ_IN_LOG_SIZE] = log_size;
	int rc = run(cq->dev, NICSIM_CMD_RESIZE_CQ, in, NICSIM_RESIZE_CQ_IN_WORDS, NULL, 0);
	if (rc) {
		nicsim_dma_free(cq->dev, ring, (uint64_t)NICSIM_CQE_BYTES << log_size, iova);
		return rc;
	}
	nicsim_dma_free(cq->dev, cq->ring, (uint64_t)NICSIM_CQE_BYTES << cq->log_size, cq->ring_iova);
	cq->ring = ring;
	cq->ring_iova = iova;
	cq->log_size = log_size;
	cq->ci = 0;
	return 0;
}

int nicsim_cq_destroy(struct nicsim_cq *cq) {
	int rc = nicsim_destroy(cq->dev, NICSIM_CMD_DESTROY_CQ, cq->cqn);
	if (rc)
		return rc;
	nicsim_dma_free(cq->dev, cq->ring, (uint64_t)NICSIM_CQE_BYTES << cq->log_size, cq->ring_iova);
	nicsim_dma_free(cq->dev, cq->db, 64, cq->db_iova);
	return 0;
}

/*
 * One 8-byte doorbell store into a UAR page mapped into the process (a kernel driver's queues): a
 * single 64-bit write, so the adapter sees the 8 bytes at once, after every store before it.
 */
static int uar_store(volatile uint8_t *at, const uint8_t *bytes) {
	uint64_t word;
	memcpy(&word, bytes, 8);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	*(volatile uint64_t *)at = word;
	return 0;
}

/* Whether CQE slot `index` (a running count) holds a CQE software has not taken, by its owner bit. */
static int cqe_new(const struct nicsim_cq *cq, uint32_t index) {
	const uint8_t *cqe = cq->ring + NICSIM_CQE_BYTES * (index & ((1u << cq->log_size) - 1));
	uint8_t own = __atomic_load_n(&cqe[NICSIM_CQE_OP_OWN], __ATOMIC_ACQUIRE);
	return (own & 1) == ((index >> cq->log_size) & 1) && own >> 4 != NICSIM_CQE_INVALID;
}

int nicsim_cq_clean(struct nicsim_cq *cq, uint32_t qpn, int *receives) {
	uint32_t end = cq->ci, mask = (1u << cq->log_size) - 1, kept = 0;
	int rx = 0;
	while (cqe_new(cq, end))
		end++;
	for (uint32_t i = end; i-- > cq->ci;) { /* newest first: the survivors move up over the removed */
		uint8_t *cqe = cq->ring + NICSIM_CQE_BYTES * (i & mask);
		if ((nicsim_get32(cqe + NICSIM_CQE_SOP_QPN) & 0xffffff) == qpn) {
			uint8_t op = cqe[NICSIM_CQE_OP_OWN] >> 4;
			kept++;
			rx += op != NICSIM_CQE_REQ && op != NICSIM_CQE_REQ_ERR;
			continue;
		}
		if (!kept)
			continue;
		uint32_t to = i + kept;
		uint8_t *dst = cq->ring + NICSIM_CQE_BYTES * (to & mask);
		memmove(dst, cqe, NICSIM_CQE_BYTES);
		/* the owner bit of its new slot */
		dst[NICSIM_CQE_OP_OWN] = (uint8_t)((dst[NICSIM_CQE_OP_OWN] & ~1) | ((to >> cq->log_size) & 1));
	}
	cq->ci += kept; /* the freed slots at the front count as taken */
	if (kept)
		nicsim_put32(cq->db + NICSIM_DBREC_CQ_CI, cq->ci & NICSIM_CQ_CI_MASK);
	if (receives)
		*receives = rx;
	return (int)kept;
}

int nicsim_cq_poll(struct nicsim_cq *cq, struct nicsim_wc *wc, int max) {
	int n = 0;
	uint32_t mask = (1u << cq->log_size) - 1;
	while (n < max) {
		if (!cqe_new(cq, cq->ci))
			break;
		uint8_t *cqe = cq->ring + NICSIM_CQE_BYTES * (cq->ci & mask);
		uint8_t own = cqe[NICSIM_CQE_OP_OWN]; /* read after cqe_new's acquire: the CQE's other bytes are the adapter's too */
		struct nicsim_wc *w = &wc[n];
		int err = own >> 4 == NICSIM_CQE_REQ_ERR || own >> 4 == NICSIM_CQE_RESP_ERR;
		w->opcode = own >> 4;
		w->qpn = nicsim_get32(cqe + NICSIM_CQE_SOP_QPN) & 0xffffff;
		w->wqe_opcode = cqe[NICSIM_CQE_SOP_QPN];
		w->byte_len = nicsim_get32(cqe + NICSIM_CQE_BYTE_CNT);
		w->wqe_counter = nicsim_get16(cqe + NICSIM_CQE_WQE_COUNTER);
		w->syndrome = err ? cqe[NICSIM_CQE_SYNDROME] : 0;
		w->vendor_err = err ? cqe[NICSIM_CQE_VENDOR_SYNDROME] : 0;
		w->solicited = (own & NICSIM_CQE_SOLICITED) != 0;
		memcpy(&w->imm, cqe + NICSIM_CQE_IMM, 4);
		w->src_qp = nicsim_get32(cqe + NICSIM_CQE_SRC_QP) & 0xffffff;
		w->slid = nicsim_get16(cqe + NICSIM_CQE_SLID);
		w->grh = !err && (cqe[NICSIM_CQE_GRH_BYTE] & NICSIM_CQE_GRH_MASK) != 0;
		w->srqn = nicsim_get32(cqe + NICSIM_CQE_SRQN) & 0xffffff;
		w->timestamp = err ? 0 : nicsim_get64(cqe + NICSIM_CQE_TIMESTAMP);
		w->tm_kind = cqe[NICSIM_CQE_APP_OP];
		w->tm_flags = cqe[NICSIM_CQE_APP_INFO];
		w->tm_tag = nicsim_get64(cqe + NICSIM_CQE_TAG);
		w->tm_priv = nicsim_get32(cqe + NICSIM_CQE_PRIV);
		cq->ci++;
		n++;
	}
	if (n)
		nicsim_put32(cq->db + NICSIM_DBREC_CQ_CI, cq->ci & NICSIM_CQ_CI_MASK);
	return n;
}

int nicsim_cq_arm(struct nicsim_cq *cq, int solicited_only) {
	uint8_t arm[8];
	nicsim_put32(arm + NICSIM_UAR_CQ_DOORBELL_ARM, (cq->arm_sn & 3) << NICSIM_CQ_ARM_SN_SHIFT |
		     (solicited_only ? NICSIM_CQ_ARM_SOLICITED : 0) | (cq->ci & NICSIM_CQ_CI_MASK));
	nicsim_put32(arm + NICSIM_UAR_CQ_DOORBELL_CQN, cq->cqn);
	memcpy(cq->db + NICSIM_DBREC_CQ_ARM, arm + NICSIM_UAR_CQ_DOORBELL_ARM, 4); /* the arm word in the record too */
	if (!cq->dev)
		return uar_store(cq->uar_map + NICSIM_UAR_CQ_DOORBELL, arm);
	return nicsim_mmio_write(cq->dev, nicsim_uar_offset(cq->dev, cq->uar) + NICSIM_UAR_CQ_DOORBELL, arm, 8);
}

void nicsim_cq_event(struct nicsim_cq *cq) { cq->arm_sn++; }

int nicsim_qp_create(struct nicsim_dev *d, uint32_t type, uint32_t pd, const struct nicsim_cq *send_cq,
		     const struct nicsim_cq *recv_cq, uint32_t uar, uint32_t log_sq, uint32_t log_rq, struct nicsim_qp *qp) {
	struct nicsim_qp_init init = {.type = type, .pd = pd, .send_cqn = send_cq->cqn, .recv_cqn = recv_cq->cqn,
				      .uar = uar, .log_sq = log_sq, .log_rq = log_rq, .log_stride = RECV_STRIDE_LOG};
	return nicsim_qp_create_ex(d, &init, qp);
}

int nicsim_qp_create_ex(struct nicsim_dev *d, const struct nicsim_qp_init *init, struct nicsim_qp *qp) {
	memset(qp, 0, sizeof(*qp));
	qp->dev = d;
	qp->uar = init->uar;
	qp->type = init->type;
	qp->log_sq = init->log_sq;
	qp->log_rq = init->log_rq;
	qp->log_stride = init->log_stride;
	qp->dc_type = init->dc_type;
	qp->sq = nicsim_dma_alloc(d, (uint64_t)NICSIM_WQEBB << qp->log_sq, &qp->sq_iova);
	qp->rq = nicsim_dma_alloc(d, 1ull << (qp->log_rq + qp->log_stride), &qp->rq_iova);
	qp->db = nicsim_dma_alloc(d, 64, &qp->db_iova);
	if (!qp->sq || !qp->rq || !qp->db)
		return -errno;
	uint64_t in[NICSIM_CREATE_QP_IN_WORDS] = {0};
	in[NICSIM_CREATE_QP_IN_TYPE] = init->type;
	in[NICSIM_CREATE_QP_IN_PD] = init->pd;
	in[NICSIM_CREATE_QP_IN_SEND_CQ] = init->send_cqn;
	in[NICSIM_CREATE_QP_IN_RECV_CQ] = init->recv_cqn;
	in[NICSIM_CREATE_QP_IN_UAR] = init->uar;
	/* a DC target sends nothing: the word holds its access key instead (a union, as mlx5's DCT context) */
	in[NICSIM_CREATE_QP_IN_SQ_ADDR] = init->dc_type == NICSIM_DC_TARGET ? init->dct_key : qp->sq_iova;
	in[NICSIM_CREATE_QP_IN_SQ_LOG_SIZE] = qp->log_sq;
	in[NICSIM_CREATE_QP_IN_RQ_ADDR] = qp->rq_iova;
	in[NICSIM_CREATE_QP_IN_RQ_LOG_SIZE] = qp->log_rq;
	in[NICSIM_CREATE_QP_IN_RQ_STRIDE_LOG] = qp->log_stride;
	in[NICSIM_CREATE_QP_IN_DBREC] = qp->db_iova;
	in[NICSIM_CREATE_QP_IN_FLAGS] = init->flags | (uint64_t)(init->dc_type & 3) << 2;
	in[NICSIM_CREATE_QP_IN_SRQ] = init->srqn;
	return handle(d, NICSIM_CMD_CREATE_QP, in, NICSIM_CREATE_QP_IN_WORDS, &qp->qpn);
}

int nicsim_qp_destroy(struct nicsim_qp *qp) {
	int rc = nicsim_destroy(qp->dev, NICSIM_CMD_DESTROY_QP, qp->qpn);
	if (rc)
		return rc;
	nicsim_dma_free(qp->dev, qp->sq, (uint64_t)NICSIM_WQEBB << qp->log_sq, qp->sq_iova);
	nicsim_dma_free(qp->dev, qp->rq, 1ull << (qp->log_rq + qp->log_stride), qp->rq_iova);
	nicsim_dma_free(qp->dev, qp->db, 64, qp->db_iova);
	return 0;
}

int nicsim_qp_connect(struct nicsim_qp *qp, uint32_t dest_qpn, uint32_t dlid) {
	return nicsim_rc_connect(qp->dev, qp->qpn, dest_qpn, dlid);
}

int nicsim_rc_connect(struct nicsim_dev *d, uint32_t qpn, uint32_t dest_qpn, uint32_t dlid) {
	static const uint32_t states[] = {NICSIM_QPS_RESET, NICSIM_QPS_INIT, NICSIM_QPS_RTR, NICSIM_QPS_RTS};
	static const uint32_t masks[] = {
		NICSIM_QP_ATTR_STATE | NICSIM_QP_ATTR_PKEY_INDEX | NICSIM_QP_ATTR_PORT | NICSIM_QP_ATTR_ACCESS_FLAGS,
		NICSIM_QP_ATTR_STATE | NICSIM_QP_ATTR_AV | NICSIM_QP_ATTR_PATH_MTU | NICSIM_QP_ATTR_DEST_QPN |
			NICSIM_QP_ATTR_RQ_PSN | NICSIM_QP_ATTR_MAX_DEST_RD_ATOMIC | NICSIM_QP_ATTR_MIN_RNR_TIMER,
		NICSIM_QP_ATTR_STATE | NICSIM_QP_ATTR_TIMEOUT | NICSIM_QP_ATTR_RETRY_CNT | NICSIM_QP_ATTR_RNR_RETRY |
			NICSIM_QP_ATTR_SQ_PSN | NICSIM_QP_ATTR_MAX_QP_RD_ATOMIC};
	for (int i = 0; i < 3; i++) {
		uint64_t in[NICSIM_MODIFY_QP_IN_WORDS] = {0};
		in[NICSIM_MODIFY_QP_IN_QPN] = qpn;
		in[NICSIM_MODIFY_QP_IN_MASK] = masks[i];
		in[NICSIM_MODIFY_QP_IN_CUR_STATE] = states[i];
		in[NICSIM_MODIFY_QP_IN_STATE] = states[i + 1];
		in[NICSIM_MODIFY_QP_IN_ACCESS] = NICSIM_ACCESS_LOCAL_WRITE | NICSIM_ACCESS_REMOTE_WRITE;
		in[NICSIM_MODIFY_QP_IN_PATH_MTU] = 3;
		in[NICSIM_MODIFY_QP_IN_DEST_QPN] = dest_qpn;
		in[NICSIM_MODIFY_QP_IN_DLID] = dlid;
		in[NICSIM_MODIFY_QP_IN_TIMEOUT] = 14;
		in[NICSIM_MODIFY_QP_IN_RETRY_CNT] = 7;
		in[NICSIM_MODIFY_QP_IN_RNR_RETRY] = 7;
		in[NICSIM_MODIFY_QP_IN_MIN_RNR_TIMER] = 12;
		in[NICSIM_MODIFY_QP_IN_MAX_RD_ATOMIC] = 1;
		in[NICSIM_MODIFY_QP_IN_MAX_DEST_RD_ATOMIC] = 1;
		in[NICSIM_MODIFY_QP_IN_PORT] = 1;
		int rc = run(d, NICSIM_CMD_MODIFY_QP, in, NICSIM_MODIFY_QP_IN_WORDS, NULL, 0);
		if (rc)
			return rc;
	}
	return 0;
}

static void data_seg(uint8_t *s, uint32_t len, uint32_t lkey, uint64_t addr) {
	nicsim_put32(s + NICSIM_WQE_DATA_SEG_BYTE_COUNT, len);
	nicsim_put32(s + NICSIM_WQE_DATA_SEG_LKEY, lkey);
	nicsim_put64(s + NICSIM_WQE_DATA_SEG_ADDR, addr);
}

static int has_raddr(uint32_t op) {
	return op == NICSIM_WQE_OP_RDMA_WRITE || op == NICSIM_WQE_OP_RDMA_WRITE_IMM || op == NICSIM_WQE_OP_RDMA_READ ||
	       op == NICSIM_WQE_OP_ATOMIC_CS || op == NICSIM_WQE_OP_ATOMIC_FA || op == NICSIM_WQE_OP_UMR;
}

/* The control segment of WQE w of ds 16-byte units, then its WQEBBs into the ring at the head: its bytes. */
static int wqe_close(struct nicsim_qp *qp, uint8_t *w, uint32_t ds, uint32_t opmod, uint32_t opcode, uint32_t fm_ce_se,
		     uint32_t imm) {
	uint32_t bytes = (ds + 3) / 4 * NICSIM_WQEBB;
	nicsim_put32(w + NICSIM_WQE_CTRL_SEG_OPMOD, opmod << 24 | (qp->sq_head & 0xffff) << 8 | opcode);
	nicsim_put32(w + NICSIM_WQE_CTRL_SEG_QPN, qp->qpn << 8 | ds);
	w[NICSIM_WQE_CTRL_SEG_FM_CE_SE] = (uint8_t)fm_ce_se;
	memcpy(w + NICSIM_WQE_CTRL_SEG_IMM, &imm, 4);
	uint32_t mask = (1u << qp->log_sq) - 1;
	for (uint32_t i = 0; i < bytes / NICSIM_WQEBB; i++) /* WQEBB by WQEBB: a WQE may wrap the ring */
		memcpy(qp->sq + NICSIM_WQEBB * ((qp->sq_head + i) & mask), w + NICSIM_WQEBB * i, NICSIM_WQEBB);
	qp->sq_head = (qp->sq_head + bytes / NICSIM_WQEBB) & 0xffff;
	return (int)bytes;
}

int nicsim_wqe_put(struct nicsim_qp *qp, const struct nicsim_send_wr *wr, uint8_t *w) {
	const int max = NICSIM_WQEBB * NICSIM_MAX_WQEBBS;
	uint8_t *seg = w + NICSIM_WQE_CTRL_SEG_BYTES;
	memset(w, 0, (size_t)max);
	if (qp->type == NICSIM_QPT_XRC_SEND && wr->opcode != NICSIM_WQE_OP_NOP) { /* the XRC segment: the target's SRQ */
		nicsim_put32(seg + NICSIM_WQE_XRC_SEG_SRQN, wr->xrc_srqn & 0xffffff);
		seg += NICSIM_WQE_DS_UNIT;
	}
	int dci = qp->dc_type == NICSIM_DC_INITIATOR && wr->opcode != NICSIM_WQE_OP_NOP &&
		  wr->opcode != NICSIM_WQE_OP_LOCAL_INVAL && wr->opcode != NICSIM_WQE_OP_UMR; /* local ones name no target */
	if (qp->type == NICSIM_QPT_UD || dci) { /* the address vector: Q_Key (DC: the key), destination QPN, LID */
		if (dci)
			nicsim_put64(seg + NICSIM_AV_KEY, wr->dc_key);
		else
			nicsim_put32(seg + NICSIM_AV_KEY, wr->qkey);
		nicsim_put32(seg + NICSIM_AV_DQPN, wr->dest_qpn | NICSIM_AV_EXT);
		nicsim_put16(seg + NICSIM_AV_RLID, (uint16_t)wr->dlid);
		if (wr->grh && !dci) { /* mlx5_wqe_av's grh_gid_fl (bit 30: a GRH) and rgid */
			nicsim_put32(seg + NICSIM_AV_GRH_WORD, NICSIM_AV_GRH_BIT);
			memcpy(seg + NICSIM_AV_RGID, wr->dgid, 16);
		}
		seg += NICSIM_AV_BYTES;
	}
	if (has_raddr(wr->opcode)) {
		nicsim_put64(seg + NICSIM_WQE_RADDR_SEG_ADDR, wr->remote_addr);
		nicsim_put32(seg + NICSIM_WQE_RADDR_SEG_RKEY, wr->rkey);
		seg += NICSIM_WQE_DS_UNIT;
	}
	if (wr->opcode == NICSIM_WQE_OP_ATOMIC_CS || wr->opcode == NICSIM_WQE_OP_ATOMIC_FA ||
	    wr->opcode == NICSIM_WQE_OP_UMR) { /* a window bind's: its length, then the MR's lkey << 32 | access */
		nicsim_put64(seg + NICSIM_WQE_ATOMIC_SEG_SWAP_ADD, wr->swap_add);
		nicsim_put64(seg + NICSIM_WQE_ATOMIC_SEG_COMPARE, wr->compare);
		seg += NICSIM_WQE_DS_UNIT;
	}
	if (wr->inline_data) { /* byte count | the inline flag, then the bytes, padded to 16 */
		uint8_t *data = seg + NICSIM_WQE_INLINE_SEG_DATA;
		uint32_t len = 0;
		for (int i = 0; i < wr->num_sge; i++) {
			if (data + len + wr->sge[i].len > w + max)
				return -EINVAL;
			memcpy(data + len, (const void *)(uintptr_t)wr->sge[i].addr, wr->sge[i].len);
			len += wr->sge[i].len;
		}
		nicsim_put32(seg + NICSIM_WQE_INLINE_SEG_BYTE_COUNT, len | NICSIM_WQE_INLINE_SEG_FLAG);
		seg += (NICSIM_WQE_INLINE_SEG_DATA + len + 15) / 16 * 16;
	} else {
		for (int i = 0; i < wr->num_sge; i++) {
			if (!wr->sge[i].len) /* a zero-length segment gets no data segment */
				continue;
			if (seg + NICSIM_WQE_DS_UNIT > w + max)
				return -EINVAL;
			data_seg(seg, wr->sge[i].len, wr->sge[i].lkey, wr->sge[i].addr);
			seg += NICSIM_WQE_DS_UNIT;
		}
	}
	return wqe_close(qp, w, (uint32_t)(seg - w) / NICSIM_WQE_DS_UNIT, 0, wr->opcode, wr->fm_ce_se, wr->imm);
}

int nicsim_wqe_put_raw(struct nicsim_qp *qp, uint32_t opcode, uint32_t opmod, const void *body, uint32_t body_bytes,
		       uint32_t fm_ce_se, uint32_t imm, uint8_t *w) {
	const uint32_t max = NICSIM_WQEBB * NICSIM_MAX_WQEBBS;
	if (body_bytes % 16 || body_bytes > max - 16 || (body_bytes + 16) / 16 > 63)
		return -EINVAL;
	memset(w, 0, max);
	memcpy(w + NICSIM_WQE_CTRL_SEG_BYTES, body, body_bytes);
	return wqe_close(qp, w, 1 + body_bytes / 16, opmod & 0xff, opcode, fm_ce_se, imm);
}

int nicsim_sq_ring(struct nicsim_qp *qp, int count, const uint8_t *last, int last_bytes) {
	if (count <= 0)
		return 0;
	__atomic_thread_fence(__ATOMIC_RELEASE);
	nicsim_put32(qp->db + NICSIM_DBREC_SEND, qp->sq_head & 0xffff);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	if (!qp->dev)
		return uar_store(qp->uar_map + NICSIM_UAR_BF_OFFSET, last);
	const struct nicsim_caps *caps = nicsim_caps(qp->dev);
	uint32_t bf = caps && caps->bf_size > NICSIM_WQEBB ? caps->bf_size : NICSIM_WQEBB;
	uint32_t len = count == 1 && (uint32_t)last_bytes <= bf ? (uint32_t)last_bytes : 8;
	return nicsim_mmio_write(qp->dev, nicsim_uar_offset(qp->dev, qp->uar) + NICSIM_UAR_BF_OFFSET, last, len);
}

int nicsim_post_send(struct nicsim_qp *qp, uint32_t opcode, const struct nicsim_mr *mr, void *addr, uint32_t len,
		     uint64_t remote_addr, uint32_t rkey, int flags) {
	struct nicsim_sge sge = {(uintptr_t)addr, len, mr ? mr->key : 0};
	struct nicsim_send_wr wr = {.opcode = opcode, .remote_addr = remote_addr, .rkey = rkey, .sge = &sge, .num_sge = 1,
				    .fm_ce_se = (flags & NICSIM_SEND_SIGNALED) ? NICSIM_FM_SIGNALED : 0,
				    .inline_data = (flags & NICSIM_SEND_INLINE) != 0};
	uint32_t room = NICSIM_WQEBB - NICSIM_WQE_CTRL_SEG_BYTES - (has_raddr(opcode) ? NICSIM_WQE_DS_UNIT : 0) -
			NICSIM_WQE_INLINE_SEG_DATA;
	if ((flags & NICSIM_SEND_INLINE) ? len > room : !mr)
		return -EINVAL;
	uint8_t w[NICSIM_WQEBB * NICSIM_MAX_WQEBBS];
	int bytes = nicsim_wqe_put(qp, &wr, w);
	return bytes < 0 ? bytes : nicsim_sq_ring(qp, 1, w, bytes);
}

/* A receive WQE of `stride` bytes at wqe: its data segments, then the list's end if there is room. */
static int recv_wqe(uint8_t *wqe, uint32_t stride, const struct nicsim_sge *sge, int num_sge) {
	uint32_t at = 0;
	for (int i = 0; i < num_sge; i++) {
		if (!sge[i].len)
			continue;
		if (at + NICSIM_WQE_DS_UNIT > stride)
			return -EINVAL;
		data_seg(wqe + at, sge[i].len, sge[i].lkey, sge[i].addr);
		at += NICSIM_WQE_DS_UNIT;
	}
	if (at < stride) /* the list's end, when the stride has room */
		data_seg(wqe + at, 0, NICSIM_RECV_END_LKEY, 0);
	return 0;
}

int nicsim_recv_put(struct nicsim_qp *qp, const struct nicsim_sge *sge, int num_sge) {
	uint8_t *wqe = qp->rq + ((qp->rq_head & ((1u << qp->log_rq) - 1)) << qp->log_stride);
	int rc = recv_wqe(wqe, 1u << qp->log_stride, sge, num_sge);
	if (!rc)
		qp->rq_head = (qp->rq_head + 1) & 0xffff;
	return rc;
}

void nicsim_rq_publish(struct nicsim_qp *qp) {
	__atomic_thread_fence(__ATOMIC_RELEASE);
	nicsim_put32(qp->db + NICSIM_DBREC_RECV, qp->rq_head);
}

int nicsim_post_recv(struct nicsim_qp *qp, const struct nicsim_mr *mr, void *addr, uint32_t len) {
	struct nicsim_sge sge = {(uintptr_t)addr, len, mr->key};
	int rc = nicsim_recv_put(qp, &sge, 1);
	if (!rc)
		nicsim_rq_publish(qp);
	return rc;
}

/*
 * CREATE_SRQ, or CREATE_XRC_SRQ / CREATE_TM_SRQ (op), whose first words are CREATE_SRQ's and whose
 * nextra words after them are extra's.
 */
static int srq_create(struct nicsim_dev *d, uint32_t op, uint32_t pd, uint32_t log_size, uint32_t log_stride,
		      uint32_t limit, const uint32_t *extra, int nextra, struct nicsim_srq *srq) {
	memset(srq, 0, sizeof(*srq));
	srq->dev = d;
	srq->log_size = log_size;
	srq->log_stride = log_stride;
	srq->ring = nicsim_dma_alloc(d, 1ull << (log_size + log_stride), &srq->ring_iova);
	srq->db = nicsim_dma_alloc(d, 64, &srq->db_iova);
	if (!srq->ring || !srq->db)
		return -errno;
	uint64_t in[NICSIM_CREATE_SRQ_IN_WORDS + 4] = {0};
	in[NICSIM_CREATE_SRQ_IN_PD] = pd;
	in[NICSIM_CREATE_SRQ_IN_RING] = srq->ring_iova;
	in[NICSIM_CREATE_SRQ_IN_LOG_SIZE] = log_size;
	in[NICSIM_CREATE_SRQ_IN_STRIDE_LOG] = log_stride;
	in[NICSIM_CREATE_SRQ_IN_DBREC] = srq->db_iova;
	in[NICSIM_CREATE_SRQ_IN_LIMIT] = limit;
	for (int i = 0; i < nextra; i++)
		in[NICSIM_CREATE_SRQ_IN_WORDS + i] = extra[i];
	return handle(d, op, in, NICSIM_CREATE_SRQ_IN_WORDS + nextra, &srq->srqn);
}

int nicsim_srq_create(struct nicsim_dev *d, uint32_t pd, uint32_t log_size, uint32_t log_stride, uint32_t limit,
		      struct nicsim_srq *srq) {
	return srq_create(d, NICSIM_CMD_CREATE_SRQ, pd, log_size, log_stride, limit, NULL, 0, srq);
}

int nicsim_xrc_srq_create(struct nicsim_dev *d, uint32_t pd, uint32_t log_size, uint32_t log_stride, uint32_t limit,
			  uint32_t xrcd, uint32_t cqn, struct nicsim_srq *srq) {
	const uint32_t xrc[2] = {xrcd, cqn}; /* CREATE_XRC_SRQ_IN_XRCD, _CQ */
	return srq_create(d, NICSIM_CMD_CREATE_XRC_SRQ, pd, log_size, log_stride, limit, xrc, 2, srq);
}

int nicsim_tm_srq_create(struct nicsim_dev *d, uint32_t pd, uint32_t log_size, uint32_t log_stride, uint32_t limit,
			 uint32_t cqn, uint32_t max_tags, uint32_t max_ops, struct nicsim_srq *srq) {
	const uint32_t tm[3] = {cqn, max_tags, max_ops}; /* CREATE_TM_SRQ_IN_CQ, _MAX_TAGS, _MAX_OPS */
	return srq_create(d, NICSIM_CMD_CREATE_TM_SRQ, pd, log_size, log_stride, limit, tm, 3, srq);
}

int nicsim_srq_destroy(struct nicsim_srq *srq) {
	int rc = nicsim_destroy(srq->dev, NICSIM_CMD_DESTROY_SRQ, srq->srqn);
	if (rc)
		return rc;
	nicsim_dma_free(srq->dev, srq->ring, 1ull << (srq->log_size + srq->log_stride), srq->ring_iova);
	nicsim_dma_free(srq->dev, srq->db, 64, srq->db_iova);
	return 0;
}

int nicsim_srq_recv_put(struct nicsim_srq *srq, const struct nicsim_sge *sge, int num_sge) {
	uint8_t *wqe = srq->ring + ((srq->head & ((1u << srq->log_size) - 1)) << srq->log_stride);
	int rc = recv_wqe(wqe, 1u << srq->log_stride, sge, num_sge);
	if (!rc)
		srq->head = (srq->head + 1) & 0xffff;
	return rc;
}

void nicsim_srq_publish(struct nicsim_srq *srq) {
	__atomic_thread_fence(__ATOMIC_RELEASE);
	nicsim_put32(srq->db + NICSIM_DBREC_RECV, srq->head);
}
