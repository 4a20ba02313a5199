// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Interrupts through the doorbell function.
 *
 * A QEMU guest reaches the adapter through QEMU's remote PCI proxy, which
 * delivers no interrupt under TCG. nicsim's QEMU bridge therefore adds a
 * stock ivshmem-doorbell function (1af4:1110) beside the adapter and turns
 * the adapter's MSI-X message whose data is d into that function's MSI-X
 * vector d (docs/device.md, "The QEMU bridge"). This file binds that
 * function and takes its first NICSIM_IRQ_VECTORS vectors; the adapter's
 * MSI-X entry i is then written with the platform's MSI address and data i,
 * so adapter vector i arrives as doorbell vector i. Vector 0 is the event
 * queue's, 1 the kernel CQs' (NICSIM_COMP_VECTOR). Without the function
 * (or with msix=0) the driver polls (nicsim_eq.c).
 *
 * The adapter is probed after the doorbell function when both are present
 * at load time: the module registers the doorbell driver first, and PCI
 * binds present devices as a driver registers.
 */
#include <linux/interrupt.h>
#include <linux/module.h>

#include "nicsim.h"

static bool msix = true;
module_param(msix, bool, 0444);
MODULE_PARM_DESC(msix,
		 "Take interrupts through the bridge's doorbell function when present (default 1)");

#define NICSIM_DOORBELL_VENDOR	0x1af4
#define NICSIM_DOORBELL_DEVICE	0x1110
/* x86's MSI address window: what the bridge's PCI_OPEN gives as the platform's */
#define NICSIM_MSI_ADDRESS	0xfee00000U
#define NICSIM_MSIX_ENTRY_BYTES	16

static DEFINE_MUTEX(nicsim_doorbell_lock);
/* the bound doorbell function, under nicsim_doorbell_lock */
static struct pci_dev *nicsim_doorbell;
static struct nicsim_dev *nicsim_doorbell_user;

static int nicsim_doorbell_probe(struct pci_dev *pdev,
				 const struct pci_device_id *id)
{
	int err, n;

	if (!msix)
		return -ENODEV;
	mutex_lock(&nicsim_doorbell_lock);
	err = -EBUSY;
	if (nicsim_doorbell)
		goto out;
	err = pci_enable_device(pdev);
	if (err)
		goto out;
	/* an MSI-X message is the function's memory write: bus mastering */
	pci_set_master(pdev);
	n = pci_alloc_irq_vectors(pdev, NICSIM_IRQ_VECTORS, NICSIM_IRQ_VECTORS,
				  PCI_IRQ_MSIX);
	if (n < 0) {
		dev_info(&pdev->dev, "doorbell function without %d MSI-X vectors (%d): not taken\n",
			 NICSIM_IRQ_VECTORS, n);
		pci_disable_device(pdev);
		err = n;
		goto out;
	}
	nicsim_doorbell = pdev;
	dev_info(&pdev->dev, "doorbell function: %d MSI-X vectors for nicsim's adapter\n",
		 n);
	err = 0;
out:
	mutex_unlock(&nicsim_doorbell_lock);
	return err;
}

static void nicsim_doorbell_remove(struct pci_dev *pdev)
{
	mutex_lock(&nicsim_doorbell_lock);
	/* the adapter's driver let go first: it is unregistered first */
	WARN_ON(nicsim_doorbell_user);
	pci_free_irq_vectors(pdev);
	pci_disable_device(pdev);
	nicsim_doorbell = NULL;
	mutex_unlock(&nicsim_doorbell_lock);
}

static const struct pci_device_id nicsim_doorbell_tbl[] = {
	{ PCI_DEVICE(NICSIM_DOORBELL_VENDOR, NICSIM_DOORBELL_DEVICE) },
	{ }
};

struct pci_driver nicsim_doorbell_driver = {
	.name = DRV_MODULE_NAME "_doorbell",
	.id_table = nicsim_doorbell_tbl,
	.probe = nicsim_doorbell_probe,
	.remove = nicsim_doorbell_remove,
};

static irqreturn_t nicsim_irq(int irq, void *data)
{
	struct nicsim_dev *dev = data;

	/* the work reads the event queue and the armed CQs, as a poll does */
	mod_delayed_work(system_wq, &dev->poll_work, 0);
	return IRQ_HANDLED;
}

/* Adapter MSI-X entry @i: the platform's MSI address, data @i, unmasked. */
static void nicsim_msix_entry(struct nicsim_dev *dev, int i)
{
	void __iomem *e = dev->bar0 + NICSIM_REG_MSIX_TABLE +
		i * NICSIM_MSIX_ENTRY_BYTES;

	/* the MSI-X table is PCI's: little-endian, unlike the registers */
	iowrite32(NICSIM_MSI_ADDRESS, e);
	iowrite32(0, e + 4);
	iowrite32(i, e + 8);
	iowrite32(0, e + 12);
}

/*
 * Takes the doorbell function's vectors for @dev when it is there: true if
 * interrupts now come, false if the driver is to poll.
 */
bool nicsim_irq_init(struct nicsim_dev *dev)
{
	struct pci_dev *pdev = dev->pdev;
	int i, err = 0;
	bool taken;

	mutex_lock(&nicsim_doorbell_lock);
	if (!nicsim_doorbell || nicsim_doorbell_user)
		goto out;
	for (i = 0; i < NICSIM_IRQ_VECTORS && !err; i++) {
		err = request_irq(pci_irq_vector(nicsim_doorbell, i), nicsim_irq,
				  0, DRV_MODULE_NAME, dev);
		if (err) {
			dev_err(&pdev->dev, "doorbell vector %d: request_irq %d\n",
				i, err);
			while (i--)
				free_irq(pci_irq_vector(nicsim_doorbell, i), dev);
		}
	}
	if (err)
		goto out;
	for (i = 0; i < NICSIM_IRQ_VECTORS; i++)
		nicsim_msix_entry(dev, i);
	pci_write_config_word(pdev, NICSIM_CFG_MSIX_CAP + PCI_MSIX_FLAGS,
			      NICSIM_MSIX_ENABLE);
	nicsim_doorbell_user = dev;
	dev_info(&pdev->dev, "MSI-X: adapter vectors 0..%d through %s\n",
		 NICSIM_IRQ_VECTORS - 1, pci_name(nicsim_doorbell));
out:
	taken = nicsim_doorbell_user == dev;
	mutex_unlock(&nicsim_doorbell_lock);
	return taken;
}

/* Stops the adapter's messages, then gives the vectors back. */
void nicsim_irq_cleanup(struct nicsim_dev *dev)
{
	int i;

	mutex_lock(&nicsim_doorbell_lock);
	if (nicsim_doorbell_user == dev) {
		pci_write_config_word(dev->pdev,
				      NICSIM_CFG_MSIX_CAP + PCI_MSIX_FLAGS, 0);
		for (i = 0; i < NICSIM_IRQ_VECTORS; i++)
			free_irq(pci_irq_vector(nicsim_doorbell, i), dev);
		nicsim_doorbell_user = NULL;
	}
	mutex_unlock(&nicsim_doorbell_lock);
}
