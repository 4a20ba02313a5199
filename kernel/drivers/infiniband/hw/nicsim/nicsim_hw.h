/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The device's formats, as docs/device.md gives them. Config space, BAR0
 * registers, the command entry, each command's mailbox words, opcodes,
 * statuses and syndromes, and the queues' entries (WQE segments, CQEs, EQEs,
 * doorbell records) come generated from the device's ABI code (nicsim_ifc.h);
 * here are the rest, which docs/device.md gives in its prose, each held to
 * the device by KernelHeaderTest.
 */
#ifndef _NICSIM_HW_H_
#define _NICSIM_HW_H_

#include "nicsim_ifc.h"

/* a mailbox's largest size */
#define NICSIM_MAILBOX_BYTES			4096

/* CREATE_QP's flags word: every send WQE completes (sq_sig_all) */
#define NICSIM_QP_FLAG_SIGNAL_ALL		1

/*
 * The adapter's multicast limits. QUERY_HCA_CAP does not report them: they
 * are fixed (docs/device.md, Multicast: ATTACH_MCAST refuses a group past
 * the 4096th with OUT_OF_MCAST_GROUPS, a QP past a group's 240th with
 * MCAST_GROUP_FULL). No total limit besides their product.
 */
#define NICSIM_MAX_MCAST_GROUPS			4096
#define NICSIM_MAX_MCAST_QP_ATTACH		240

#endif /* _NICSIM_HW_H_ */
