// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Memory regions: CREATE_MKEY with a page list the adapter copies into its
 * translation table before it answers, so the list is freed right after.
 */
#include <linux/mm.h>
#include <linux/module.h>
#include <rdma/iter.h>

#include "nicsim.h"

#define NICSIM_MIN_PAGE_SHIFT	12

static u32 nicsim_mr_access(int access)
{
	return access & (IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE |
			 IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_ATOMIC |
			 IB_ACCESS_MW_BIND);
}

/* The page list is pages big-endian bus addresses, each of 2^shift bytes. */
static int nicsim_create_mkey(struct nicsim_dev *dev, struct nicsim_mr *mr,
			      u32 pdn, u64 start, u64 length, int access,
			      u32 shift, u64 pages, struct nicsim_buf *list)
{
	u64 in[NICSIM_CREATE_MKEY_IN_WORDS];
	int err;

	in[NICSIM_CREATE_MKEY_IN_PD] = pdn;
	in[NICSIM_CREATE_MKEY_IN_START] = start;
	in[NICSIM_CREATE_MKEY_IN_LENGTH] = length;
	in[NICSIM_CREATE_MKEY_IN_ACCESS] = nicsim_mr_access(access);
	in[NICSIM_CREATE_MKEY_IN_PAGE_SHIFT] = shift;
	in[NICSIM_CREATE_MKEY_IN_PAGE_OFFSET] = start & (BIT_ULL(shift) - 1);
	in[NICSIM_CREATE_MKEY_IN_PAGES] = pages;
	in[NICSIM_CREATE_MKEY_IN_PAGE_LIST] = list->dma;
	err = nicsim_cmd_handle(dev, NICSIM_CMD_CREATE_MKEY, in,
				NICSIM_CREATE_MKEY_IN_WORDS, &mr->mkey);
	if (err)
		return err;
	mr->ibmr.lkey = mr->mkey;
	mr->ibmr.rkey = mr->mkey;
	return 0;
}

/*
 * All of the guest's memory for kernel consumers, whose addresses are DMA
 * addresses: a region from bus address 0 whose pages map to themselves. It
 * holds only where DMA addresses are physical ones (no IOMMU translates
 * them), as in a QEMU guest without a virtual IOMMU.
 */
static int nicsim_identity_mkey(struct nicsim_dev *dev, struct nicsim_mr *mr,
				u32 pdn, int access)
{
	u32 shift = dev->caps.max_page_shift;
	struct nicsim_buf list;
	u64 top, pages, i;
	__be64 *entries;
	int err;

	if (device_iommu_mapped(&dev->pdev->dev))
		return -EOPNOTSUPP;
	top = __pa(high_memory - 1) + 1;
	pages = DIV_ROUND_UP(top, BIT_ULL(shift));
	err = nicsim_buf_alloc(dev, &list, pages * sizeof(u64));
	if (err)
		return err;
	entries = list.va;
	for (i = 0; i < pages; i++)
		entries[i] = cpu_to_be64(i << shift);
	err = nicsim_create_mkey(dev, mr, pdn, 0, pages << shift, access, shift,
				 pages, &list);
	nicsim_buf_free(dev, &list);
	return err;
}

struct ib_mr *nicsim_get_dma_mr(struct ib_pd *ibpd, int access)
{
	struct nicsim_dev *dev = to_ndev(ibpd->device);
	struct nicsim_mr *mr;
	int err;

	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	err = nicsim_identity_mkey(dev, mr, to_npd(ibpd)->pdn, access);
	if (err)
		goto err_mr;
	return &mr->ibmr;

err_mr:
	kfree(mr);
	return ERR_PTR(err);
}

/*
 * Fast registration (alloc_mr, map_mr_sg, IB_WR_REG_MR) on the adapter's
 * indirect mkeys: the adapter has no page-list registration by work request,
 * but a UMR lays out an indirect mkey from a list of pieces, each under a key
 * of its own (docs/verbs.md, "Indirect mkeys"). A fast-registration MR is
 * such a key; each piece is a run of its pages under the PD's identity key
 * (all of memory mapped to itself, every right: the pieces are checked
 * against the rights of the rkey's user, which the layout's own access then
 * narrows). Nothing gives the identity key to a consumer.
 *
 * map_mr_sg leaves ibmr.iova the DMA address of the first byte, as ib_core
 * sets it; a ULP may change it before IB_WR_REG_MR (xprtrdma puts an RPC's
 * xid in its top 32 bits, ib_update_fast_reg_key users keep it). The UMR
 * gives the mkey ibmr.iova and ibmr.length as its start and length, so the
 * rkey answers exactly [iova, iova + length). Each MR takes max_num_sg
 * entries of the adapter's KLM table (mtt.klm.entries, 1024 on cx-gen3x16)
 * for its life.
 */
unsigned int nicsim_fr_pages = 6;
module_param_named(fr_pages, nicsim_fr_pages, uint, 0444);
MODULE_PARM_DESC(fr_pages,
		 "Pages a fast-registration MR maps at most, 1 to 60 (default 6: NVMe-oF's queues fit 1024 KLM entries)");

/* one PD's identity key made or dropped at a time */
static DEFINE_MUTEX(nicsim_fr_lock);

static int nicsim_fr_key_get(struct nicsim_dev *dev, struct nicsim_pd *pd)
{
	struct nicsim_mr id = {};
	int err = 0;

	mutex_lock(&nicsim_fr_lock);
	if (!pd->fr_users) {
		err = nicsim_identity_mkey(dev, &id, pd->pdn,
					   IB_ACCESS_LOCAL_WRITE |
					   IB_ACCESS_REMOTE_WRITE |
					   IB_ACCESS_REMOTE_READ |
					   IB_ACCESS_REMOTE_ATOMIC);
		pd->fr_key = id.mkey;
	}
	if (!err)
		pd->fr_users++;
	mutex_unlock(&nicsim_fr_lock);
	return err;
}

static void nicsim_fr_key_put(struct nicsim_dev *dev, struct nicsim_pd *pd)
{
	mutex_lock(&nicsim_fr_lock);
	if (!--pd->fr_users)
		nicsim_cmd_destroy(dev, NICSIM_CMD_DESTROY_MKEY, pd->fr_key);
	mutex_unlock(&nicsim_fr_lock);
}

struct ib_mr *nicsim_alloc_mr(struct ib_pd *ibpd, enum ib_mr_type type,
			      u32 max_num_sg)
{
	struct nicsim_dev *dev = to_ndev(ibpd->device);
	struct nicsim_pd *pd = to_npd(ibpd);
	u64 in[NICSIM_CREATE_INDIRECT_MKEY_IN_WORDS];
	struct nicsim_mr *mr;
	int err;

	if (type != IB_MR_TYPE_MEM_REG)
		return ERR_PTR(-EOPNOTSUPP);
	if (!max_num_sg ||
	    max_num_sg > min(nicsim_fr_pages, NICSIM_UMR_MAX_AT_ENTRIES))
		return ERR_PTR(-EINVAL);
	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	mr->pages = kcalloc(max_num_sg, sizeof(*mr->pages), GFP_KERNEL);
	if (!mr->pages) {
		err = -ENOMEM;
		goto err_mr;
	}
	mr->max_pages = max_num_sg;
	err = nicsim_fr_key_get(dev, pd);
	if (err)
		goto err_pages;
	in[NICSIM_CREATE_INDIRECT_MKEY_IN_PD] = pd->pdn;
	in[NICSIM_CREATE_INDIRECT_MKEY_IN_MAX_ENTRIES] = max_num_sg;
	err = nicsim_cmd_handle(dev, NICSIM_CMD_CREATE_INDIRECT_MKEY, in,
				NICSIM_CREATE_INDIRECT_MKEY_IN_WORDS, &mr->mkey);
	if (err)
		goto err_key;
	mr->ibmr.lkey = mr->mkey;
	mr->ibmr.rkey = mr->mkey;
	return &mr->ibmr;

err_key:
	nicsim_fr_key_put(dev, pd);
err_pages:
	kfree(mr->pages);
err_mr:
	kfree(mr);
	return ERR_PTR(err);
}

static int nicsim_set_page(struct ib_mr *ibmr, u64 addr)
{
	struct nicsim_mr *mr = to_nmr(ibmr);

	if (mr->npages == mr->max_pages)
		return -ENOMEM;
	mr->pages[mr->npages++] = addr;
	return 0;
}

int nicsim_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sg, int sg_nents,
		     unsigned int *sg_offset)
{
	struct nicsim_mr *mr = to_nmr(ibmr);
	int n;

	mr->npages = 0;
	n = ib_sg_to_pages(ibmr, sg, sg_nents, sg_offset, nicsim_set_page);
	/* where the layout's first entry starts, whatever iova becomes */
	mr->first = ibmr->iova;
	return n;
}

/* One layout entry: len bytes at DMA address addr under the identity key. */
static void nicsim_klm(u8 *e, u32 len, u32 key, u64 addr)
{
	*(__be32 *)(e + NICSIM_WQE_KLM_BYTE_COUNT) = cpu_to_be32(len);
	*(__be32 *)(e + NICSIM_WQE_KLM_KEY) = cpu_to_be32(key);
	*(__be64 *)(e + NICSIM_WQE_KLM_ADDR) = cpu_to_be64(addr);
}

/* the layout segment and the address segment, then the entries */
#define NICSIM_LAYOUT_HEAD	(2 * NICSIM_WQE_DS_UNIT)
#define NICSIM_KLM_BYTES	NICSIM_WQE_DS_UNIT

/*
 * The body of IB_WR_REG_MR's UMR after its control segment: the access, a
 * repeat count of 0 (a list), the entry count; the address
 * segment (the MR's iova and length: the key's start and length); then each
 * run of contiguous pages as one entry, the first from the MR's first byte
 * and the last to its end. Returns the body's bytes, or -EINVAL if the MR
 * maps nothing or its entries do not fit room.
 */
int nicsim_mr_layout(struct nicsim_mr *mr, int access, u8 *body, size_t room)
{
	u64 size = mr->ibmr.page_size, left = mr->ibmr.length, addr, len;
	u32 key = to_npd(mr->ibmr.pd)->fr_key, i, n = 0;
	u64 run_addr = 0, run_len = 0;

	if (!mr->npages || !left)
		return -EINVAL;
	for (i = 0; i < mr->npages && left; i++) {
		addr = i ? mr->pages[i] : mr->first;
		len = min(left, size - (addr & (size - 1)));
		left -= len;
		if (run_len && run_addr + run_len == addr &&
		    run_len + len <= SZ_1G) {
			run_len += len;
			continue;
		}
		if (run_len) {
			if (NICSIM_LAYOUT_HEAD + NICSIM_KLM_BYTES * (n + 1) >
			    room)
				return -EINVAL;
			nicsim_klm(body + NICSIM_LAYOUT_HEAD +
				   NICSIM_KLM_BYTES * n++, run_len, key, run_addr);
		}
		run_addr = addr;
		run_len = len;
	}
	if (left || NICSIM_LAYOUT_HEAD + NICSIM_KLM_BYTES * (n + 1) > room)
		return -EINVAL;
	nicsim_klm(body + NICSIM_LAYOUT_HEAD + NICSIM_KLM_BYTES * n++, run_len,
		   key, run_addr);
	memset(body, 0, NICSIM_LAYOUT_HEAD);
	*(__be32 *)(body + NICSIM_WQE_UMR_SEG_ACCESS) =
		cpu_to_be32(nicsim_mr_access(access));
	*(__be16 *)(body + NICSIM_WQE_UMR_SEG_ENTRIES) = cpu_to_be16(n);
	*(__be64 *)(body + NICSIM_WQE_UMR_SEG_START) =
		cpu_to_be64(mr->ibmr.iova);
	*(__be64 *)(body + NICSIM_WQE_UMR_SEG_LENGTH) =
		cpu_to_be64(mr->ibmr.length);
	return NICSIM_LAYOUT_HEAD + NICSIM_KLM_BYTES * n;
}

struct ib_mr *nicsim_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length,
				 u64 virt_addr, int access,
				 struct ib_udata *udata)
{
	struct nicsim_dev *dev = to_ndev(ibpd->device);
	struct ib_block_iter biter;
	struct nicsim_buf list;
	struct nicsim_mr *mr;
	unsigned long pgsz;
	__be64 *entries;
	u64 pages, i = 0;
	int err;

	if (access & IB_ACCESS_ON_DEMAND)
		return ERR_PTR(-EOPNOTSUPP);
	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	mr->umem = ib_umem_get(ibpd->device, start, length, access);
	if (IS_ERR(mr->umem)) {
		err = PTR_ERR(mr->umem);
		goto err_mr;
	}
	pgsz = ib_umem_find_best_pgsz(mr->umem,
				      GENMASK_ULL(dev->caps.max_page_shift,
						  NICSIM_MIN_PAGE_SHIFT),
				      virt_addr);
	if (!pgsz) {
		err = -EINVAL;
		goto err_umem;
	}
	pages = ib_umem_num_dma_blocks(mr->umem, pgsz);
	err = nicsim_buf_alloc(dev, &list, pages * sizeof(u64));
	if (err)
		goto err_umem;
	entries = list.va;
	rdma_umem_for_each_dma_block(mr->umem, &biter, pgsz)
		entries[i++] = cpu_to_be64(rdma_block_iter_dma_address(&biter));
	err = nicsim_create_mkey(dev, mr, to_npd(ibpd)->pdn, virt_addr, length,
				 access, ilog2(pgsz), pages, &list);
	nicsim_buf_free(dev, &list);
	if (err)
		goto err_umem;
	return &mr->ibmr;

err_umem:
	ib_umem_release(mr->umem);
err_mr:
	kfree(mr);
	return ERR_PTR(err);
}

int nicsim_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata)
{
	struct nicsim_mr *mr = to_nmr(ibmr);
	int err;

	err = nicsim_cmd_destroy(to_ndev(ibmr->device), NICSIM_CMD_DESTROY_MKEY,
				 mr->mkey);
	if (err)
		return err;
	if (mr->pages) {
		nicsim_fr_key_put(to_ndev(ibmr->device), to_npd(ibmr->pd));
		kfree(mr->pages);
	}
	ib_umem_release(mr->umem);
	kfree(mr);
	return 0;
}

/*
 * Memory windows (ALLOC_MW): type 1, bound by ibv_bind_mw, and type 2, bound
 * by IB_WR_BIND_MW; both binds are WQEs the process posts itself (the
 * provider's), on an MR registered with IB_ACCESS_MW_BIND. The first rkey
 * names the window to DEALLOC_MW, which goes by its index.
 */
int nicsim_alloc_mw(struct ib_mw *ibmw, struct ib_udata *udata)
{
	struct nicsim_mw *mw = to_nmw(ibmw);
	u64 in[NICSIM_ALLOC_MW_IN_WORDS];
	int err;

	in[NICSIM_ALLOC_MW_IN_PD] = to_npd(ibmw->pd)->pdn;
	in[NICSIM_ALLOC_MW_IN_TYPE] = ibmw->type;
	err = nicsim_cmd_handle(to_ndev(ibmw->device), NICSIM_CMD_ALLOC_MW, in,
				NICSIM_ALLOC_MW_IN_WORDS, &mw->handle);
	if (err)
		return err;
	ibmw->rkey = mw->handle;
	return 0;
}

int nicsim_dealloc_mw(struct ib_mw *ibmw)
{
	return nicsim_cmd_destroy(to_ndev(ibmw->device), NICSIM_CMD_DEALLOC_MW,
				  to_nmw(ibmw)->handle);
}
