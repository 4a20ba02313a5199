// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Device and port queries, user contexts and their mappings, PDs and AHs.
 */
#include <rdma/ib_mad.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/nicsim-abi.h>

#include "nicsim.h"

int nicsim_query_device(struct ib_device *ibdev, struct ib_device_attr *props,
			struct ib_udata *udata)
{
	struct nicsim_dev *dev = to_ndev(ibdev);
	struct nicsim_caps *c = &dev->caps;

	if (udata->inlen || udata->outlen)
		return -EINVAL;
	memset(props, 0, sizeof(*props));
	props->fw_ver = ioread32be(dev->bar0 + NICSIM_REG_FW_REV);
	props->sys_image_guid = ibdev->node_guid;
	props->max_mr_size = c->max_msg_size;
	props->page_size_cap = GENMASK_ULL(c->max_page_shift, PAGE_SHIFT);
	props->vendor_id = NICSIM_PCI_VENDOR;
	props->vendor_part_id = NICSIM_PCI_DEVICE;
	props->hw_ver = dev->pdev->revision;
	props->max_qp = c->max_qp;
	props->max_qp_wr = c->max_qp_wr;
	props->max_send_sge = c->max_sge;
	props->max_recv_sge = c->max_sge;
	props->max_sge_rd = c->max_sge;
	props->max_cq = c->max_cq;
	props->max_cqe = c->max_cqe;
	props->max_mr = c->max_mkey;
	props->max_pd = c->max_pd;
	props->max_qp_rd_atom = c->max_rd_atomic;
	props->max_qp_init_rd_atom = c->max_rd_atomic;
	props->max_res_rd_atom = c->max_rd_atomic * c->max_qp;
	props->atomic_cap = IB_ATOMIC_HCA;
	props->max_ah = c->max_qp;
	props->max_srq = c->max_qp;
	props->max_srq_wr = c->max_qp_wr;
	props->max_srq_sge = c->max_sge;
	props->max_pkeys = 1;
	props->max_mcast_grp = NICSIM_MAX_MCAST_GROUPS;
	props->max_mcast_qp_attach = NICSIM_MAX_MCAST_QP_ATTACH;
	props->max_total_mcast_qp_attach =
		NICSIM_MAX_MCAST_GROUPS * NICSIM_MAX_MCAST_QP_ATTACH;
	props->local_ca_ack_delay = 16;
	/* fast registration by UMR on indirect mkeys (nicsim_mr.c) */
	props->device_cap_flags = IB_DEVICE_MEM_MGT_EXTENSIONS |
		IB_DEVICE_MEM_WINDOW | IB_DEVICE_MEM_WINDOW_TYPE_2B;
	props->max_mw = c->max_mkey;
	props->max_fast_reg_page_list_len = min(nicsim_fr_pages,
						NICSIM_UMR_MAX_AT_ENTRIES);
	return 0;
}

/* The firmware revision register: major << 16 | minor. */
void nicsim_get_fw_str(struct ib_device *ibdev, char *str)
{
	u32 rev = ioread32be(to_ndev(ibdev)->bar0 + NICSIM_REG_FW_REV);

	snprintf(str, IB_FW_VERSION_NAME_MAX, "%u.%u", rev >> 16, rev & 0xffff);
}

int nicsim_query_port(struct ib_device *ibdev, u32 port,
		      struct ib_port_attr *props)
{
	struct nicsim_dev *dev = to_ndev(ibdev);

	/* ib_core zeroed props */
	props->lid = dev->caps.lid;
	props->lmc = 0;
	props->sm_lid = dev->caps.sm_lid;
	/*
	 * PortInfo.SubnetTimeOut as the SMA reports it (4.096 us << 18, about
	 * 1 s): ib_srp bases its CM timeouts on it and warns at 0.
	 */
	props->subnet_timeout = 18;
	/* the SMA's PortInfo: IsSM on the subnet manager's port among them */
	props->port_cap_flags = READ_ONCE(dev->port_cap_flags);
	/* a port whose link is down trains again and again: Polling */
	if (READ_ONCE(dev->port_active)) {
		props->state = IB_PORT_ACTIVE;
		props->phys_state = IB_PORT_PHYS_STATE_LINK_UP;
	} else {
		props->state = IB_PORT_DOWN;
		props->phys_state = IB_PORT_PHYS_STATE_POLLING;
	}
	props->max_mtu = min_t(u32, dev->caps.max_mtu, IB_MTU_4096);
	props->active_mtu = props->max_mtu;
	props->gid_tbl_len = 1;
	props->pkey_tbl_len = 1;
	props->max_msg_sz = dev->caps.max_msg_size;
	props->max_vl_num = 1;
	props->active_width = IB_WIDTH_4X;
	props->active_speed = IB_SPEED_EDR;
	return 0;
}

/*
 * The one GID: the link-local prefix and the port's GUID, the node GUID (as
 * the SMA's NodeInfo says; IBA 4.1.1), the name the fabric's SA gives the port
 * in its PathRecords (and attached programs' ports have).
 */
int nicsim_query_gid(struct ib_device *ibdev, u32 port, int index,
		     union ib_gid *gid)
{
	if (index)
		return -EINVAL;
	gid->global.subnet_prefix = cpu_to_be64(0xfe80000000000000ULL);
	gid->global.interface_id = cpu_to_be64(to_ndev(ibdev)->caps.node_guid);
	return 0;
}

int nicsim_query_pkey(struct ib_device *ibdev, u32 port, u16 index, u16 *pkey)
{
	if (index)
		return -EINVAL;
	*pkey = 0xffff;
	return 0;
}

int nicsim_get_port_immutable(struct ib_device *ibdev, u32 port,
			      struct ib_port_immutable *immutable)
{
	struct ib_port_attr attr;
	int err;

	err = ib_query_port(ibdev, port, &attr);
	if (err)
		return err;
	immutable->pkey_tbl_len = attr.pkey_tbl_len;
	immutable->gid_tbl_len = attr.gid_tbl_len;
	/* QP0 and QP1 through CREATE_QP: ib_mad, the SA client and ib_cm run */
	immutable->core_cap_flags = RDMA_CORE_PORT_IBA_IB;
	immutable->max_mad_size = IB_MGMT_MAD_SIZE;
	return 0;
}

/*
 * MODIFY_PORT: the adapter sets, then clears, bits of port 1's
 * CapabilityMask, which its SMA reports in PortInfo (and so the SA in
 * PortInfoRecords); set = clear = 0 reads it. The answer is kept for
 * query_port. Serialized so the kept mask is the last command's.
 */
int nicsim_port_caps(struct nicsim_dev *dev, u32 set, u32 clear)
{
	u64 in[NICSIM_MODIFY_PORT_IN_WORDS];
	u64 out[NICSIM_MODIFY_PORT_OUT_WORDS];
	int err;

	in[NICSIM_MODIFY_PORT_IN_PORT] = 1;
	in[NICSIM_MODIFY_PORT_IN_SET] = set;
	in[NICSIM_MODIFY_PORT_IN_CLEAR] = clear;
	mutex_lock(&dev->port_lock);
	err = nicsim_cmd_exec(dev, NICSIM_CMD_MODIFY_PORT, in, ARRAY_SIZE(in),
			      out, ARRAY_SIZE(out));
	if (!err)
		WRITE_ONCE(dev->port_cap_flags,
			   out[NICSIM_MODIFY_PORT_OUT_CAPABILITY_MASK]);
	mutex_unlock(&dev->port_lock);
	return err;
}

/*
 * The capability bits ib_cm (IB_PORT_CM_SUP), ib_srpt
 * (IB_PORT_DEVICE_MGMT_SUP) and ib_umad's issm set and clear go to the
 * adapter, whose SMA reports them, as mlx5 carries them to the vport.
 */
int nicsim_modify_port(struct ib_device *ibdev, u32 port, int mask,
		       struct ib_port_modify *props)
{
	if (mask & IB_PORT_SHUTDOWN)
		return -EOPNOTSUPP;
	return nicsim_port_caps(to_ndev(ibdev), props->set_port_cap_mask,
				props->clr_port_cap_mask);
}

static struct rdma_user_mmap_entry *
nicsim_mmap_insert(struct ib_ucontext *uctx, struct nicsim_mmap_entry *entry,
		   size_t len, u64 *key)
{
	int err;

	err = rdma_user_mmap_entry_insert(uctx, &entry->rdma_entry, len);
	if (err) {
		kfree(entry);
		return NULL;
	}
	*key = rdma_user_mmap_get_offset(&entry->rdma_entry);
	return &entry->rdma_entry;
}

/* A UAR page of BAR0 for user space. */
struct rdma_user_mmap_entry *
nicsim_mmap_insert_io(struct ib_ucontext *uctx, u64 pfn, u64 *key)
{
	struct nicsim_mmap_entry *entry;

	entry = kzalloc(sizeof(*entry), GFP_KERNEL);
	if (!entry)
		return NULL;
	entry->dev = to_ndev(uctx->device);
	entry->type = NICSIM_MMAP_IO;
	entry->pfn = pfn;
	return nicsim_mmap_insert(uctx, entry, PAGE_SIZE, key);
}

/*
 * An object's ring buffer for user space. On success the entry owns the
 * buffer (buf is cleared): it is freed once unmapped and removed.
 */
struct rdma_user_mmap_entry *
nicsim_mmap_insert_buf(struct ib_ucontext *uctx, struct nicsim_buf *buf,
		       u64 *key)
{
	struct rdma_user_mmap_entry *rdma_entry;
	struct nicsim_mmap_entry *entry;

	entry = kzalloc(sizeof(*entry), GFP_KERNEL);
	if (!entry)
		return NULL;
	entry->dev = to_ndev(uctx->device);
	entry->type = NICSIM_MMAP_DMA;
	entry->buf = *buf;
	entry->pfn = page_to_pfn(virt_to_page(buf->va));
	rdma_entry = nicsim_mmap_insert(uctx, entry, buf->size, key);
	if (rdma_entry)
		memset(buf, 0, sizeof(*buf));
	return rdma_entry;
}

void nicsim_mmap_free(struct rdma_user_mmap_entry *rdma_entry)
{
	struct nicsim_mmap_entry *entry = to_nentry(rdma_entry);

	if (entry->type == NICSIM_MMAP_DMA)
		nicsim_buf_free(entry->dev, &entry->buf);
	kfree(entry);
}

int nicsim_mmap(struct ib_ucontext *uctx, struct vm_area_struct *vma)
{
	struct rdma_user_mmap_entry *rdma_entry;
	struct nicsim_mmap_entry *entry;
	pgprot_t prot;
	int err;

	rdma_entry = rdma_user_mmap_entry_get(uctx, vma);
	if (!rdma_entry)
		return -EINVAL;
	entry = to_nentry(rdma_entry);
	/* doorbells uncached; rings are coherent host memory */
	prot = entry->type == NICSIM_MMAP_IO ?
		pgprot_noncached(vma->vm_page_prot) : vma->vm_page_prot;
	err = rdma_user_mmap_io(uctx, vma, entry->pfn,
				rdma_entry->npages * PAGE_SIZE, prot,
				rdma_entry);
	rdma_user_mmap_entry_put(rdma_entry);
	return err;
}

int nicsim_alloc_ucontext(struct ib_ucontext *uctx, struct ib_udata *udata)
{
	struct nicsim_ucontext *ctx = to_nuctx(uctx);
	struct nicsim_dev *dev = to_ndev(uctx->device);
	struct nicsim_ibv_alloc_ucontext_resp resp = {};
	u64 pfn;
	int err;

	err = nicsim_cmd_handle(dev, NICSIM_CMD_ALLOC_UAR, NULL, 0, &ctx->uar);
	if (err)
		return err;
	pfn = (dev->bar0_start + dev->caps.uar_base +
	       (u64)ctx->uar * dev->caps.uar_page_size) >> PAGE_SHIFT;
	ctx->uar_entry = nicsim_mmap_insert_io(uctx, pfn, &resp.uar_mmap_key);
	if (!ctx->uar_entry) {
		err = -ENOMEM;
		goto err_uar;
	}
	resp.uar = ctx->uar;
	resp.uar_page_size = dev->caps.uar_page_size;
	resp.bf_size = dev->caps.bf_size;
	resp.max_inline = dev->caps.max_inline;
	resp.max_sge = dev->caps.max_sge;
	resp.max_qp_wr = dev->caps.max_qp_wr;
	resp.max_cqe = dev->caps.max_cqe;
	resp.lid = dev->caps.lid;
	err = ib_copy_to_udata(udata, &resp, min(sizeof(resp), udata->outlen));
	if (err)
		goto err_entry;
	return 0;

err_entry:
	rdma_user_mmap_entry_remove(ctx->uar_entry);
err_uar:
	nicsim_cmd_destroy(dev, NICSIM_CMD_DEALLOC_UAR, ctx->uar);
	return err;
}

void nicsim_dealloc_ucontext(struct ib_ucontext *uctx)
{
	struct nicsim_ucontext *ctx = to_nuctx(uctx);

	rdma_user_mmap_entry_remove(ctx->uar_entry);
	nicsim_cmd_destroy(to_ndev(uctx->device), NICSIM_CMD_DEALLOC_UAR,
			   ctx->uar);
}

int nicsim_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct nicsim_dev *dev = to_ndev(ibpd->device);
	struct nicsim_pd *pd = to_npd(ibpd);
	struct nicsim_ibv_alloc_pd_resp resp = {};
	int err;

	err = nicsim_cmd_handle(dev, NICSIM_CMD_ALLOC_PD, NULL, 0, &pd->pdn);
	if (err)
		return err;
	if (udata && udata->outlen) {
		resp.pdn = pd->pdn;
		err = ib_copy_to_udata(udata, &resp,
				       min(sizeof(resp), udata->outlen));
		if (err) {
			nicsim_cmd_destroy(dev, NICSIM_CMD_DEALLOC_PD, pd->pdn);
			return err;
		}
	}
	return 0;
}

int nicsim_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	return nicsim_cmd_destroy(to_ndev(ibpd->device), NICSIM_CMD_DEALLOC_PD,
				  to_npd(ibpd)->pdn);
}

/* An address handle is the driver's: a UD WQE carries the destination. */
int nicsim_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init_attr,
		     struct ib_udata *udata)
{
	struct rdma_ah_attr *attr = init_attr->ah_attr;

	if (attr->type != RDMA_AH_ATTR_TYPE_IB)
		return -EOPNOTSUPP;
	to_nah(ibah)->dlid = rdma_ah_get_dlid(attr);
	to_nah(ibah)->grh = rdma_ah_get_ah_flags(attr) & IB_AH_GRH;
	if (to_nah(ibah)->grh)
		to_nah(ibah)->dgid = rdma_ah_read_grh(attr)->dgid;
	return 0;
}

/*
 * ib_mad matches a response to its request by the request's AH: without
 * query_ah it takes every response for another port's and drops it.
 */
int nicsim_query_ah(struct ib_ah *ibah, struct rdma_ah_attr *attr)
{
	memset(attr, 0, sizeof(*attr));
	attr->type = RDMA_AH_ATTR_TYPE_IB;
	rdma_ah_set_dlid(attr, to_nah(ibah)->dlid);
	rdma_ah_set_port_num(attr, NICSIM_PORT);
	if (to_nah(ibah)->grh)
		rdma_ah_set_grh(attr, &to_nah(ibah)->dgid, 0, 0, 0, 0);
	return 0;
}

int nicsim_destroy_ah(struct ib_ah *ibah, u32 flags)
{
	return 0;
}
