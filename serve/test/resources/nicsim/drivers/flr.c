/*
 * A driver that resets its function (PciResetTest): it brings the adapter up with libnicsim and makes
 * a PD and a CQ, finds the PCI Express capability, writes Initiate Function Level Reset, watches the
 * function not answer until the reset completes, checks that config space is at its reset values and
 * that the adapter forgot the CQ, and brings it up again. With argv[1] "leave" it then makes a PD and
 * exits with the adapter up, as a driver that crashes does, for serve to reset the function.
 * Prints what it saw; exits 0 when everything was as PCIe and docs/device.md say.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "nicsim/device.h"
#include "nicsim/nicsim.h"
#include "nicsim/queues.h"

/* PCIe r4.0 sec. 7.5.3: the capability's ID, Device Capabilities' FLR bit, Device Control's Initiate FLR. */
#define CAP_ID_PCIE 0x10
#define PCIE_DEVCAP 4
#define PCIE_DEVCTL 8
#define DEVCAP_FLR (1u << 28)
#define DEVCTL_INITIATE_FLR (1u << 15)
#define POLL_PS 100000000ull /* 100 us between looks at a resetting function */
#define LIMIT_PS 100000000000ull /* 100 ms: PCIe's bound on an FLR */

static struct nicsim_dev *dev;

static int fail(const char *what, int rc) {
	fprintf(stderr, "flr: %s: %s\n", what, strerror(rc < 0 ? -rc : rc));
	return 1;
}

static uint32_t cfg(uint32_t offset) {
	uint32_t v = 0;
	if (nicsim_config_read(dev, offset, &v))
		return 0;
	return v;
}

/* The PCI Express capability's offset in config space, or 0. */
static uint32_t find_pcie(void) {
	for (uint32_t at = cfg(0x34) & 0xfc, hops = 0; at && hops < 48; hops++) {
		uint32_t head = cfg(at);
		if ((head & 0xff) == CAP_ID_PCIE)
			return at;
		at = (head >> 8) & 0xfc;
	}
	return 0;
}

/* A command's status (0: OK), and its syndrome. */
static int cmd(uint32_t opcode, const uint64_t *in, int nin, uint64_t *out, int nout, uint32_t *syndrome) {
	return nicsim_cmd(dev, opcode, in, nin, out, nout, syndrome);
}

int main(int argc, char **argv) {
	int leave = argc > 1 && !strcmp(argv[1], "leave"), rc;
	uint64_t pd, uar, now, start;
	uint32_t syndrome;
	struct nicsim_cq cq;
	setvbuf(stdout, NULL, _IOLBF, 0); /* each line as it comes, for a test that reads a driver that hangs */
	if ((rc = nicsim_open(&dev, -1)) || (rc = nicsim_probe(dev)))
		return fail("bringing the adapter up", rc);
	if ((rc = cmd(NICSIM_CMD_ALLOC_PD, NULL, 0, &pd, 1, &syndrome)) ||
	    (rc = cmd(NICSIM_CMD_ALLOC_UAR, NULL, 0, &uar, 1, &syndrome)) ||
	    (rc = nicsim_cq_create(dev, (uint32_t)uar, 4, 0, &cq)))
		return fail("PD and CQ", rc);
	printf("adapter up: PD %llu, CQ %u\n", (unsigned long long)pd, cq.cqn);

	uint32_t cap = find_pcie();
	if (!cap || !(cfg(cap + PCIE_DEVCAP) & DEVCAP_FLR))
		return fail("no PCI Express capability saying FLR capable", 95);
	printf("PCIe capability at 0x%x: FLR capable\n", cap);
	if ((rc = nicsim_wait(dev, 0, NULL, 0, &start)) < 0)
		return fail("wait", rc);
	if ((rc = nicsim_config_write(dev, cap + PCIE_DEVCTL, cfg(cap + PCIE_DEVCTL) | DEVCTL_INITIATE_FLR)))
		return fail("Initiate FLR", rc);
	printf("during the reset: command reads 0x%08x\n", cfg(4));
	now = start;
	while (cfg(4) == 0xffffffffu && now - start < LIMIT_PS)
		if ((rc = nicsim_wait(dev, POLL_PS, NULL, 0, &now)) < 0)
			return fail("wait", rc);
	printf("ready after %llu us\n", (unsigned long long)((now - start) / 1000000));
	printf("after the reset: command 0x%08x, BAR0 0x%08x, MSI-X control 0x%04x, device control FLR bit %u\n",
	       cfg(4) & 0xffff, cfg(0x10), cfg(0x40) >> 16 & 0xc000, !!(cfg(cap + PCIE_DEVCTL) & DEVCTL_INITIATE_FLR));

	/* a fresh adapter: INIT_HCA again, and the CQ made before is no more */
	if ((rc = nicsim_probe(dev)))
		return fail("bringing the adapter up after the reset", rc);
	uint64_t in = cq.cqn;
	rc = cmd(NICSIM_CMD_DESTROY_CQ, &in, 1, NULL, 0, &syndrome);
	printf("adapter up again; DESTROY_CQ of CQ %u: status 0x%x, syndrome %s\n", cq.cqn, rc,
	       nicsim_syndrome_name(syndrome));
	if (leave) {
		if ((rc = cmd(NICSIM_CMD_ALLOC_PD, NULL, 0, &pd, 1, &syndrome)))
			return fail("PD", rc);
		printf("leaving with the adapter up and PD %llu\n", (unsigned long long)pd);
		fflush(stdout);
		_exit(0); /* no TEARDOWN_HCA, no unmapping: as a driver that crashed */
	}
	nicsim_close(dev);
	return 0;
}
