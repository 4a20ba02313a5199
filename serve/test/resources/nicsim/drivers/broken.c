/*
 * A driver with one bug, chosen by argv[1], for the device to catch (PciFaceTest): it brings the
 * adapter up with libnicsim, makes its one mistake, lets the device see it, and cleans up.
 *   doorbell-no-queue  a BlueFlame doorbell naming a QP that does not exist
 *   no-register        a write to an offset of BAR0 where no register is
 *   past-bar           a write past the end of BAR0
 *   arm-no-cq          an arm doorbell for a CQ that does not exist
 *   left-up            exits with the adapter up (no TEARDOWN_HCA)
 */
#include <stdio.h>
#include <string.h>

#include "nicsim/device.h"
#include "nicsim/nicsim.h"

static int check(const char *what, int rc) {
	if (rc < 0)
		fprintf(stderr, "broken: %s: %s\n", what, strerror(-rc));
	return rc < 0;
}

int main(int argc, char **argv) {
	struct nicsim_dev *d;
	const char *bug = argc > 1 ? argv[1] : "";
	uint64_t out[1];
	if (check("open", nicsim_open(&d, -1)) || check("probe", nicsim_probe(d)))
		return 1;
	if (nicsim_cmd(d, NICSIM_CMD_ALLOC_UAR, NULL, 0, out, 1, NULL) != 0)
		return 1;
	uint32_t uar = (uint32_t)out[0];
	uint64_t page = nicsim_uar_offset(d, uar);
	uint8_t b[8];
	int rc = 0;
	if (!strcmp(bug, "doorbell-no-queue")) {
		nicsim_put32(b, 0 << 8 | NICSIM_WQE_OP_SEND);
		nicsim_put32(b + 4, 0x7777u << 8 | 2);
		rc = nicsim_mmio_write(d, page + NICSIM_UAR_BF_OFFSET, b, 8);
	} else if (!strcmp(bug, "no-register")) {
		nicsim_put32(b, 1);
		rc = nicsim_mmio_write(d, 0x60, b, 4);
	} else if (!strcmp(bug, "past-bar")) {
		nicsim_put32(b, 1);
		rc = nicsim_mmio_write(d, nicsim_bar0_size(d) + 64, b, 4);
	} else if (!strcmp(bug, "arm-no-cq")) {
		nicsim_put32(b, 0);
		nicsim_put32(b + 4, 55);
		rc = nicsim_mmio_write(d, page + NICSIM_UAR_CQ_DOORBELL, b, 8);
	} else if (strcmp(bug, "left-up")) {
		fprintf(stderr, "broken: no bug named \"%s\"\n", bug);
		return 2;
	}
	uint32_t vectors[4];
	if (check("the mistake", rc) || check("waiting", nicsim_wait(d, 10000000, vectors, 4, NULL)))
		return 3;
	if (!strcmp(bug, "left-up"))
		return 0;
	uint64_t h = uar;
	if (nicsim_cmd(d, NICSIM_CMD_DEALLOC_UAR, &h, 1, NULL, 0, NULL) != 0 || check("teardown", nicsim_teardown(d)))
		return 4;
	nicsim_close(d);
	printf("broken: %s done\n", bug);
	return 0;
}
