/*
 * Nodes are hosts: node n's address, 127.77.0.(n+1) (serve's RdmaCm), is a loopback address, so a
 * program's ordinary TCP and UDP to another node's name reach that node's programs and never leave
 * the machine. What the kernel cannot know is which node a program is on: a socket it connects
 * unbound would leave from 127.0.0.1. So connect and sendto (interposed, LD_PRELOAD) first bind an
 * unbound IPv4 or IPv6 socket to the program's own node's address, port 0, when the destination is
 * a node's address: the peer then sees the sender's node as its source, as on a cluster.
 * Binds are never rewritten: bind(0.0.0.0) keeps every address (docs/attach.md says why).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

/* RdmaCm.SUBNET and its mask: node n is SUBNET + n + 1 */
#define NODES_SUBNET 0x7F4D0000u
#define NODES_MASK 0xFFFF0000u

static void *libc(const char *name) { return dlvsym(RTLD_NEXT, name, "GLIBC_2.2.5"); }

/* The IPv4 address (host order) a destination names, or 0 when it is not IPv4 or IPv4-mapped. */
static uint32_t ipv4_of(const struct sockaddr *to, socklen_t len) {
	if (!to) return 0;
	if (to->sa_family == AF_INET && len >= (socklen_t)sizeof(struct sockaddr_in))
		return ntohl(((const struct sockaddr_in *)to)->sin_addr.s_addr);
	if (to->sa_family == AF_INET6 && len >= (socklen_t)sizeof(struct sockaddr_in6)) {
		const struct in6_addr *a = &((const struct sockaddr_in6 *)to)->sin6_addr;
		if (IN6_IS_ADDR_V4MAPPED(a)) {
			uint32_t v;
			memcpy(&v, &a->s6_addr[12], 4);
			return ntohl(v);
		}
	}
	return 0;
}

/*
 * Before fd sends to `to`: bind it to this program's node address if `to` is a node's and fd is
 * still unbound. Any failure leaves fd as it was (the kernel then picks 127.0.0.1), never the call.
 */
static void bind_to_node(int fd, const struct sockaddr *to, socklen_t len) {
	const char *node = getenv("NICSIM_NODE");
	uint32_t dst = ipv4_of(to, len);
	struct sockaddr_storage own;
	socklen_t ol = sizeof(own);
	int type;
	socklen_t tl = sizeof(type);
	if (!node || (dst & NODES_MASK) != NODES_SUBNET) return;
	if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &tl) || (type != SOCK_STREAM && type != SOCK_DGRAM)) return;
	memset(&own, 0, sizeof(own));
	if (getsockname(fd, (struct sockaddr *)&own, &ol) || own.ss_family != to->sa_family) return;
	uint32_t me = htonl(NODES_SUBNET + (uint32_t)strtoul(node, NULL, 10) + 1);
	if (own.ss_family == AF_INET) {
		struct sockaddr_in *a = (struct sockaddr_in *)&own;
		if (a->sin_port || a->sin_addr.s_addr) return; /* bound already */
		a->sin_addr.s_addr = me;
	} else {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)&own;
		if (a->sin6_port || !IN6_IS_ADDR_UNSPECIFIED(&a->sin6_addr)) return;
		a->sin6_addr.s6_addr[10] = 0xff;
		a->sin6_addr.s6_addr[11] = 0xff;
		memcpy(&a->sin6_addr.s6_addr[12], &me, 4);
	}
	int saved = errno;
	(void)bind(fd, (struct sockaddr *)&own, ol);
	errno = saved;
}

int connect(int fd, const struct sockaddr *to, socklen_t len) {
	static int (*real)(int, const struct sockaddr *, socklen_t);
	if (!real) real = (int (*)(int, const struct sockaddr *, socklen_t))libc("connect");
	bind_to_node(fd, to, len);
	return real(fd, to, len);
}

ssize_t sendto(int fd, const void *buf, size_t n, int flags, const struct sockaddr *to, socklen_t len) {
	static ssize_t (*real)(int, const void *, size_t, int, const struct sockaddr *, socklen_t);
	if (!real) real = (ssize_t (*)(int, const void *, size_t, int, const struct sockaddr *, socklen_t))libc("sendto");
	bind_to_node(fd, to, len);
	return real(fd, buf, n, flags, to, len);
}
