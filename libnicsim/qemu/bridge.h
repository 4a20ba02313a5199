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
	uint64_t step;       /* what the next WAIT may run: the quantum, or more while the guest is idle */
	uint64_t now;        /* the simulated time serve last told */
	int busy;            /* the device had something to do at the last look: look again at once */
	struct region regions[MPQEMU_MAX_FDS];
	int nregions;
	uint64_t accesses, reads, interrupts, resets;
	/* the ivshmem-doorbell device's server (doorbell.c); doorbell_listen < 0: no doorbell device */
	int doorbell_listen, doorbell_client, doorbell_vectors;
	char doorbell_path[64];
	int *eventfds; /* one per vector the guest's doorbell device took, in vector order */
	int neventfds;
	uint64_t delivered, dropped;
};

/* SYNC_SYSMEM: maps the guest's RAM regions m carries (closing its fds); 0, or -1 if one failed. */
int sysmem_sync(struct bridge *b, struct mpqemu_msg *m);
/* Unmaps every guest RAM region, here and in serve. */
void sysmem_release(struct bridge *b);

/*
 * Listens, at a socket of its own, for QEMU's ivshmem-doorbell device with `vectors` MSI-X vectors:
 * 0, or -1 (errno set).
 */
int doorbell_listen(struct bridge *b, int vectors);
/* Takes the doorbell device's connection and gives it its ID, memory and eventfds: 0, or -1. */
int doorbell_accept(struct bridge *b);
/* The adapter's MSI-X message with data `data`: raises the doorbell device's vector `data` if connected. */
void doorbell_ring(struct bridge *b, uint32_t data);
/* Closes the doorbell device's connection and eventfds and removes its socket. */
void doorbell_close(struct bridge *b);

#endif
