/*
 * A server that takes its time between reading a connection request and accepting it, as Ceph's monitor does in its
 * RDMA CM mode (docs/attach.md R16), and the client that connects to it.
 *
 *   slow-accept server PORT MODE     MODE "slow": after the CONNECT_REQUEST, a helper thread sleeps 200 ms of wall
 *                                    time while the main thread waits for it, then 1 MiB is registered, the QP made
 *                                    and the request accepted; the client's message is received and printed.
 *                                    MODE "never": it holds the request unanswered for 60 s of wall time.
 *   slow-accept client HOST PORT     connects, SENDs a message and prints "sent"; on any other event than
 *                                    ESTABLISHED prints it with its status and ends 1.
 *
 * All the while a thread of the server polls a CQ of its own that never gets a completion (an event loop's dispatcher):
 * simulated time may move under it, but it must not run on to the client's REQ timeout while the answer is owed.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <netdb.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#define MSG_BYTES 64

static volatile int done;

static void die(const char *what)
{
	fprintf(stderr, "slow-accept: %s: %s\n", what, strerror(errno));
	exit(2);
}

/* The next event on the channel, which must be of type want; its id (the new one for a CONNECT_REQUEST). */
static struct rdma_cm_id *expect(struct rdma_event_channel *ch, enum rdma_cm_event_type want)
{
	struct rdma_cm_event *ev;
	struct rdma_cm_id *id;

	if (rdma_get_cm_event(ch, &ev))
		die("rdma_get_cm_event");
	if (ev->event != want) {
		printf("event %s, status %d, where %s was due\n", rdma_event_str(ev->event), ev->status,
		       rdma_event_str(want));
		exit(1);
	}
	id = ev->id;
	rdma_ack_cm_event(ev);
	return id;
}

static void *poll_idle(void *arg)
{
	struct ibv_cq *cq = arg;
	struct ibv_wc wc;

	while (!done)
		if (ibv_poll_cq(cq, 1, &wc) < 0)
			die("ibv_poll_cq");
	return NULL;
}

static void *nap(void *arg)
{
	struct timespec t = { .tv_sec = 0, .tv_nsec = 200 * 1000 * 1000 };

	(void)arg;
	nanosleep(&t, NULL);
	return NULL;
}

static void wait_wc(struct ibv_cq *cq, const char *what)
{
	struct ibv_wc wc;
	int n;

	while ((n = ibv_poll_cq(cq, 1, &wc)) == 0)
		;
	if (n < 0 || wc.status != IBV_WC_SUCCESS) {
		printf("%s: completion status %s\n", what, n < 0 ? "poll failed" : ibv_wc_status_str(wc.status));
		exit(1);
	}
}

static struct ibv_qp_init_attr qp_attr(struct ibv_cq *cq)
{
	struct ibv_qp_init_attr a = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1 },
	};
	return a;
}

static int server(const char *port, const char *mode)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(atoi(port)) };
	struct rdma_cm_id *listener, *id;
	struct ibv_context **devs;
	struct ibv_pd *pd;
	struct ibv_cq *idle_cq, *cq;
	struct ibv_mr *mr;
	struct ibv_qp_init_attr attr;
	struct ibv_sge sge;
	struct ibv_recv_wr wr = { .sg_list = &sge, .num_sge = 1 }, *bad;
	pthread_t poller, helper;
	char *buf;

	devs = rdma_get_devices(NULL);
	if (!ch || !devs || !devs[0])
		die("rdma_get_devices");
	pd = ibv_alloc_pd(devs[0]);
	idle_cq = ibv_create_cq(devs[0], 4, NULL, NULL, 0);
	cq = ibv_create_cq(devs[0], 8, NULL, NULL, 0);
	if (!pd || !idle_cq || !cq)
		die("ibv_alloc_pd/ibv_create_cq");
	if (rdma_create_id(ch, &listener, NULL, RDMA_PS_TCP) || rdma_bind_addr(listener, (struct sockaddr *)&sin) ||
	    rdma_listen(listener, 1))
		die("listen");
	if (pthread_create(&poller, NULL, poll_idle, idle_cq))
		die("pthread_create");
	id = expect(ch, RDMA_CM_EVENT_CONNECT_REQUEST);
	if (!strcmp(mode, "never")) {
		sleep(60);
		return 0;
	}
	/* every thread asleep for a while between the request and the answer, the poller in its verb */
	if (pthread_create(&helper, NULL, nap, NULL) || pthread_join(helper, NULL))
		die("helper thread");
	buf = calloc(1, 1 << 20);
	mr = buf ? ibv_reg_mr(pd, buf, 1 << 20, IBV_ACCESS_LOCAL_WRITE) : NULL;
	if (!mr)
		die("ibv_reg_mr");
	attr = qp_attr(cq);
	if (id->verbs != devs[0] || rdma_create_qp(id, pd, &attr))
		die("rdma_create_qp");
	sge = (struct ibv_sge){ .addr = (uintptr_t)buf, .length = MSG_BYTES, .lkey = mr->lkey };
	if (ibv_post_recv(id->qp, &wr, &bad))
		die("ibv_post_recv");
	if (rdma_accept(id, NULL))
		die("rdma_accept");
	expect(ch, RDMA_CM_EVENT_ESTABLISHED);
	wait_wc(cq, "receive");
	printf("received: %.*s\n", MSG_BYTES, buf);
	done = 1;
	pthread_join(poller, NULL);
	expect(ch, RDMA_CM_EVENT_DISCONNECTED);
	rdma_disconnect(id);
	rdma_destroy_qp(id);
	ibv_dereg_mr(mr);
	rdma_destroy_id(id);
	rdma_destroy_id(listener);
	return 0;
}

static int client(const char *host, const char *port)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct rdma_addrinfo hints = { .ai_port_space = RDMA_PS_TCP }, *ai;
	struct rdma_conn_param param = { .retry_count = 7, .rnr_retry_count = 7 };
	struct rdma_cm_id *id;
	struct ibv_qp_init_attr attr;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	static char msg[MSG_BYTES] = "hello after a slow accept";
	struct ibv_sge sge;
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;

	if (!ch || rdma_getaddrinfo(host, port, &hints, &ai) || rdma_create_id(ch, &id, NULL, RDMA_PS_TCP))
		die("rdma_getaddrinfo/rdma_create_id");
	if (rdma_resolve_addr(id, NULL, ai->ai_dst_addr, 2000))
		die("rdma_resolve_addr");
	expect(ch, RDMA_CM_EVENT_ADDR_RESOLVED);
	if (rdma_resolve_route(id, 2000))
		die("rdma_resolve_route");
	expect(ch, RDMA_CM_EVENT_ROUTE_RESOLVED);
	pd = ibv_alloc_pd(id->verbs);
	cq = pd ? ibv_create_cq(id->verbs, 8, NULL, NULL, 0) : NULL;
	mr = cq ? ibv_reg_mr(pd, msg, sizeof(msg), 0) : NULL;
	attr = qp_attr(cq);
	if (!mr || rdma_create_qp(id, pd, &attr))
		die("client resources");
	if (rdma_connect(id, &param))
		die("rdma_connect");
	expect(ch, RDMA_CM_EVENT_ESTABLISHED);
	sge = (struct ibv_sge){ .addr = (uintptr_t)msg, .length = sizeof(msg), .lkey = mr->lkey };
	if (ibv_post_send(id->qp, &wr, &bad))
		die("ibv_post_send");
	wait_wc(cq, "send");
	printf("sent\n");
	rdma_disconnect(id);
	expect(ch, RDMA_CM_EVENT_DISCONNECTED);
	rdma_destroy_qp(id);
	ibv_dereg_mr(mr);
	rdma_destroy_id(id);
	rdma_freeaddrinfo(ai);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "server"))
		return server(argv[2], argv[3]);
	if (argc == 4 && !strcmp(argv[1], "client"))
		return client(argv[2], argv[3]);
	fprintf(stderr, "usage: slow-accept server PORT slow|never | slow-accept client HOST PORT\n");
	return 2;
}
