/*
 * The bench's short-lived program, run hundreds of times against one serve to show that nothing
 * a program made outlives it: a context, a PD, a CQ, an SRQ, two RC QPs connected to each other
 * through the port, a pinned MR and an on-demand one (1 MiB each); a 64 KiB WRITE, a READ back and
 * a WRITE into the on-demand region, each checked byte for byte. With "leave" it exits without
 * destroying anything (the simulator must release it all); otherwise it destroys everything.
 * Prints "ok" or what failed.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#define MIB (1 << 20)
#define CHUNK (64 << 10)

static int fail(const char *what) {
	fprintf(stderr, "nicsim-churn: %s failed\n", what);
	return 1;
}

static int modify(struct ibv_qp *qp, struct ibv_qp_attr *a, int mask, const char *what) {
	if (ibv_modify_qp(qp, a, mask)) { fail(what); return 1; }
	return 0;
}

static int connect_to(struct ibv_qp *qp, uint32_t dest, uint16_t lid) {
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				 .qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ };
	if (modify(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS, "to INIT")) return 1;
	memset(&a, 0, sizeof a);
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_4096;
	a.dest_qp_num = dest;
	a.max_dest_rd_atomic = 4;
	a.min_rnr_timer = 1;
	a.ah_attr.dlid = lid;
	a.ah_attr.port_num = 1;
	if (modify(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN
		   | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER, "to RTR")) return 1;
	memset(&a, 0, sizeof a);
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 4;
	return modify(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY
		      | IBV_QP_MAX_QP_RD_ATOMIC, "to RTS");
}

/* Posts one signaled request of opcode from local (lkey) to remote (rkey) and waits for it: 0, or 1 if it failed. */
static int one(struct ibv_qp *qp, struct ibv_cq *cq, enum ibv_wr_opcode op, char *local, uint32_t lkey, char *remote,
	       uint32_t rkey) {
	struct ibv_sge s = { .addr = (uintptr_t)local, .length = CHUNK, .lkey = lkey };
	struct ibv_send_wr w = { .sg_list = &s, .num_sge = 1, .opcode = op, .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_wc wc;
	int n = 0;
	w.wr.rdma.remote_addr = (uintptr_t)remote;
	w.wr.rdma.rkey = rkey;
	if (ibv_post_send(qp, &w, &bad)) return fail("ibv_post_send");
	for (long i = 0; i < 2000000 && n == 0; i++) {
		n = ibv_poll_cq(cq, 1, &wc);
		if (n == 0 && i > 1000) usleep(20);
	}
	if (n != 1 || wc.status != IBV_WC_SUCCESS) return fail(ibv_wc_status_str(n == 1 ? wc.status : IBV_WC_GENERAL_ERR));
	return 0;
}

int main(int argc, char **argv) {
	int leave = argc > 1 && !strcmp(argv[1], "leave"), num;
	struct ibv_device **list = ibv_get_device_list(&num);
	struct ibv_context *ctx = list && num > 0 ? ibv_open_device(list[0]) : NULL;
	struct ibv_port_attr port;
	struct ibv_qp_init_attr qa = { .qp_type = IBV_QPT_RC,
				       .cap = { .max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 1, .max_recv_sge = 1 } };
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 64, .max_sge = 1 } };
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_srq *srq;
	struct ibv_qp *a, *b;
	struct ibv_mr *mr, *odp;
	char *buf = aligned_alloc(4096, MIB), *lazy = aligned_alloc(4096, MIB);
	if (!ctx || ibv_query_port(ctx, 1, &port)) return fail("opening the first device");
	if (!(pd = ibv_alloc_pd(ctx)) || !(cq = ibv_create_cq(ctx, 256, NULL, NULL, 0))) return fail("a PD and a CQ");
	if (!(srq = ibv_create_srq(pd, &sa))) return fail("ibv_create_srq");
	qa.send_cq = qa.recv_cq = cq;
	if (!(a = ibv_create_qp(pd, &qa)) || !(b = ibv_create_qp(pd, &qa))) return fail("ibv_create_qp");
	if (connect_to(a, b->qp_num, port.lid) || connect_to(b, a->qp_num, port.lid)) return 1;
	mr = ibv_reg_mr(pd, buf, MIB, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	odp = ibv_reg_mr(pd, lazy, MIB, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_ON_DEMAND);
	if (!mr || !odp) return fail("ibv_reg_mr");
	for (int i = 0; i < CHUNK; i++) buf[i] = (char)(i * 7 + getpid());
	memset(buf + CHUNK, 0, 2 * CHUNK);
	if (one(a, cq, IBV_WR_RDMA_WRITE, buf, mr->lkey, buf + 4 * CHUNK, mr->rkey)) return 1;
	if (one(a, cq, IBV_WR_RDMA_READ, buf + CHUNK, mr->lkey, buf + 4 * CHUNK, mr->rkey)) return 1;
	if (one(a, cq, IBV_WR_RDMA_WRITE, buf, mr->lkey, lazy + 8 * CHUNK, odp->rkey)) return 1;
	if (memcmp(buf, buf + CHUNK, CHUNK) || memcmp(buf, lazy + 8 * CHUNK, CHUNK))
		return fail("the bytes after a WRITE and a READ");
	if (!leave) {
		if (ibv_destroy_qp(a) || ibv_destroy_qp(b) || ibv_destroy_srq(srq) || ibv_dereg_mr(mr) || ibv_dereg_mr(odp)
		    || ibv_destroy_cq(cq) || ibv_dealloc_pd(pd) || ibv_close_device(ctx))
			return fail("destroying");
		ibv_free_device_list(list);
	}
	printf("ok\n");
	return 0;
}
