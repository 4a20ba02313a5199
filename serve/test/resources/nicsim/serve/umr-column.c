/*
 * AttachTest's indirect-mkey program, written as mlx5's direct-verbs documentation writes one
 * (mlx5dv_create_mkey, mlx5dv_wr_mr_interleaved, mlx5dv_wr_mr_list on an RC QP made with
 * mlx5dv_create_qp), in two roles that meet through small files in DIR:
 *   owner DIR  (node 1) holds a 32 x 64-byte matrix and lays out two indirect mkeys: column bytes
 *              16..23 of every row (interleaved), and "hello " + "world" from two buffers (a list).
 *              It SENDs the list mkey's 11 bytes, then checks that the peer's WRITE through the
 *              column mkey changed the column and nothing else.
 *   peer DIR   (node 0) WRITEs 256 bytes through the column mkey's rkey, READs them back, and
 *              receives the SEND.
 * Each prints what it saw and exits 0.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <infiniband/verbs.h>
#include <infiniband/mlx5dv.h>

#include "meet.h"

#define ROWS 32
#define ROW 64
#define COL 16
#define COLW 8

static int owner(void) {
	struct ibv_context *ctx = open_first();
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_cq *cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	static unsigned char matrix[ROWS * ROW];
	static char hello[64] = "hello ", world[64] = "world";
	int rw = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	for (int i = 0; i < ROWS * ROW; i++) matrix[i] = (unsigned char)(i * 3 + 1);
	struct ibv_mr *mm = pd ? ibv_reg_mr(pd, matrix, sizeof matrix, rw) : NULL;
	struct ibv_mr *hm = pd ? ibv_reg_mr(pd, hello, sizeof hello, IBV_ACCESS_LOCAL_WRITE) : NULL;
	struct ibv_mr *wm = pd ? ibv_reg_mr(pd, world, sizeof world, IBV_ACCESS_LOCAL_WRITE) : NULL;
	struct ibv_qp_init_attr_ex qa = { .send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC, .pd = pd,
					  .cap = { .max_send_wr = 8, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1, .max_inline_data = 64 },
					  .comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
					  .send_ops_flags = IBV_QP_EX_WITH_SEND };
	struct mlx5dv_qp_init_attr dv = { .comp_mask = MLX5DV_QP_INIT_ATTR_MASK_SEND_OPS_FLAGS,
					  .send_ops_flags = MLX5DV_QP_EX_WITH_MR_INTERLEAVED | MLX5DV_QP_EX_WITH_MR_LIST };
	struct ibv_qp *qp = mm && hm && wm && cq ? mlx5dv_create_qp(ctx, &qa, &dv) : NULL;
	if (!qp) die("mlx5dv_create_qp");
	struct ibv_qp_ex *qpx = ibv_qp_to_qp_ex(qp);
	struct mlx5dv_qp_ex *mqp = mlx5dv_qp_ex_from_ibv_qp_ex(qpx);
	struct mlx5dv_mkey_init_attr ka = { .pd = pd, .create_flags = MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT, .max_entries = 2 };
	struct mlx5dv_mkey *column = mlx5dv_create_mkey(&ka), *list = mlx5dv_create_mkey(&ka);
	if (!column || !list) die("mlx5dv_create_mkey");
	char text[256];
	unsigned lid, qpn;
	snprintf(text, sizeof text, "%u %u\n", my_lid(ctx), qp->qp_num);
	put_file("owner", text);
	get_file("peer", text, sizeof text);
	if (sscanf(text, "%u %u", &lid, &qpn) != 2) die("parsing the peer's file");
	/* work requests, UMRs too, are posted from RTS on */
	connect_rc(qp, lid, qpn, IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_LOCAL_WRITE);
	/* both layouts in one list of work requests; mlx5 takes them inline */
	struct mlx5dv_mr_interleaved col = { .addr = (uintptr_t)matrix + COL, .bytes_count = COLW,
					     .bytes_skip = ROW - COLW, .lkey = mm->lkey };
	struct ibv_sge pieces[2] = { { .addr = (uintptr_t)hello, .length = 6, .lkey = hm->lkey },
				     { .addr = (uintptr_t)world, .length = 5, .lkey = wm->lkey } };
	ibv_wr_start(qpx);
	qpx->wr_id = 1;
	qpx->wr_flags = IBV_SEND_INLINE | IBV_SEND_SIGNALED;
	mlx5dv_wr_mr_interleaved(mqp, column, rw, ROWS, 1, &col);
	qpx->wr_id = 2;
	mlx5dv_wr_mr_list(mqp, list, IBV_ACCESS_LOCAL_WRITE, 2, pieces);
	int rc = ibv_wr_complete(qpx);
	if (rc) { fprintf(stderr, "owner: ibv_wr_complete: %s\n", strerror(rc)); return 1; }
	for (int i = 0; i < 2; i++) {
		struct ibv_wc wc = wait_one(cq);
		if (wc.status != IBV_WC_SUCCESS || wc.opcode != (enum ibv_wc_opcode)MLX5DV_WC_UMR) {
			fprintf(stderr, "owner: UMR %" PRIu64 ": %s opcode %d\n", wc.wr_id, ibv_wc_status_str(wc.status), wc.opcode);
			return 1;
		}
	}
	printf("owner: two indirect mkeys laid out (MLX5DV_WC_UMR), column rkey 0x%x\n", column->rkey);
	fflush(stdout);
	snprintf(text, sizeof text, "%u\n", column->rkey);
	put_file("rkey", text);
	get_file("written", text, sizeof text);
	/* the list mkey's 11 bytes, gathered from two buffers, as one SGE at offset 0 */
	ibv_wr_start(qpx);
	qpx->wr_id = 3;
	qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send(qpx);
	ibv_wr_set_sge(qpx, list->lkey, 0, 11);
	if ((rc = ibv_wr_complete(qpx))) { fprintf(stderr, "owner: send: %s\n", strerror(rc)); return 1; }
	struct ibv_wc wc = wait_one(cq);
	if (wc.status != IBV_WC_SUCCESS) {
		fprintf(stderr, "owner: send through the list mkey: %s\n", ibv_wc_status_str(wc.status));
		return 1;
	}
	for (int r = 0; r < ROWS; r++)
		for (int c = 0; c < ROW; c++) {
			int at = r * ROW + c;
			unsigned char want = c >= COL && c < COL + COLW ? (unsigned char)((r * COLW + c - COL) * 7 + 5)
									: (unsigned char)(at * 3 + 1);
			if (matrix[at] != want) {
				fprintf(stderr, "owner: matrix row %d byte %d is %u, not %u\n", r, c, matrix[at], want);
				return 1;
			}
		}
	printf("owner: the peer's WRITE changed column bytes %d..%d of all %d rows and nothing else\n", COL,
	       COL + COLW - 1, ROWS);
	fflush(stdout);
	get_file("done", text, sizeof text);
	if (mlx5dv_destroy_mkey(column) || mlx5dv_destroy_mkey(list)) die("mlx5dv_destroy_mkey");
	return 0;
}

static int peer(void) {
	struct ibv_context *ctx = open_first();
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_cq *cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	static unsigned char out[ROWS * COLW], back[ROWS * COLW];
	static char in[64];
	struct ibv_mr *om = pd ? ibv_reg_mr(pd, out, sizeof out, IBV_ACCESS_LOCAL_WRITE) : NULL;
	struct ibv_mr *bm = pd ? ibv_reg_mr(pd, back, sizeof back, IBV_ACCESS_LOCAL_WRITE) : NULL;
	struct ibv_mr *im = pd ? ibv_reg_mr(pd, in, sizeof in, IBV_ACCESS_LOCAL_WRITE) : NULL;
	struct ibv_qp_init_attr qa = { .send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
				       .cap = { .max_send_wr = 8, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1 } };
	struct ibv_qp *qp = om && bm && im && cq ? ibv_create_qp(pd, &qa) : NULL;
	char text[256];
	unsigned lid, qpn, rkey;
	if (!qp) die("peer resources");
	for (int i = 0; i < ROWS * COLW; i++) out[i] = (unsigned char)(i * 7 + 5);
	get_file("owner", text, sizeof text);
	if (sscanf(text, "%u %u", &lid, &qpn) != 2) die("parsing the owner's file");
	snprintf(text, sizeof text, "%u %u\n", my_lid(ctx), qp->qp_num);
	put_file("peer", text);
	connect_rc(qp, lid, qpn, IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_LOCAL_WRITE);
	struct ibv_sge rs = { .addr = (uintptr_t)in, .length = sizeof in, .lkey = im->lkey };
	struct ibv_recv_wr rwr = { .wr_id = 9, .sg_list = &rs, .num_sge = 1 }, *rbad;
	if (ibv_post_recv(qp, &rwr, &rbad)) die("post_recv"); /* before the owner hears "written" and sends */
	get_file("rkey", text, sizeof text);
	if (sscanf(text, "%u", &rkey) != 1) die("parsing the owner's rkey");
	/* the column through its rkey: zero based, 256 bytes; then read back */
	struct ibv_sge ws = { .addr = (uintptr_t)out, .length = sizeof out, .lkey = om->lkey };
	struct ibv_sge bs = { .addr = (uintptr_t)back, .length = sizeof back, .lkey = bm->lkey };
	struct ibv_send_wr rd = { .wr_id = 2, .sg_list = &bs, .num_sge = 1, .opcode = IBV_WR_RDMA_READ,
				  .send_flags = IBV_SEND_SIGNALED, .wr.rdma = { .remote_addr = 0, .rkey = rkey } };
	struct ibv_send_wr wr = { .wr_id = 1, .next = &rd, .sg_list = &ws, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
				  .send_flags = IBV_SEND_SIGNALED, .wr.rdma = { .remote_addr = 0, .rkey = rkey } }, *bad;
	if (ibv_post_send(qp, &wr, &bad)) die("post_send");
	for (int i = 0; i < 2; i++) {
		struct ibv_wc wc = wait_one(cq);
		if (wc.status != IBV_WC_SUCCESS) {
			fprintf(stderr, "peer: wr %" PRIu64 ": %s\n", wc.wr_id, ibv_wc_status_str(wc.status));
			return 1;
		}
	}
	if (memcmp(out, back, sizeof out)) { fprintf(stderr, "peer: the column read back differs\n"); return 1; }
	printf("peer: WRITE and READ through the column mkey, %d bytes read back equal\n", (int)sizeof out);
	fflush(stdout);
	put_file("written", "written\n");
	struct ibv_wc wc = wait_one(cq);
	if (wc.status != IBV_WC_SUCCESS || wc.opcode != IBV_WC_RECV) {
		fprintf(stderr, "peer: receive: %s\n", ibv_wc_status_str(wc.status));
		return 1;
	}
	printf("peer: got \"%.*s\" (%u bytes) gathered through the list mkey\n", (int)wc.byte_len, in, wc.byte_len);
	fflush(stdout);
	put_file("done", "done\n");
	return 0;
}

int main(int argc, char **argv) {
	if (argc != 3) { fprintf(stderr, "usage: umr-column owner|peer DIR\n"); return 2; }
	dir = argv[2];
	alarm(60);
	if (!strcmp(argv[1], "owner")) return owner();
	if (!strcmp(argv[1], "peer")) return peer();
	fprintf(stderr, "umr-column: unknown role %s\n", argv[1]);
	return 2;
}
