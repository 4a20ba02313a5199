/*
 * The provider on libnicsim (nicsim-hw.h): tag matching. A tag-matching SRQ (CREATE_TM_SRQ) keeps
 * a list of tagged buffers on the adapter; ibv_post_srq_ops adds and deletes them by TM_OP
 * commands, each with its operation's index; its CQEs say what happened (an operation done, a
 * message matched to a tagged buffer, or one that took an ordinary receive), and this file turns
 * them into libibverbs' completions, as the Java driver does (SharedReceiveQueue.tmCompletion).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>

#include "nicsim-hw.h"
#include "nicsim/device.h"

/* A tagged buffer on the adapter's list (by the handle TAG_ADD gave), or an operation awaiting its CQE (by index). */
struct tm_entry { uint32_t key; uint64_t wr_id; int used; };

struct nicsim_hw_tm {
	uint32_t max_ops, pending; /* operations whose CQE is to come: signaled ones, and deletes that failed */
	uint16_t serial;
	uint32_t ntags, nops;
	struct tm_entry *tags, *ops;
};

int nicsim_hw_tm_init(struct nicsim_hw_srq *s, uint32_t max_tags, uint32_t max_ops) {
	struct nicsim_hw_tm *t = calloc(1, sizeof(*t));
	if (!t)
		return ENOMEM;
	t->max_ops = max_ops;
	t->ntags = max_tags;
	t->nops = max_ops + max_tags; /* failed deletes complete unasked */
	t->tags = calloc(t->ntags, sizeof(*t->tags));
	t->ops = calloc(t->nops, sizeof(*t->ops));
	if (!t->tags || !t->ops) {
		s->tm = t;
		nicsim_hw_tm_free(s);
		return ENOMEM;
	}
	s->tm = t;
	return 0;
}

void nicsim_hw_tm_free(struct nicsim_hw_srq *s) {
	if (!s->tm)
		return;
	free(s->tm->tags);
	free(s->tm->ops);
	free(s->tm);
	s->tm = NULL;
}

static struct tm_entry *find(struct tm_entry *e, uint32_t n, uint32_t key) {
	for (uint32_t i = 0; i < n; i++)
		if (e[i].used && e[i].key == key)
			return &e[i];
	return NULL;
}

static int keep(struct tm_entry *e, uint32_t n, uint32_t key, uint64_t wr_id) {
	struct tm_entry *slot = find(e, n, key);
	for (uint32_t i = 0; !slot && i < n; i++)
		if (!e[i].used)
			slot = &e[i];
	if (!slot)
		return ENOMEM;
	*slot = (struct tm_entry){key, wr_id, 1};
	return 0;
}

/* One operation by TM_OP: 0 or an errno. */
static int one_op(struct nicsim_hw *hw, struct nicsim_ibv_srq *srq, struct ibv_ops_wr *o) {
	struct nicsim_hw_tm *t = srq->hw->tm;
	int add = o->opcode == IBV_WR_TAG_ADD, signaled = (o->flags & IBV_OPS_SIGNALED) != 0;
	if (o->opcode != IBV_WR_TAG_ADD && o->opcode != IBV_WR_TAG_DEL && o->opcode != IBV_WR_TAG_SYNC)
		return EINVAL;
	if (add && o->tm.add.num_sge != 1)
		return EINVAL; /* TAG_ADD's one SGE: the tagged buffer */
	if (signaled && t->pending >= t->max_ops)
		return ENOMEM;
	uint16_t index = t->serial++;
	uint64_t in[NICSIM_TM_OP_IN_WORDS] = {0}, out = 0;
	in[NICSIM_TM_OP_IN_SRQN] = srq->hw->q.srqn;
	in[NICSIM_TM_OP_IN_OPCODE] = o->opcode;
	in[NICSIM_TM_OP_IN_FLAGS] = signaled;
	in[NICSIM_TM_OP_IN_HANDLE] = o->tm.handle;
	in[NICSIM_TM_OP_IN_UNEXPECTED_CNT] = o->tm.unexpected_cnt;
	in[NICSIM_TM_OP_IN_TAG] = add ? o->tm.add.tag : 0;
	in[NICSIM_TM_OP_IN_MASK] = add ? o->tm.add.mask : 0;
	in[NICSIM_TM_OP_IN_ADDR] = add ? o->tm.add.sg_list[0].addr : 0;
	in[NICSIM_TM_OP_IN_LENGTH] = add ? o->tm.add.sg_list[0].length : 0;
	in[NICSIM_TM_OP_IN_LKEY] = add ? o->tm.add.sg_list[0].lkey : 0;
	in[NICSIM_TM_OP_IN_OP_INDEX] = index;
	int st = nicsim_cmd(hw->dev, NICSIM_CMD_TM_OP, in, NICSIM_TM_OP_IN_WORDS, &out, 1, NULL);
	if (st)
		return st < 0 ? -st : nicsim_status_errno(st);
	int del_failed = o->opcode == IBV_WR_TAG_DEL && out == 0; /* a message took the buffer first: TM_ERR comes */
	if (add) {
		o->tm.handle = (uint32_t)out;
		keep(t->tags, t->ntags, (uint32_t)out, o->tm.add.recv_wr_id);
	} else if (o->opcode == IBV_WR_TAG_DEL && !del_failed) {
		struct tm_entry *e = find(t->tags, t->ntags, o->tm.handle);
		if (e)
			e->used = 0;
	}
	if ((signaled || del_failed) && !keep(t->ops, t->nops, index, o->wr_id))
		t->pending++;
	return 0;
}

int nicsim_hw_post_srq_ops(struct nicsim_ibv_srq *srq, struct ibv_ops_wr *op, struct ibv_ops_wr **bad) {
	struct nicsim_hw *hw = hw_of(srq->vsrq.srq.context);
	if (!srq->hw->tm) {
		*bad = op;
		return EINVAL; /* not a tag-matching SRQ */
	}
	int rc = 0;
	nicsim_hw_lock(hw);
	for (; op && !(rc = one_op(hw, srq, op)); op = op->next)
		;
	pthread_mutex_unlock(&hw->lock);
	if (rc)
		*bad = op;
	return rc;
}

int nicsim_hw_tm_wc(struct nicsim_hw_srq *s, const struct nicsim_wc *w, struct ibv_wc *wc, struct ibv_wc_tm_info *tm) {
	struct nicsim_hw_tm *t = s->tm;
	int error = w->opcode == NICSIM_CQE_RESP_ERR;
	switch (w->tm_kind) {
	case NICSIM_CQE_TM_ADD: case NICSIM_CQE_TM_DEL: case NICSIM_CQE_TM_SYNC: {
		struct tm_entry *e = find(t->ops, t->nops, w->wqe_counter);
		if (!e)
			return 0;
		e->used = 0;
		t->pending--;
		wc->wr_id = e->wr_id;
		wc->opcode = w->tm_kind == NICSIM_CQE_TM_ADD ? IBV_WC_TM_ADD
			     : w->tm_kind == NICSIM_CQE_TM_DEL ? IBV_WC_TM_DEL : IBV_WC_TM_SYNC;
		wc->wc_flags = w->tm_flags & IBV_WC_TM_SYNC_REQ;
		return 1;
	}
	case NICSIM_CQE_TM_MATCHED: {
		struct tm_entry *e = find(t->tags, t->ntags, w->wqe_counter);
		if (!e)
			return 0;
		if ((w->tm_flags & IBV_WC_TM_DATA_VALID) || error) /* the buffer is the program's again */
			e->used = 0;
		wc->wr_id = e->wr_id;
		wc->opcode = IBV_WC_TM_RECV;
		wc->byte_len = error ? 0 : w->byte_len;
		wc->wc_flags = w->tm_flags;
		if (!error) /* an error CQE's first bytes are the failed check's address and key */
			*tm = (struct ibv_wc_tm_info){.tag = w->tm_tag, .priv = w->tm_priv};
		return 1;
	}
	default:
		return -1; /* an ordinary receive of the SRQ's: the caller takes it */
	}
}

/* An ordinary receive's completion as mlx5 reports it: TM_NO_TAG, or TM_RECV for an unexpected tagged message. */
void nicsim_hw_tm_plain(const struct nicsim_wc *w, struct ibv_wc *wc) {
	if (w->opcode == NICSIM_CQE_RESP_ERR || (w->tm_kind != NICSIM_CQE_TM_NO_TAG && w->tm_kind != NICSIM_CQE_TM_UNEXPECTED))
		return;
	wc->opcode = w->tm_kind == NICSIM_CQE_TM_NO_TAG ? IBV_WC_TM_NO_TAG : IBV_WC_TM_RECV;
	wc->wc_flags |= w->tm_flags & IBV_WC_TM_SYNC_REQ;
}
