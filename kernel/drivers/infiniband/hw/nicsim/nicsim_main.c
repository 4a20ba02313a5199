// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * PCI probe and remove for nicsim's adapter: BAR0, DMA, the bring-up by
 * commands (docs/device.md, "Bringing it up"), and the ib_device.
 */
#include <linux/module.h>
#include <linux/pci.h>

#include "nicsim.h"

MODULE_AUTHOR("nicsim");
MODULE_DESCRIPTION("RDMA driver for nicsim's simulated adapter");
MODULE_LICENSE("Dual BSD/GPL");

static unsigned int mtt_entries = 1U << 17;
module_param(mtt_entries, uint, 0444);
MODULE_PARM_DESC(mtt_entries,
		 "Translation table entries given to the adapter (default 131072)");

static const struct pci_device_id nicsim_pci_tbl[] = {
	{ PCI_DEVICE(NICSIM_PCI_VENDOR, NICSIM_PCI_DEVICE) },
	{ }
};
MODULE_DEVICE_TABLE(pci, nicsim_pci_tbl);

static const struct ib_device_ops nicsim_dev_ops = {
	.owner = THIS_MODULE,
	.driver_id = RDMA_DRIVER_UNKNOWN,
	.uverbs_abi_ver = 1,

	.alloc_mr = nicsim_alloc_mr,
	.alloc_mw = nicsim_alloc_mw,
	.alloc_pd = nicsim_alloc_pd,
	.alloc_ucontext = nicsim_alloc_ucontext,
	.attach_mcast = nicsim_attach_mcast,
	.create_ah = nicsim_create_ah,
	.create_cq = nicsim_create_cq,
	.create_qp = nicsim_create_qp,
	.create_srq = nicsim_create_srq,
	.create_user_ah = nicsim_create_ah,
	.dealloc_mw = nicsim_dealloc_mw,
	.dealloc_pd = nicsim_dealloc_pd,
	.dealloc_ucontext = nicsim_dealloc_ucontext,
	.dereg_mr = nicsim_dereg_mr,
	.destroy_ah = nicsim_destroy_ah,
	.destroy_cq = nicsim_destroy_cq,
	.destroy_qp = nicsim_destroy_qp,
	.destroy_srq = nicsim_destroy_srq,
	.detach_mcast = nicsim_detach_mcast,
	.get_dev_fw_str = nicsim_get_fw_str,
	.get_dma_mr = nicsim_get_dma_mr,
	.get_port_immutable = nicsim_get_port_immutable,
	.map_mr_sg = nicsim_map_mr_sg,
	.mmap = nicsim_mmap,
	.mmap_free = nicsim_mmap_free,
	.modify_port = nicsim_modify_port,
	.modify_qp = nicsim_modify_qp,
	.modify_srq = nicsim_modify_srq,
	.poll_cq = nicsim_poll_cq,
	.post_recv = nicsim_post_recv,
	.post_send = nicsim_post_send,
	.post_srq_recv = nicsim_post_srq_recv,
	.query_ah = nicsim_query_ah,
	.query_device = nicsim_query_device,
	.query_gid = nicsim_query_gid,
	.query_pkey = nicsim_query_pkey,
	.query_port = nicsim_query_port,
	.query_qp = nicsim_query_qp,
	.query_srq = nicsim_query_srq,
	.reg_user_mr = nicsim_reg_user_mr,
	.req_notify_cq = nicsim_req_notify_cq,
	.resize_cq = nicsim_resize_cq,

	INIT_RDMA_OBJ_SIZE(ib_ah, nicsim_ah, ibah),
	INIT_RDMA_OBJ_SIZE(ib_cq, nicsim_cq, ibcq),
	INIT_RDMA_OBJ_SIZE(ib_mw, nicsim_mw, ibmw),
	INIT_RDMA_OBJ_SIZE(ib_pd, nicsim_pd, ibpd),
	INIT_RDMA_OBJ_SIZE(ib_qp, nicsim_qp, ibqp),
	INIT_RDMA_OBJ_SIZE(ib_srq, nicsim_srq, ibsrq),
	INIT_RDMA_OBJ_SIZE(ib_ucontext, nicsim_ucontext, ibucontext),
};

/*
 * A context table the adapter may keep in host memory: its size, or 0 when
 * no contiguous DMA buffer that large exists (a 6.1 kernel without CMA gives
 * at most 4 MiB). INIT_HCA takes address 0 as "no table": the adapter then
 * keeps those contexts itself.
 */
static void nicsim_ctx_table(struct nicsim_dev *dev, struct nicsim_buf *buf,
			     size_t size, const char *what)
{
	/* a failure is expected and said below: no allocation warning */
	if (nicsim_buf_alloc_gfp(dev, buf, size, GFP_KERNEL | __GFP_NOWARN))
		dev_info(&dev->pdev->dev,
			 "no contiguous %zu bytes for the %s table: the adapter keeps it\n",
			 size, what);
}

static int nicsim_init_hca(struct nicsim_dev *dev)
{
	u64 in[NICSIM_INIT_HCA_IN_WORDS];
	int err;

	err = nicsim_eq_init(dev);
	if (err)
		return err;
	err = nicsim_buf_alloc(dev, &dev->mtt, (size_t)mtt_entries * 8);
	if (err)
		goto err_eq;
	nicsim_ctx_table(dev, &dev->qpc, 256 * ((size_t)dev->caps.max_qp + 1),
			 "QP context");
	nicsim_ctx_table(dev, &dev->mkc, 64 * ((size_t)dev->caps.max_mkey + 1),
			 "mkey context");

	in[NICSIM_INIT_HCA_IN_EQ_ADDR] = dev->eq.dma;
	in[NICSIM_INIT_HCA_IN_EQ_LOG_SIZE] = dev->eq_log_size;
	in[NICSIM_INIT_HCA_IN_MTT_ADDR] = dev->mtt.dma;
	in[NICSIM_INIT_HCA_IN_MTT_ENTRIES] = mtt_entries;
	in[NICSIM_INIT_HCA_IN_QPC_ADDR] = dev->qpc.va ? dev->qpc.dma : 0;
	in[NICSIM_INIT_HCA_IN_MKC_ADDR] = dev->mkc.va ? dev->mkc.dma : 0;
	WRITE_ONCE(dev->port_active, true);
	err = nicsim_cmd_exec(dev, NICSIM_CMD_INIT_HCA, in,
			      NICSIM_INIT_HCA_IN_WORDS, NULL, 0);
	if (err)
		goto err_tables;
	dev->up = true;
	return 0;

err_tables:
	nicsim_buf_free(dev, &dev->mkc);
	nicsim_buf_free(dev, &dev->qpc);
	nicsim_buf_free(dev, &dev->mtt);
err_eq:
	nicsim_eq_cleanup(dev);
	return err;
}

/* After every object is destroyed: the adapter gives the tables back. */
static void nicsim_teardown_hca(struct nicsim_dev *dev)
{
	int err;

	err = nicsim_cmd_exec(dev, NICSIM_CMD_TEARDOWN_HCA, NULL, 0, NULL, 0);
	if (err) {
		/* the adapter may still write them: leak rather than reuse */
		dev_err(&dev->pdev->dev,
			"TEARDOWN_HCA failed (%d): its tables are not freed\n",
			err);
		return;
	}
	dev->up = false;
	nicsim_buf_free(dev, &dev->mkc);
	nicsim_buf_free(dev, &dev->qpc);
	nicsim_buf_free(dev, &dev->mtt);
	nicsim_eq_cleanup(dev);
}

static int nicsim_map_bar0(struct nicsim_dev *dev)
{
	struct pci_dev *pdev = dev->pdev;
	u32 rev;

	if (!(pci_resource_flags(pdev, 0) & IORESOURCE_MEM)) {
		dev_err(&pdev->dev, "BAR0 is not a memory BAR (flags 0x%lx)\n",
			pci_resource_flags(pdev, 0));
		return -ENODEV;
	}
	dev->bar0_start = pci_resource_start(pdev, 0);
	dev->bar0_len = pci_resource_len(pdev, 0);
	dev->bar0 = pci_iomap(pdev, 0, 0);
	if (!dev->bar0)
		return -ENOMEM;
	rev = ioread32be(dev->bar0 + NICSIM_REG_FW_REV);
	if (rev >> 16 != NICSIM_FW_REV >> 16) {
		dev_err(&pdev->dev, "firmware revision 0x%x: this driver knows 0x%x\n",
			rev, NICSIM_FW_REV);
		pci_iounmap(pdev, dev->bar0);
		return -ENODEV;
	}
	dev_info(&pdev->dev, "BAR0 %pa, %pa bytes, firmware %u.%u\n",
		 &dev->bar0_start, &dev->bar0_len, rev >> 16, rev & 0xffff);
	return 0;
}

static void nicsim_init_ibdev(struct nicsim_dev *dev)
{
	struct ib_device *ibdev = &dev->ibdev;

	ibdev->node_type = RDMA_NODE_IB_CA;
	ibdev->phys_port_cnt = 1;
	ibdev->num_comp_vectors = 1;
	ibdev->dev.parent = &dev->pdev->dev;
	/* the GUID the SMA's NodeInfo gives: the subnet's name for the node */
	ibdev->node_guid = cpu_to_be64(dev->caps.node_guid);
	ib_set_device_ops(ibdev, &nicsim_dev_ops);
}

static int nicsim_probe(struct pci_dev *pdev, const struct pci_device_id *id)
{
	struct nicsim_dev *dev;
	int err;

	dev = ib_alloc_device(nicsim_dev, ibdev);
	if (!dev)
		return -ENOMEM;
	dev->pdev = pdev;
	pci_set_drvdata(pdev, dev);
	spin_lock_init(&dev->kuar_lock);
	mutex_init(&dev->port_lock);
	xa_init(&dev->cqs);
	xa_init(&dev->qps);
	xa_init(&dev->srqs);

	err = pci_enable_device_mem(pdev);
	if (err)
		goto err_free;
	err = pci_request_mem_regions(pdev, DRV_MODULE_NAME);
	if (err)
		goto err_disable;
	pci_set_master(pdev);
	err = dma_set_mask_and_coherent(&pdev->dev, DMA_BIT_MASK(64));
	if (err) {
		dev_err(&pdev->dev, "no 64-bit DMA (%d)\n", err);
		goto err_release;
	}
	err = nicsim_map_bar0(dev);
	if (err)
		goto err_release;
	err = nicsim_cmd_init(dev);
	if (err)
		goto err_unmap;
	err = nicsim_query_caps(dev);
	if (err)
		goto err_cmd;
	err = nicsim_init_hca(dev);
	if (err)
		goto err_cmd;
	err = nicsim_cmd_handle(dev, NICSIM_CMD_ALLOC_UAR, NULL, 0, &dev->kuar);
	if (err)
		goto err_teardown;
	nicsim_eq_start(dev);
	/* the mask as the SMA has it, before ib_cm's add_one sets its bit */
	err = nicsim_port_caps(dev, 0, 0);
	if (err)
		goto err_events;

	nicsim_init_ibdev(dev);
	err = ib_register_device(&dev->ibdev, "nicsim_%d", &pdev->dev);
	if (err) {
		dev_err(&pdev->dev, "ib_register_device failed (%d)\n", err);
		goto err_events;
	}
	dev_info(&pdev->dev, "%s: LID %u, %u QPs, %u CQs\n",
		 dev_name(&dev->ibdev.dev), dev->caps.lid, dev->caps.max_qp,
		 dev->caps.max_cq);
	return 0;

err_events:
	nicsim_eq_stop(dev);
	nicsim_cmd_destroy(dev, NICSIM_CMD_DEALLOC_UAR, dev->kuar);
err_teardown:
	nicsim_teardown_hca(dev);
err_cmd:
	nicsim_cmd_cleanup(dev);
err_unmap:
	pci_iounmap(pdev, dev->bar0);
err_release:
	pci_release_mem_regions(pdev);
err_disable:
	pci_disable_device(pdev);
err_free:
	ib_dealloc_device(&dev->ibdev);
	pci_set_drvdata(pdev, NULL);
	return err;
}

static void nicsim_remove(struct pci_dev *pdev)
{
	struct nicsim_dev *dev = pci_get_drvdata(pdev);

	if (!dev) /* a reset after which the adapter did not come up */
		return;
	/* ib_core destroys every object of every consumer first */
	ib_unregister_device(&dev->ibdev);
	nicsim_eq_stop(dev);
	nicsim_cmd_destroy(dev, NICSIM_CMD_DEALLOC_UAR, dev->kuar);
	nicsim_teardown_hca(dev);
	nicsim_cmd_cleanup(dev);
	pci_iounmap(pdev, dev->bar0);
	pci_release_mem_regions(pdev);
	pci_disable_device(pdev);
	xa_destroy(&dev->srqs);
	xa_destroy(&dev->qps);
	xa_destroy(&dev->cqs);
	ib_dealloc_device(&dev->ibdev);
	pci_set_drvdata(pdev, NULL);
}

/*
 * A function-level reset (sysfs reset, a hypervisor's) clears every queue,
 * context, key and MSI-X entry in the adapter (docs/device.md, "Function-level
 * reset"). Before it, while the adapter still answers, the driver goes as on
 * remove: ib_core destroys every consumer's objects, TEARDOWN_HCA, buffers
 * freed; after it, once PCI has restored config space, it comes up as on probe
 * with a new ib_device, which consumers see as a device removed and added.
 */
static void nicsim_reset_prepare(struct pci_dev *pdev)
{
	dev_info(&pdev->dev, "function reset: taking the adapter down\n");
	nicsim_remove(pdev);
}

static void nicsim_reset_done(struct pci_dev *pdev)
{
	int err = nicsim_probe(pdev, NULL);

	if (err)
		dev_err(&pdev->dev,
			"the adapter did not come up after its reset (%d)\n",
			err);
}

static const struct pci_error_handlers nicsim_err_handler = {
	.reset_prepare = nicsim_reset_prepare,
	.reset_done = nicsim_reset_done,
};

static struct pci_driver nicsim_pci_driver = {
	.name = DRV_MODULE_NAME,
	.id_table = nicsim_pci_tbl,
	.probe = nicsim_probe,
	.remove = nicsim_remove,
	.err_handler = &nicsim_err_handler,
};

/* The doorbell function first: PCI binds it before the adapter probes. */
static int __init nicsim_init(void)
{
	int err;

	err = pci_register_driver(&nicsim_doorbell_driver);
	if (err)
		return err;
	err = pci_register_driver(&nicsim_pci_driver);
	if (err)
		pci_unregister_driver(&nicsim_doorbell_driver);
	return err;
}

static void __exit nicsim_exit(void)
{
	pci_unregister_driver(&nicsim_pci_driver);
	pci_unregister_driver(&nicsim_doorbell_driver);
}

module_init(nicsim_init);
module_exit(nicsim_exit);
