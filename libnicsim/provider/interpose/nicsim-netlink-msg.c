/*
 * The RDMA netlink's replies (nicsim-netlink.h), as nicsim-netlink.c and nicsim-netlink-res.c build
 * them: messages of attributes, each sent to the requesting socket from a socket of our own; and the
 * device's name and handle, as the node's sysfs tree gives them.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "nicsim-msg.h"
#include "nicsim-sock.h"
#include "interpose/nicsim-netlink.h"

void nl_begin(struct nl_reply *r, const struct nl_request *q, uint16_t flags) {
	struct nlmsghdr h = { .nlmsg_len = NLMSG_HDRLEN, .nlmsg_type = q->type, .nlmsg_flags = flags,
			      .nlmsg_seq = q->seq, .nlmsg_pid = q->port };
	memset(r->buf, 0, NLMSG_HDRLEN);
	memcpy(r->buf, &h, sizeof h);
	r->len = NLMSG_HDRLEN;
	r->overflow = 0;
}

void nl_put(struct nl_reply *r, uint16_t type, const void *p, size_t n) {
	struct nlattr a = { .nla_len = (uint16_t)(NLA_HDRLEN + n), .nla_type = type };
	size_t total = NLA_ALIGN(NLA_HDRLEN + n);
	if (r->len + total > sizeof r->buf) { r->overflow = 1; return; }
	memset(r->buf + r->len, 0, total);
	memcpy(r->buf + r->len, &a, sizeof a);
	if (n) memcpy(r->buf + r->len + NLA_HDRLEN, p, n);
	r->len += total;
}

void nl_u8(struct nl_reply *r, uint16_t type, uint8_t v) { nl_put(r, type, &v, 1); }
void nl_u32(struct nl_reply *r, uint16_t type, uint32_t v) { nl_put(r, type, &v, 4); }
void nl_u64(struct nl_reply *r, uint16_t type, uint64_t v) { nl_put(r, type, &v, 8); }
void nl_str(struct nl_reply *r, uint16_t type, const char *s) { nl_put(r, type, s, strlen(s) + 1); }

size_t nl_nest(struct nl_reply *r, uint16_t type) {
	size_t at = r->len;
	nl_put(r, type | NLA_F_NESTED, NULL, 0);
	return at;
}

void nl_nest_end(struct nl_reply *r, size_t at) {
	uint16_t len = (uint16_t)(r->len - at);
	if (!r->overflow) memcpy(r->buf + at, &len, sizeof len);
}

int nl_send(const struct nl_request *q, struct nl_reply *r) {
	struct sockaddr_nl to = { .nl_family = AF_NETLINK, .nl_pid = q->port };
	uint32_t len = (uint32_t)r->len;
	int from, rc = 0;
	if (r->overflow) return EMSGSIZE;
	memcpy(r->buf, &len, sizeof len);
	from = real_socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_USERSOCK);
	if (from < 0) return errno;
	if (real_sendto(from, r->buf, r->len, 0, (struct sockaddr *)&to, sizeof to) < 0) rc = errno;
	real_close(from);
	return rc;
}

uint32_t nl_arg32(const struct nl_request *q, int type, uint32_t otherwise) {
	uint32_t v;
	const struct nlattr *a = q->attrs[type];
	if (!a || a->nla_len < NLA_HDRLEN + 4) return otherwise;
	memcpy(&v, (const uint8_t *)a + NLA_HDRLEN, 4);
	return v;
}

/* File `rel` of the node's sysfs tree, its first line, into out (empty if it cannot be read). */
const char *nicsim_sysfs_line(const char *rel, char *out, size_t n) {
	const char *root = getenv("SYSFS_PATH");
	char path[512];
	FILE *f;
	snprintf(path, sizeof path, "%s/%s", root && *root ? root : "/sys", rel);
	out[0] = 0;
	if ((f = fopen(path, "re"))) {
		if (!fgets(out, (int)n, f)) out[0] = 0;
		fclose(f);
	}
	out[strcspn(out, "\n")] = 0;
	return out;
}

const char *nicsim_dev_name(void) {
	static char name[64];
	if (!name[0]) nicsim_sysfs_line("class/infiniband_verbs/uverbs0/ibdev", name, sizeof name);
	return name;
}

void nl_dev_handle(struct nl_reply *r) {
	nl_u32(r, RDMA_NLDEV_ATTR_DEV_INDEX, NICSIM_DEV_INDEX);
	nl_str(r, RDMA_NLDEV_ATTR_DEV_NAME, nicsim_dev_name());
}
