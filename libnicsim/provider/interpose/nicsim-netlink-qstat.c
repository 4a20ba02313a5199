/*
 * The RDMA netlink's QP counters (`rdma statistic qp`): STAT_GET of RES_QP (the counters as a dump, one
 * counter by its STAT_COUNTER_ID, or the port's mode with STAT_MODE), STAT_SET (auto mode and its mask, or
 * a manual bind of RES_LQPN to STAT_COUNTER_ID or to a new counter) and STAT_DEL (a manual unbind), answered
 * as Linux's nldev answers them from the kernel's counters (core/counters.c), which serve keeps for the
 * node's adapter (RDMA_QSTAT: each counter one of the adapter's q counter sets). A dump is one message
 * per counter; a counter's QPs beyond what a page holds (a few hundred) are left out of its message.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nicsim-provider.h"
#include "nicsim-netlink.h"

/* Asks serve: the reply in *m (to read, then done()), or an errno (EIO: serve unreachable or short). */
static int qstat_ask(struct msg *m, uint32_t action, uint32_t qpn, uint32_t counter, uint32_t mask) {
	const char *node = getenv("NICSIM_NODE");
	int fd = connect_simulator(), rc;
	if (fd < 0) return EIO;
	struct nicsim_wire_qstat_request q = { .node = node ? (uint32_t)atoi(node) : 0, .action = action,
					       .qpn = qpn, .counter = counter, .mask = mask };
	*m = request(NICSIM_OP_RDMA_QSTAT);
	PUT(m, q);
	rc = nicsim_exchange(fd, m);
	real_close(fd);
	if (rc) { done(m); return rc < 0 ? EIO : rc; }
	return 0;
}

/* One counter of SHOW's reply, read from m into r (its QPs first, then its values, as serve writes them). */
static void counter_attrs(struct msg *m, struct nl_reply *r, uint32_t *id) {
	struct nicsim_wire_qstat_counter c;
	GET(m, c);
	*id = c.id;
	nl_u32(r, RDMA_NLDEV_ATTR_PORT_INDEX, 1);
	nl_u32(r, RDMA_NLDEV_ATTR_STAT_COUNTER_ID, c.id);
	nl_u32(r, RDMA_NLDEV_ATTR_STAT_MODE, c.mode);
	if (c.mode == RDMA_COUNTER_MODE_AUTO && (c.mask & RDMA_COUNTER_MASK_QP_TYPE))
		nl_u8(r, RDMA_NLDEV_ATTR_RES_TYPE, (uint8_t)c.qp_type);
	if (c.mode == RDMA_COUNTER_MODE_AUTO && (c.mask & RDMA_COUNTER_MASK_PID) && c.pid)
		nl_u32(r, RDMA_NLDEV_ATTR_RES_PID, c.pid);
	uint32_t n = c.qps, *qpns = calloc(n ? n : 1, sizeof *qpns);
	for (uint32_t i = 0; i < n && !m->failed; i++) {
		uint32_t qpn = get32(m);
		if (qpns) qpns[i] = qpn;
	}
	size_t hw = nl_nest(r, RDMA_NLDEV_ATTR_STAT_HWCOUNTERS);
	for (uint32_t k = get32(m), i = 0; i < k && !m->failed; i++) {
		struct nicsim_wire_stat_counter v; /* as serve declares it: a NUL-padded name, its value */
		GET(m, v);
		v.name[strnlen(v.name, sizeof v.name - 1)] = 0;
		size_t e = nl_nest(r, RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY);
		nl_str(r, RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_NAME, v.name);
		nl_u64(r, RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_VALUE, v.value);
		nl_nest_end(r, e);
	}
	nl_nest_end(r, hw);
	size_t table = nl_nest(r, RDMA_NLDEV_ATTR_RES_QP);
	for (uint32_t i = 0; qpns && i < n; i++) {
		if (r->len + 2 * NLA_HDRLEN + 8 + 64 > sizeof r->buf)
			break; /* the page is full: the rest go unlisted */
		size_t e = nl_nest(r, RDMA_NLDEV_ATTR_RES_QP_ENTRY);
		nl_u32(r, RDMA_NLDEV_ATTR_RES_LQPN, qpns[i]);
		nl_nest_end(r, e);
	}
	nl_nest_end(r, table);
	free(qpns);
}

/* STAT_GET of RES_QP: the mode (STAT_MODE given), one counter (STAT_COUNTER_ID) or, as a dump, all of them. */
static int qstat_get(const struct nl_request *q, int *multi) {
	int dump = (q->flags & NLM_F_DUMP) != 0, rc, found = 0;
	int by_id = q->attrs[RDMA_NLDEV_ATTR_STAT_COUNTER_ID] != NULL;
	uint32_t want = nl_arg32(q, RDMA_NLDEV_ATTR_STAT_COUNTER_ID, 0);
	struct nl_reply r;
	struct msg m;
	*multi = dump;
	if (!dump && !by_id && !q->attrs[RDMA_NLDEV_ATTR_STAT_MODE]) return EINVAL;
	if ((rc = qstat_ask(&m, NICSIM_QSTAT_SHOW, 0, 0, 0))) return rc;
	struct nicsim_wire_qstat_show port;
	GET(&m, port);
	if (!dump && !by_id) { /* `rdma statistic qp mode` */
		nl_begin(&r, q, 0);
		nl_dev_handle(&r);
		nl_u32(&r, RDMA_NLDEV_ATTR_PORT_INDEX, 1);
		nl_u32(&r, RDMA_NLDEV_ATTR_STAT_MODE, port.mode);
		if (port.mode == RDMA_COUNTER_MODE_AUTO) nl_u32(&r, RDMA_NLDEV_ATTR_STAT_AUTO_MODE_MASK, port.mask);
		rc = m.failed ? EIO : nl_send(q, &r);
		done(&m);
		return rc;
	}
	for (uint32_t i = 0; !rc && i < port.counters && !m.failed; i++) {
		uint32_t id;
		size_t table = 0, entry = 0;
		nl_begin(&r, q, dump ? NLM_F_MULTI : 0);
		nl_dev_handle(&r);
		if (dump) {
			table = nl_nest(&r, RDMA_NLDEV_ATTR_STAT_COUNTER);
			entry = nl_nest(&r, RDMA_NLDEV_ATTR_STAT_COUNTER_ENTRY);
		}
		counter_attrs(&m, &r, &id);
		if (dump) { nl_nest_end(&r, entry); nl_nest_end(&r, table); }
		if (m.failed || (by_id && id != want)) continue;
		found++;
		rc = nl_send(q, &r);
	}
	if (!rc && m.failed) rc = EIO;
	done(&m);
	if (!rc && by_id && !found) rc = ENOENT;
	return rc;
}

/* STAT_SET (auto mode, or a manual bind) and STAT_DEL (a manual unbind): the kernel's reply, or an errno. */
static int qstat_change(const struct nl_request *q) {
	int del = RDMA_NL_GET_OP(q->type) == RDMA_NLDEV_CMD_STAT_DEL, rc;
	uint32_t mode = nl_arg32(q, RDMA_NLDEV_ATTR_STAT_MODE, ~0u), counter = ~0u;
	struct nl_request as = *q;
	struct nl_reply r;
	struct msg m;
	if (!q->attrs[RDMA_NLDEV_ATTR_STAT_MODE] && q->attrs[RDMA_NLDEV_ATTR_STAT_HWCOUNTERS])
		return EOPNOTSUPP; /* optional counters: the adapter has none to turn on */
	if (!q->attrs[RDMA_NLDEV_ATTR_STAT_MODE] && !del) return EINVAL;
	if (!del && mode == RDMA_COUNTER_MODE_AUTO) {
		rc = qstat_ask(&m, NICSIM_QSTAT_SET_AUTO, 0, 0, nl_arg32(q, RDMA_NLDEV_ATTR_STAT_AUTO_MODE_MASK, 0));
		if (rc) return rc;
	} else {
		if (!q->attrs[RDMA_NLDEV_ATTR_RES_LQPN] || (del && !q->attrs[RDMA_NLDEV_ATTR_STAT_COUNTER_ID]))
			return EINVAL;
		counter = nl_arg32(q, RDMA_NLDEV_ATTR_STAT_COUNTER_ID, ~0u);
		uint32_t qpn = nl_arg32(q, RDMA_NLDEV_ATTR_RES_LQPN, 0);
		rc = qstat_ask(&m, del ? NICSIM_QSTAT_UNBIND : NICSIM_QSTAT_BIND, qpn, counter, 0);
		if (rc) return rc;
		if (!del) {
			struct nicsim_wire_qstat_bound b;
			GET(&m, b);
			counter = b.counter;
		}
	}
	rc = m.failed ? EIO : 0;
	done(&m);
	if (rc) return rc;
	as.type = RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_STAT_SET); /* STAT_DEL answers as a SET too */
	nl_begin(&r, &as, 0);
	nl_dev_handle(&r);
	nl_u32(&r, RDMA_NLDEV_ATTR_PORT_INDEX, 1);
	if (counter != ~0u) {
		nl_u32(&r, RDMA_NLDEV_ATTR_STAT_COUNTER_ID, counter);
		nl_u32(&r, RDMA_NLDEV_ATTR_RES_LQPN, nl_arg32(q, RDMA_NLDEV_ATTR_RES_LQPN, 0));
	}
	return nl_send(q, &r);
}

int nicsim_netlink_qstat(const struct nl_request *q, int *multi) {
	*multi = 0;
	if (nl_arg32(q, RDMA_NLDEV_ATTR_DEV_INDEX, ~0u) != NICSIM_DEV_INDEX
	    || nl_arg32(q, RDMA_NLDEV_ATTR_PORT_INDEX, 0) != 1
	    || (q->attrs[RDMA_NLDEV_ATTR_STAT_RES]
		&& nl_arg32(q, RDMA_NLDEV_ATTR_STAT_RES, 0) != RDMA_NLDEV_ATTR_RES_QP))
		return EINVAL;
	if (RDMA_NL_GET_OP(q->type) == RDMA_NLDEV_CMD_STAT_GET) return qstat_get(q, multi);
	return qstat_change(q);
}
