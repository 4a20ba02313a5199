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
	int user; /* a user context (nicsim_open_context): commands go through the kernel, not a mailbox */
	uint8_t *posted;      /* the posted-write ring shared with the simulator (PCI_POSTED_RING), or NULL */
	uint64_t posted_head; /* bytes of records written to it so far */
	int socket_pending;   /* a posted write went on the socket since the device last answered */
};

/*
 * face.c is the transport (the PCI face's requests on the socket) and knows nothing of commands or
 * bring-up; hca.c builds on it. So the opens and the close that need both live in hca.c, over these.
 */
/* nicsim_open_context's part on the face: the context opened, its capabilities not read yet. */
int nicsim_face_open_context(struct nicsim_dev **dev, int node, uint32_t session);
/* nicsim_close's part on the face, once the adapter is down: the posted ring, the socket, d itself. */
void nicsim_face_close(struct nicsim_dev *d);
/* A user context's command, run by the kernel's command queue: as nicsim_cmd. */
int nicsim_user_cmd(struct nicsim_dev *d, uint32_t opcode, const uint64_t *in, int nin, uint64_t *out, int nout,
		    uint32_t *syndrome);
/* Runs QUERY_HCA_CAP and keeps its answer in d->caps: 0 or a negative errno. */
int nicsim_query_caps(struct nicsim_dev *d);

#endif
