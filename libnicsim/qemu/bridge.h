/* nicsim-qemu-remote's state: one node's function on serve's PCI face, served to one QEMU. */
#ifndef NICSIM_QEMU_BRIDGE_H
#define NICSIM_QEMU_BRIDGE_H

#include <stdint.h>
#include <sys/types.h>

#include "mpqemu.h"
#include "nicsim/nicsim.h"

/* A guest RAM region mapped here and given to serve at IOVA = its guest-physical address. */
struct region {
	uint64_t gpa, size, offset;
	void *host;
	dev_t dev; /* the memfd's identity: an unchanged region in a new SYNC_SYSMEM stays mapped */
	ino_t ino;
};

struct bridge {
	struct nicsim_dev *dev;
	int qemu;            /* our end of the socketpair QEMU's x-pci-proxy-dev holds */
	uint64_t bar0_base;  /* BAR0's base as the guest last programmed it (0: unassigned) */
	uint64_t bar0_size;
	uint64_t quantum;    /* picoseconds of simulated time one WAIT may run while the guest computes */
	uint64_t now;        /* the simulated time serve last told */
	int busy;            /* the device had something to do at the last look: look again at once */
	struct region regions[MPQEMU_MAX_FDS];
	int nregions;
	uint64_t accesses, reads, interrupts;
};

/* SYNC_SYSMEM: maps the guest's RAM regions m carries (closing its fds); 0, or -1 if one failed. */
int sysmem_sync(struct bridge *b, struct mpqemu_msg *m);
/* Unmaps every guest RAM region, here and in serve. */
void sysmem_release(struct bridge *b);

#endif
