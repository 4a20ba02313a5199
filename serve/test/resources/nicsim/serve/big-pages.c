/*
 * CDriverTest's large-buffer program: an 8 MiB buffer aligned to 2 MiB (as one backed by huge pages
 * is), registered whole; an RC QP connected to itself WRITEs its first 4 MiB over its last 4 MiB in
 * one message, and the program checks every byte. A driver that registers the buffer in the largest
 * pages its mapping allows needs a handful of translations for it, not one per 4 KiB.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <infiniband/verbs.h>

#include "meet.h"

#define HALF (4u << 20)

int main(void) {
	unsigned char *buf;
	dir = "."; /* it meets nobody */
	if (posix_memalign((void **)&buf, 2u << 20, 2 * HALF)) die("posix_memalign");
	for (unsigned i = 0; i < HALF; i++) {
		buf[i] = (unsigned char)(i * 7 + i / 4096);
		buf[HALF + i] = 0;
	}
	struct ibv_context *ctx = open_first();
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_cq *cq = ibv_create_cq(ctx, 4, NULL, NULL, 0);
	int rw = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
	struct ibv_mr *mr = pd ? ibv_reg_mr(pd, buf, 2 * HALF, rw) : NULL;
	struct ibv_qp_init_attr qa = { .send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
				       .cap = { .max_send_wr = 2, .max_recv_wr = 1, .max_send_sge = 1, .max_recv_sge = 1 } };
	struct ibv_qp *qp = mr && cq ? ibv_create_qp(pd, &qa) : NULL;
	if (!qp) die("create_qp");
	struct ibv_port_attr port;
	if (ibv_query_port(ctx, 1, &port)) die("query_port");
	connect_rc(qp, port.lid, qp->qp_num, rw);
	struct ibv_sge sge = { .addr = (uintptr_t)buf, .length = HALF, .lkey = mr->lkey };
	struct ibv_send_wr wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	wr.wr.rdma.remote_addr = (uintptr_t)buf + HALF;
	wr.wr.rdma.rkey = mr->rkey;
	if (ibv_post_send(qp, &wr, &bad)) die("post_send");
	struct ibv_wc wc = wait_one(cq);
	if (wc.status != IBV_WC_SUCCESS) {
		fprintf(stderr, "big-pages: WRITE: %s\n", ibv_wc_status_str(wc.status));
		return 1;
	}
	if (memcmp(buf, buf + HALF, HALF)) die("the written half equal to the first");
	printf("big-pages: %u bytes written through one region and checked\n", HALF);
	ibv_destroy_qp(qp);
	ibv_dereg_mr(mr);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	free(buf);
	return 0;
}
