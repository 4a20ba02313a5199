/*
 * AttachTest's program for XRC domains shared through a file, in three roles that meet through
 * small files in DIR:
 *   target DIR FILE  (node 1) opens FILE's domain, makes an XRC SRQ and the XRC target QP, and
 *                    waits for the message sent to its SRQ;
 *   srq DIR FILE     (node 1, another process) joins FILE's domain once the target made it, makes
 *                    an XRC SRQ of its own, and waits for the message sent to it;
 *   send DIR         (node 0) connects one XRC initiator QP to the target QP and sends a message to
 *                    each SRQ: the srq process's is accepted only if both SRQs are in one domain.
 * Each prints what it got and exits 0 (alarm: 60 s).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "meet.h"

static char buf[4096];

static struct ibv_xrcd *open_domain(struct ibv_context *ctx, const char *file) {
	struct ibv_xrcd_init_attr a = { .comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS, .oflags = O_CREAT };
	struct ibv_xrcd *x;
	a.fd = open(file, O_RDONLY | O_CREAT, 0600);
	if (a.fd < 0 || !(x = ibv_open_xrcd(ctx, &a))) die("open_xrcd");
	return x;
}

/* An XRC SRQ of the domain with one receive posted; its number is returned. */
static struct ibv_srq *receiver(struct ibv_context *ctx, struct ibv_xrcd *x, struct ibv_cq **cq) {
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_mr *mr;
	struct ibv_srq *srq;
	struct ibv_srq_init_attr_ex a = { .attr = { .max_wr = 4, .max_sge = 1 }, .srq_type = IBV_SRQT_XRC };
	if (!pd || !(mr = ibv_reg_mr(pd, buf, sizeof buf, IBV_ACCESS_LOCAL_WRITE))
	    || !(*cq = ibv_create_cq(ctx, 4, NULL, NULL, 0)))
		die("pd/mr/cq");
	a.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ | IBV_SRQ_INIT_ATTR_PD;
	a.xrcd = x;
	a.cq = *cq;
	a.pd = pd;
	if (!(srq = ibv_create_srq_ex(ctx, &a))) die("create_srq_ex");
	struct ibv_sge sge = { .addr = (uintptr_t)buf, .length = sizeof buf, .lkey = mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1 }, *bad;
	if (ibv_post_srq_recv(srq, &wr, &bad)) die("post_srq_recv");
	return srq;
}

static void await_one(struct ibv_cq *cq, const char *who) {
	struct ibv_wc wc;
	int n;
	while ((n = ibv_poll_cq(cq, 1, &wc)) == 0) ;
	if (n < 0 || wc.status != IBV_WC_SUCCESS) {
		fprintf(stderr, "xrc-share %s: completion status %d\n", who, n < 0 ? -1 : (int)wc.status);
		exit(1);
	}
	printf("%s got \"%.*s\" on QP 0x%x\n", who, (int)wc.byte_len, buf, wc.qp_num);
}

static void modify(struct ibv_qp *qp, struct ibv_qp_attr *a, int mask) {
	if (ibv_modify_qp(qp, a, mask)) die("modify_qp");
}

int main(int argc, char **argv) {
	char line[256];
	struct ibv_port_attr port;
	alarm(60);
	if (argc < 3) die("arguments");
	dir = argv[2];
	struct ibv_context *ctx = open_first();
	if (ibv_query_port(ctx, 1, &port)) die("query_port");
	if (!strcmp(argv[1], "target") && argc == 4) {
		struct ibv_cq *cq;
		struct ibv_xrcd *x = open_domain(ctx, argv[3]);
		struct ibv_srq *srq = receiver(ctx, x, &cq);
		struct ibv_qp_init_attr_ex init = { .qp_type = IBV_QPT_XRC_RECV, .comp_mask = IBV_QP_INIT_ATTR_XRCD, .xrcd = x };
		struct ibv_qp *tgt = ibv_create_qp_ex(ctx, &init);
		uint32_t srqn;
		unsigned lid, qpn, psn;
		if (!tgt || ibv_get_srq_num(srq, &srqn)) die("target QP");
		struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1, .qp_access_flags = IBV_ACCESS_REMOTE_WRITE };
		modify(tgt, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
		snprintf(line, sizeof line, "%u %u %u\n", port.lid, tgt->qp_num, srqn);
		put_file("target", line);
		get_file("sender", line, sizeof line);
		if (sscanf(line, "%u %u %u", &lid, &qpn, &psn) != 3) die("sender's file");
		memset(&a, 0, sizeof a);
		a.qp_state = IBV_QPS_RTR; a.path_mtu = IBV_MTU_1024; a.dest_qp_num = qpn; a.rq_psn = psn; a.min_rnr_timer = 12;
		a.ah_attr.dlid = (uint16_t)lid; a.ah_attr.port_num = 1;
		modify(tgt, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN
				| IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
		memset(&a, 0, sizeof a);
		a.qp_state = IBV_QPS_RTS; a.timeout = 14; a.sq_psn = 7;
		modify(tgt, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_SQ_PSN);
		put_file("ready", "1\n");
		await_one(cq, "target");
	} else if (!strcmp(argv[1], "srq") && argc == 4) {
		struct ibv_cq *cq;
		uint32_t srqn;
		get_file("target", line, sizeof line); /* the target made the domain */
		struct ibv_xrcd *x = open_domain(ctx, argv[3]);
		struct ibv_srq *srq = receiver(ctx, x, &cq);
		if (ibv_get_srq_num(srq, &srqn)) die("get_srq_num");
		snprintf(line, sizeof line, "%u\n", srqn);
		put_file("srq", line);
		await_one(cq, "srq");
	} else if (!strcmp(argv[1], "send")) {
		unsigned lid, tqpn, srqn_target, srqn_other;
		struct ibv_pd *pd = ibv_alloc_pd(ctx);
		struct ibv_cq *cq = ibv_create_cq(ctx, 4, NULL, NULL, 0);
		struct ibv_mr *mr;
		if (!pd || !cq || !(mr = ibv_reg_mr(pd, buf, sizeof buf, IBV_ACCESS_LOCAL_WRITE))) die("pd/cq/mr");
		struct ibv_qp_init_attr_ex init = { .qp_type = IBV_QPT_XRC_SEND, .send_cq = cq,
						    .cap = { .max_send_wr = 4, .max_send_sge = 1 },
						    .comp_mask = IBV_QP_INIT_ATTR_PD, .pd = pd };
		struct ibv_qp *ini = ibv_create_qp_ex(ctx, &init);
		if (!ini) die("initiator QP");
		get_file("target", line, sizeof line);
		if (sscanf(line, "%u %u %u", &lid, &tqpn, &srqn_target) != 3) die("target's file");
		get_file("srq", line, sizeof line);
		if (sscanf(line, "%u", &srqn_other) != 1) die("srq's file");
		snprintf(line, sizeof line, "%u %u %u\n", port.lid, ini->qp_num, 7u);
		put_file("sender", line);
		get_file("ready", line, sizeof line);
		struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1 };
		modify(ini, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
		memset(&a, 0, sizeof a);
		a.qp_state = IBV_QPS_RTR; a.path_mtu = IBV_MTU_1024; a.dest_qp_num = tqpn; a.rq_psn = 7;
		a.ah_attr.dlid = (uint16_t)lid; a.ah_attr.port_num = 1;
		modify(ini, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN);
		memset(&a, 0, sizeof a);
		a.qp_state = IBV_QPS_RTS; a.timeout = 14; a.retry_cnt = 7; a.rnr_retry = 7; a.sq_psn = 7;
		modify(ini, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_SQ_PSN | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY
				| IBV_QP_MAX_QP_RD_ATOMIC);
		/* the other process's SRQ first: on one connection, in order, it is placed before the target's own */
		strcpy(buf, "to the srq process");
		strcpy(buf + 64, "to the target process");
		struct ibv_sge s1 = { .addr = (uintptr_t)buf, .length = 18, .lkey = mr->lkey },
			       s2 = { .addr = (uintptr_t)(buf + 64), .length = 21, .lkey = mr->lkey };
		struct ibv_send_wr w2 = { .wr_id = 2, .sg_list = &s2, .num_sge = 1, .opcode = IBV_WR_SEND,
					  .send_flags = IBV_SEND_SIGNALED };
		struct ibv_send_wr w1 = { .wr_id = 1, .next = &w2, .sg_list = &s1, .num_sge = 1, .opcode = IBV_WR_SEND,
					  .send_flags = IBV_SEND_SIGNALED }, *bad;
		w1.qp_type.xrc.remote_srqn = srqn_other;
		w2.qp_type.xrc.remote_srqn = srqn_target;
		if (ibv_post_send(ini, &w1, &bad)) die("post_send");
		struct ibv_wc wc[2];
		int got = 0, n;
		while (got < 2) {
			if ((n = ibv_poll_cq(cq, 2 - got, wc + got)) < 0) die("poll_cq");
			got += n;
		}
		for (int i = 0; i < 2; i++)
			if (wc[i].status != IBV_WC_SUCCESS) {
				fprintf(stderr, "xrc-share send: status %d\n", wc[i].status);
				return 1;
			}
		printf("sent 2 messages through one XRC connection\n");
	} else {
		die("arguments");
	}
	return 0;
}
