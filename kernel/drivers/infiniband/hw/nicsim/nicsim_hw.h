/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The device's formats, as docs/device.md gives them. Config space, BAR0
 * registers, the command entry, each command's mailbox words, opcodes,
 * statuses and syndromes come generated from the device's ABI code
 * (nicsim_ifc.h); here are the rest, which docs/device.md gives in its prose,
 * each held to the device by KernelHeaderTest.
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

/* the control segment's fm_ce_se byte (11) */
#define NICSIM_WQE_CTRL_CQ_UPDATE		0x08
#define NICSIM_WQE_CTRL_SOLICITED		0x02
#define NICSIM_WQE_CTRL_FENCE			0x80
/* a receive list ends with a segment of byte count 0 and this lkey */
#define NICSIM_RECV_END_LKEY			0x100
/* an inline data segment's byte count carries this bit */
#define NICSIM_INLINE_SEG			0x80000000
/* a UD address vector's destination QPN carries this bit */
#define NICSIM_AV_EXT				0x80000000

/* CQEs: 64 bytes; op_own (byte 63): bits 7..4 the opcode, bit 0 owner */
#define NICSIM_CQE_BYTES			64
#define NICSIM_CQE_SOLICITED			0x02	/* op_own bit 1 */
/* byte offsets in a CQE */
#define NICSIM_CQE_SLID				22
#define NICSIM_CQE_SRC_QP			24
#define NICSIM_CQE_IMM				36
#define NICSIM_CQE_BYTE_CNT			44
#define NICSIM_CQE_VENDOR_SYNDROME		54
#define NICSIM_CQE_SYNDROME			55
#define NICSIM_CQE_SOP_QPN			56
#define NICSIM_CQE_WQE_COUNTER			60
#define NICSIM_CQE_OP_OWN			63

/* async event queue entries: 64 bytes */
#define NICSIM_EQE_BYTES			64
#define NICSIM_EQE_TYPE				0
#define NICSIM_EQE_RESOURCE			4
#define NICSIM_EQE_OWNER			63
#define NICSIM_EQE_WRITTEN			0x80

/* doorbell records: a QP's receive counter at 0, send counter at 4 */
#define NICSIM_DBREC_RECV			0
#define NICSIM_DBREC_SEND			4
/* a CQ's consumer counter at 0, its arm word at 4 */
#define NICSIM_DBREC_CQ_CI			0
#define NICSIM_DBREC_CQ_ARM			4

#endif /* _NICSIM_HW_H_ */
