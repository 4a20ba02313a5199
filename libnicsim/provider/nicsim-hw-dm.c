/*
 * The provider on libnicsim (nicsim-hw.h): device memory, the adapter's on-chip bytes. ALLOC_DM
 * gives an offset; the program writes and reads them through BAR0 (dmBase + offset: posted writes
 * of up to 64 bytes, reads of 8, as a CPU's to a mapped device page), and a region over them lists
 * pages at NICSIM_DM_BUS_BASE + offset, where RDMA reaches them at the chip's own timing.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "nicsim-hw.h"
#include "nicsim/device.h"

struct nicsim_hw_dm {
	struct ibv_dm dm;
	uint64_t offset, length;
	int regions; /* MRs over it: it is not freed under them */
};

static struct nicsim_hw_dm *to_hdm(struct ibv_dm *dm) { return container_of(dm, struct nicsim_hw_dm, dm); }

/* Whether [at, at + n) is inside dm, both multiples of 4 (the window is written and read so, as mlx5's). */
static int in_range(struct nicsim_hw_dm *d, uint64_t at, size_t n) {
	return !(at & 3) && !(n & 3) && at <= d->length && n <= d->length - at;
}

/*
 * Bytes between the program and dm at `at`, through BAR0 (dmBase + offset): from `src` written in
 * bursts of 64 (write-combined, as a CPU sends them), or into `dst` read 8 at a time (each read a
 * round trip: the simulated time it takes passes). 0 or an errno.
 */
static int copy_dm(struct ibv_dm *dm, uint64_t at, const void *src, void *dst, size_t n) {
	struct nicsim_hw_dm *d = to_hdm(dm);
	struct nicsim_hw *hw = hw_of(dm->context);
	if (!in_range(d, at, n))
		return EINVAL;
	uint64_t bar = nicsim_caps(hw->dev)->dm_base + d->offset + at;
	size_t step = src ? 64 : 8;
	int rc = 0;
	nicsim_hw_lock(hw);
	for (size_t i = 0; !rc && i < n; i += step) {
		uint32_t len = (uint32_t)(n - i < step ? n - i : step);
		rc = src ? nicsim_mmio_write(hw->dev, bar + i, (const uint8_t *)src + i, len)
			 : nicsim_mmio_read(hw->dev, bar + i, (uint8_t *)dst + i, len);
	}
	pthread_mutex_unlock(&hw->lock);
	return rc < 0 ? -rc : rc ? EIO : 0;
}

static int memcpy_to_dm(struct ibv_dm *dm, uint64_t at, const void *from, size_t n) {
	return copy_dm(dm, at, from, NULL, n);
}

static int memcpy_from_dm(void *to, struct ibv_dm *dm, uint64_t at, size_t n) { return copy_dm(dm, at, NULL, to, n); }

struct ibv_dm *nicsim_hw_alloc_dm(struct ibv_context *c, struct ibv_alloc_dm_attr *attr) {
	struct nicsim_hw *hw = hw_of(c);
	uint64_t most = nicsim_caps(hw->dev)->max_dm;
	int bad = attr->comp_mask || !attr->length || attr->length > most || attr->log_align_req > 20 ? EINVAL : 0;
	if (!most || bad) {
		errno = most ? bad : EOPNOTSUPP; /* a profile without device memory offers none */
		return NULL;
	}
	struct nicsim_hw_dm *d = calloc(1, sizeof(*d));
	if (!d) { errno = ENOMEM; return NULL; }
	uint64_t in[NICSIM_ALLOC_DM_IN_WORDS] = {0}, offset = 0;
	in[NICSIM_ALLOC_DM_IN_LENGTH] = attr->length;
	in[NICSIM_ALLOC_DM_IN_LOG_ALIGN] = attr->log_align_req;
	int rc = nicsim_hw_cmd(hw, NICSIM_CMD_ALLOC_DM, in, NICSIM_ALLOC_DM_IN_WORDS, &offset, 1);
	if (rc) { free(d); errno = rc; return NULL; }
	d->offset = offset;
	d->length = attr->length;
	d->dm.context = c;
	d->dm.handle = (uint32_t)offset;
	d->dm.memcpy_to_dm = memcpy_to_dm;
	d->dm.memcpy_from_dm = memcpy_from_dm;
	return &d->dm;
}

/* Device memory of the shared user context (ibv_import_dm): its handle is its offset. */
struct ibv_dm *nicsim_hw_import_dm(struct ibv_context *c, uint32_t handle) {
	uint64_t length;
	int rc = nicsim_hw_import(c, NICSIM_CMD_DEALLOC_DM, handle, &length);
	if (rc) { errno = rc; return NULL; }
	struct nicsim_hw_dm *d = calloc(1, sizeof(*d));
	if (!d) { errno = ENOMEM; return NULL; }
	d->offset = handle;
	d->length = length;
	d->dm.context = c;
	d->dm.handle = handle;
	d->dm.memcpy_to_dm = memcpy_to_dm;
	d->dm.memcpy_from_dm = memcpy_from_dm;
	return &d->dm;
}

void nicsim_hw_unimport_dm(struct ibv_dm *dm) { free(to_hdm(dm)); }

int nicsim_hw_free_dm(struct ibv_dm *dm) {
	struct nicsim_hw_dm *d = to_hdm(dm);
	struct nicsim_hw *hw = hw_of(dm->context);
	if (d->regions)
		return EBUSY;
	int rc = nicsim_hw_destroy(hw, NICSIM_CMD_DEALLOC_DM, (uint32_t)d->offset, "DEALLOC_DM");
	if (rc) return rc;
	free(d);
	return 0;
}

/* A zero-based region over [at, at + n) of dm (mlx5's rule: ZERO_BASED, not on demand; n may be 0, as mlx5's). */
struct ibv_mr *nicsim_hw_reg_dm_mr(struct ibv_pd *pd, struct ibv_dm *dm, uint64_t at, size_t n, unsigned int access) {
	struct nicsim_hw_dm *d = to_hdm(dm);
	struct nicsim_hw *hw = hw_of(pd->context);
	if (!(access & IBV_ACCESS_ZERO_BASED) || (access & IBV_ACCESS_ON_DEMAND) || at > d->length ||
	    n > d->length - at) {
		errno = EINVAL;
		return NULL;
	}
	struct nicsim_ibv_mr *mr = calloc(1, sizeof(*mr));
	if (!mr) { errno = ENOMEM; return NULL; }
	uint64_t bus = NICSIM_DM_BUS_BASE + d->offset + at;
	struct nicsim_mr m;
	nicsim_hw_lock(hw);
	int rc = nicsim_mr_create_at(hw->dev, to_npd(pd)->handle, (void *)(uintptr_t)bus, 0, bus, n, access, &m);
	pthread_mutex_unlock(&hw->lock);
	if (rc) { free(mr); errno = rc < 0 ? -rc : nicsim_hw_errno("CREATE_MKEY", rc); return NULL; }
	d->regions++;
	mr->hw_dm = d;
	nicsim_hw_mr_keyed(mr, m.key, (int)access);
	mr->vmr.ibv_mr.context = pd->context; /* what ibv_cmd_reg_dm_mr fills (ibv_reg_dm_mr is libibverbs' inline) */
	mr->vmr.ibv_mr.pd = pd;
	mr->vmr.ibv_mr.addr = (void *)(uintptr_t)at; /* zero-based: the region's byte X is iova X */
	mr->vmr.ibv_mr.length = n;
	return &mr->vmr.ibv_mr;
}

void nicsim_hw_dm_unused(void *dm) { ((struct nicsim_hw_dm *)dm)->regions--; }
