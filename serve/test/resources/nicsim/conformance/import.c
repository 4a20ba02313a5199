/*
 * Import family: ibv_import_device, ibv_import_pd, ibv_import_mr, ibv_import_dm and their
 * unimports (their man pages; uverbs for the errors: no such object ENOENT, one of another kind
 * EINVAL). A duplicate of a context's command file, in this process or passed to another with
 * SCM_RIGHTS, opens the same context: objects made in one are reached by handle from the other,
 * buffers each process registers are its own memory, and an unimport leaves the object alive.
 */
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include "conf.h"

/* What the parent tells the child, after the file itself. */
struct shared { uint32_t pd, mr; uint64_t addr; };

static char mine[4096], theirs[4096];

static int send_fd(int sock, int fd, const void *data, size_t len) {
	char ctl[CMSG_SPACE(sizeof(int))];
	struct iovec io = { .iov_base = (void *)data, .iov_len = len };
	struct msghdr m = { .msg_iov = &io, .msg_iovlen = 1, .msg_control = ctl, .msg_controllen = sizeof ctl };
	struct cmsghdr *c = CMSG_FIRSTHDR(&m);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof fd);
	return sendmsg(sock, &m, 0) == (ssize_t)len ? 0 : -1;
}

static int recv_fd(int sock, void *data, size_t len) {
	char ctl[CMSG_SPACE(sizeof(int))];
	struct iovec io = { .iov_base = data, .iov_len = len };
	struct msghdr m = { .msg_iov = &io, .msg_iovlen = 1, .msg_control = ctl, .msg_controllen = sizeof ctl };
	struct cmsghdr *c;
	int fd = -1;
	if (recvmsg(sock, &m, 0) != (ssize_t)len || !(c = CMSG_FIRSTHDR(&m)) || c->cmsg_type != SCM_RIGHTS) return -1;
	memcpy(&fd, CMSG_DATA(c), sizeof fd);
	return fd;
}

static struct ibv_qp *rc_qp(struct ibv_pd *pd, struct ibv_cq *cq) {
	struct ibv_qp_init_attr a = { .send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
				      .cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1 } };
	return ibv_create_qp(pd, &a);
}

/* RDMA WRITE of len bytes at from (lkey) to addr under rkey, through qp; the completion's status. */
static int write_to(struct ibv_qp *qp, struct ibv_cq *cq, void *from, uint32_t lkey, uint32_t len, uint64_t addr,
		    uint32_t rkey) {
	struct ibv_sge s = { .addr = (uintptr_t)from, .length = len, .lkey = lkey };
	struct ibv_send_wr w = { .wr_id = 7, .sg_list = &s, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
				 .send_flags = IBV_SEND_SIGNALED }, *bad;
	w.wr.rdma.remote_addr = addr;
	w.wr.rdma.rkey = rkey;
	if (ibv_post_send(qp, &w, &bad)) return -2;
	return (int)conf_wait(cq).status;
}

/*
 * The other process: imports the context from the file it is sent, the parent's PD and MR, and
 * writes a buffer of its own, registered in the imported PD, into the parent's MR. Its verdict
 * goes back on sock as a line of text ("ok" or what went wrong).
 */
static void child(int sock) {
	struct shared sh;
	char verdict[200] = "ok";
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_mr *their_mr, *my_mr;
	struct ibv_cq *cq;
	struct ibv_qp *a, *b;
	int fd = recv_fd(sock, &sh, sizeof sh), st;
	if (fd < 0) snprintf(verdict, sizeof verdict, "no file came");
	else if (!(ctx = ibv_import_device(fd))) snprintf(verdict, sizeof verdict, "ibv_import_device: errno %d", errno);
	else if (!(pd = ibv_import_pd(ctx, sh.pd))) snprintf(verdict, sizeof verdict, "ibv_import_pd: errno %d", errno);
	else if (!(their_mr = ibv_import_mr(pd, sh.mr))) snprintf(verdict, sizeof verdict, "ibv_import_mr: errno %d", errno);
	else if (!(my_mr = ibv_reg_mr(pd, mine, sizeof mine, IBV_ACCESS_LOCAL_WRITE)))
		snprintf(verdict, sizeof verdict, "ibv_reg_mr of its own buffer: errno %d", errno);
	else if (!(cq = ibv_create_cq(ctx, 8, NULL, NULL, 0)) || !(a = rc_qp(pd, cq)) || !(b = rc_qp(pd, cq)))
		snprintf(verdict, sizeof verdict, "CQ or QPs: errno %d", errno);
	else if (conf_connect(a, b, IBV_ACCESS_REMOTE_WRITE)) snprintf(verdict, sizeof verdict, "connect: errno %d", errno);
	else {
		strcpy(mine, "written by the other process, from its own memory");
		if ((st = write_to(a, cq, mine, my_mr->lkey, 51, sh.addr, their_mr->rkey)) != IBV_WC_SUCCESS)
			snprintf(verdict, sizeof verdict, "RDMA WRITE status %d", st);
		ibv_destroy_qp(a);
		ibv_destroy_qp(b);
		ibv_destroy_cq(cq);
		ibv_dereg_mr(my_mr);
		ibv_unimport_mr(their_mr);
		ibv_unimport_pd(pd);
		if (ibv_close_device(ctx)) snprintf(verdict, sizeof verdict, "ibv_close_device: errno %d", errno);
	}
	if (write(sock, verdict, strlen(verdict) + 1) < 0) _exit(2);
	_exit(0);
}

int main(void) {
	int pair[2], fd, tmp;
	pid_t kid;
	struct ibv_context *ctx, *ctx2;
	struct ibv_pd *pd, *pd2;
	struct ibv_mr *mr, *mr2;
	struct ibv_dm *dm, *dm2;
	struct ibv_cq *cq, *cq2;
	struct ibv_qp *a, *b;
	struct ibv_alloc_dm_attr da = { .length = 256 };
	struct ibv_device_attr_ex dx;
	char word[32] = "";
	/* the other process exists before any context, so it shares none but the one it is sent */
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, pair)) return 1;
	kid = fork();
	if (kid == 0) { close(pair[0]); child(pair[1]); }
	close(pair[1]);
	ctx = conf_open();
	tmp = open("/proc/self/exe", O_RDONLY);
	EXPECT_NULL(ibv_import_device(tmp), EINVAL, "ibv_import_device of a file that is no device's: EINVAL");
	close(tmp);
	MUST(pd, ibv_alloc_pd(ctx), "a PD");
	MUST(mr, ibv_reg_mr(pd, theirs, sizeof theirs, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE), "an MR");
	memset(&dx, 0, sizeof dx);
	ibv_query_device_ex(ctx, NULL, &dx);
	dm = dx.max_dm_size ? ibv_alloc_dm(ctx, &da) : NULL;
	fd = dup(ctx->cmd_fd);
	MUST(ctx2, ibv_import_device(fd), "ibv_import_device of a duplicate of its command file");
	check(ctx2 != ctx && ctx2->cmd_fd == fd
	      && !strcmp(ibv_get_device_name(ctx2->device), ibv_get_device_name(ctx->device)),
	      "a second context of the same device, owning the file", "fd %d of %d", ctx2->cmd_fd, fd);
	EXPECT_NULL(ibv_import_pd(ctx2, 0x7fffff), ENOENT, "ibv_import_pd of a handle that names nothing: ENOENT");
	EXPECT_NULL(ibv_import_pd(ctx2, mr->handle), EINVAL, "ibv_import_pd of an MR's handle: EINVAL");
	MUST(pd2, ibv_import_pd(ctx2, pd->handle), "ibv_import_pd");
	check(pd2->handle == pd->handle && pd2->context == ctx2, "the PD, in the new context", "handle %u", pd2->handle);
	EXPECT_NULL(ibv_import_mr(pd2, pd->handle), EINVAL, "ibv_import_mr of a PD's handle: EINVAL");
	MUST(mr2, ibv_import_mr(pd2, mr->handle), "ibv_import_mr");
	check(mr2->lkey == mr->lkey && mr2->rkey == mr->rkey && mr2->length == sizeof theirs && !mr2->addr,
	      "its keys and length, and no address (as the kernel gives)", "lkey 0x%x rkey 0x%x length %zu", mr2->lkey,
	      mr2->rkey, mr2->length);
	if (dm) {
		MUST(dm2, ibv_import_dm(ctx2, dm->handle), "ibv_import_dm");
		EXPECT_RC(ibv_memcpy_to_dm(dm, 0, "on chip", 8), 0, "write the DM through its opener");
		EXPECT_RC(ibv_memcpy_from_dm(word, dm2, 0, 8), 0, "read it through the importer");
		check(!strcmp(word, "on chip"), "the same device memory", "'%s'", word);
		ibv_unimport_dm(dm2);
	}
	MUST(cq, ibv_create_cq(ctx, 8, NULL, NULL, 0), "a CQ of the opener");
	MUST(cq2, ibv_create_cq(ctx2, 8, NULL, NULL, 0), "a CQ of the importer");
	MUST(a, rc_qp(pd, cq), "a QP in the PD");
	MUST(b, rc_qp(pd2, cq2), "a QP in the imported PD, of the importer");
	EXPECT_RC(conf_connect(a, b, IBV_ACCESS_REMOTE_WRITE), 0, "the two connected");
	{
		static char from[64] = "through the imported MR's rkey";
		struct ibv_mr *fm = ibv_reg_mr(pd2, from, sizeof from, IBV_ACCESS_LOCAL_WRITE);
		check(fm && write_to(b, cq2, from, fm->lkey, 31, (uintptr_t)theirs, mr2->rkey) == IBV_WC_SUCCESS
		      && !strcmp(theirs, from), "an RDMA WRITE from the importer lands in the opener's MR",
		      "'%s'", theirs);
		if (fm) ibv_dereg_mr(fm);
	}
	ibv_destroy_qp(a);
	ibv_destroy_qp(b);
	ibv_destroy_cq(cq2);
	ibv_unimport_mr(mr2);
	ibv_unimport_pd(pd2);
	EXPECT_RC(ibv_close_device(ctx2), 0, "the importer closes its context");
	check(fcntl(fd, F_GETFD) < 0 && errno == EBADF, "which closed the file it was given", "fd %d still open", fd);
	{
		struct ibv_wc w;
		check(ibv_poll_cq(cq, 1, &w) == 0, "the opener's objects outlive the unimports", "poll failed");
	}
	{
		struct shared sh = { .pd = pd->handle, .mr = mr->handle, .addr = (uintptr_t)theirs };
		char verdict[200] = "";
		int status = -1;
		memset(theirs, 0, sizeof theirs);
		check(!send_fd(pair[0], ctx->cmd_fd, &sh, sizeof sh), "the command file passed to another process",
		      "errno %d", errno);
		check(read(pair[0], verdict, sizeof verdict - 1) > 0 && !strcmp(verdict, "ok"),
		      "it imports the context, the PD and the MR, and RDMA-writes its own buffer into ours", "%s", verdict);
		waitpid(kid, &status, 0);
		check(!strcmp(theirs, "written by the other process, from its own memory"), "its bytes are in our buffer",
		      "'%.60s'", theirs);
	}
	ibv_destroy_cq(cq);
	if (dm) EXPECT_RC(ibv_free_dm(dm), 0, "the DM freed");
	EXPECT_RC(ibv_dereg_mr(mr), 0, "the MR deregistered by its opener");
	EXPECT_RC(ibv_dealloc_pd(pd), 0, "the PD freed");
	EXPECT_RC(ibv_close_device(ctx), 0, "ibv_close_device");
	return conf_end();
}
