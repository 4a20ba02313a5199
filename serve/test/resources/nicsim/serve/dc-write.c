/*
 * AttachTest's DC program, written as mlx5's documentation and rdma-core's examples write one
 * (mlx5dv_create_qp, the ibv_wr_* API, mlx5dv_wr_set_dc_addr), in two roles that meet through small
 * files in DIR:
 *   target DIR   (node 1) makes a DC target with an SRQ and a buffer open to remote access, writes
 *                its LID, DCT number, buffer address and rkey to DIR/target, waits for a SEND, then
 *                stays until the initiator writes DIR/finished;
 *   init DIR     (node 0) makes two DC initiators; through the first it WRITEs a pattern to the
 *                target's buffer, READs it back and SENDs an inline message, all in one list of
 *                work requests; through the second it WRITEs under a wrong DC key, which must fail
 *                with IBV_WC_REM_ACCESS_ERR. Then it SENDs to the target's UD QP through the same
 *                ibv_wr_* API (ibv_wr_set_ud_addr), which works for every QP type.
 * Each prints what it got and exits 0 (alarm: 60 s).
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <infiniband/verbs.h>
#include <infiniband/mlx5dv.h>

#include "meet.h"

#define DC_KEY 0xffeeddccULL
#define LEN 3000

static void modify(struct ibv_qp *qp, struct ibv_qp_attr *a, int mask, const char *what) {
	if (ibv_modify_qp(qp, a, mask)) die(what);
}

/* A UD QP from RESET to INIT (qkey 0x11111111), RTR and, if {@code to} says so, RTS. */
static void ud_up(struct ibv_qp *ud, enum ibv_qp_state to) {
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = 0x11111111 };
	modify(ud, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY, "UD to INIT");
	a.qp_state = IBV_QPS_RTR;
	modify(ud, &a, IBV_QP_STATE, "UD to RTR");
	if (to != IBV_QPS_RTS) return;
	a.qp_state = IBV_QPS_RTS;
	modify(ud, &a, IBV_QP_STATE | IBV_QP_SQ_PSN, "UD to RTS");
}

static int target(void) {
	struct ibv_context *ctx = open_first();
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_cq *cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 4, .max_sge = 1 } };
	struct ibv_srq *srq = pd && cq ? ibv_create_srq(pd, &sa) : NULL;
	static char buf[2 * LEN];
	struct ibv_mr *mr = pd ? ibv_reg_mr(pd, buf, sizeof buf,
					    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ)
			       : NULL;
	struct ibv_sge sge = { .addr = (uintptr_t)(buf + LEN), .length = LEN, .lkey = mr ? mr->lkey : 0 };
	struct ibv_recv_wr rwr = { .wr_id = 7, .sg_list = &sge, .num_sge = 1 }, *bad;
	struct ibv_qp_init_attr_ex init = { .qp_type = IBV_QPT_DRIVER, .comp_mask = IBV_QP_INIT_ATTR_PD, .pd = pd,
					    .send_cq = cq, .recv_cq = cq, .srq = srq };
	struct mlx5dv_qp_init_attr dv = { .comp_mask = MLX5DV_QP_INIT_ATTR_MASK_DC,
					  .dc_init_attr = { .dc_type = MLX5DV_DCTYPE_DCT, .dct_access_key = DC_KEY } };
	struct ibv_port_attr port;
	struct ibv_qp *dct, *ud;
	struct ibv_qp_attr a;
	char text[256];
	static char udbuf[40 + 64];
	struct ibv_mr *udmr = pd ? ibv_reg_mr(pd, udbuf, sizeof udbuf, IBV_ACCESS_LOCAL_WRITE) : NULL;
	struct ibv_sge usge = { .addr = (uintptr_t)udbuf, .length = sizeof udbuf, .lkey = udmr ? udmr->lkey : 0 };
	struct ibv_recv_wr uwr = { .wr_id = 8, .sg_list = &usge, .num_sge = 1 };
	struct ibv_qp_init_attr ua = { .send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_UD,
				       .cap = { .max_send_wr = 1, .max_recv_wr = 1, .max_send_sge = 1, .max_recv_sge = 1 } };
	if (!srq || !mr || !udmr || ibv_post_srq_recv(srq, &rwr, &bad)) die("target resources");
	if (!(ud = ibv_create_qp(pd, &ua))) die("create_qp (UD)");
	ud_up(ud, IBV_QPS_RTR);
	if (ibv_post_recv(ud, &uwr, &bad)) die("post_recv (UD)");
	if (!(dct = mlx5dv_create_qp(ctx, &init, &dv))) die("mlx5dv_create_qp (DCT)");
	memset(&a, 0, sizeof a);
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	modify(dct, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS, "DCT to INIT");
	memset(&a, 0, sizeof a);
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.min_rnr_timer = 12;
	modify(dct, &a, IBV_QP_STATE | IBV_QP_PATH_MTU | IBV_QP_MIN_RNR_TIMER, "DCT to RTR");
	if (ibv_query_port(ctx, 1, &port)) die("query_port");
	snprintf(text, sizeof text, "%u %u %" PRIu64 " %u %u\n", port.lid, dct->qp_num, (uint64_t)(uintptr_t)buf,
		 mr->rkey, ud->qp_num);
	put_file("target", text);
	struct ibv_wc wc = wait_one(cq);
	if (wc.status != IBV_WC_SUCCESS || wc.wr_id != 7) {
		fprintf(stderr, "target: receive %s\n", ibv_wc_status_str(wc.status));
		return 1;
	}
	for (int i = 0; i < LEN; i++)
		if (buf[i] != (char)(i * 7 + 1)) { fprintf(stderr, "target: byte %d of the WRITE is wrong\n", i); return 1; }
	printf("target got \"%.*s\" (%u bytes, qp 0x%x) after the WRITE's %d bytes\n", (int)wc.byte_len, buf + LEN,
	       wc.byte_len, wc.qp_num, LEN);
	fflush(stdout);
	wc = wait_one(cq);
	if (wc.status != IBV_WC_SUCCESS || wc.wr_id != 8) {
		fprintf(stderr, "target: UD receive %s\n", ibv_wc_status_str(wc.status));
		return 1;
	}
	printf("target got \"%.*s\" on its UD QP\n", (int)(wc.byte_len - 40), udbuf + 40);
	fflush(stdout);
	get_file("finished", text, sizeof text); /* the DCT stays until the initiator has tried the wrong key */
	return 0;
}

static struct ibv_qp *dci(struct ibv_context *ctx, struct ibv_pd *pd, struct ibv_cq *cq) {
	struct ibv_qp_init_attr_ex init = { .qp_type = IBV_QPT_DRIVER,
					    .comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
					    .pd = pd, .send_cq = cq, .recv_cq = cq,
					    .cap = { .max_send_wr = 16, .max_send_sge = 1, .max_inline_data = 64 },
					    .send_ops_flags = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_RDMA_WRITE
							      | IBV_QP_EX_WITH_RDMA_READ };
	struct mlx5dv_qp_init_attr dv = { .comp_mask = MLX5DV_QP_INIT_ATTR_MASK_DC | MLX5DV_QP_INIT_ATTR_MASK_QP_CREATE_FLAGS,
					  .create_flags = MLX5DV_QP_CREATE_DISABLE_SCATTER_TO_CQE,
					  .dc_init_attr = { .dc_type = MLX5DV_DCTYPE_DCI } };
	struct ibv_qp *qp = mlx5dv_create_qp(ctx, &init, &dv);
	struct ibv_qp_attr a;
	if (!qp) die("mlx5dv_create_qp (DCI)");
	memset(&a, 0, sizeof a);
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	modify(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT, "DCI to INIT");
	memset(&a, 0, sizeof a);
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	modify(qp, &a, IBV_QP_STATE | IBV_QP_PATH_MTU, "DCI to RTR");
	memset(&a, 0, sizeof a);
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	modify(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN
		       | IBV_QP_MAX_QP_RD_ATOMIC, "DCI to RTS");
	return qp;
}

static int init(void) {
	struct ibv_context *ctx = open_first();
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_cq *cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	static char out[LEN], back[LEN];
	struct ibv_mr *mr_out = pd ? ibv_reg_mr(pd, out, sizeof out, IBV_ACCESS_LOCAL_WRITE) : NULL;
	struct ibv_mr *mr_back = pd ? ibv_reg_mr(pd, back, sizeof back, IBV_ACCESS_LOCAL_WRITE) : NULL;
	unsigned lid, dctn, rkey, udqpn;
	uint64_t addr;
	char text[256];
	const char msg[] = "hello over DC";
	if (!cq || !mr_out || !mr_back) die("initiator resources");
	for (int i = 0; i < LEN; i++) out[i] = (char)(i * 7 + 1);
	get_file("target", text, sizeof text);
	if (sscanf(text, "%u %u %" SCNu64 " %u %u", &lid, &dctn, &addr, &rkey, &udqpn) != 5) die("parsing the target's file");
	struct ibv_ah_attr aa = { .dlid = (uint16_t)lid, .port_num = 1 };
	struct ibv_ah *ah = ibv_create_ah(pd, &aa);
	struct ibv_qp *good = dci(ctx, pd, cq), *wrong = dci(ctx, pd, cq);
	struct ibv_qp_ex *qx = ibv_qp_to_qp_ex(good), *wx = ibv_qp_to_qp_ex(wrong);
	struct mlx5dv_qp_ex *dx = qx ? mlx5dv_qp_ex_from_ibv_qp_ex(qx) : NULL;
	struct mlx5dv_qp_ex *dw = wx ? mlx5dv_qp_ex_from_ibv_qp_ex(wx) : NULL;
	if (!ah || !dx || !dw) die("address handle and qp_ex");

	ibv_wr_start(qx);
	qx->wr_id = 1;
	qx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_write(qx, rkey, addr);
	mlx5dv_wr_set_dc_addr(dx, ah, dctn, DC_KEY);
	ibv_wr_set_sge(qx, mr_out->lkey, (uintptr_t)out, LEN);
	qx->wr_id = 2;
	ibv_wr_rdma_read(qx, rkey, addr);
	mlx5dv_wr_set_dc_addr(dx, ah, dctn, DC_KEY);
	ibv_wr_set_sge(qx, mr_back->lkey, (uintptr_t)back, LEN);
	qx->wr_id = 3;
	qx->wr_flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE;
	ibv_wr_send(qx);
	mlx5dv_wr_set_dc_addr(dx, ah, dctn, DC_KEY);
	ibv_wr_set_inline_data(qx, (void *)msg, sizeof msg - 1);
	if (ibv_wr_complete(qx)) die("ibv_wr_complete");
	for (uint64_t want = 1; want <= 3; want++) {
		struct ibv_wc wc = wait_one(cq);
		if (wc.status != IBV_WC_SUCCESS || wc.wr_id != want) {
			fprintf(stderr, "init: wr %" PRIu64 ": %s (wanted wr %" PRIu64 ")\n", wc.wr_id, ibv_wc_status_str(wc.status), want);
			return 1;
		}
	}
	if (memcmp(out, back, LEN)) { fprintf(stderr, "init: the READ brought back other bytes\n"); return 1; }
	printf("init: WRITE, READ and SEND over one DC connection, %d bytes read back equal\n", LEN);

	ibv_wr_start(wx);
	wx->wr_id = 9;
	wx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_write(wx, rkey, addr);
	mlx5dv_wr_set_dc_addr(dw, ah, dctn, DC_KEY ^ 1);
	ibv_wr_set_sge(wx, mr_out->lkey, (uintptr_t)out, 16);
	if (ibv_wr_complete(wx)) die("ibv_wr_complete (wrong key)");
	struct ibv_wc wc = wait_one(cq);
	printf("init: under a wrong DC key: %s\n", ibv_wc_status_str(wc.status));
	if (wc.status != IBV_WC_REM_ACCESS_ERR || wc.wr_id != 9) return 1;

	/* the same API on a UD QP */
	struct ibv_qp_init_attr_ex ux = { .qp_type = IBV_QPT_UD,
					  .comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS, .pd = pd,
					  .send_cq = cq, .recv_cq = cq,
					  .cap = { .max_send_wr = 4, .max_recv_wr = 1, .max_send_sge = 1, .max_recv_sge = 1 },
					  .send_ops_flags = IBV_QP_EX_WITH_SEND };
	struct ibv_qp *ud = ibv_create_qp_ex(ctx, &ux);
	const char hi[] = "hello over UD";
	if (!ud) die("create_qp_ex (UD)");
	ud_up(ud, IBV_QPS_RTS);
	memcpy(out, hi, sizeof hi - 1);
	struct ibv_qp_ex *ux_qp = ibv_qp_to_qp_ex(ud);
	if (!ux_qp) die("ibv_qp_to_qp_ex (UD)");
	ibv_wr_start(ux_qp);
	ux_qp->wr_id = 10;
	ux_qp->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send(ux_qp);
	ibv_wr_set_ud_addr(ux_qp, ah, udqpn, 0x11111111);
	ibv_wr_set_sge(ux_qp, mr_out->lkey, (uintptr_t)out, sizeof hi - 1);
	if (ibv_wr_complete(ux_qp)) die("ibv_wr_complete (UD)");
	wc = wait_one(cq);
	printf("init: UD send through ibv_wr_*: %s\n", ibv_wc_status_str(wc.status));
	fflush(stdout);
	put_file("finished", "finished\n");
	return wc.status == IBV_WC_SUCCESS && wc.wr_id == 10 ? 0 : 1;
}

int main(int argc, char **argv) {
	alarm(60);
	if (argc != 3) { fprintf(stderr, "usage: dc-write target|init DIR\n"); return 2; }
	dir = argv[2];
	if (!strcmp(argv[1], "target")) return target();
	if (!strcmp(argv[1], "init")) return init();
	fprintf(stderr, "dc-write: unknown role %s\n", argv[1]);
	return 2;
}
