/*
 * The RDMA netlink's resource views (`rdma resource show`): the node's adapter objects as serve lists
 * them (RDMA_RES: the adapter's QPs, CQs, MRs and PDs, each with the process owning it, pid 0 for the
 * kernel's own, serve's RDMA CM agents), in the attributes Linux's resource tracking gives. A dump is
 * one message per object, each naming the device, as the kernel's dumps may split anywhere. The
 * port's counters (`rdma statistic show`, STAT_GET) are the adapter's own, as serve counts them (RDMA_STAT).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nicsim-provider.h"
#include "nicsim-netlink.h"

/* One object of serve's list; the fields a kind has not are 0. */
struct res_row {
	uint32_t id, type, state, pd, dest, sq_psn, rq_psn, pid, cqe, users;
	uint64_t start, length, faults, invalidations, prefetches;
};

enum { RES_QP, RES_CQ, RES_MR, RES_PD, RES_KINDS };

struct res_list {
	struct res_row *rows[RES_KINDS];
	uint32_t count[RES_KINDS];
};

static void res_free(struct res_list *l) {
	for (int k = 0; k < RES_KINDS; k++) free(l->rows[k]);
}

/* One row of kind k off serve's reply, as the simulator declares it (struct nicsim_wire_res_*). */
static void res_get(struct msg *m, int k, struct res_row *r) {
	if (k == RES_QP) {
		struct nicsim_wire_res_qp q;
		GET(m, q);
		*r = (struct res_row){ .id = q.qpn, .type = q.type, .state = q.state, .pd = q.pd, .dest = q.dest_qpn,
				       .sq_psn = q.sq_psn, .rq_psn = q.rq_psn, .pid = q.pid };
	} else if (k == RES_CQ) {
		struct nicsim_wire_res_cq c;
		GET(m, c);
		*r = (struct res_row){ .id = c.cqn, .cqe = c.cqe, .users = c.users, .pid = c.pid };
	} else if (k == RES_MR) {
		struct nicsim_wire_res_mr mr;
		GET(m, mr);
		*r = (struct res_row){ .id = mr.key, .pd = mr.pd, .start = mr.start, .length = mr.length, .pid = mr.pid,
				       .faults = mr.page_faults, .invalidations = mr.page_invalidations,
				       .prefetches = mr.page_prefetches };
	} else {
		struct nicsim_wire_res_pd pd;
		GET(m, pd);
		*r = (struct res_row){ .id = pd.pdn, .users = pd.users, .pid = pd.pid };
	}
}

/* Asks serve for the node's objects: 0, or an errno (EIO: serve cannot be reached or answered short). */
static int res_fetch(struct res_list *l) {
	const char *node = getenv("NICSIM_NODE");
	int fd = connect_simulator(), rc;
	struct msg m;
	memset(l, 0, sizeof *l);
	if (fd < 0) return EIO;
	struct nicsim_wire_node_request q = { .node = node ? (uint32_t)atoi(node) : 0 };
	m = request(NICSIM_OP_RDMA_RES);
	PUT(&m, q);
	rc = nicsim_exchange(fd, &m);
	real_close(fd);
	if (rc < 0) { done(&m); return EIO; }
	for (int k = 0; !rc && k < RES_KINDS; k++) {
		uint32_t n = get32(&m);
		if (m.failed || n > (1u << 20)) { rc = EIO; break; }
		l->rows[k] = calloc(n ? n : 1, sizeof(struct res_row));
		if (!l->rows[k]) { rc = ENOMEM; break; }
		l->count[k] = n;
		for (uint32_t i = 0; i < n; i++) res_get(&m, k, &l->rows[k][i]);
		if (m.failed) rc = EIO;
	}
	done(&m);
	if (rc) res_free(l);
	return rc;
}

/* Whose it is: a process's pid, or the kernel's name for its own (serve's CM agents stand for the kernel's CM). */
static void owner(struct nl_reply *r, const struct res_row *o) {
	if (o->pid) nl_u32(r, RDMA_NLDEV_ATTR_RES_PID, o->pid);
	else nl_str(r, RDMA_NLDEV_ATTR_RES_KERN_NAME, "ib_core");
}

static void qp_entry(struct nl_reply *r, const struct res_row *o) {
	nl_u32(r, RDMA_NLDEV_ATTR_PORT_INDEX, 1);
	nl_u32(r, RDMA_NLDEV_ATTR_RES_LQPN, o->id);
	if (o->type == 2 || o->type == 3) { /* RC, UC: the peer's QPN and the PSN expected, as the kernel gives them */
		nl_u32(r, RDMA_NLDEV_ATTR_RES_RQPN, o->dest);
		nl_u32(r, RDMA_NLDEV_ATTR_RES_RQ_PSN, o->rq_psn);
	}
	nl_u32(r, RDMA_NLDEV_ATTR_RES_SQ_PSN, o->sq_psn);
	if (o->type == 2 || o->type == 3) nl_u8(r, RDMA_NLDEV_ATTR_RES_PATH_MIG_STATE, 0); /* MIGRATED */
	nl_u8(r, RDMA_NLDEV_ATTR_RES_TYPE, (uint8_t)o->type);
	nl_u8(r, RDMA_NLDEV_ATTR_RES_STATE, (uint8_t)o->state);
	nl_u32(r, RDMA_NLDEV_ATTR_RES_PDN, o->pd);
}

static void cq_entry(struct nl_reply *r, const struct res_row *o) {
	nl_u32(r, RDMA_NLDEV_ATTR_RES_CQE, o->cqe);
	nl_u64(r, RDMA_NLDEV_ATTR_RES_USECNT, o->users);
	nl_u8(r, RDMA_NLDEV_ATTR_RES_POLL_CTX, 0); /* IB_POLL_DIRECT: polled by its program */
	nl_u8(r, RDMA_NLDEV_ATTR_DEV_DIM, 0);
	nl_u32(r, RDMA_NLDEV_ATTR_RES_CQN, o->id);
}

static void mr_entry(struct nl_reply *r, const struct res_row *o) {
	nl_u32(r, RDMA_NLDEV_ATTR_RES_RKEY, o->id);
	nl_u32(r, RDMA_NLDEV_ATTR_RES_LKEY, o->id);
	nl_u64(r, RDMA_NLDEV_ATTR_RES_IOVA, o->start);
	nl_u64(r, RDMA_NLDEV_ATTR_RES_MRLEN, o->length);
	nl_u32(r, RDMA_NLDEV_ATTR_RES_MRN, o->id >> 8); /* the mkey's index: the key without its variant byte */
	nl_u32(r, RDMA_NLDEV_ATTR_RES_PDN, o->pd);
}

static void pd_entry(struct nl_reply *r, const struct res_row *o) {
	nl_u64(r, RDMA_NLDEV_ATTR_RES_USECNT, o->users);
	nl_u32(r, RDMA_NLDEV_ATTR_RES_PDN, o->id);
}

/* RES_GET: how many of each kind the device holds. */
static int summary(const struct nl_request *q, const struct res_list *l, int dump) {
	static const char *names[RES_KINDS] = { "qp", "cq", "mr", "pd" };
	static const int order[RES_KINDS] = { RES_PD, RES_CQ, RES_QP, RES_MR }; /* the kernel's order */
	struct nl_reply r;
	nl_begin(&r, q, dump ? NLM_F_MULTI : 0);
	nl_dev_handle(&r);
	size_t table = nl_nest(&r, RDMA_NLDEV_ATTR_RES_SUMMARY);
	for (int i = 0; i < RES_KINDS; i++) {
		size_t e = nl_nest(&r, RDMA_NLDEV_ATTR_RES_SUMMARY_ENTRY);
		nl_str(&r, RDMA_NLDEV_ATTR_RES_SUMMARY_ENTRY_NAME, names[order[i]]);
		nl_u64(&r, RDMA_NLDEV_ATTR_RES_SUMMARY_ENTRY_CURR, l->count[order[i]]);
		nl_nest_end(&r, e);
	}
	nl_nest_end(&r, table);
	return nl_send(q, &r);
}

int nicsim_netlink_res(const struct nl_request *q, int *multi) {
	static const uint16_t tables[RES_KINDS] = { RDMA_NLDEV_ATTR_RES_QP, RDMA_NLDEV_ATTR_RES_CQ,
						    RDMA_NLDEV_ATTR_RES_MR, RDMA_NLDEV_ATTR_RES_PD };
	static const uint16_t entries[RES_KINDS] = { RDMA_NLDEV_ATTR_RES_QP_ENTRY, RDMA_NLDEV_ATTR_RES_CQ_ENTRY,
						     RDMA_NLDEV_ATTR_RES_MR_ENTRY, RDMA_NLDEV_ATTR_RES_PD_ENTRY };
	/* the attribute naming one object, for a request of one (`rdma res show qp lqpn 5`) */
	static const uint16_t ids[RES_KINDS] = { RDMA_NLDEV_ATTR_RES_LQPN, RDMA_NLDEV_ATTR_RES_CQN,
						 RDMA_NLDEV_ATTR_RES_MRN, RDMA_NLDEV_ATTR_RES_PDN };
	void (*fill[RES_KINDS])(struct nl_reply *, const struct res_row *) = { qp_entry, cq_entry, mr_entry, pd_entry };
	int op = RDMA_NL_GET_OP(q->type), dump = *multi, kind, err, found = 0;
	struct res_list l;
	if (nl_arg32(q, RDMA_NLDEV_ATTR_DEV_INDEX, dump && op == RDMA_NLDEV_CMD_RES_GET ? NICSIM_DEV_INDEX : ~0u)
	    != NICSIM_DEV_INDEX)
		return EINVAL;
	if ((err = res_fetch(&l))) return err;
	if (op == RDMA_NLDEV_CMD_RES_GET) {
		err = summary(q, &l, dump);
		res_free(&l);
		return err;
	}
	kind = op == RDMA_NLDEV_CMD_RES_QP_GET ? RES_QP : op == RDMA_NLDEV_CMD_RES_CQ_GET ? RES_CQ
	     : op == RDMA_NLDEV_CMD_RES_MR_GET ? RES_MR : RES_PD;
	uint32_t only = nl_arg32(q, ids[kind], ~0u);
	if (!dump && only == ~0u) { res_free(&l); return EINVAL; }
	for (uint32_t i = 0; !err && i < l.count[kind]; i++) {
		const struct res_row *o = &l.rows[kind][i];
		uint32_t id = kind == RES_MR ? o->id >> 8 : o->id;
		struct nl_reply r;
		if (only != ~0u && id != only) continue;
		found++;
		nl_begin(&r, q, dump ? NLM_F_MULTI : 0);
		nl_dev_handle(&r);
		size_t table = nl_nest(&r, tables[kind]), e = nl_nest(&r, entries[kind]);
		fill[kind](&r, o);
		owner(&r, o);
		nl_nest_end(&r, e);
		nl_nest_end(&r, table);
		err = nl_send(q, &r);
	}
	res_free(&l);
	if (!err && !dump && !found) err = ENOENT;
	return err;
}

/*
 * STAT_GET of port 1 (`rdma statistic show`): the adapter's counters by their names in the model
 * (Firmware.retransmits...), as many as one message holds (a page: about 60). Counters bound to QPs
 * (STAT_RES of RES_QP) are nicsim-netlink-qstat.c's, an MR's (RES_MR) nicsim_netlink_stat_mr's; a dump of
 * the port's is EOPNOTSUPP.
 */
int nicsim_netlink_stat(const struct nl_request *q) {
	const char *node = getenv("NICSIM_NODE");
	struct nl_reply r;
	struct msg m;
	int fd, rc;
	if (q->flags & NLM_F_DUMP) return EOPNOTSUPP;
	if (nl_arg32(q, RDMA_NLDEV_ATTR_DEV_INDEX, ~0u) != NICSIM_DEV_INDEX
	    || nl_arg32(q, RDMA_NLDEV_ATTR_PORT_INDEX, 0) != 1)
		return EINVAL;
	if ((fd = connect_simulator()) < 0) return EIO;
	struct nicsim_wire_node_request which = { .node = node ? (uint32_t)atoi(node) : 0 };
	m = request(NICSIM_OP_RDMA_STAT);
	PUT(&m, which);
	rc = nicsim_exchange(fd, &m);
	real_close(fd);
	if (rc) { done(&m); return rc < 0 ? EIO : rc; }
	nl_begin(&r, q, 0);
	nl_dev_handle(&r);
	nl_u32(&r, RDMA_NLDEV_ATTR_PORT_INDEX, 1);
	size_t table = nl_nest(&r, RDMA_NLDEV_ATTR_STAT_HWCOUNTERS);
	for (uint32_t n = get32(&m), i = 0; i < n && !m.failed; i++) {
		struct nicsim_wire_stat_counter c; /* as serve declares it: a NUL-padded name, its value */
		GET(&m, c);
		if (m.failed) break;
		size_t len = strnlen(c.name, sizeof c.name - 1);
		c.name[len] = 0;
		if (r.len + NLA_ALIGN(NLA_HDRLEN + len + 1) + 3 * NLA_HDRLEN + 8 + 64 > sizeof r.buf) break; /* full */
		size_t e = nl_nest(&r, RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY);
		nl_str(&r, RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_NAME, c.name);
		nl_u64(&r, RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_VALUE, c.value);
		nl_nest_end(&r, e);
	}
	rc = m.failed ? EIO : 0;
	done(&m);
	if (rc) return rc;
	nl_nest_end(&r, table);
	return nl_send(q, &r);
}

/*
 * STAT_GET_STATUS (`rdma statistic mode supported`, and the names `statistic set ... optional-counters` may
 * take): the port's optional counters, as the kernel lists those a driver flags IB_STAT_FLAG_OPTIONAL. The
 * adapter has none (its counters are always on), so the table is empty, as a device without any gives it.
 */
int nicsim_netlink_stat_status(const struct nl_request *q) {
	struct nl_reply r;
	if (nl_arg32(q, RDMA_NLDEV_ATTR_DEV_INDEX, ~0u) != NICSIM_DEV_INDEX
	    || nl_arg32(q, RDMA_NLDEV_ATTR_PORT_INDEX, 0) != 1)
		return EINVAL;
	nl_begin(&r, q, 0);
	nl_dev_handle(&r);
	nl_u32(&r, RDMA_NLDEV_ATTR_PORT_INDEX, 1);
	nl_nest_end(&r, nl_nest(&r, RDMA_NLDEV_ATTR_STAT_HWCOUNTERS));
	return nl_send(q, &r);
}

static void hwcounter(struct nl_reply *r, const char *name, uint64_t value) {
	size_t e = nl_nest(r, RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY);
	nl_str(r, RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_NAME, name);
	nl_u64(r, RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_VALUE, value);
	nl_nest_end(r, e);
}

/* An MR's number and its counters, as the kernel's fill_stat_mr_entry and mlx5's give them. */
static void stat_mr_entry(struct nl_reply *r, const struct res_row *o) {
	nl_u32(r, RDMA_NLDEV_ATTR_RES_MRN, o->id >> 8);
	size_t table = nl_nest(r, RDMA_NLDEV_ATTR_STAT_HWCOUNTERS);
	hwcounter(r, "page_faults", o->faults);
	hwcounter(r, "page_invalidations", o->invalidations);
	hwcounter(r, "page_prefetch", o->prefetches);
	nl_nest_end(r, table);
}

/*
 * STAT_GET of RES_MR (`rdma statistic mr`): each MR by its number, with what on-demand paging did to it under
 * mlx5's names (page faults its accesses took, invalidations, prefetches: serve's RDMA_RES rows), as a dump (one
 * message per MR, each in a RES_MR table) or one MR by RES_MRN (its attributes at the top, as the kernel's doit).
 * mlx5 lists an on-demand MR's counters only; here every MR has them (zero if never paged), for the adapter
 * counts every MR's and does not know which the driver registered on demand.
 */
int nicsim_netlink_stat_mr(const struct nl_request *q, int *multi) {
	int dump = *multi, err = 0, found = 0;
	uint32_t only = nl_arg32(q, RDMA_NLDEV_ATTR_RES_MRN, ~0u);
	struct res_list l;
	if (nl_arg32(q, RDMA_NLDEV_ATTR_DEV_INDEX, ~0u) != NICSIM_DEV_INDEX || (!dump && only == ~0u)) return EINVAL;
	if ((err = res_fetch(&l))) return err;
	for (uint32_t i = 0; !err && i < l.count[RES_MR]; i++) {
		const struct res_row *o = &l.rows[RES_MR][i];
		struct nl_reply r;
		if (only != ~0u && o->id >> 8 != only) continue;
		found++;
		nl_begin(&r, q, dump ? NLM_F_MULTI : 0);
		nl_dev_handle(&r);
		if (dump) {
			size_t table = nl_nest(&r, RDMA_NLDEV_ATTR_RES_MR), e = nl_nest(&r, RDMA_NLDEV_ATTR_RES_MR_ENTRY);
			stat_mr_entry(&r, o);
			nl_nest_end(&r, e);
			nl_nest_end(&r, table);
		} else {
			stat_mr_entry(&r, o);
		}
		err = nl_send(q, &r);
	}
	res_free(&l);
	if (!err && !dump && !found) err = ENOENT;
	return err;
}
