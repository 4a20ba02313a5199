// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Memory regions: CREATE_MKEY with a page list the adapter copies into its
 * translation table before it answers, so the list is freed right after.
 */
#include <linux/mm.h>
#include <rdma/iter.h>

#include "nicsim.h"

#define NICSIM_MIN_PAGE_SHIFT	12

static u32 nicsim_mr_access(int access)
{
	return access & (IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE |
			 IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_ATOMIC);
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
struct ib_mr *nicsim_get_dma_mr(struct ib_pd *ibpd, int access)
{
	struct nicsim_dev *dev = to_ndev(ibpd->device);
	u32 shift = dev->caps.max_page_shift;
	struct nicsim_buf list;
	struct nicsim_mr *mr;
	u64 top, pages, i;
	__be64 *entries;
	int err;

	if (device_iommu_mapped(&dev->pdev->dev))
		return ERR_PTR(-EOPNOTSUPP);
	top = __pa(high_memory - 1) + 1;
	pages = DIV_ROUND_UP(top, BIT_ULL(shift));
	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	err = nicsim_buf_alloc(dev, &list, pages * sizeof(u64));
	if (err)
		goto err_mr;
	entries = list.va;
	for (i = 0; i < pages; i++)
		entries[i] = cpu_to_be64(i << shift);
	err = nicsim_create_mkey(dev, mr, to_npd(ibpd)->pdn, 0, pages << shift,
				 access, shift, pages, &list);
	nicsim_buf_free(dev, &list);
	if (err)
		goto err_mr;
	return &mr->ibmr;

err_mr:
	kfree(mr);
	return ERR_PTR(err);
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
	ib_umem_release(mr->umem);
	kfree(mr);
	return 0;
}
