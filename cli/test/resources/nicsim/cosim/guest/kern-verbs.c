/*
 * What the provider's kern back end adds beyond Debian's programs, run in a guest on nicsim_ib
 * (GuestKernVerbsTest): two RC QPs of one context connected through the port's LID, an extended CQ
 * polled with ibv_start_poll, and in turn
 *   - ibv_resize_cq with six completions waiting: a shrink below them refused, a grow kept them;
 *   - an RDMA WRITE posted with ibv_wr_* (ibv_wr_start, ibv_wr_rdma_write, ibv_wr_complete);
 *   - a type 1 memory window bound with ibv_bind_mw, written through its rkey;
 *   - a type 2 window bound with ibv_wr_bind_mw, written, invalidated with ibv_wr_local_inv, and
 *     a WRITE through it after that completing IBV_WC_REM_ACCESS_ERR (the pair's last use).
 * Each step prints "KERNX <step>: ok" or why not; the last line is "KERNX PASS" (status 0).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#define BYTES 8192
#define STEP(what, call)                                                                                        \
	do {                                                                                                    \
		int rc_ = (call);                                                                               \
		printf("KERNX %s: %s\n", what, rc_ ? strerror(rc_ < 0 ? -rc_ : rc_) : "ok");                     \
		if (rc_) return 1;                                                                              \
	} while (0)

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_cq_ex *cqx;
static struct ibv_qp *qp[2];
static struct ibv_mr *mr[2];
static uint8_t *buf[2];

/* One completion within a few seconds: 0 with its status and opcode, or ETIMEDOUT. */
static int poll_one(enum ibv_wc_status *status, enum ibv_wc_opcode *op, uint64_t *wr_id) {
	struct ibv_poll_cq_attr attr = {0};
	for (int i = 0; i < 5000; i++) {
		int rc = ibv_start_poll(cqx, &attr);
		if (rc == ENOENT) { usleep(1000); continue; }
		if (rc) return rc;
		*status = cqx->status;
		*op = ibv_wc_read_opcode(cqx);
		*wr_id = cqx->wr_id;
		ibv_end_poll(cqx);
		return 0;
	}
	return ETIMEDOUT;
}

/* One completion, which must be a success of opcode op. */
static int expect(enum ibv_wc_opcode op) {
	enum ibv_wc_status st;
	enum ibv_wc_opcode got;
	uint64_t id;
	int rc = poll_one(&st, &got, &id);
	if (rc) return rc;
	if (st != IBV_WC_SUCCESS || got != op) {
		printf("KERNX wr_id %llu: %s, opcode %d (wanted %d)\n", (unsigned long long)id, ibv_wc_status_str(st),
		       got, op);
		return EPROTO;
	}
	return 0;
}

static int connect_qp(struct ibv_qp *q, uint32_t dest, uint16_t lid) {
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_INIT, .port_num = 1,
				.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ};
	int rc = ibv_modify_qp(q, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
	if (rc) return rc;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = dest;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	a.ah_attr.dlid = lid;
	a.ah_attr.port_num = 1;
	rc = ibv_modify_qp(q, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
				  IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
	if (rc) return rc;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	return ibv_modify_qp(q, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
					IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
}

static int setup(void) {
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_port_attr port;
	if (!list || !list[0]) return ENODEV;
	ctx = ibv_open_device(list[0]);
	if (!ctx || !(pd = ibv_alloc_pd(ctx))) return errno;
	struct ibv_cq_init_attr_ex ca = {.cqe = 64, .wc_flags = IBV_WC_EX_WITH_BYTE_LEN};
	if (!(cqx = ibv_create_cq_ex(ctx, &ca))) return errno;
	if (ibv_query_port(ctx, 1, &port)) return errno;
	for (int i = 0; i < 2; i++) {
		struct ibv_qp_init_attr_ex qa = {
			.send_cq = ibv_cq_ex_to_cq(cqx), .recv_cq = ibv_cq_ex_to_cq(cqx), .qp_type = IBV_QPT_RC,
			.cap = {.max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 1, .max_recv_sge = 1},
			.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS, .pd = pd,
			.send_ops_flags = IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_BIND_MW |
					  IBV_QP_EX_WITH_LOCAL_INV};
		buf[i] = aligned_alloc(4096, BYTES);
		if (!buf[i]) return ENOMEM;
		memset(buf[i], 0, BYTES);
		mr[i] = ibv_reg_mr(pd, buf[i], BYTES, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_MW_BIND);
		if (!mr[i] || !(qp[i] = ibv_create_qp_ex(ctx, &qa))) return errno;
	}
	for (int i = 0; i < 2; i++) {
		int rc = connect_qp(qp[i], qp[1 - i]->qp_num, port.lid);
		if (rc) return rc;
	}
	for (int i = 0; i < BYTES; i++) buf[0][i] = (uint8_t)(i * 7 + 3);
	return 0;
}

/* Three SENDs of 64 bytes left unpolled (six completions), a shrink refused, a grow that keeps them. */
static int resize(void) {
	struct ibv_sge rs = {(uintptr_t)buf[1], 64, mr[1]->lkey}, ss = {(uintptr_t)buf[0], 64, mr[0]->lkey};
	struct ibv_recv_wr rwr = {.wr_id = 1, .sg_list = &rs, .num_sge = 1}, *bad_r;
	struct ibv_send_wr swr = {.wr_id = 2, .sg_list = &ss, .num_sge = 1, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED}, *bad_s;
	struct ibv_cq *cq = ibv_cq_ex_to_cq(cqx);
	for (int i = 0; i < 3; i++)
		if (ibv_post_recv(qp[1], &rwr, &bad_r) || ibv_post_send(qp[0], &swr, &bad_s)) return EIO;
	usleep(300000); /* the six completions land before the ring moves */
	int rc = ibv_resize_cq(cq, 3);
	if (rc != EINVAL) {
		printf("KERNX a resize below the six waiting: %d\n", rc);
		return EPROTO;
	}
	if ((rc = ibv_resize_cq(cq, 200))) return rc;
	if (cq->cqe != 255) {
		printf("KERNX resized to %d entries\n", cq->cqe);
		return EPROTO;
	}
	int sends = 0, recvs = 0;
	for (int i = 0; i < 6; i++) {
		enum ibv_wc_status st;
		enum ibv_wc_opcode op;
		uint64_t id;
		if ((rc = poll_one(&st, &op, &id))) return rc;
		if (st != IBV_WC_SUCCESS) { printf("KERNX moved completion: %s\n", ibv_wc_status_str(st)); return EPROTO; }
		sends += op == IBV_WC_SEND;
		recvs += op == IBV_WC_RECV;
	}
	if (sends != 3 || recvs != 3) { printf("KERNX moved: %d sends, %d receives\n", sends, recvs); return EPROTO; }
	return memcmp(buf[0], buf[1], 64) ? EBADMSG : 0;
}

/* An RDMA WRITE of len bytes from buf[0] to addr under rkey through ibv_wr_*: its completion's status. */
static int wr_write(uint32_t rkey, uint64_t addr, uint32_t len, enum ibv_wc_status *st) {
	struct ibv_qp_ex *x = ibv_qp_to_qp_ex(qp[0]);
	enum ibv_wc_opcode op;
	uint64_t id;
	ibv_wr_start(x);
	x->wr_id = 3;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_write(x, rkey, addr);
	ibv_wr_set_sge(x, mr[0]->lkey, (uintptr_t)buf[0], len);
	int rc = ibv_wr_complete(x);
	return rc ? rc : poll_one(st, &op, &id);
}

static int write_ok(uint32_t rkey, uint8_t *at, uint32_t len) {
	enum ibv_wc_status st;
	memset(at, 0, len);
	int rc = wr_write(rkey, (uintptr_t)at, len, &st);
	if (rc) return rc;
	if (st != IBV_WC_SUCCESS) { printf("KERNX WRITE: %s\n", ibv_wc_status_str(st)); return EPROTO; }
	return memcmp(at, buf[0], len) ? EBADMSG : 0;
}

static int window1(void) {
	struct ibv_mw *mw = ibv_alloc_mw(pd, IBV_MW_TYPE_1);
	if (!mw) return errno;
	struct ibv_mw_bind b = {.wr_id = 4, .send_flags = IBV_SEND_SIGNALED,
				.bind_info = {.mr = mr[1], .addr = (uintptr_t)buf[1] + 1024, .length = 1024,
					      .mw_access_flags = IBV_ACCESS_REMOTE_WRITE}};
	int rc = ibv_bind_mw(qp[1], mw, &b);
	if (!rc) rc = expect(IBV_WC_BIND_MW);
	if (!rc) rc = write_ok(mw->rkey, buf[1] + 1024, 1024);
	return rc;
}

static int window2(void) {
	struct ibv_mw *mw = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	struct ibv_qp_ex *x = ibv_qp_to_qp_ex(qp[1]);
	enum ibv_wc_status st;
	if (!mw) return errno;
	uint32_t rkey = ibv_inc_rkey(mw->rkey);
	struct ibv_mw_bind_info info = {.mr = mr[1], .addr = (uintptr_t)buf[1] + 4096, .length = 2048,
					.mw_access_flags = IBV_ACCESS_REMOTE_WRITE};
	ibv_wr_start(x);
	x->wr_id = 5;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_bind_mw(x, mw, rkey, &info);
	int rc = ibv_wr_complete(x);
	if (!rc) rc = expect(IBV_WC_BIND_MW);
	if (!rc) rc = write_ok(rkey, buf[1] + 4096, 2048);
	if (rc) return rc;
	ibv_wr_start(x);
	x->wr_id = 6;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_local_inv(x, rkey);
	if ((rc = ibv_wr_complete(x)) || (rc = expect(IBV_WC_LOCAL_INV))) return rc;
	/* through the invalidated rkey: refused, and the pair goes to the error state */
	if ((rc = wr_write(rkey, (uintptr_t)buf[1] + 4096, 64, &st))) return rc;
	if (st != IBV_WC_REM_ACCESS_ERR) { printf("KERNX WRITE after LOCAL_INV: %s\n", ibv_wc_status_str(st)); return EPROTO; }
	return 0;
}

int main(void) {
	setvbuf(stdout, NULL, _IOLBF, 0);
	STEP("an extended CQ, two RC QPs connected", setup());
	STEP("ibv_resize_cq with six completions waiting", resize());
	STEP("RDMA WRITE through ibv_wr_*", write_ok(mr[1]->rkey, buf[1] + 6144, 2048));
	STEP("type 1 window: ibv_bind_mw, WRITE through its rkey", window1());
	STEP("type 2 window: ibv_wr_bind_mw, WRITE, ibv_wr_local_inv, a WRITE refused", window2());
	printf("KERNX PASS\n");
	return 0;
}
