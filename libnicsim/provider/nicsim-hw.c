/*
 * The provider on libnicsim (nicsim-hw.h): its user context, opened and closed, and the lock and
 * command path every hw file's verbs go through (its table: nicsim-hw-verbs.c).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <endian.h>
#include <unistd.h>

#include "nicsim-hw.h"
#include "nicsim/device.h"

int nicsim_hw_verbose(void) {
	const char *v = getenv("NICSIM_VERBOSE");
	return v && *v && strcmp(v, "0");
}

int nicsim_hw_errno(const char *what, int rc) {
	int err = rc < 0 ? -rc : rc;
	if (nicsim_hw_verbose() && (err == EINVAL || err == EBUSY || err == ENOMEM || err == EAGAIN))
		fprintf(stderr, "nicsim: %s refused by the adapter: %s (syndrome %s)\n", what, strerror(err),
			nicsim_syndrome_name(nicsim_last_syndrome()));
	return err;
}

/* Forks this process came through (counted in each child): a context opened before one is its parent's. */
static volatile unsigned forks;
static void forked(void) { forks++; }
static pthread_once_t fork_watch = PTHREAD_ONCE_INIT;
static void watch_forks(void) { pthread_atfork(NULL, NULL, forked); }

int nicsim_hw_wanted(void) {
	const char *mode = getenv("NICSIM_DRIVER");
	if (!mode || !strcmp(mode, "c")) return 1;
	if (!strcmp(mode, "java")) return 0;
	fprintf(stderr, "nicsim: NICSIM_DRIVER '%s' is neither 'c' (the default) nor 'java'\n", mode);
	return -1;
}

int nicsim_hw_open(struct nicsim_context *ctx) {
	const char *node = getenv("NICSIM_NODE");
	if (nicsim_hw_wanted() != 1)
		return 0;
	struct nicsim_hw *hw = calloc(1, sizeof(*hw));
	if (!hw)
		return -1;
	hw->node = node ? atoi(node) : 0;
	int rc = nicsim_open_context(&hw->dev, hw->node, ctx->session);
	if (!rc && (rc = nicsim_alloc_uar(hw->dev, &hw->uar)))
		nicsim_close(hw->dev);
	if (rc) {
		fprintf(stderr, "nicsim: the C driver cannot open a user context: %s\n", strerror(-rc));
		free(hw);
		return -1;
	}
	pthread_mutex_init(&hw->lock, NULL);
	hw->ctx = ctx;
	pthread_once(&fork_watch, watch_forks);
	hw->forks = forks;
	hw->pid = hw->opener = getpid();
	ctx->hw = hw;
	return 0;
}

int nicsim_hw_cmd(struct nicsim_hw *hw, uint32_t op, const uint64_t *in, int nin, uint64_t *out, int nout) {
	nicsim_hw_lock(hw);
	int st = nicsim_cmd(hw->dev, op, in, nin, out, nout, NULL);
	pthread_mutex_unlock(&hw->lock);
	return st < 0 ? -st : nicsim_status_errno(st);
}

int nicsim_hw_destroy(struct nicsim_hw *hw, uint32_t cmd, uint32_t handle, const char *what) {
	nicsim_hw_lock(hw);
	int rc = nicsim_destroy(hw->dev, cmd, handle);
	pthread_mutex_unlock(&hw->lock);
	return rc ? nicsim_hw_errno(what, rc) : 0;
}

void nicsim_hw_lock(struct nicsim_hw *hw) {
	pthread_mutex_lock(&hw->lock);
	/* no system call on the way of every verb; a kernel's user context is the forked child's too */
	if (hw->kern || hw->forks == forks)
		return;
	hw->forks = forks;
	if (hw->pid == getpid())
		return;
	struct nicsim_context *ctx = hw->ctx;
	struct nicsim_dev *mine;
	pthread_mutex_lock(&ctx->lock);
	int rc = ctx->pid != getpid() ? nicsim_rejoin(ctx) : 0; /* the session first: the kernel's view of us */
	pthread_mutex_unlock(&ctx->lock);
	if (!rc && !(rc = nicsim_open_context(&mine, hw->node, ctx->session))) {
		nicsim_close(hw->dev); /* our copy of the parent's connection: the parent's stays open */
		hw->dev = mine;
		hw->pid = getpid();
		return;
	}
	fprintf(stderr, "nicsim: a forked process could not join its parent's user context\n");
}

void nicsim_hw_close(struct nicsim_context *ctx) {
	struct nicsim_hw *hw = ctx->hw;
	if (!hw)
		return;
	if (hw->pid == getpid() && hw->opener == getpid()) /* a forked child's copy frees nothing of its parent's */
		nicsim_destroy(hw->dev, NICSIM_CMD_DEALLOC_UAR, hw->uar);
	nicsim_close(hw->dev); /* the kernel destroys whatever the program left, once no process holds it */
	pthread_mutex_destroy(&hw->lock);
	free(hw->qps);
	free(hw->srqs);
	free(hw);
	ctx->hw = NULL;
}

struct nicsim_ibv_qp *nicsim_hw_qp(struct nicsim_hw *hw, uint32_t qpn) {
	for (uint32_t i = 0; i < hw->nqps; i++)
		if (hw->qps[i]->vqp.qp.qp_num == qpn)
			return hw->qps[i];
	return NULL;
}

/* Whether the user context (this process's, imported) has an object of kind destroy under handle: 0 or an errno. */
int nicsim_hw_import(struct ibv_context *c, uint32_t destroy, uint32_t handle, uint64_t *length) {
	struct nicsim_hw *hw = hw_of(c);
	nicsim_hw_lock(hw);
	int rc = nicsim_user_import(hw->dev, destroy, handle, length);
	pthread_mutex_unlock(&hw->lock);
	return -rc;
}
