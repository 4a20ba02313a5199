/*
 * The RDMA netlink for attached programs: the host's kernel has none (NETLINK_RDMA is
 * EPROTONOSUPPORT), and the node's adapter is serve's. iproute2's `rdma` (link, dev, res, system)
 * and libibverbs' device discovery open socket(AF_NETLINK, SOCK_RAW, NETLINK_RDMA); here (LD_PRELOAD)
 * that gives a real netlink socket of the NETLINK_USERSOCK family, which any process may open, bind
 * and receive on, so bind, getsockname, setsockopt, poll and recvmsg are the kernel's own. What the
 * program sends on it (send, sendmsg; sendto through nicsim-hosts.c) is answered here, as Linux's
 * nldev answers it, from the node's sysfs tree (SYSFS_PATH, the one libibverbs reads) and serve
 * (RDMA_RES): the replies are sent to the socket's port from a socket of our own.
 *
 * What libibverbs reads must be exact, or no program finds its device: GET's DEV_INDEX, DEV_NAME and
 * DEV_NODE_TYPE, GET_CHARDEV's CHARDEV (the uverbs node's number), CHARDEV_ABI and CHARDEV_NAME.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "nicsim-msg.h"
#include "nicsim-sock.h"
#include "interpose/nicsim-netlink.h"

#define NL_FILES 4096

/* Each answered socket's inode (0: none), by descriptor: a number reused since is not ours. */
static ino_t owned[NL_FILES];

static void *libc(const char *name) { return dlvsym(RTLD_NEXT, name, "GLIBC_2.2.5"); }

int nicsim_netlink_owns(int fd) {
	struct stat st;
	ino_t ino = fd >= 0 && fd < NL_FILES ? __atomic_load_n(&owned[fd], __ATOMIC_ACQUIRE) : 0;
	return ino && !real_fstat(fd, &st) && st.st_ino == ino;
}

__attribute__((visibility("default")))
int socket(int domain, int type, int protocol) {
	struct stat st;
	int fd;
	if (domain != AF_NETLINK || protocol != NETLINK_RDMA || !getenv("NICSIM_SOCKET"))
		return real_socket(domain, type, protocol);
	fd = real_socket(AF_NETLINK, type, NETLINK_USERSOCK);
	if (fd < 0) return fd;
	if (fd >= NL_FILES || real_fstat(fd, &st)) { real_close(fd); errno = EMFILE; return -1; }
	__atomic_store_n(&owned[fd], st.st_ino, __ATOMIC_RELEASE);
	return fd;
}

/* ------------------------------------------------------------------ the node's sysfs tree */

static const char *dev_file(const char *rel, char *out, size_t n) {
	char path[256];
	snprintf(path, sizeof path, "class/infiniband/%s/%s", nicsim_dev_name(), rel);
	return nicsim_sysfs_line(path, out, n);
}

/* A GUID or GID prefix as sysfs writes it (hex groups with colons): its value. */
static uint64_t hex_groups(const char *s, int groups) {
	uint64_t v = 0;
	for (int g = 0; g < groups && *s; g++) {
		v = v << 16 | (strtoul(s, (char **)&s, 16) & 0xffff);
		if (*s == ':') s++;
	}
	return v;
}

/* A character device's number as sysfs gives it (major:minor), encoded as the kernel's huge_encode_dev. */
static uint64_t dev_number(const char *text) {
	unsigned major = 0, minor = 0;
	if (sscanf(text, "%u:%u", &major, &minor) != 2) return 0;
	return (minor & 0xffu) | (uint64_t)major << 8 | (uint64_t)(minor & ~0xffu) << 12;
}

/* ------------------------------------------------------------------ the views */

static int dev_get(const struct nl_request *q, int dump) {
	struct nl_reply r;
	char v[128];
	if (!dump && nl_arg32(q, RDMA_NLDEV_ATTR_DEV_INDEX, ~0u) != NICSIM_DEV_INDEX) return EINVAL;
	nl_begin(&r, q, dump ? NLM_F_MULTI : 0);
	nl_dev_handle(&r);
	nl_u32(&r, RDMA_NLDEV_ATTR_PORT_INDEX, 1); /* for a device: how many ports it has */
	nl_str(&r, RDMA_NLDEV_ATTR_FW_VERSION, dev_file("fw_ver", v, sizeof v));
	nl_u64(&r, RDMA_NLDEV_ATTR_NODE_GUID, hex_groups(dev_file("node_guid", v, sizeof v), 4));
	nl_u64(&r, RDMA_NLDEV_ATTR_SYS_IMAGE_GUID, hex_groups(dev_file("sys_image_guid", v, sizeof v), 4));
	nl_u8(&r, RDMA_NLDEV_ATTR_DEV_NODE_TYPE, (uint8_t)atoi(dev_file("node_type", v, sizeof v)));
	nl_str(&r, RDMA_NLDEV_ATTR_DEV_PROTOCOL, "ib");
	nl_u8(&r, RDMA_NLDEV_ATTR_DEV_DIM, 0);
	return nl_send(q, &r);
}

static int port_get(const struct nl_request *q, int dump) {
	struct nl_reply r;
	char v[128];
	if (nl_arg32(q, RDMA_NLDEV_ATTR_DEV_INDEX, ~0u) != NICSIM_DEV_INDEX) return EINVAL;
	if (!dump && nl_arg32(q, RDMA_NLDEV_ATTR_PORT_INDEX, 0) != 1) return EINVAL;
	nl_begin(&r, q, dump ? NLM_F_MULTI : 0);
	nl_dev_handle(&r);
	nl_u32(&r, RDMA_NLDEV_ATTR_PORT_INDEX, 1);
	nl_u64(&r, RDMA_NLDEV_ATTR_CAP_FLAGS, strtoull(dev_file("ports/1/cap_mask", v, sizeof v), NULL, 16));
	nl_u64(&r, RDMA_NLDEV_ATTR_SUBNET_PREFIX, hex_groups(dev_file("ports/1/gids/0", v, sizeof v), 4));
	nl_u32(&r, RDMA_NLDEV_ATTR_LID, (uint32_t)strtoul(dev_file("ports/1/lid", v, sizeof v), NULL, 16));
	nl_u32(&r, RDMA_NLDEV_ATTR_SM_LID, (uint32_t)strtoul(dev_file("ports/1/sm_lid", v, sizeof v), NULL, 16));
	nl_u8(&r, RDMA_NLDEV_ATTR_LMC, (uint8_t)atoi(dev_file("ports/1/lid_mask_count", v, sizeof v)));
	nl_u8(&r, RDMA_NLDEV_ATTR_PORT_STATE, (uint8_t)atoi(dev_file("ports/1/state", v, sizeof v)));
	nl_u8(&r, RDMA_NLDEV_ATTR_PORT_PHYS_STATE, (uint8_t)atoi(dev_file("ports/1/phys_state", v, sizeof v)));
	return nl_send(q, &r);
}

/* The kernel's RDMA subsystem settings: network namespaces shared, copy-on-fork on (as since Linux 5.12). */
static int sys_get(const struct nl_request *q) {
	struct nl_reply r;
	nl_begin(&r, q, 0);
	nl_u8(&r, RDMA_NLDEV_SYS_ATTR_NETNS_MODE, 1);
	nl_u8(&r, RDMA_NLDEV_SYS_ATTR_COPY_ON_FORK, 1);
	return nl_send(q, &r);
}

/* Which character device serves a client: uverbs (per device) or rdma_cm (global); ENOENT for others (umad). */
static int chardev_get(const struct nl_request *q) {
	const struct nlattr *a = q->attrs[RDMA_NLDEV_ATTR_CHARDEV_TYPE];
	char type[32] = "", dev[32], abi[32], name[32];
	struct nl_reply r;
	if (!a || a->nla_len <= NLA_HDRLEN) return EINVAL;
	snprintf(type, sizeof type, "%.*s", (int)(a->nla_len - NLA_HDRLEN), (const char *)a + NLA_HDRLEN);
	if (!strcmp(type, "uverbs")) {
		if (nl_arg32(q, RDMA_NLDEV_ATTR_DEV_INDEX, ~0u) != NICSIM_DEV_INDEX) return EINVAL;
		nicsim_sysfs_line("class/infiniband_verbs/uverbs0/dev", dev, sizeof dev);
		nicsim_sysfs_line("class/infiniband_verbs/uverbs0/abi_version", abi, sizeof abi);
		strcpy(name, "uverbs0");
	} else if (!strcmp(type, "rdma_cm")) {
		nicsim_sysfs_line("class/misc/rdma_cm/dev", dev, sizeof dev);
		nicsim_sysfs_line("class/misc/rdma_cm/abi_version", abi, sizeof abi);
		strcpy(name, "rdma_cm");
	} else {
		return ENOENT;
	}
	if (!dev_number(dev)) return ENOENT;
	nl_begin(&r, q, 0);
	nl_u64(&r, RDMA_NLDEV_ATTR_CHARDEV, dev_number(dev));
	nl_u64(&r, RDMA_NLDEV_ATTR_CHARDEV_ABI, strtoull(abi, NULL, 10));
	nl_str(&r, RDMA_NLDEV_ATTR_CHARDEV_NAME, name);
	return nl_send(q, &r);
}

/* ------------------------------------------------------------------ requests */

/* The end of an answer: an error message (with the request's header), DONE after a dump, or the ACK asked for. */
static void conclude(const struct nl_request *q, const struct nlmsghdr *h, int err, int multi) {
	struct nl_reply r;
	struct nl_request as = *q;
	struct nlmsgerr e = { .error = -err, .msg = *h };
	int zero = 0;
	if (!err && multi) {
		as.type = NLMSG_DONE;
		nl_begin(&r, &as, NLM_F_MULTI);
		memcpy(r.buf + r.len, &zero, sizeof zero);
		r.len += sizeof zero;
	} else if (err || (q->flags & NLM_F_ACK)) {
		as.type = NLMSG_ERROR;
		nl_begin(&r, &as, err ? 0 : NLM_F_CAPPED);
		memcpy(r.buf + r.len, &e, sizeof e);
		r.len += sizeof e;
	} else {
		return;
	}
	nl_send(q, &r);
}

static void answer(int fd, uint32_t port, const struct nlmsghdr *h) {
	struct nl_request q = { .fd = fd, .port = port, .seq = h->nlmsg_seq, .type = h->nlmsg_type,
				.flags = h->nlmsg_flags };
	int dump = (h->nlmsg_flags & NLM_F_DUMP) != 0, multi = dump, err;
	const struct nlattr *a = (const struct nlattr *)((const uint8_t *)h + NLMSG_HDRLEN);
	int left = (int)h->nlmsg_len - NLMSG_HDRLEN;
	if (!(h->nlmsg_flags & NLM_F_REQUEST) || h->nlmsg_type < NLMSG_MIN_TYPE) return; /* the kernel ignores those */
	for (; left >= NLA_HDRLEN && a->nla_len >= NLA_HDRLEN && a->nla_len <= left;
	     left -= NLA_ALIGN(a->nla_len), a = (const struct nlattr *)((const uint8_t *)a + NLA_ALIGN(a->nla_len)))
		if ((a->nla_type & NLA_TYPE_MASK) < RDMA_NLDEV_ATTR_MAX) q.attrs[a->nla_type & NLA_TYPE_MASK] = (struct nlattr *)a;
	if (RDMA_NL_GET_CLIENT(h->nlmsg_type) != RDMA_NL_NLDEV) {
		err = EOPNOTSUPP; /* the LS client (ibacm's) and the IWPM have no one here */
	} else {
		switch (RDMA_NL_GET_OP(h->nlmsg_type)) {
		case RDMA_NLDEV_CMD_GET: err = dev_get(&q, dump); break;
		case RDMA_NLDEV_CMD_PORT_GET: err = port_get(&q, dump); break;
		case RDMA_NLDEV_CMD_SYS_GET: err = sys_get(&q); multi = 0; break;
		case RDMA_NLDEV_CMD_GET_CHARDEV: err = chardev_get(&q); multi = 0; break;
		case RDMA_NLDEV_CMD_RES_GET: case RDMA_NLDEV_CMD_RES_QP_GET: case RDMA_NLDEV_CMD_RES_CQ_GET:
		case RDMA_NLDEV_CMD_RES_MR_GET: case RDMA_NLDEV_CMD_RES_PD_GET:
			err = nicsim_netlink_res(&q, &multi);
			break;
		case RDMA_NLDEV_CMD_STAT_GET:
			if (nl_arg32(&q, RDMA_NLDEV_ATTR_STAT_RES, 0) == RDMA_NLDEV_ATTR_RES_MR) {
				err = nicsim_netlink_stat_mr(&q, &multi);
				break;
			}
			if (q.attrs[RDMA_NLDEV_ATTR_STAT_RES]) { err = nicsim_netlink_qstat(&q, &multi); break; }
			err = nicsim_netlink_stat(&q);
			multi = 0;
			break;
		case RDMA_NLDEV_CMD_STAT_GET_STATUS: err = nicsim_netlink_stat_status(&q); multi = 0; break;
		case RDMA_NLDEV_CMD_STAT_SET: case RDMA_NLDEV_CMD_STAT_DEL:
			err = nicsim_netlink_qstat(&q, &multi);
			break;
		default: err = EOPNOTSUPP; /* links of other kinds, setting anything */
		}
	}
	conclude(&q, h, err, multi);
}

/* The socket's port, binding it (the kernel's autobind) if it has none yet: 0 if that fails. */
static uint32_t port_of(int fd) {
	struct sockaddr_nl me = { .nl_family = AF_NETLINK };
	socklen_t len = sizeof me;
	if (getsockname(fd, (struct sockaddr *)&me, &len)) return 0;
	if (!me.nl_pid) {
		struct sockaddr_nl any = { .nl_family = AF_NETLINK };
		if (bind(fd, (struct sockaddr *)&any, sizeof any) || getsockname(fd, (struct sockaddr *)&me, &len)) return 0;
	}
	return me.nl_pid;
}

ssize_t nicsim_netlink_send(int fd, const void *buf, size_t n) {
	uint32_t port = port_of(fd);
	int left = (int)(n > 65536 ? 65536 : n);
	if (!port) { errno = ECONNREFUSED; return -1; }
	for (const struct nlmsghdr *h = buf; NLMSG_OK(h, left); h = NLMSG_NEXT(h, left)) answer(fd, port, h);
	return (ssize_t)n;
}

__attribute__((visibility("default")))
ssize_t sendmsg(int fd, const struct msghdr *msg, int flags) {
	static ssize_t (*real)(int, const struct msghdr *, int);
	if (!real) real = (ssize_t (*)(int, const struct msghdr *, int))libc("sendmsg");
	if (!nicsim_netlink_owns(fd)) return real(fd, msg, flags);
	size_t total = 0, at = 0;
	for (size_t i = 0; i < msg->msg_iovlen; i++) total += msg->msg_iov[i].iov_len;
	uint8_t *all = malloc(total ? total : 1);
	if (!all) { errno = ENOMEM; return -1; }
	for (size_t i = 0; i < msg->msg_iovlen; i++) {
		memcpy(all + at, msg->msg_iov[i].iov_base, msg->msg_iov[i].iov_len);
		at += msg->msg_iov[i].iov_len;
	}
	ssize_t k = nicsim_netlink_send(fd, all, total);
	free(all);
	return k;
}

__attribute__((visibility("default")))
ssize_t send(int fd, const void *buf, size_t n, int flags) {
	static ssize_t (*real)(int, const void *, size_t, int);
	if (!real) real = (ssize_t (*)(int, const void *, size_t, int))libc("send");
	if (nicsim_netlink_owns(fd)) return nicsim_netlink_send(fd, buf, n);
	return real(fd, buf, n, flags);
}
