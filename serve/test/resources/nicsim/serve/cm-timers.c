/*
 * The RDMA CM's timers, as a program sees them: an address no node answers for, and a connection reply never
 * acknowledged. Run with attach --sim-time: the times printed are simulated ones.
 *
 *   cm-timers unreached ADDR TIMEOUT_MS THEN
 *                                         rdma_resolve_addr to ADDR (an IPv4 address) with TIMEOUT_MS; prints
 *                                         "resolve_addr failed: errno N" if it fails at once, else the event that
 *                                         comes, its status and the ms it took; then, if the address did not
 *                                         resolve, resolves address THEN on the same identifier (it is only bound
 *                                         again) and prints that event.
 *   cm-timers server PORT                 accepts one connection request and prints the event that follows the
 *                                         accept ("established" or the event and its status) and the ms it took.
 *   cm-timers holder HOST PORT            connects without a QP, so librdmacm hands it the reply (CONNECT_RESPONSE)
 *                                         instead of answering it: prints "holding the reply" and never sends the
 *                                         RTU (sleeps 300 s of wall time).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <netdb.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

static void die(const char *what)
{
	fprintf(stderr, "cm-timers: %s: %s\n", what, strerror(errno));
	exit(2);
}

static long long now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000LL + t.tv_nsec / 1000000;
}

/* The next event on the channel, printed with its status and the ms since start; its type. */
static enum rdma_cm_event_type next(struct rdma_event_channel *ch, long long start, struct rdma_cm_id **id)
{
	struct rdma_cm_event *ev;
	enum rdma_cm_event_type type;

	if (rdma_get_cm_event(ch, &ev))
		die("rdma_get_cm_event");
	type = ev->event;
	printf("event %s, status %d, after %lld ms\n", rdma_event_str(type), ev->status, now_ms() - start);
	fflush(stdout);
	if (id)
		*id = ev->id;
	rdma_ack_cm_event(ev);
	return type;
}

static int resolve(struct rdma_cm_id *id, const char *addr, int timeout_ms)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(7190) };

	if (inet_pton(AF_INET, addr, &sin.sin_addr) != 1)
		die("inet_pton");
	if (rdma_resolve_addr(id, NULL, (struct sockaddr *)&sin, timeout_ms)) {
		printf("resolve_addr failed: errno %d (%s)\n", errno, strerror(errno));
		return -1;
	}
	return 0;
}

static int unreached(const char *addr, const char *timeout, const char *then)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct ibv_context **devs = rdma_get_devices(NULL);
	struct rdma_cm_id *id;
	long long start;

	/* the device open, so that the clock reads simulated time (attach --sim-time) */
	if (!ch || !devs || !devs[0] || rdma_create_id(ch, &id, NULL, RDMA_PS_TCP))
		die("rdma_get_devices/rdma_create_id");
	start = now_ms();
	if (resolve(id, addr, atoi(timeout)) || next(ch, start, NULL) == RDMA_CM_EVENT_ADDR_RESOLVED)
		return 0;
	start = now_ms();
	if (!resolve(id, then, 2000))
		next(ch, start, NULL);
	rdma_destroy_id(id);
	rdma_destroy_event_channel(ch);
	rdma_free_devices(devs);
	return 0;
}

static int server(const char *port)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(atoi(port)) };
	struct rdma_cm_id *listener, *id;
	struct ibv_qp_init_attr attr = { .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1, .max_send_sge = 1, .max_recv_sge = 1 } };
	long long start;

	if (!ch || rdma_create_id(ch, &listener, NULL, RDMA_PS_TCP) || rdma_bind_addr(listener, (struct sockaddr *)&sin)
	    || rdma_listen(listener, 1))
		die("listen");
	if (next(ch, now_ms(), &id) != RDMA_CM_EVENT_CONNECT_REQUEST)
		return 1;
	if (rdma_create_qp(id, NULL, &attr))
		die("rdma_create_qp");
	start = now_ms();
	if (rdma_accept(id, NULL))
		die("rdma_accept");
	if (next(ch, start, NULL) != RDMA_CM_EVENT_ESTABLISHED)
		return 1;
	printf("established\n");
	return 0;
}

static int holder(const char *host, const char *port)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct rdma_addrinfo hints = { .ai_port_space = RDMA_PS_TCP }, *ai;
	struct rdma_conn_param param = { .qp_num = 0x100, .retry_count = 7, .rnr_retry_count = 7 };
	struct rdma_cm_id *id;

	if (!ch || rdma_getaddrinfo(host, port, &hints, &ai) || rdma_create_id(ch, &id, NULL, RDMA_PS_TCP))
		die("rdma_getaddrinfo/rdma_create_id");
	if (rdma_resolve_addr(id, NULL, ai->ai_dst_addr, 2000) || next(ch, now_ms(), NULL) != RDMA_CM_EVENT_ADDR_RESOLVED)
		die("rdma_resolve_addr");
	if (rdma_resolve_route(id, 2000) || next(ch, now_ms(), NULL) != RDMA_CM_EVENT_ROUTE_RESOLVED)
		die("rdma_resolve_route");
	if (rdma_connect(id, &param))
		die("rdma_connect");
	if (next(ch, now_ms(), NULL) != RDMA_CM_EVENT_CONNECT_RESPONSE)
		return 1;
	printf("holding the reply\n");
	fflush(stdout);
	sleep(300);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 5 && !strcmp(argv[1], "unreached"))
		return unreached(argv[2], argv[3], argv[4]);
	if (argc == 3 && !strcmp(argv[1], "server"))
		return server(argv[2]);
	if (argc == 4 && !strcmp(argv[1], "holder"))
		return holder(argv[2], argv[3]);
	fprintf(stderr, "usage: cm-timers unreached ADDR TIMEOUT_MS THEN | server PORT | holder HOST PORT\n");
	return 2;
}
