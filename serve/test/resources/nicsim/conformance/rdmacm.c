/*
 * RDMA CM (librdmacm), checked against rdma_cm(7), rdma_bind_addr(3), rdma_listen(3),
 * rdma_resolve_addr(3), rdma_connect(3), rdma_accept(3), rdma_reject(3), rdma_disconnect(3),
 * rdma_get_cm_event(3) and rdma_create_event_channel(3), error cases included: an event channel is
 * a file poll(2) sees ready exactly when an event waits and that O_NONBLOCK makes EAGAIN; bind and
 * listen refuse addresses that are not this node's or ports in use; connecting before the route
 * (once the address is: librdmacm itself needs the device), accepting nothing, disconnecting what
 * is not connected are EINVAL; a request to a port no one listens on is rejected; a consumer's reject
 * reaches the other side with its private data; an accepted connection carries data both ways and both
 * sides see it close; RDMA_OPTION_ID_AFONLY lets 0.0.0.0 and [::] share a port; AF_IB addresses
 * (rdma_cm(7)'s struct sockaddr_ib: a GID and a service ID) bind, listen and are reached as the kernel's
 * RDMA CM takes them, and one of a GID no port has fails at its route; the rdma_cm file's QUERY refuses
 * an unknown option and too little room. Both sides are identifiers
 * of this one program on its one node, connected through the adapter's port.
 */
#include "conf.h"
#include <fcntl.h>
#include <poll.h>
#include <arpa/inet.h>
#include <rdma/rdma_cma.h>
#include <infiniband/ib.h>

static struct rdma_event_channel *ch;

/* The next event, which must be want (for id, when id is given); NULL otherwise. */
static struct rdma_cm_event *expect_event(enum rdma_cm_event_type want, struct rdma_cm_id *id, const char *what) {
	struct rdma_cm_event *e = NULL;
	int rc = rdma_get_cm_event(ch, &e);
	int good = !rc && e->event == want && (!id || e->id == id);
	check(good, what, "rc %d errno %d, event %s (status %d), wanted %s", rc, errno, e ? rdma_event_str(e->event) : "none",
	      e ? e->status : 0, rdma_event_str(want));
	if (!good && e) { rdma_ack_cm_event(e); return NULL; }
	return e;
}

static struct sockaddr_in addr(const char *ip, int port) {
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
	inet_pton(AF_INET, ip, &a.sin_addr);
	return a;
}

static int ready(int fd) {
	struct pollfd p = { .fd = fd, .events = POLLIN };
	return poll(&p, 1, 0) == 1 && (p.revents & POLLIN);
}

/* A QP on id for the connection: RC, 4 sends and receives. */
static struct ibv_qp *qp_on(struct rdma_cm_id *id, struct ibv_pd *pd, struct ibv_cq *cq) {
	struct ibv_qp_init_attr a = { .send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1 } };
	return rdma_create_qp(id, pd, &a) ? NULL : id->qp;
}

static int await_wc(struct ibv_cq *cq, struct ibv_wc *wc) {
	for (int i = 0; i < 1000000; i++) {
		int n = ibv_poll_cq(cq, 1, wc);
		if (n) return n == 1 && wc->status == IBV_WC_SUCCESS;
	}
	return 0;
}

/* A request from a new identifier to dst, which the listener want must get (then it is rejected). */
static void request_reaches(struct sockaddr *dst, struct rdma_cm_id *want, const char *what) {
	struct rdma_cm_id *active;
	struct rdma_cm_event *e;
	struct rdma_conn_param param = { .retry_count = 7, .rnr_retry_count = 7 };
	EXPECT_RC(rdma_create_id(ch, &active, NULL, RDMA_PS_TCP), 0, "rdma_create_id, a client");
	EXPECT_RC(rdma_resolve_addr(active, NULL, dst, 1000), 0, "rdma_resolve_addr to the listener's port");
	if ((e = expect_event(RDMA_CM_EVENT_ADDR_RESOLVED, active, "RDMA_CM_EVENT_ADDR_RESOLVED"))) rdma_ack_cm_event(e);
	EXPECT_RC(rdma_resolve_route(active, 1000), 0, "rdma_resolve_route");
	if ((e = expect_event(RDMA_CM_EVENT_ROUTE_RESOLVED, active, "RDMA_CM_EVENT_ROUTE_RESOLVED"))) rdma_ack_cm_event(e);
	EXPECT_RC(rdma_connect(active, &param), 0, "rdma_connect to the listener's port");
	if ((e = expect_event(RDMA_CM_EVENT_CONNECT_REQUEST, NULL, what))) {
		check(e->listen_id == want, what, "listen_id %p, wanted %p", (void *)e->listen_id, (void *)want);
		struct rdma_cm_id *passive = e->id;
		rdma_ack_cm_event(e);
		EXPECT_RC(rdma_reject(passive, NULL, 0), 0, "rdma_reject");
		if ((e = expect_event(RDMA_CM_EVENT_REJECTED, active, "RDMA_CM_EVENT_REJECTED"))) rdma_ack_cm_event(e);
		rdma_destroy_id(passive);
	}
	rdma_destroy_id(active);
}

/*
 * RDMA_OPTION_ID_AFONLY (rdma_set_option(3)), as tgt's iSER portal uses it: 0.0.0.0 and [::] on one port,
 * each its family's only, both bind, and each takes its own family's requests. An IPv6 bind without it
 * covers IPv4 too (Linux's bindv6only is 0): EADDRINUSE beside 0.0.0.0. Set after the bind: EINVAL.
 */
static void afonly(void) {
	struct rdma_cm_id *v4, *v6, *both;
	int on = 1;
	struct sockaddr_in any4 = addr("0.0.0.0", 0);
	struct sockaddr_in6 any6 = { .sin6_family = AF_INET6, .sin6_addr = IN6ADDR_ANY_INIT }, mapped = any6;
	EXPECT_RC(rdma_create_id(ch, &v4, NULL, RDMA_PS_TCP), 0, "rdma_create_id, an IPv4 listener");
	EXPECT_RC(rdma_create_id(ch, &v6, NULL, RDMA_PS_TCP), 0, "rdma_create_id, an IPv6 listener");
	EXPECT_RC(rdma_create_id(ch, &both, NULL, RDMA_PS_TCP), 0, "rdma_create_id, an IPv6 one without AFONLY");
	EXPECT_RC(rdma_set_option(v4, RDMA_OPTION_ID, RDMA_OPTION_ID_AFONLY, &on, sizeof on), 0,
		  "rdma_set_option RDMA_OPTION_ID_AFONLY (IPv4 identifier)");
	EXPECT_RC(rdma_set_option(v6, RDMA_OPTION_ID, RDMA_OPTION_ID_AFONLY, &on, sizeof on), 0,
		  "rdma_set_option RDMA_OPTION_ID_AFONLY (IPv6 identifier)");
	EXPECT_RC(rdma_bind_addr(v4, (struct sockaddr *)&any4), 0, "rdma_bind_addr 0.0.0.0, AFONLY");
	int port = ntohs(rdma_get_src_port(v4));
	any6.sin6_port = htons(port);
	errno = 0;
	check(rdma_bind_addr(both, (struct sockaddr *)&any6) == -1 && errno == EADDRINUSE,
	      "rdma_bind_addr [::] without AFONLY where 0.0.0.0 is bound: EADDRINUSE", "errno %d", errno);
	EXPECT_RC(rdma_bind_addr(v6, (struct sockaddr *)&any6), 0, "rdma_bind_addr [::], AFONLY, on 0.0.0.0's port");
	errno = 0;
	check(rdma_set_option(v6, RDMA_OPTION_ID, RDMA_OPTION_ID_AFONLY, &on, sizeof on) == -1 && errno == EINVAL,
	      "RDMA_OPTION_ID_AFONLY after the bind: EINVAL", "errno %d", errno);
	EXPECT_RC(rdma_listen(v4, 4), 0, "rdma_listen on 0.0.0.0, AFONLY");
	EXPECT_RC(rdma_listen(v6, 4), 0, "rdma_listen on [::], AFONLY, the same port");
	struct sockaddr_in to4 = addr("127.77.0.1", port);
	request_reaches((struct sockaddr *)&to4, v4, "an IPv4 request reaches the IPv4 listener");
	mapped.sin6_port = htons(port);
	inet_pton(AF_INET6, "::ffff:127.77.0.1", &mapped.sin6_addr);
	request_reaches((struct sockaddr *)&mapped, v6, "an IPv6 request reaches the IPv6 listener");
	rdma_destroy_id(both);
	rdma_destroy_id(v6);
	rdma_destroy_id(v4);
}

/* An AF_IB address: gid, and the service ID of port space ps (RDMA_IB_IP_PS_*) and port, every bit of it given. */
static struct sockaddr_ib ib_addr(const union ibv_gid *gid, uint64_t ps, int port) {
	struct sockaddr_ib a = { .sib_family = AF_IB, .sib_pkey = htobe16(0xffff),
		.sib_sid = htobe64(ps | (uint64_t)port), .sib_sid_mask = htobe64(~0ULL) };
	if (gid) memcpy(&a.sib_addr, gid->raw, 16);
	return a;
}

/*
 * A GID no port has: its address resolves at once (an AF_IB address is its GID, as the kernel's
 * cma_resolve_ib_addr takes it) and its route fails (the SA has no path to it: ROUTE_ERROR with EINVAL,
 * as ib_sa passes on an SA error status), the address still resolved; nothing waits for a timeout.
 */
static void unknown_gid_route(const struct sockaddr_ib *nowhere) {
	struct rdma_cm_id *lost;
	struct rdma_cm_event *e;
	struct sockaddr_ib to = *nowhere;
	to.sib_sid = htobe64(RDMA_IB_IP_PS_TCP | 7000);
	EXPECT_RC(rdma_create_id(ch, &lost, NULL, RDMA_PS_TCP), 0, "rdma_create_id, towards a GID no port has");
	EXPECT_RC(rdma_resolve_addr(lost, NULL, (struct sockaddr *)&to, 1000), 0, "rdma_resolve_addr of that GID");
	if ((e = expect_event(RDMA_CM_EVENT_ADDR_RESOLVED, lost, "its address resolves (AF_IB: the GID)")))
		rdma_ack_cm_event(e);
	EXPECT_RC(rdma_resolve_route(lost, 1000), 0, "rdma_resolve_route towards it");
	if ((e = expect_event(RDMA_CM_EVENT_ROUTE_ERROR, lost, "RDMA_CM_EVENT_ROUTE_ERROR: no path to it"))) {
		check(e->status == -EINVAL, "the route error's status is EINVAL", "status %d", e->status);
		rdma_ack_cm_event(e);
	}
	rdma_destroy_id(lost);
}

/*
 * AF_IB (rdma_cm(7)): an identifier bound to the port's GID has the device and gives back its GID and the service
 * ID of its port space and port; that port is taken for IP binds of the port space too; a GID no port has is ENODEV;
 * a service ID outside the identifier's port space EPROTONOSUPPORT; a request to the GID reaches its listener. An IP
 * identifier's route says the port's GID too (librdmacm asks QUERY's GID option).
 */
static void af_ib(void) {
	struct rdma_cm_id *ip, *ib, *udp, *nowhere;
	struct sockaddr_in mine = addr("127.77.0.1", 0);
	union ibv_gid gid, none = { .raw = { 0xfe, 0x80, [15] = 0x99 } };
	EXPECT_RC(rdma_create_id(ch, &ip, NULL, RDMA_PS_TCP), 0, "rdma_create_id, an IP identifier");
	EXPECT_RC(rdma_bind_addr(ip, (struct sockaddr *)&mine), 0, "rdma_bind_addr 127.77.0.1");
	if (!ip->verbs || ibv_query_gid(ip->verbs, ip->port_num, 0, &gid)) {
		check(0, "the bound IP identifier's port has a GID", "verbs %p errno %d", (void *)ip->verbs, errno);
		return;
	}
	check(!memcmp(&ip->route.addr.addr.ibaddr.sgid, &gid, 16), "an IP identifier's source GID is its port's",
	      "another GID");
	check(rdma_get_local_addr(ip)->sa_family == AF_INET, "an IP identifier's address stays AF_INET", "family %d",
	      rdma_get_local_addr(ip)->sa_family);
	EXPECT_RC(rdma_create_id(ch, &ib, NULL, RDMA_PS_TCP), 0, "rdma_create_id, an AF_IB identifier");
	struct sockaddr_ib own = ib_addr(&gid, RDMA_IB_IP_PS_TCP, 0);
	EXPECT_RC(rdma_bind_addr(ib, (struct sockaddr *)&own), 0, "rdma_bind_addr of the port's GID, TCP's port 0");
	struct sockaddr_ib *got = (struct sockaddr_ib *)rdma_get_local_addr(ib);
	int port = ntohs(rdma_get_src_port(ib));
	check(ib->verbs != NULL && got->sib_family == AF_IB && !memcmp(&got->sib_addr, &gid, 16),
	      "the AF_IB identifier has the device, its address the port's GID", "verbs %p family %d",
	      (void *)ib->verbs, got->sib_family);
	check(port != 0 && be64toh(got->sib_sid) == (RDMA_IB_IP_PS_TCP | (uint64_t)port),
	      "port 0 takes an ephemeral port, in the service ID with TCP's port space", "port %d sid 0x%" PRIx64, port,
	      be64toh(got->sib_sid));
	struct sockaddr_in same = addr("127.77.0.1", port);
	EXPECT_RC(rdma_create_id(ch, &nowhere, NULL, RDMA_PS_TCP), 0, "rdma_create_id, for binds that fail");
	errno = 0;
	check(rdma_bind_addr(nowhere, (struct sockaddr *)&same) == -1 && errno == EADDRINUSE,
	      "an IP bind to the AF_IB identifier's TCP port: EADDRINUSE", "errno %d", errno);
	struct sockaddr_ib stranger = ib_addr(&none, RDMA_IB_IP_PS_TCP, 0);
	errno = 0;
	check(rdma_bind_addr(nowhere, (struct sockaddr *)&stranger) == -1 && errno == ENODEV,
	      "rdma_bind_addr of a GID no port has: ENODEV", "errno %d", errno);
	EXPECT_RC(rdma_create_id(ch, &udp, NULL, RDMA_PS_UDP), 0, "rdma_create_id RDMA_PS_UDP");
	errno = 0;
	check(rdma_bind_addr(udp, (struct sockaddr *)&own) == -1 && errno == EPROTONOSUPPORT,
	      "a UDP identifier bound to a TCP service ID: EPROTONOSUPPORT", "errno %d", errno);
	EXPECT_RC(rdma_listen(ib, 4), 0, "rdma_listen on the port's GID");
	struct sockaddr_ib to = ib_addr(&gid, RDMA_IB_IP_PS_TCP, port);
	request_reaches((struct sockaddr *)&to, ib, "an AF_IB request reaches the AF_IB listener");
	unknown_gid_route(&stranger);
	rdma_destroy_id(udp);
	rdma_destroy_id(nowhere);
	rdma_destroy_id(ib);
	rdma_destroy_id(ip);
}

/*
 * The rdma_cm file's commands this program writes by hand, as the kernel lays them out (struct rdma_ucm_* of
 * <rdma/rdma_user_cm.h>, which cannot be included beside <rdma/rdma_cma.h>: their enums collide).
 */
enum { UCM_CREATE_ID = 0, UCM_DESTROY_ID = 1, UCM_QUERY = 19, UCM_BIND = 20, UCM_QUERY_ADDR = 0 };
struct ucm_hdr { uint32_t cmd; uint16_t in, out; };
struct ucm_create_id { uint64_t uid, response; uint16_t ps; uint8_t qp_type, reserved[5]; };
struct ucm_destroy_id { uint64_t response; uint32_t id, reserved; };
struct ucm_bind { uint32_t id; uint16_t addr_size, reserved; struct sockaddr_storage addr; };
struct ucm_query { uint64_t response; uint32_t id, option; };
/* struct rdma_ucm_query_addr_resp: node GUID, port, P_Key, the addresses' sizes, the addresses, ibdev_index */
struct ucm_query_addr_resp {
	uint64_t node_guid;
	uint8_t port_num, reserved;
	uint16_t pkey, src_size, dst_size;
	struct sockaddr_storage src_addr, dst_addr;
	uint32_t ibdev_index, reserved1;
};

/* A command written to the rdma_cm file as librdmacm writes it: its header, then its body. */
static ssize_t ucma(int fd, uint32_t cmd, const void *body, uint16_t in, uint16_t out) {
	uint8_t buf[sizeof(struct ucm_hdr) + 256];
	struct ucm_hdr h = { .cmd = cmd, .in = in, .out = out };
	memcpy(buf, &h, sizeof h);
	memcpy(buf + sizeof h, body, in);
	return write(fd, buf, sizeof h + in);
}

/*
 * ucma's QUERY (the rdma_cm file's command librdmacm asks ADDR, PATH and GID with, always with room for the
 * answer): an option the kernel has not is ENOSYS and less room than the answer's fixed part ENOSPC, as
 * ucma_query answers; ADDR with room gives the identifier's address. Written by hand on an identifier made
 * and bound the same way, on a channel of its own.
 */
static void query_errors(void) {
	struct rdma_event_channel *own = rdma_create_event_channel();
	uint32_t made = ~0u, gone;
	struct ucm_query_addr_resp got;
	struct sockaddr_in mine = addr("127.77.0.1", 0);
	check(own != NULL, "rdma_create_event_channel, for commands written by hand", "errno %d", errno);
	if (!own) return;
	struct ucm_create_id c = { .response = (uintptr_t)&made, .ps = RDMA_PS_TCP, .qp_type = IBV_QPT_RC };
	check(ucma(own->fd, UCM_CREATE_ID, &c, sizeof c, sizeof made) > 0 && made != ~0u, "CREATE_ID written by hand",
	      "errno %d", errno);
	struct ucm_bind b = { .id = made, .addr_size = sizeof mine };
	memcpy(&b.addr, &mine, sizeof mine);
	check(ucma(own->fd, UCM_BIND, &b, sizeof b, 0) > 0, "BIND to 127.77.0.1", "errno %d", errno);
	struct ucm_query q = { .response = (uintptr_t)&got, .id = made, .option = 7 };
	errno = 0;
	check(ucma(own->fd, UCM_QUERY, &q, sizeof q, sizeof got) == -1 && errno == ENOSYS,
	      "QUERY of an option the kernel has not (7): ENOSYS", "errno %d", errno);
	q.option = UCM_QUERY_ADDR;
	errno = 0;
	check(ucma(own->fd, UCM_QUERY, &q, sizeof q, 8) == -1 && errno == ENOSPC,
	      "QUERY ADDR with 8 bytes of room: ENOSPC", "errno %d", errno);
	memset(&got, 0, sizeof got);
	check(ucma(own->fd, UCM_QUERY, &q, sizeof q, sizeof got) > 0 && got.src_size == sizeof mine
	      && ((struct sockaddr_in *)&got.src_addr)->sin_addr.s_addr == mine.sin_addr.s_addr,
	      "QUERY ADDR with room: the bound address", "errno %d, src_size %u", errno, got.src_size);
	struct ucm_destroy_id d = { .response = (uintptr_t)&gone, .id = made };
	check(ucma(own->fd, UCM_DESTROY_ID, &d, sizeof d, sizeof gone) > 0, "DESTROY_ID written by hand",
	      "errno %d", errno);
	rdma_destroy_event_channel(own);
}

int main(void) {
	struct rdma_cm_id *listener, *other, *active, *passive;
	struct rdma_cm_event *e;
	struct rdma_conn_param param = { .responder_resources = 1, .initiator_depth = 1, .retry_count = 7,
		.rnr_retry_count = 7 };
	struct sockaddr_in any = addr("0.0.0.0", 0), mine = addr("127.77.0.1", 0), far = addr("127.77.0.2", 0);
	char priv[56], seen[56];
	int flags;

	MUST(ch, rdma_create_event_channel(), "rdma_create_event_channel");
	check(!ready(ch->fd), "a new channel's file is not readable", "poll said POLLIN");
	flags = fcntl(ch->fd, F_GETFL);
	check(fcntl(ch->fd, F_SETFL, flags | O_NONBLOCK) == 0, "the channel's file takes O_NONBLOCK", "errno %d", errno);
	errno = 0;
	check(rdma_get_cm_event(ch, &e) == -1 && errno == EAGAIN, "rdma_get_cm_event with no event, O_NONBLOCK: EAGAIN",
	      "errno %d", errno);
	fcntl(ch->fd, F_SETFL, flags);

	EXPECT_RC(rdma_create_id(ch, &listener, NULL, RDMA_PS_TCP), 0, "rdma_create_id RDMA_PS_TCP");
	EXPECT_RC(rdma_create_id(ch, &other, NULL, RDMA_PS_TCP), 0, "rdma_create_id, a second one");
	EXPECT_RC(rdma_create_id(ch, &active, NULL, RDMA_PS_TCP), 0, "rdma_create_id, the active side");
	errno = 0;
	check(rdma_bind_addr(other, (struct sockaddr *)&far) == -1 && errno == EADDRNOTAVAIL,
	      "rdma_bind_addr to another node's address: EADDRNOTAVAIL", "errno %d", errno);
	EXPECT_RC(rdma_bind_addr(listener, (struct sockaddr *)&any), 0, "rdma_bind_addr to any address, port 0");
	int port = ntohs(rdma_get_src_port(listener));
	check(port != 0, "port 0 binds an ephemeral port", "rdma_get_src_port gave 0");
	struct sockaddr_in same = addr("127.77.0.1", port);
	errno = 0;
	check(rdma_bind_addr(other, (struct sockaddr *)&same) == -1 && errno == EADDRINUSE,
	      "rdma_bind_addr to a port bound on any address: EADDRINUSE", "errno %d", errno);
	EXPECT_RC(rdma_listen(listener, 4), 0, "rdma_listen");

	struct sockaddr_in outside = addr("192.0.2.1", port);
	errno = 0;
	check(rdma_resolve_addr(active, NULL, (struct sockaddr *)&outside, 1000) == -1 && errno == ENETUNREACH,
	      "rdma_resolve_addr outside the nodes' subnet: ENETUNREACH", "errno %d", errno);

	/* a port no one listens on: the peer's CM rejects the REQ (invalid service ID) */
	struct sockaddr_in nobody = addr("127.77.0.1", port + 1);
	EXPECT_RC(rdma_resolve_addr(active, (struct sockaddr *)&mine, (struct sockaddr *)&nobody, 1000), 0,
		  "rdma_resolve_addr to this node's address");
	check(ready(ch->fd), "the channel's file is readable once an event waits", "poll found nothing");
	if ((e = expect_event(RDMA_CM_EVENT_ADDR_RESOLVED, active, "RDMA_CM_EVENT_ADDR_RESOLVED"))) rdma_ack_cm_event(e);
	check(!ready(ch->fd), "the file is not readable once the event is taken", "poll said POLLIN");
	check(active->verbs != NULL, "the resolved identifier has the device's context", "verbs is NULL");
	errno = 0;
	check(rdma_connect(active, &param) == -1 && errno == EINVAL, "rdma_connect before the route is resolved: EINVAL",
	      "errno %d", errno);
	errno = 0;
	check(rdma_accept(active, &param) == -1 && errno == EINVAL, "rdma_accept with no request: EINVAL", "errno %d", errno);
	EXPECT_RC(rdma_resolve_route(active, 1000), 0, "rdma_resolve_route");
	if ((e = expect_event(RDMA_CM_EVENT_ROUTE_RESOLVED, active, "RDMA_CM_EVENT_ROUTE_RESOLVED"))) rdma_ack_cm_event(e);
	check(active->route.num_paths == 1, "the route has one path", "num_paths %d", active->route.num_paths);
	struct ibv_pd *pd = ibv_alloc_pd(active->verbs);
	struct ibv_cq *cq = ibv_create_cq(active->verbs, 16, NULL, NULL, 0);
	check(pd && cq && qp_on(active, pd, cq), "rdma_create_qp on the resolved identifier", "errno %d", errno);
	EXPECT_RC(rdma_connect(active, &param), 0, "rdma_connect to a port no one listens on");
	if ((e = expect_event(RDMA_CM_EVENT_REJECTED, active, "RDMA_CM_EVENT_REJECTED"))) {
		check(e->status == 8, "rejected for an invalid service ID (8)", "status %d", e->status);
		rdma_ack_cm_event(e);
	}
	rdma_destroy_qp(active);
	EXPECT_RC(rdma_destroy_id(active), 0, "rdma_destroy_id of the rejected identifier");

	/* a consumer's reject, with private data */
	EXPECT_RC(rdma_create_id(ch, &active, NULL, RDMA_PS_TCP), 0, "rdma_create_id, a new active side");
	EXPECT_RC(rdma_resolve_addr(active, NULL, (struct sockaddr *)&same, 1000), 0, "rdma_resolve_addr to the listener");
	if ((e = expect_event(RDMA_CM_EVENT_ADDR_RESOLVED, active, "RDMA_CM_EVENT_ADDR_RESOLVED"))) rdma_ack_cm_event(e);
	EXPECT_RC(rdma_resolve_route(active, 1000), 0, "rdma_resolve_route");
	if ((e = expect_event(RDMA_CM_EVENT_ROUTE_RESOLVED, active, "RDMA_CM_EVENT_ROUTE_RESOLVED"))) rdma_ack_cm_event(e);
	check(qp_on(active, pd, cq) != NULL, "rdma_create_qp", "errno %d", errno);
	for (int i = 0; i < 56; i++) priv[i] = (char)('a' + i % 26);
	param.private_data = priv;
	param.private_data_len = 57;
	errno = 0;
	check(rdma_connect(active, &param) == -1 && errno == EINVAL, "rdma_connect with 57 bytes of private data: EINVAL",
	      "errno %d", errno);
	param.private_data_len = 56;
	EXPECT_RC(rdma_connect(active, &param), 0, "rdma_connect with 56 bytes of private data");
	if ((e = expect_event(RDMA_CM_EVENT_CONNECT_REQUEST, NULL, "RDMA_CM_EVENT_CONNECT_REQUEST"))) {
		check(e->listen_id == listener, "the request names the listener", "listen_id %p", (void *)e->listen_id);
		check(e->param.conn.private_data_len >= 56 && !memcmp(e->param.conn.private_data, priv, 56),
		      "the request carries the private data", "len %d", e->param.conn.private_data_len);
		check(e->param.conn.qp_num == active->qp->qp_num, "the request names the active side's QP", "qp_num 0x%x",
		      e->param.conn.qp_num);
		passive = e->id;
		rdma_ack_cm_event(e);
		memcpy(seen, "refused by the passive side", 28);
		EXPECT_RC(rdma_reject(passive, seen, 28), 0, "rdma_reject with private data");
		if ((e = expect_event(RDMA_CM_EVENT_REJECTED, active, "RDMA_CM_EVENT_REJECTED"))) {
			check(e->status == 28 && e->param.conn.private_data_len >= 28
			      && !memcmp(e->param.conn.private_data, seen, 28), "the reject's reason (consumer, 28) and private data",
			      "status %d, len %d", e->status, e->param.conn.private_data_len);
			rdma_ack_cm_event(e);
		}
		EXPECT_RC(rdma_destroy_id(passive), 0, "rdma_destroy_id of the rejected request");
	}
	rdma_destroy_qp(active);
	rdma_destroy_id(active);

	/* accepted: data both ways, then both sides see the disconnect */
	EXPECT_RC(rdma_create_id(ch, &active, NULL, RDMA_PS_TCP), 0, "rdma_create_id, a third active side");
	EXPECT_RC(rdma_resolve_addr(active, NULL, (struct sockaddr *)&same, 1000), 0, "rdma_resolve_addr");
	if ((e = expect_event(RDMA_CM_EVENT_ADDR_RESOLVED, active, "RDMA_CM_EVENT_ADDR_RESOLVED"))) rdma_ack_cm_event(e);
	EXPECT_RC(rdma_resolve_route(active, 1000), 0, "rdma_resolve_route");
	if ((e = expect_event(RDMA_CM_EVENT_ROUTE_RESOLVED, active, "RDMA_CM_EVENT_ROUTE_RESOLVED"))) rdma_ack_cm_event(e);
	check(qp_on(active, pd, cq) != NULL, "rdma_create_qp", "errno %d", errno);
	param.private_data = NULL;
	param.private_data_len = 0;
	EXPECT_RC(rdma_connect(active, &param), 0, "rdma_connect");
	e = expect_event(RDMA_CM_EVENT_CONNECT_REQUEST, NULL, "RDMA_CM_EVENT_CONNECT_REQUEST");
	if (!e) goto done;
	passive = e->id;
	rdma_ack_cm_event(e);
	errno = 0;
	check(rdma_disconnect(passive) == -1 && errno == EINVAL, "rdma_disconnect before the connection is up: EINVAL",
	      "errno %d", errno);
	char *buf = calloc(1, 4096);
	struct ibv_mr *mr = ibv_reg_mr(pd, buf, 4096, IBV_ACCESS_LOCAL_WRITE);
	check(qp_on(passive, pd, cq) != NULL, "rdma_create_qp on the request's identifier", "errno %d", errno);
	struct ibv_sge rsge = { (uintptr_t)(buf + 2048), 64, mr->lkey }, ssge = { (uintptr_t)buf, 64, mr->lkey };
	struct ibv_recv_wr rwr = { .wr_id = 1, .sg_list = &rsge, .num_sge = 1 }, *bad_r;
	struct ibv_send_wr swr = { .wr_id = 2, .sg_list = &ssge, .num_sge = 1, .opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED }, *bad_s;
	EXPECT_RC(ibv_post_recv(passive->qp, &rwr, &bad_r), 0, "a receive on the passive side's QP");
	EXPECT_RC(rdma_accept(passive, &param), 0, "rdma_accept");
	if ((e = expect_event(RDMA_CM_EVENT_ESTABLISHED, NULL, "RDMA_CM_EVENT_ESTABLISHED (one side)"))) rdma_ack_cm_event(e);
	if ((e = expect_event(RDMA_CM_EVENT_ESTABLISHED, NULL, "RDMA_CM_EVENT_ESTABLISHED (the other)"))) rdma_ack_cm_event(e);
	struct ibv_qp_attr qa;
	struct ibv_qp_init_attr qi;
	ibv_query_qp(active->qp, &qa, IBV_QP_STATE | IBV_QP_DEST_QPN, &qi);
	check(qa.qp_state == IBV_QPS_RTS && qa.dest_qp_num == passive->qp->qp_num,
	      "the active QP is in RTS towards the passive's",
	      "state %d dest 0x%x", qa.qp_state, qa.dest_qp_num);
	strcpy(buf, "through the connection RDMA CM made");
	EXPECT_RC(ibv_post_send(active->qp, &swr, &bad_s), 0, "a send on the active side's QP");
	struct ibv_wc wc[2];
	int got = await_wc(cq, &wc[0]) && await_wc(cq, &wc[1]);
	check(got && !strcmp(buf + 2048, buf), "the send arrives, every byte", "completions %d, got '%s'", got, buf + 2048);
	EXPECT_RC(rdma_disconnect(active), 0, "rdma_disconnect (active side)");
	e = expect_event(RDMA_CM_EVENT_DISCONNECTED, passive, "RDMA_CM_EVENT_DISCONNECTED (passive)");
	if (e) rdma_ack_cm_event(e);
	EXPECT_RC(rdma_disconnect(passive), 0, "rdma_disconnect (passive side, answering)");
	e = expect_event(RDMA_CM_EVENT_DISCONNECTED, active, "RDMA_CM_EVENT_DISCONNECTED (active)");
	if (e) rdma_ack_cm_event(e);
	errno = 0;
	check(rdma_disconnect(active) == -1 && errno == EINVAL, "rdma_disconnect twice: EINVAL", "errno %d", errno);
	rdma_destroy_qp(passive);
	rdma_destroy_qp(active);
	EXPECT_RC(rdma_destroy_id(passive), 0, "rdma_destroy_id (passive)");
	EXPECT_RC(rdma_destroy_id(active), 0, "rdma_destroy_id (active)");
	ibv_dereg_mr(mr);
	free(buf);
done:
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	EXPECT_RC(rdma_destroy_id(other), 0, "rdma_destroy_id of an identifier never bound");
	EXPECT_RC(rdma_destroy_id(listener), 0, "rdma_destroy_id of the listener");
	afonly();
	af_ib();
	query_errors();
	rdma_destroy_event_channel(ch);
	printf("# %d checks, %d failed\n", conf_checks, conf_failed);
	return conf_failed != 0;
}
