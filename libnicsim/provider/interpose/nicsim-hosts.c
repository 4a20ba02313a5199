/*
 * Nodes are hosts: node n's address, 127.77.0.(n+1) (serve's RdmaCm), is a loopback address, so a
 * program's ordinary TCP and UDP to another node's name reach that node's programs and never leave
 * the machine. What the kernel cannot know is which node a program is on: a socket it connects
 * unbound would leave from 127.0.0.1. So connect and sendto (interposed, LD_PRELOAD) first bind an
 * unbound IPv4 or IPv6 socket to the program's own node's address, port 0, when the destination is
 * a node's address: the peer then sees the sender's node as its source, as on a cluster.
 * Binds are never rewritten: bind(0.0.0.0) keeps every address (docs/attach.md says why).
 *
 * getifaddrs lists the node's address first, as an interface "ib0" (127.77.0.(n+1)/16), as an IPoIB
 * interface shows a cluster host's: programs that look for their RDMA address among the interfaces
 * (libfabric's verbs provider) find the node's own rather than 127.0.0.1, which names every node.
 * ioctl's address queries of "ib0" (SIOCGIFADDR, SIOCGIFNETMASK, SIOCGIFBRDADDR, SIOCGIFFLAGS) answer the
 * same, for programs that ask an interface they are told by name (dapl's providers: Debian's ofa-v2-ib0
 * line, the socket CM's DAPL_SCM_NETDEV).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include "nicsim-sock.h"
#include "nicsim-hosts.h"
#include "nicsim-netlink.h"

/* RdmaCm.SUBNET and its mask: node n is SUBNET + n + 1 */
#define NODES_SUBNET 0x7F4D0000u
#define NODES_MASK 0xFFFF0000u

static void *libc(const char *name, const char *version) { return dlvsym(RTLD_NEXT, name, version); }

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
	bind_to_node(fd, to, len);
	return real_connect(fd, to, len);
}

ssize_t sendto(int fd, const void *buf, size_t n, int flags, const struct sockaddr *to, socklen_t len) {
	if (nicsim_netlink_owns(fd)) return nicsim_netlink_send(fd, buf, n); /* an RDMA netlink request */
	bind_to_node(fd, to, len);
	return real_sendto(fd, buf, n, flags, to, len);
}

/* The ib0 entry getifaddrs puts in front of the C library's list; freeifaddrs knows it by `magic`. */
struct node_if {
	struct ifaddrs ifa;
	struct sockaddr_in addr, mask, bcast;
	char name[8];
	uint64_t magic;
};
#define NODE_IF_MAGIC 0x6e6963736e6f6465ull /* "nicsnode" */

int getifaddrs(struct ifaddrs **out) {
	static int (*real)(struct ifaddrs **);
	if (!real) real = (int (*)(struct ifaddrs **))libc("getifaddrs", "GLIBC_2.3");
	const char *node = getenv("NICSIM_NODE");
	if (real(out)) return -1;
	if (!node) return 0;
	struct node_if *n = calloc(1, sizeof(*n));
	if (!n) return 0; /* the C library's list alone */
	uint32_t me = NODES_SUBNET + (uint32_t)strtoul(node, NULL, 10) + 1;
	n->addr.sin_family = n->mask.sin_family = n->bcast.sin_family = AF_INET;
	n->addr.sin_addr.s_addr = htonl(me);
	n->mask.sin_addr.s_addr = htonl(NODES_MASK);
	n->bcast.sin_addr.s_addr = htonl(NODES_SUBNET | ~NODES_MASK);
	strcpy(n->name, "ib0");
	n->magic = NODE_IF_MAGIC;
	n->ifa.ifa_name = n->name;
	n->ifa.ifa_flags = IFF_UP | IFF_RUNNING | IFF_BROADCAST | IFF_MULTICAST;
	n->ifa.ifa_addr = (struct sockaddr *)&n->addr;
	n->ifa.ifa_netmask = (struct sockaddr *)&n->mask;
	n->ifa.ifa_broadaddr = (struct sockaddr *)&n->bcast;
	n->ifa.ifa_next = *out;
	*out = &n->ifa;
	return 0;
}

void freeifaddrs(struct ifaddrs *list) {
	static void (*real)(struct ifaddrs *);
	if (!real) real = (void (*)(struct ifaddrs *))libc("freeifaddrs", "GLIBC_2.3");
	/* ifa is the first member: a list that starts with ib0 was made above; the magic lies inside it */
	struct node_if *n = (struct node_if *)list;
	if (list && list->ifa_name && !strcmp(list->ifa_name, "ib0") && list->ifa_addr == (struct sockaddr *)&n->addr
	    && n->magic == NODE_IF_MAGIC) {
		struct ifaddrs *rest = list->ifa_next;
		free(n);
		list = rest;
	}
	if (list) real(list);
}

int nicsim_hosts_ioctl(unsigned long req, void *arg) {
	const char *node = getenv("NICSIM_NODE");
	struct ifreq *r = arg;
	struct sockaddr_in a;
	if (!node || !r || strncmp(r->ifr_name, "ib0", IFNAMSIZ)) return 0;
	uint32_t me = NODES_SUBNET + (uint32_t)strtoul(node, NULL, 10) + 1;
	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	switch (req) {
	case SIOCGIFADDR: a.sin_addr.s_addr = htonl(me); break;
	case SIOCGIFNETMASK: a.sin_addr.s_addr = htonl(NODES_MASK); break;
	case SIOCGIFBRDADDR: a.sin_addr.s_addr = htonl(NODES_SUBNET | ~NODES_MASK); break;
	case SIOCGIFFLAGS: r->ifr_flags = IFF_UP | IFF_RUNNING | IFF_BROADCAST | IFF_MULTICAST; return 1;
	default: return 0;
	}
	memset(&r->ifr_addr, 0, sizeof(r->ifr_addr));
	memcpy(&r->ifr_addr, &a, sizeof(a));
	return 1;
}
