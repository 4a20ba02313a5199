/*
 * CQ events family: ibv_create_comp_channel, ibv_get_cq_event, ibv_ack_cq_events,
 * ibv_get_async_event and ibv_ack_async_event (their man pages) on real files: a channel's fd and
 * the async fd become readable exactly when an event is ready (poll works), O_NONBLOCK gives
 * EAGAIN, a signal interrupts a blocked read with EINTR; a destroyed CQ's unread events are
 * dropped, and destroying an object waits until the events given out for it are acknowledged.
 */
#include "conf.h"
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/time.h>

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_mr *mr;
static char buf[8192];

static int readable(int fd, int ms) {
	struct pollfd p = { .fd = fd, .events = POLLIN };
	return poll(&p, 1, ms) == 1 && (p.revents & POLLIN);
}

static void nonblocking(int fd, int on) {
	int fl = fcntl(fd, F_GETFL);
	fcntl(fd, F_SETFL, on ? fl | O_NONBLOCK : fl & ~O_NONBLOCK);
}

/* A loopback RC pair on cq; a receive posted on b and a SEND from a, so cq gets two completions. */
static int send_one(struct ibv_cq *cq, struct ibv_qp **a, struct ibv_qp **b) {
	struct ibv_qp_init_attr qi = { .send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
				       .cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1 } };
	struct ibv_sge s = { .addr = (uintptr_t)buf, .length = 16, .lkey = mr->lkey };
	struct ibv_recv_wr r = { .wr_id = 1, .sg_list = &s, .num_sge = 1 }, *rbad;
	struct ibv_send_wr w = { .wr_id = 2, .sg_list = &s, .num_sge = 1, .opcode = IBV_WR_SEND,
				 .send_flags = IBV_SEND_SIGNALED }, *wbad;
	*a = ibv_create_qp(pd, &qi);
	*b = ibv_create_qp(pd, &qi);
	if (!*a || !*b || conf_connect(*a, *b, 0)) return -1;
	return ibv_post_recv(*b, &r, &rbad) || ibv_post_send(*a, &w, &wbad);
}

static void on_alarm(int sig) { (void)sig; }

static struct ibv_cq *destroying;
static int destroy_rc = -1;
static void *destroy_it(void *arg) { (void)arg; destroy_rc = ibv_destroy_cq(destroying); return NULL; }

static void channels(void) {
	struct ibv_comp_channel *ch = ibv_create_comp_channel(ctx);
	struct ibv_cq *cq, *got;
	struct ibv_qp *a, *b;
	void *cq_ctx;
	check(ch != NULL && ch->fd >= 0, "ibv_create_comp_channel gives a file", "errno %d", errno);
	if (!ch) return;
	check(!readable(ch->fd, 0), "with no event its fd is not readable", "");
	cq = ibv_create_cq(ctx, 16, (void *)0x77, ch, 0);
	check(cq != NULL, "a CQ on the channel", "errno %d", errno);
	EXPECT_RC(ibv_destroy_comp_channel(ch), EBUSY, "a channel a CQ uses cannot go: EBUSY");
	nonblocking(ch->fd, 1);
	errno = 0;
	check(ibv_get_cq_event(ch, &got, &cq_ctx) == -1 && errno == EAGAIN, "O_NONBLOCK and no event: EAGAIN",
	      "errno %d", errno);
	nonblocking(ch->fd, 0);
	{ /* a signal interrupts a blocked wait */
		struct sigaction sa = { .sa_handler = on_alarm };
		struct itimerval t = { .it_value = { .tv_usec = 200000 } };
		sigaction(SIGALRM, &sa, NULL); /* no SA_RESTART */
		setitimer(ITIMER_REAL, &t, NULL);
		errno = 0;
		check(ibv_get_cq_event(ch, &got, &cq_ctx) == -1 && errno == EINTR, "a signal interrupts ibv_get_cq_event: EINTR",
		      "errno %d", errno);
	}
	EXPECT_RC(ibv_req_notify_cq(cq, 0), 0, "the CQ armed");
	EXPECT_RC(send_one(cq, &a, &b), 0, "a SEND posted between two QPs on it");
	check(readable(ch->fd, 10000), "its completion makes the channel's fd readable (poll)", "");
	EXPECT_RC(ibv_get_cq_event(ch, &got, &cq_ctx), 0, "ibv_get_cq_event");
	check(got == cq && cq_ctx == (void *)0x77, "names the CQ and its cq_context", "%p %p", (void *)got, cq_ctx);
	check(!readable(ch->fd, 0), "one event for one arming: the fd is not readable again", "");
	{ /* an event given out and not acknowledged holds the CQ's destroy until it is */
		pthread_t t;
		struct ibv_wc wc[4];
		while (ibv_poll_cq(cq, 4, wc) > 0) {}
		ibv_destroy_qp(a);
		ibv_destroy_qp(b);
		destroying = cq;
		pthread_create(&t, NULL, destroy_it, NULL);
		usleep(200000);
		check(destroy_rc == -1, "ibv_destroy_cq waits while its event is not acknowledged", "returned %d", destroy_rc);
		ibv_ack_cq_events(cq, 1);
		pthread_join(t, NULL);
		check(destroy_rc == 0, "and returns 0 once it is", "returned %d", destroy_rc);
	}
	/* an event not yet read when its CQ is destroyed is dropped */
	cq = ibv_create_cq(ctx, 16, NULL, ch, 0);
	EXPECT_RC(ibv_req_notify_cq(cq, 0), 0, "a second CQ armed");
	EXPECT_RC(send_one(cq, &a, &b), 0, "a SEND on it");
	check(readable(ch->fd, 10000), "its event is ready", "");
	ibv_destroy_qp(a);
	ibv_destroy_qp(b);
	EXPECT_RC(ibv_destroy_cq(cq), 0, "the CQ destroyed with its event unread");
	nonblocking(ch->fd, 1);
	errno = 0;
	check(ibv_get_cq_event(ch, &got, &cq_ctx) == -1 && errno == EAGAIN,
	      "the destroyed CQ's event is dropped, not handed out", "errno %d", errno);
	{ /* a CQ from ibv_create_cq_ex holds the channel once too, and lets it go when destroyed */
		struct ibv_cq_init_attr_ex xa = { .cqe = 4, .channel = ch, .wc_flags = IBV_WC_STANDARD_FLAGS };
		struct ibv_cq_ex *x = ibv_create_cq_ex(ctx, &xa);
		check(x != NULL, "ibv_create_cq_ex on the channel", "errno %d", errno);
		if (x) {
			EXPECT_RC(ibv_destroy_comp_channel(ch), EBUSY, "the channel it uses cannot go: EBUSY");
			EXPECT_RC(ibv_destroy_cq(ibv_cq_ex_to_cq(x)), 0, "the extended CQ destroyed");
		}
	}
	EXPECT_RC(ibv_destroy_comp_channel(ch), 0, "ibv_destroy_comp_channel");
}

static void async_file(void) {
	struct ibv_cq *cq = ibv_create_cq(ctx, 1, NULL, NULL, 0);
	struct ibv_qp *a, *b;
	struct ibv_async_event ev;
	int seen_cq = 0;
	nonblocking(ctx->async_fd, 1);
	errno = 0;
	check(ibv_get_async_event(ctx, &ev) == -1 && errno == EAGAIN, "O_NONBLOCK async fd with no event: EAGAIN",
	      "errno %d", errno);
	nonblocking(ctx->async_fd, 0);
	check(!readable(ctx->async_fd, 0), "the async fd is not readable with no event", "");
	/* overflow a one-entry CQ (it holds 1 or a few): a burst of completions and nobody polling */
	EXPECT_RC(send_one(cq, &a, &b), 0, "traffic on a tiny CQ");
	for (int i = 0; i < 8; i++) {
		struct ibv_sge s = { .addr = (uintptr_t)buf, .length = 16, .lkey = mr->lkey };
		struct ibv_send_wr w = { .wr_id = 3, .sg_list = &s, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
					 .send_flags = IBV_SEND_SIGNALED }, *bad;
		w.wr.rdma.remote_addr = (uintptr_t)buf + 4096;
		w.wr.rdma.rkey = mr->rkey;
		ibv_post_send(a, &w, &bad);
	}
	check(readable(ctx->async_fd, 10000), "the overflow makes the async fd readable (poll)", "");
	while (readable(ctx->async_fd, 500)) {
		if (ibv_get_async_event(ctx, &ev)) break;
		if (ev.event_type == IBV_EVENT_CQ_ERR && ev.element.cq == cq) seen_cq = 1;
		ibv_ack_async_event(&ev);
	}
	check(seen_cq, "ibv_get_async_event gives CQ_ERR naming the CQ", "");
	ibv_destroy_qp(a);
	ibv_destroy_qp(b);
	EXPECT_RC(ibv_destroy_cq(cq), 0, "every event acknowledged: the CQ goes");
}

int main(void) {
	ctx = conf_open();
	pd = ibv_alloc_pd(ctx);
	mr = pd ? ibv_reg_mr(pd, buf, sizeof buf, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE) : NULL;
	check(mr != NULL, "a PD and an MR", "errno %d", errno);
	if (!mr) return conf_end();
	channels();
	async_file();
	ibv_dereg_mr(mr);
	EXPECT_RC(ibv_dealloc_pd(pd), 0, "everything released");
	ibv_close_device(ctx);
	return conf_end();
}
