/*
 * XRC family: ibv_open_xrcd, ibv_close_xrcd, ibv_create_srq_ex of IBV_SRQT_XRC, ibv_get_srq_num,
 * ibv_create_qp_ex of IBV_QPT_XRC_SEND and IBV_QPT_XRC_RECV (their man pages, libibverbs'
 * ibv_cmd_open_xrcd and the kernel's ib_uverbs_open_xrcd for the errors): a domain per file made
 * only with O_CREAT and refused with O_EXCL once it exists, a bad file descriptor EBADF; an XRC
 * SRQ needs its domain and CQ; one initiator reaches two SRQs of the target's domain, each message
 * landing in the SRQ its request names, byte for byte; a domain in use is kept (EBUSY).
 */
#include <fcntl.h>
#include "conf.h"

static char buf[1 << 14];

static struct ibv_xrcd *xrcd_of(struct ibv_context *ctx, int mask, int fd, int oflags) {
	struct ibv_xrcd_init_attr a = { .comp_mask = (uint32_t)mask, .fd = fd, .oflags = oflags };
	return ibv_open_xrcd(ctx, &a);
}

static struct ibv_srq *xrc_srq(struct ibv_context *ctx, struct ibv_pd *pd, struct ibv_xrcd *x, struct ibv_cq *cq,
			       int mask) {
	struct ibv_srq_init_attr_ex a = { .attr = { .max_wr = 4, .max_sge = 1 }, .srq_type = IBV_SRQT_XRC,
					  .comp_mask = (uint32_t)mask, .pd = pd, .xrcd = x, .cq = cq };
	return ibv_create_srq_ex(ctx, &a);
}

static int post_to(struct ibv_srq *srq, uint64_t id, char *at, uint32_t lkey) {
	struct ibv_sge s = { .addr = (uintptr_t)at, .length = 256, .lkey = lkey };
	struct ibv_recv_wr w = { .wr_id = id, .sg_list = &s, .num_sge = 1 }, *bad;
	return ibv_post_srq_recv(srq, &w, &bad);
}

static int send_to(struct ibv_qp *qp, uint32_t srqn, char *from, uint32_t len, uint32_t lkey) {
	struct ibv_sge s = { .addr = (uintptr_t)from, .length = len, .lkey = lkey };
	struct ibv_send_wr w = { .wr_id = srqn, .sg_list = &s, .num_sge = 1, .opcode = IBV_WR_SEND,
				 .send_flags = IBV_SEND_SIGNALED }, *bad;
	w.qp_type.xrc.remote_srqn = srqn;
	return ibv_post_send(qp, &w, &bad);
}

/* The initiator and the target, connected: INIT, RTR, RTS on both. 0 or the first errno. */
static int connect_xrc(struct ibv_qp *ini, struct ibv_qp *tgt) {
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1 };
	int rc, base = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS;
	if ((rc = ibv_modify_qp(ini, &a, base)) || (rc = ibv_modify_qp(tgt, &a, base))) return rc;
	memset(&a, 0, sizeof a);
	a.qp_state = IBV_QPS_RTR; a.path_mtu = IBV_MTU_1024; a.max_dest_rd_atomic = 4; a.min_rnr_timer = 12;
	a.ah_attr.dlid = (uint16_t)conf_lid(ini->context); a.ah_attr.port_num = 1;
	base = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;
	a.dest_qp_num = tgt->qp_num;
	if ((rc = ibv_modify_qp(ini, &a, base))) return rc;
	a.dest_qp_num = ini->qp_num;
	if ((rc = ibv_modify_qp(tgt, &a, base | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))) return rc;
	memset(&a, 0, sizeof a);
	a.qp_state = IBV_QPS_RTS; a.timeout = 14; a.retry_cnt = 7; a.rnr_retry = 7; a.max_rd_atomic = 4;
	if ((rc = ibv_modify_qp(ini, &a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY
				| IBV_QP_MAX_QP_RD_ATOMIC)))
		return rc;
	return ibv_modify_qp(tgt, &a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT);
}

int main(void) {
	struct ibv_context *ctx = conf_open();
	const int both = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS;
	char file[] = "/tmp/nicsim-conf-xrc-XXXXXX";
	int fd = mkstemp(file);
	struct ibv_xrcd *own, *x, *joined;
	struct ibv_pd *pd;
	struct ibv_cq *cq, *scq;
	struct ibv_mr *mr;
	struct ibv_srq *srq1, *srq2;
	struct ibv_qp *ini, *tgt;
	uint32_t n1 = 0, n2 = 0;
	check(fd >= 0, "a file for the domain", "errno %d", errno);
	EXPECT_NULL(xrcd_of(ctx, IBV_XRCD_INIT_ATTR_FD, -1, 0), EINVAL, "open_xrcd without IBV_XRCD_INIT_ATTR_OFLAGS: EINVAL");
	EXPECT_NULL(xrcd_of(ctx, IBV_XRCD_INIT_ATTR_OFLAGS, -1, O_CREAT), EINVAL, "without IBV_XRCD_INIT_ATTR_FD: EINVAL");
	EXPECT_NULL(xrcd_of(ctx, both | IBV_XRCD_INIT_ATTR_RESERVED, -1, O_CREAT), EOPNOTSUPP,
		    "an unknown comp_mask bit: EOPNOTSUPP");
	EXPECT_NULL(xrcd_of(ctx, both, 1000, O_CREAT), EBADF, "a file descriptor not open: EBADF");
	EXPECT_NULL(xrcd_of(ctx, both, fd, 0), EINVAL, "a file with no domain, without O_CREAT: EINVAL");
	MUST(own, xrcd_of(ctx, both, -1, 0), "fd -1: a domain of the program's own");
	MUST(x, xrcd_of(ctx, both, fd, O_CREAT), "O_CREAT makes the file's domain");
	EXPECT_NULL(xrcd_of(ctx, both, fd, O_CREAT | O_EXCL), EINVAL, "O_EXCL once it exists: EINVAL");
	MUST(joined, xrcd_of(ctx, both, fd, 0), "opening it again joins it");
	EXPECT_RC(ibv_close_xrcd(joined), 0, "one of two opens closed");
	MUST(pd, ibv_alloc_pd(ctx), "a PD");
	MUST(cq, ibv_create_cq(ctx, 16, NULL, NULL, 0), "a receive CQ");
	MUST(scq, ibv_create_cq(ctx, 16, NULL, NULL, 0), "a send CQ");
	MUST(mr, ibv_reg_mr(pd, buf, sizeof buf, IBV_ACCESS_LOCAL_WRITE), "an MR");
	EXPECT_NULL(xrc_srq(ctx, pd, x, cq, IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_CQ), EINVAL,
		    "an XRC SRQ without IBV_SRQ_INIT_ATTR_XRCD: EINVAL");
	EXPECT_NULL(xrc_srq(ctx, pd, x, cq, IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_XRCD), EINVAL,
		    "an XRC SRQ without IBV_SRQ_INIT_ATTR_CQ: EINVAL");
	{
		const int all = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ;
		MUST(srq1, xrc_srq(ctx, pd, x, cq, all), "an XRC SRQ of the file's domain");
		MUST(srq2, xrc_srq(ctx, pd, x, cq, all), "a second one");
	}
	EXPECT_RC(ibv_get_srq_num(srq1, &n1), 0, "ibv_get_srq_num");
	EXPECT_RC(ibv_get_srq_num(srq2, &n2), 0, "of both");
	check(n1 != n2 && n1 && n2, "two SRQs, two numbers", "%u and %u", n1, n2);
	{
		struct ibv_qp_init_attr_ex a = { .qp_type = IBV_QPT_XRC_RECV };
		EXPECT_NULL(ibv_create_qp_ex(ctx, &a), EINVAL, "an XRC_RECV QP without its domain: EINVAL");
		a.comp_mask = IBV_QP_INIT_ATTR_XRCD;
		a.xrcd = x;
		MUST(tgt, ibv_create_qp_ex(ctx, &a), "an XRC_RECV QP (the target) of the domain");
	}
	{
		struct ibv_qp_init_attr_ex a = { .qp_type = IBV_QPT_XRC_SEND, .send_cq = scq,
						 .cap = { .max_send_wr = 8, .max_send_sge = 1 } };
		EXPECT_NULL(ibv_create_qp_ex(ctx, &a), EINVAL, "an XRC_SEND QP without a PD: EINVAL");
		a.comp_mask = IBV_QP_INIT_ATTR_PD;
		a.pd = pd;
		MUST(ini, ibv_create_qp_ex(ctx, &a), "an XRC_SEND QP (the initiator)");
	}
	{
		struct ibv_recv_wr w = { .wr_id = 1 }, *bad;
		check(ibv_post_recv(ini, &w, &bad) != 0, "ibv_post_recv on an XRC_SEND QP is refused", "it was accepted");
	}
	EXPECT_RC(connect_xrc(ini, tgt), 0, "initiator and target connected");
	check(!post_to(srq1, 1, buf, mr->lkey) && !post_to(srq2, 2, buf + 256, mr->lkey), "a receive on each SRQ",
	      "errno %d", errno);
	strcpy(buf + 8192, "to the second SRQ");
	strcpy(buf + 8448, "to the first SRQ");
	EXPECT_RC(send_to(ini, n2, buf + 8192, 18, mr->lkey), 0, "a send naming the second SRQ");
	EXPECT_RC(send_to(ini, n1, buf + 8448, 17, mr->lkey), 0, "one naming the first");
	{
		struct ibv_wc a = conf_wait(cq), b = conf_wait(cq), s1 = conf_wait(scq), s2 = conf_wait(scq);
		check(a.status == IBV_WC_SUCCESS && a.wr_id == 2 && a.byte_len == 18 && !strcmp(buf + 256, "to the second SRQ"),
		      "the first message lands in the SRQ it named", "status %d, wr %" PRIu64 ", '%s'", a.status, a.wr_id, buf + 256);
		check(b.status == IBV_WC_SUCCESS && b.wr_id == 1 && b.byte_len == 17 && !strcmp(buf, "to the first SRQ"),
		      "the second in the other", "status %d, wr %" PRIu64 ", '%s'", b.status, b.wr_id, buf);
		check(a.qp_num == tgt->qp_num && b.qp_num == tgt->qp_num, "their completions name the target QP", "0x%x", a.qp_num);
		check(s1.status == IBV_WC_SUCCESS && s2.status == IBV_WC_SUCCESS && s1.wr_id == n2 && s2.wr_id == n1,
		      "both sends complete, in order", "status %d %d", s1.status, s2.status);
	}
	{
		const int all = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ;
		struct ibv_srq *other;
		uint32_t no = 0;
		struct ibv_wc w;
		MUST(other, xrc_srq(ctx, pd, own, cq, all), "an XRC SRQ of another domain");
		ibv_get_srq_num(other, &no);
		post_to(other, 3, buf + 512, mr->lkey);
		EXPECT_RC(send_to(ini, no, buf + 8192, 18, mr->lkey), 0, "a send naming it through the target");
		w = conf_wait(scq);
		check(w.status == IBV_WC_REM_INV_REQ_ERR, "the target refuses it: IBV_WC_REM_INV_REQ_ERR",
		      "status %d (%s)", w.status, ibv_wc_status_str(w.status));
		check(ibv_poll_cq(cq, 1, &w) == 0, "and the other domain's SRQ received nothing", "it got wr %" PRIu64, w.wr_id);
		EXPECT_RC(ibv_destroy_srq(other), 0, "that SRQ destroyed");
	}
	EXPECT_RC(ibv_close_xrcd(x), EBUSY, "ibv_close_xrcd while its SRQs and target live: EBUSY");
	EXPECT_RC(ibv_destroy_qp(ini), 0, "the initiator destroyed");
	EXPECT_RC(ibv_destroy_qp(tgt), 0, "the target destroyed");
	EXPECT_RC(ibv_destroy_srq(srq1), 0, "the SRQs destroyed");
	EXPECT_RC(ibv_destroy_srq(srq2), 0, "both");
	EXPECT_RC(ibv_close_xrcd(x), 0, "then the domain closes");
	EXPECT_RC(ibv_close_xrcd(own), 0, "the program's own domain closes");
	MUST(x, xrcd_of(ctx, both, fd, O_CREAT | O_EXCL), "closed for good: O_CREAT | O_EXCL makes a new one");
	EXPECT_RC(ibv_close_xrcd(x), 0, "closed");
	ibv_dereg_mr(mr);
	ibv_destroy_cq(cq);
	ibv_destroy_cq(scq);
	EXPECT_RC(ibv_dealloc_pd(pd), 0, "everything released");
	close(fd);
	unlink(file);
	EXPECT_RC(ibv_close_device(ctx), 0, "ibv_close_device");
	return conf_end();
}
