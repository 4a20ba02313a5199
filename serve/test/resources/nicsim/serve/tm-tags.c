/*
 * AttachTest's tag-matching program, on libibverbs' own tag-matching verbs (ibv_create_srq_ex with
 * IBV_SRQT_TM, ibv_post_srq_ops, the TMH and RVH of infiniband/tm_types.h), in two roles that meet
 * through small files in DIR:
 *   recv DIR  (node 1) makes a tag-matching SRQ and an RC QP on it, adds two tagged buffers, and
 *             waits for an eager message and a rendezvous to land in them;
 *   send DIR  (node 0) SENDs an eager message (TMH + payload) and a rendezvous request (TMH + RVH
 *             naming its buffer), then waits for the FIN the receiving adapter sends back.
 * Each prints what it got and exits 0 (alarm: 60 s).
 */
#define _GNU_SOURCE
#include <endian.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <infiniband/verbs.h>
#include <infiniband/tm_types.h>

#include "meet.h"

#define BIG 20000

static int recv_role(void) {
	struct ibv_context *ctx = open_first();
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_cq_init_attr_ex ca = { .cqe = 64, .wc_flags = IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_TM_INFO };
	struct ibv_cq_ex *cqx = ibv_create_cq_ex(ctx, &ca); /* the TM-SRQ's completions, with their tags */
	struct ibv_cq *cq = cqx ? ibv_cq_ex_to_cq(cqx) : NULL, *qcq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	static char buf[2 * BIG], spare[4096];
	struct ibv_mr *mr = pd ? ibv_reg_mr(pd, buf, sizeof buf, IBV_ACCESS_LOCAL_WRITE) : NULL;
	struct ibv_mr *smr = pd ? ibv_reg_mr(pd, spare, sizeof spare, IBV_ACCESS_LOCAL_WRITE) : NULL;
	struct ibv_device_attr_ex dev;
	if (ibv_query_device_ex(ctx, NULL, &dev)) die("ibv_query_device_ex");
	if (!(dev.tm_caps.flags & IBV_TM_CAP_RC) || dev.tm_caps.max_num_tags < 8) {
		fprintf(stderr, "recv: no tag matching in tm_caps\n");
		return 1;
	}
	printf("recv: tm_caps max_num_tags %u max_ops %u\n", dev.tm_caps.max_num_tags, dev.tm_caps.max_ops);
	struct ibv_srq_init_attr_ex sa = { .attr = { .max_wr = 4, .max_sge = 1 }, .srq_type = IBV_SRQT_TM, .pd = pd, .cq = cq,
					   .tm_cap = { .max_num_tags = 8, .max_ops = 4 },
					   .comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_CQ | IBV_SRQ_INIT_ATTR_TM };
	struct ibv_srq *srq = mr && smr && qcq ? ibv_create_srq_ex(ctx, &sa) : NULL;
	if (!srq) die("ibv_create_srq_ex (IBV_SRQT_TM)");
	struct ibv_sge ss = { .addr = (uintptr_t)spare, .length = sizeof spare, .lkey = smr->lkey };
	struct ibv_recv_wr rwr = { .wr_id = 99, .sg_list = &ss, .num_sge = 1 }, *rbad;
	if (ibv_post_srq_recv(srq, &rwr, &rbad)) die("post_srq_recv"); /* for unexpected messages (none come) */
	struct ibv_qp_init_attr qa = { .send_cq = qcq, .recv_cq = qcq, .srq = srq, .qp_type = IBV_QPT_RC,
				       .cap = { .max_send_wr = 8, .max_send_sge = 1 } };
	struct ibv_qp *qp = ibv_create_qp(pd, &qa);
	char text[256];
	unsigned lid, qpn;
	if (!qp) die("create_qp");
	snprintf(text, sizeof text, "%u %u\n", my_lid(ctx), qp->qp_num);
	put_file("recv", text);
	get_file("send", text, sizeof text);
	if (sscanf(text, "%u %u", &lid, &qpn) != 2) die("parsing the sender's file");
	connect_rc(qp, lid, qpn, IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE);

	struct ibv_sge s0 = { .addr = (uintptr_t)buf, .length = BIG, .lkey = mr->lkey };
	struct ibv_sge s1 = { .addr = (uintptr_t)(buf + BIG), .length = BIG, .lkey = mr->lkey };
	struct ibv_ops_wr add1 = { .wr_id = 11, .opcode = IBV_WR_TAG_ADD, .flags = IBV_OPS_SIGNALED,
				   .tm = { .add = { .recv_wr_id = 1, .sg_list = &s1, .num_sge = 1, .tag = 0xBEEF, .mask = ~0ULL } } };
	struct ibv_ops_wr add0 = { .wr_id = 10, .next = &add1, .opcode = IBV_WR_TAG_ADD, .flags = IBV_OPS_SIGNALED,
				   .tm = { .add = { .recv_wr_id = 0, .sg_list = &s0, .num_sge = 1, .tag = 0xCAFE, .mask = ~0ULL } } };
	struct ibv_ops_wr *bad;
	int rc = ibv_post_srq_ops(srq, &add0, &bad);
	if (rc) { fprintf(stderr, "tm-tags: ibv_post_srq_ops: %s\n", strerror(rc)); return 1; }
	for (int i = 0; i < 2; i++) {
		struct ibv_wc wc = wait_one(cq);
		if (wc.status != IBV_WC_SUCCESS || wc.opcode != IBV_WC_TM_ADD) {
			fprintf(stderr, "recv: TAG_ADD: %s\n", ibv_wc_status_str(wc.status));
			return 1;
		}
	}
	printf("recv: two tags added (handles %u and %u)\n", add0.tm.handle, add1.tm.handle);
	fflush(stdout);
	put_file("ready", "ready\n");
	int eager = 0, matched = 0, data = 0;
	while (eager + data < 2) {
		struct ibv_poll_cq_attr pa = { .comp_mask = 0 };
		struct ibv_wc_tm_info tm;
		struct ibv_wc wc;
		while (ibv_start_poll(cqx, &pa) == ENOENT) {}
		memset(&wc, 0, sizeof wc);
		wc.wr_id = cqx->wr_id;
		wc.status = cqx->status;
		wc.opcode = ibv_wc_read_opcode(cqx);
		wc.wc_flags = ibv_wc_read_wc_flags(cqx);
		wc.byte_len = ibv_wc_read_byte_len(cqx);
		ibv_wc_read_tm_info(cqx, &tm);
		ibv_end_poll(cqx);
		if (wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_TM_RECV && (wc.wc_flags & IBV_WC_TM_MATCH)) {
			uint64_t want = wc.wr_id == 0 ? 0xCAFE : 0xBEEF;
			uint32_t priv = wc.wr_id == 0 ? 5 : 6;
			if (tm.tag != want || tm.priv != priv) {
				fprintf(stderr, "recv: tm_info tag 0x%" PRIx64 " priv %u\n", tm.tag, tm.priv);
				return 1;
			}
		}
		if (wc.status != IBV_WC_SUCCESS || wc.opcode != IBV_WC_TM_RECV) {
			fprintf(stderr, "recv: wr %" PRIu64 ": %s opcode %d\n", wc.wr_id, ibv_wc_status_str(wc.status), wc.opcode);
			return 1;
		}
		if (wc.wr_id == 0 && (wc.wc_flags & IBV_WC_TM_MATCH) && (wc.wc_flags & IBV_WC_TM_DATA_VALID)) eager = 1;
		else if (wc.wr_id == 1 && (wc.wc_flags & IBV_WC_TM_MATCH)) matched = 1;
		else if (wc.wr_id == 1 && (wc.wc_flags & IBV_WC_TM_DATA_VALID) && matched && wc.byte_len == BIG) data = 1;
		else { fprintf(stderr, "recv: unexpected completion wr %" PRIu64 " flags 0x%x\n", wc.wr_id, wc.wc_flags); return 1; }
	}
	if (strcmp(buf, "eager hello")) { fprintf(stderr, "recv: the eager payload is \"%.20s\"\n", buf); return 1; }
	for (int i = 0; i < BIG; i++)
		if (buf[BIG + i] != (char)(i * 13 + 7)) {
			fprintf(stderr, "recv: byte %d of the rendezvous is wrong\n", i);
			return 1;
		}
	printf("recv: eager \"%s\" and a %d-byte rendezvous in their tagged buffers, "
	       "tags read with ibv_wc_read_tm_info\n", buf, BIG);
	fflush(stdout);
	get_file("finished", text, sizeof text);
	return 0;
}

static int send_role(void) {
	struct ibv_context *ctx = open_first();
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_cq *cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	static char big[BIG], msg[256], fin[256];
	struct ibv_mr *bmr = pd ? ibv_reg_mr(pd, big, sizeof big, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ) : NULL;
	struct ibv_mr *mmr = pd ? ibv_reg_mr(pd, msg, sizeof msg, IBV_ACCESS_LOCAL_WRITE) : NULL;
	struct ibv_mr *fmr = pd ? ibv_reg_mr(pd, fin, sizeof fin, IBV_ACCESS_LOCAL_WRITE) : NULL;
	struct ibv_qp_init_attr qa = { .send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
				       .cap = { .max_send_wr = 8, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1 } };
	struct ibv_qp *qp = bmr && mmr && fmr && cq ? ibv_create_qp(pd, &qa) : NULL;
	char text[256];
	unsigned lid, qpn;
	if (!qp) die("sender resources");
	for (int i = 0; i < BIG; i++) big[i] = (char)(i * 13 + 7);
	get_file("recv", text, sizeof text);
	if (sscanf(text, "%u %u", &lid, &qpn) != 2) die("parsing the receiver's file");
	snprintf(text, sizeof text, "%u %u\n", my_lid(ctx), qp->qp_num);
	put_file("send", text);
	connect_rc(qp, lid, qpn, IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE);
	struct ibv_sge fs = { .addr = (uintptr_t)fin, .length = sizeof fin, .lkey = fmr->lkey };
	struct ibv_recv_wr rwr = { .wr_id = 42, .sg_list = &fs, .num_sge = 1 }, *rbad;
	if (ibv_post_recv(qp, &rwr, &rbad)) die("post_recv (for the FIN)");
	get_file("ready", text, sizeof text);

	/* eager: TMH then the payload */
	struct ibv_tmh *tmh = (struct ibv_tmh *)msg;
	tmh->opcode = IBV_TMH_EAGER;
	tmh->app_ctx = htobe32(5);
	tmh->tag = htobe64(0xCAFE);
	strcpy(msg + sizeof *tmh, "eager hello");
	struct ibv_sge es = { .addr = (uintptr_t)msg, .length = sizeof *tmh + 12, .lkey = mmr->lkey };
	/* rendezvous: TMH and RVH naming the big buffer */
	char *r = msg + 128;
	struct ibv_tmh *rt = (struct ibv_tmh *)r;
	struct ibv_rvh *rv = (struct ibv_rvh *)(r + sizeof *rt);
	rt->opcode = IBV_TMH_RNDV;
	rt->app_ctx = htobe32(6);
	rt->tag = htobe64(0xBEEF);
	rv->va = htobe64((uintptr_t)big);
	rv->rkey = htobe32(bmr->rkey);
	rv->len = htobe32(BIG);
	struct ibv_sge rs = { .addr = (uintptr_t)r, .length = sizeof *rt + sizeof *rv, .lkey = mmr->lkey };
	struct ibv_send_wr w2 = { .wr_id = 2, .sg_list = &rs, .num_sge = 1, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED };
	struct ibv_send_wr w1 = { .wr_id = 1, .next = &w2, .sg_list = &es, .num_sge = 1, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED };
	struct ibv_send_wr *bad;
	if (ibv_post_send(qp, &w1, &bad)) die("post_send");
	int sends = 0, fins = 0;
	while (sends < 2 || fins < 1) {
		struct ibv_wc wc = wait_one(cq);
		if (wc.status != IBV_WC_SUCCESS) {
			fprintf(stderr, "send: wr %" PRIu64 ": %s\n", wc.wr_id, ibv_wc_status_str(wc.status));
			return 1;
		}
		if (wc.opcode == IBV_WC_SEND) sends++;
		else if (wc.opcode == IBV_WC_RECV && wc.wr_id == 42) fins++;
	}
	struct ibv_tmh *ft = (struct ibv_tmh *)fin;
	printf("send: FIN received (opcode %u, tag 0x%" PRIx64 ")\n", ft->opcode, be64toh(ft->tag));
	fflush(stdout);
	put_file("finished", "finished\n");
	return ft->opcode == IBV_TMH_FIN && be64toh(ft->tag) == 0xBEEF ? 0 : 1;
}

int main(int argc, char **argv) {
	alarm(60);
	if (argc != 3) { fprintf(stderr, "usage: tm-tags recv|send DIR\n"); return 2; }
	dir = argv[2];
	if (!strcmp(argv[1], "recv")) return recv_role();
	if (!strcmp(argv[1], "send")) return send_role();
	fprintf(stderr, "tm-tags: unknown role %s\n", argv[1]);
	return 2;
}
