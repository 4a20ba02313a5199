/*
 * The provider on libnicsim (nicsim-hw.h): memory regions made by CREATE_MKEY over pages the
 * adapter may reach (a DMA mapping each), given a new PD, translation or access by REREG_MKEY.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "nicsim-hw.h"
#include "nicsim/device.h"

/* Whether access lets the adapter write the region's pages. */
static int writes(int access) {
	return access & (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)
		       ? NICSIM_DMA_WRITABLE : 0;
}

/* Remote writes need local write (IB spec): 0 or EINVAL. */
static int check_access(int access) {
	int remote = access & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC);
	return remote && !(access & IBV_ACCESS_LOCAL_WRITE) ? EINVAL : 0;
}

/* The pages under [addr, addr + length), mapped for the adapter: where, and their bus address (hw->lock held). */
struct pages { void *base; uint64_t len, iova; };
static int map_pages(struct nicsim_hw *hw, void *addr, size_t length, int access, struct pages *p) {
	uintptr_t first = (uintptr_t)addr & ~(uintptr_t)4095, end = ((uintptr_t)addr + length + 4095) & ~(uintptr_t)4095;
	p->base = (void *)first;
	p->len = end - first;
	return nicsim_dma_map(hw->dev, p->base, p->len, writes(access), &p->iova);
}

/* A failed command's errno, said on stderr when the adapter refused it. */
static int failed(const char *what, int rc) { return rc < 0 && rc != -EINVAL ? -rc : nicsim_hw_errno(what, rc); }

/*
 * An implicit on-demand region, the whole address space (ibv_reg_mr(pd, NULL, SIZE_MAX, ...)): the
 * kernel pages for it as the adapter touches each 2 MB page, so nothing is mapped here.
 */
static struct ibv_mr *reg_implicit(struct ibv_pd *pd, int access) {
	struct nicsim_hw *hw = hw_of(pd->context);
	int bad = access & IBV_ACCESS_ON_DEMAND ? check_access(access) : EINVAL;
	struct nicsim_ibv_mr *mr = bad ? NULL : calloc(1, sizeof(*mr));
	if (!mr) {
		errno = bad ? bad : ENOMEM;
		return NULL;
	}
	struct nicsim_mr m;
	nicsim_hw_lock(hw);
	int rc = nicsim_mr_create_implicit(hw->dev, to_npd(pd)->handle, (uint32_t)access, &m);
	pthread_mutex_unlock(&hw->lock);
	if (rc) { free(mr); errno = failed("CREATE_IMPLICIT_MKEY", rc); return NULL; }
	nicsim_hw_mr_keyed(mr, m.key, access);
	return &mr->vmr.ibv_mr;
}

/*
 * A region over [addr, addr + length): its pages mapped for the adapter. An on-demand one's pages
 * are listed not present, and the adapter's first touch of each faults it in through the kernel.
 */
struct ibv_mr *nicsim_hw_reg_mr(struct ibv_pd *pd, void *addr, size_t length, uint64_t iova, int access) {
	struct nicsim_hw *hw = hw_of(pd->context);
	if (!addr && length == SIZE_MAX)
		return reg_implicit(pd, access);
	int bad = length ? check_access(access) : EINVAL;
	if (bad) {
		errno = bad;
		return NULL;
	}
	struct nicsim_ibv_mr *mr = calloc(1, sizeof(*mr));
	if (!mr) { errno = ENOMEM; return NULL; }
	struct nicsim_mr m;
	struct pages p;
	uint64_t start = access & IBV_ACCESS_ZERO_BASED ? 0 : iova; /* the addresses its key names */
	nicsim_hw_lock(hw);
	int rc = map_pages(hw, addr, length, access, &p);
	if (!rc && (rc = nicsim_mr_create_at(hw->dev, to_npd(pd)->handle, addr, start, p.iova, length, (uint32_t)access,
					     &m)))
		nicsim_dma_unmap(hw->dev, p.iova);
	pthread_mutex_unlock(&hw->lock);
	if (rc) { free(mr); errno = failed("CREATE_MKEY", rc); return NULL; }
	mr->hw_base = p.base;
	mr->hw_len = p.len;
	mr->hw_iova = p.iova;
	mr->hw_start = start;
	nicsim_hw_mr_keyed(mr, m.key, access);
	return &mr->vmr.ibv_mr;
}

int nicsim_hw_dereg_mr(struct verbs_mr *vmr) {
	struct nicsim_ibv_mr *mr = to_nvmr(vmr);
	struct nicsim_hw *hw = hw_of(vmr->ibv_mr.context);
	nicsim_hw_lock(hw);
	int rc = nicsim_destroy(hw->dev, NICSIM_CMD_DESTROY_MKEY, mr->handle);
	if (!rc && mr->hw_len) /* an implicit region and one over device memory map nothing */
		nicsim_dma_unmap(hw->dev, mr->hw_iova);
	pthread_mutex_unlock(&hw->lock);
	if (rc) return nicsim_hw_errno("DESTROY_MKEY", rc);
	if (mr->hw_dm)
		nicsim_hw_dm_unused(mr->hw_dm);
	free(mr);
	return 0;
}

/*
 * ibv_rereg_mr (libibverbs checked the flags, and sets the MR's PD, address and length once this
 * returns 0): what the flags do not name stays; the keys stay, as a ConnectX keeps them, so a peer
 * and posted work go on naming the region. The pages are mapped again (a new translation, or the
 * adapter now writing them), and the old mapping goes once the adapter has the new one. A refused
 * change leaves the region as it was; errno says why.
 */
int nicsim_hw_rereg_mr(struct verbs_mr *vmr, int flags, struct ibv_pd *pd, void *addr, size_t length, int access) {
	struct nicsim_ibv_mr *mr = to_nvmr(vmr);
	struct nicsim_hw *hw = hw_of(vmr->ibv_mr.context);
	struct ibv_pd *to = flags & IBV_REREG_MR_CHANGE_PD ? pd : vmr->ibv_mr.pd;
	int move = flags & IBV_REREG_MR_CHANGE_TRANSLATION, acc = flags & IBV_REREG_MR_CHANGE_ACCESS ? access : vmr->access;
	int rc = !to || to->context != vmr->ibv_mr.context || ((acc ^ vmr->access) & IBV_ACCESS_ON_DEMAND) || !mr->hw_len
			 ? EINVAL : check_access(acc);
	if (rc) {
		errno = rc;
		return rc;
	}
	void *at = move ? addr : vmr->ibv_mr.addr;
	size_t len = move ? length : vmr->ibv_mr.length;
	uint64_t start = acc & IBV_ACCESS_ZERO_BASED ? 0 : move ? (uintptr_t)addr : mr->hw_start;
	struct nicsim_mr m = {.key = mr->handle, .addr = vmr->ibv_mr.addr, .len = vmr->ibv_mr.length};
	struct pages p;
	nicsim_hw_lock(hw);
	if (!(rc = map_pages(hw, at, len, acc, &p))) {
		rc = nicsim_mr_rereg(hw->dev, &m, to_npd(to)->handle, at, start, p.iova, len, (uint32_t)acc);
		nicsim_dma_unmap(hw->dev, rc ? p.iova : mr->hw_iova);
	}
	pthread_mutex_unlock(&hw->lock);
	if (rc) {
		errno = failed("REREG_MKEY", rc);
		return errno;
	}
	mr->hw_base = p.base;
	mr->hw_len = p.len;
	mr->hw_iova = p.iova;
	mr->hw_start = start;
	vmr->access = acc;
	return 0;
}

/*
 * A memory window of type 1 or 2 (ALLOC_MW; its rkey the adapter's handle for it). Binds are work
 * requests (nicsim-hw-post.c): the window takes its new rkey when one completes.
 */
struct ibv_mw *nicsim_hw_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type) {
	struct nicsim_hw *hw = hw_of(pd->context);
	if (type != IBV_MW_TYPE_1 && type != IBV_MW_TYPE_2) {
		errno = EINVAL;
		return NULL;
	}
	struct nicsim_ibv_mw *mw = calloc(1, sizeof(*mw));
	if (!mw) { errno = ENOMEM; return NULL; }
	uint64_t in[NICSIM_ALLOC_MW_IN_WORDS] = {0}, key = 0;
	in[NICSIM_ALLOC_MW_IN_PD] = to_npd(pd)->handle;
	in[NICSIM_ALLOC_MW_IN_TYPE] = type;
	int rc = nicsim_hw_cmd(hw, NICSIM_CMD_ALLOC_MW, in, NICSIM_ALLOC_MW_IN_WORDS, &key, 1);
	if (rc) { free(mw); errno = rc; return NULL; }
	mw->mw.handle = (uint32_t)key; /* the window's first rkey: DEALLOC_MW names it so (by its index) */
	mw->mw.rkey = (uint32_t)key;
	mw->mw.context = pd->context;
	mw->mw.pd = pd;
	mw->mw.type = type;
	return &mw->mw;
}

int nicsim_hw_dealloc_mw(struct ibv_mw *mw) {
	struct nicsim_hw *hw = hw_of(mw->context);
	int rc = nicsim_hw_destroy(hw, NICSIM_CMD_DEALLOC_MW, mw->handle, "DEALLOC_MW");
	if (rc) return rc;
	free(mw);
	return 0;
}

struct nicsim_mkey *nicsim_hw_create_mkey(struct ibv_pd *pd, uint32_t create_flags, uint16_t max_entries) {
	(void)create_flags; /* indirect: the only kind mlx5dv_create_mkey lets through */
	struct nicsim_hw *hw = hw_of(pd->context);
	struct nicsim_mkey *k = calloc(1, sizeof(*k));
	if (!k) { errno = ENOMEM; return NULL; }
	uint64_t in[NICSIM_CREATE_INDIRECT_MKEY_IN_WORDS] = {0}, key = 0;
	in[NICSIM_CREATE_INDIRECT_MKEY_IN_PD] = to_npd(pd)->handle;
	in[NICSIM_CREATE_INDIRECT_MKEY_IN_MAX_ENTRIES] = max_entries;
	int rc = nicsim_hw_cmd(hw, NICSIM_CMD_CREATE_INDIRECT_MKEY, in, NICSIM_CREATE_INDIRECT_MKEY_IN_WORDS, &key, 1);
	if (rc) { free(k); errno = rc; return NULL; }
	k->handle = k->dv.lkey = k->dv.rkey = (uint32_t)key;
	k->context = pd->context;
	k->max_entries = max_entries;
	return k;
}

int nicsim_hw_destroy_mkey(struct nicsim_mkey *k) {
	struct nicsim_hw *hw = hw_of(k->context);
	int rc = nicsim_hw_destroy(hw, NICSIM_CMD_DESTROY_MKEY, k->handle, "DESTROY_MKEY");
	if (rc) return rc;
	free(k);
	return 0;
}

/*
 * The body of a layout UMR's WQE (after its control segment, whose bytes 12..15 name the mkey): the
 * access (BE32), the repeat count (BE32; 0: a list), the entry count (bytes 14..15), then 16 bytes an
 * entry: an interleaved one's stride and length (BE16 each), a list's length (BE32); its lkey (BE32)
 * and address (BE64). Its bytes, or -EINVAL for a layout the adapter would not take (as the Java
 * driver checks: access, a list entry of no bytes, an interleaved entry's count and skip).
 */
int nicsim_hw_layout(const struct nicsim_umr *u, uint8_t *body) {
	unsigned ok = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
	if ((u->access & ~ok) || !u->n || u->n > 61)
		return -EINVAL;
	const uint32_t seg = NICSIM_WQE_DS_UNIT; /* the layout segment, then each entry */
	memset(body, 0, seg);
	nicsim_put32(body + NICSIM_WQE_UMR_SEG_ACCESS, u->access);
	nicsim_put32(body + NICSIM_WQE_UMR_SEG_REPEAT, u->repeat);
	body[NICSIM_WQE_UMR_SEG_ENTRIES] = (uint8_t)(u->n >> 8);
	body[NICSIM_WQE_UMR_SEG_ENTRIES + 1] = (uint8_t)u->n;
	for (uint32_t i = 0; i < u->n; i++) {
		const struct nicsim_klm *k = &u->klm[i];
		uint8_t *e = body + seg + seg * i;
		if (u->repeat ? !k->length || k->length + k->skip > 0xffff : !k->length)
			return -EINVAL;
		if (u->repeat) { /* stride, then byte count, 16 bits each */
			nicsim_put16(e + NICSIM_WQE_KLM_STRIDE, (uint16_t)(k->length + k->skip));
			nicsim_put16(e + NICSIM_WQE_KLM_REPEAT_BYTE_COUNT, (uint16_t)k->length);
		} else {
			nicsim_put32(e + NICSIM_WQE_KLM_BYTE_COUNT, k->length);
		}
		nicsim_put32(e + NICSIM_WQE_KLM_KEY, k->lkey);
		nicsim_put64(e + NICSIM_WQE_KLM_ADDR, k->addr);
	}
	return (int)(seg + seg * u->n);
}

/*
 * ibv_advise_mr: each SGE's pages brought in ahead by ODP_PREFETCH (with IBV_ADVISE_MR_FLAG_FLUSH,
 * ODP_PREFETCH_FLUSH: in before it returns); PREFETCH_NO_FAULT asks for nothing here.
 */
int nicsim_hw_advise_mr(struct ibv_pd *pd, enum ibv_advise_mr_advice advice, uint32_t flags, struct ibv_sge *sg,
		     uint32_t n) {
	struct nicsim_hw *hw = hw_of(pd->context);
	if (advice != IBV_ADVISE_MR_ADVICE_PREFETCH && advice != IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE &&
	    advice != IBV_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT)
		return EOPNOTSUPP;
	if ((flags & ~(uint32_t)IBV_ADVISE_MR_FLAG_FLUSH) || !n)
		return EINVAL;
	if (advice == IBV_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT)
		return 0;
	uint32_t op = flags & IBV_ADVISE_MR_FLAG_FLUSH ? NICSIM_CMD_ODP_PREFETCH_FLUSH : NICSIM_CMD_ODP_PREFETCH;
	int st = 0;
	nicsim_hw_lock(hw);
	for (uint32_t i = 0; !st && i < n; i++) {
		uint64_t in[NICSIM_ODP_PREFETCH_IN_WORDS] = {0};
		in[NICSIM_ODP_PREFETCH_IN_PD] = to_npd(pd)->handle;
		in[NICSIM_ODP_PREFETCH_IN_LKEY] = sg[i].lkey;
		in[NICSIM_ODP_PREFETCH_IN_ADDR] = sg[i].addr;
		in[NICSIM_ODP_PREFETCH_IN_LENGTH] = sg[i].length;
		st = nicsim_cmd(hw->dev, op, in, NICSIM_ODP_PREFETCH_IN_WORDS, NULL, 0, NULL);
	}
	pthread_mutex_unlock(&hw->lock);
	return st < 0 ? -st : nicsim_status_errno(st);
}

/* An MR of the shared user context (ibv_import_mr): its handle is its key. */
struct ibv_mr *nicsim_hw_import_mr(struct ibv_pd *pd, uint32_t handle) {
	struct nicsim_ibv_mr *mr;
	uint64_t length = 0;
	int rc = nicsim_hw_import(pd->context, NICSIM_CMD_DESTROY_MKEY, handle, &length);
	if (rc || !(mr = calloc(1, sizeof(*mr)))) { errno = rc ? rc : ENOMEM; return NULL; }
	mr->handle = mr->vmr.ibv_mr.handle = mr->vmr.ibv_mr.lkey = mr->vmr.ibv_mr.rkey = handle;
	mr->vmr.ibv_mr.length = length;
	mr->vmr.ibv_mr.context = pd->context;
	mr->vmr.ibv_mr.pd = pd;
	mr->vmr.mr_type = IBV_MR_TYPE_IMPORTED_MR;
	return &mr->vmr.ibv_mr;
}
