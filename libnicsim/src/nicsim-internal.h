/* What libnicsim keeps of an open function; not part of the API. */
#ifndef NICSIM_INTERNAL_H
#define NICSIM_INTERNAL_H

#include "nicsim/nicsim.h"

struct nicsim_dev {
	int fd, node;
	uint64_t bar0_size, msi_address;
	uint32_t vectors;
	/* after nicsim_probe: the command entry and mailboxes, the event queue and tables */
	uint8_t *entry, *in_box, *out_box;
	uint64_t entry_iova, in_iova, out_iova;
	void *eq, *mtt, *qpc, *mkc;
	uint64_t eq_iova, mtt_iova, qpc_iova, mkc_iova, eq_len, mtt_len, qpc_len, mkc_len;
	uint64_t interrupts;
	struct nicsim_caps caps;
	int probed;
};

#endif
