// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The command interface (docs/device.md, "Commands"): one 64-byte entry and
 * an input and an output mailbox in host memory, the entry's address in
 * BAR0, a doorbell to execute it. The adapter clears the entry's ownership
 * byte after it has written the output mailbox, so the driver polls that byte
 * and reads the output only afterwards. One command at a time (cmd_lock).
 */
#include <linux/delay.h>
#include <linux/io.h>
#include <linux/jiffies.h>
#include <linux/module.h>

#include "nicsim.h"

static unsigned int cmd_timeout_ms = 60000;
module_param(cmd_timeout_ms, uint, 0444);
MODULE_PARM_DESC(cmd_timeout_ms,
		 "How long a command may take before it fails (ms, default 60000, mlx5's)");

/* the entry, then the input mailbox, then the output mailbox: a page each */
#define NICSIM_CMD_IN_OFFSET	NICSIM_MAILBOX_BYTES
#define NICSIM_CMD_OUT_OFFSET	(2 * NICSIM_MAILBOX_BYTES)

static const char *const nicsim_syndrome_names[] = {
	"NONE", "BAD_OPCODE", "BAD_INPUT_LENGTH", "BAD_OUTPUT_LENGTH",
	"MAILBOX_DMA", "NOT_INITIALIZED", "ALREADY_INITIALIZED", "UNKNOWN_UAR",
	"UNKNOWN_PD", "UNKNOWN_CQ", "UNKNOWN_QP", "UNKNOWN_MKEY",
	"UNKNOWN_SRQ", "OUT_OF_SRQS", "SRQ_IN_USE", "BAD_LIMIT",
	"OUT_OF_UARS", "OUT_OF_PDS", "OUT_OF_CQS", "OUT_OF_QPS",
	"OUT_OF_MKEYS", "OUT_OF_MTT", "OUT_OF_DM", "BAD_DM_SIZE",
	"UNKNOWN_DM", "BAD_QP_TYPE", "BAD_QUEUE_SIZE", "BAD_ADDRESS",
	"BAD_PAGE_SHIFT", "BAD_ACCESS", "BAD_VECTOR", "BAD_TRANSITION",
	"CUR_STATE_MISMATCH", "BAD_ATTRIBUTE", "CQ_TOO_SMALL", "CQ_RESIZING",
	"CQ_IN_USE", "PD_IN_USE", "UAR_IN_USE", "MR_HAS_WINDOWS",
	"BAD_MW_TYPE", "UNKNOWN_XRCD", "OUT_OF_XRCDS", "XRCD_IN_USE",
	"XRC_SRQ_MISUSE", "DC_NOT_SUPPORTED", "BAD_DC_TYPE", "DCT_NEEDS_SRQ",
	"TM_NOT_SUPPORTED", "TM_LIST_FULL", "BAD_TM_OP", "TM_TOO_MANY_OPS",
	"UMR_NOT_SUPPORTED", "OUT_OF_KLMS", "OBJECTS_LEFT",
	"SPECIAL_QP_TAKEN", "BAD_MGID",
	"NOT_ATTACHED", "OUT_OF_MCAST_GROUPS", "MCAST_GROUP_FULL",
	"UNKNOWN_PORT", "UNKNOWN_Q_COUNTER", "OUT_OF_Q_COUNTERS", "Q_COUNTER_IN_USE",
};

static const char *nicsim_syndrome_str(u32 syndrome)
{
	if (syndrome < ARRAY_SIZE(nicsim_syndrome_names))
		return nicsim_syndrome_names[syndrome];
	return "UNKNOWN_SYNDROME";
}

/* Every command of the manual by its name, for the log (nicsim_ifc.h's opcodes, in its order). */
static const struct {
	u32 opcode;
	const char *name;
} nicsim_cmds[] = {
	{ NICSIM_CMD_QUERY_HCA_CAP, "QUERY_HCA_CAP" },
	{ NICSIM_CMD_INIT_HCA, "INIT_HCA" },
	{ NICSIM_CMD_TEARDOWN_HCA, "TEARDOWN_HCA" },
	{ NICSIM_CMD_ALLOC_UAR, "ALLOC_UAR" },
	{ NICSIM_CMD_DEALLOC_UAR, "DEALLOC_UAR" },
	{ NICSIM_CMD_ALLOC_PD, "ALLOC_PD" },
	{ NICSIM_CMD_DEALLOC_PD, "DEALLOC_PD" },
	{ NICSIM_CMD_CREATE_MKEY, "CREATE_MKEY" },
	{ NICSIM_CMD_CREATE_IMPLICIT_MKEY, "CREATE_IMPLICIT_MKEY" },
	{ NICSIM_CMD_DESTROY_MKEY, "DESTROY_MKEY" },
	{ NICSIM_CMD_REREG_MKEY, "REREG_MKEY" },
	{ NICSIM_CMD_ALLOC_MW, "ALLOC_MW" },
	{ NICSIM_CMD_DEALLOC_MW, "DEALLOC_MW" },
	{ NICSIM_CMD_CREATE_INDIRECT_MKEY, "CREATE_INDIRECT_MKEY" },
	{ NICSIM_CMD_ODP_PREFETCH, "ODP_PREFETCH" },
	{ NICSIM_CMD_ODP_PREFETCH_FLUSH, "ODP_PREFETCH_FLUSH" },
	{ NICSIM_CMD_ODP_INVALIDATE, "ODP_INVALIDATE" },
	{ NICSIM_CMD_ALLOC_DM, "ALLOC_DM" },
	{ NICSIM_CMD_DEALLOC_DM, "DEALLOC_DM" },
	{ NICSIM_CMD_CREATE_CQ, "CREATE_CQ" },
	{ NICSIM_CMD_RESIZE_CQ, "RESIZE_CQ" },
	{ NICSIM_CMD_DESTROY_CQ, "DESTROY_CQ" },
	{ NICSIM_CMD_CREATE_QP, "CREATE_QP" },
	{ NICSIM_CMD_MODIFY_QP, "MODIFY_QP" },
	{ NICSIM_CMD_QUERY_QP, "QUERY_QP" },
	{ NICSIM_CMD_DESTROY_QP, "DESTROY_QP" },
	{ NICSIM_CMD_CREATE_SRQ, "CREATE_SRQ" },
	{ NICSIM_CMD_CREATE_XRC_SRQ, "CREATE_XRC_SRQ" },
	{ NICSIM_CMD_CREATE_TM_SRQ, "CREATE_TM_SRQ" },
	{ NICSIM_CMD_TM_OP, "TM_OP" },
	{ NICSIM_CMD_ARM_SRQ, "ARM_SRQ" },
	{ NICSIM_CMD_QUERY_SRQ, "QUERY_SRQ" },
	{ NICSIM_CMD_DESTROY_SRQ, "DESTROY_SRQ" },
	{ NICSIM_CMD_ALLOC_XRCD, "ALLOC_XRCD" },
	{ NICSIM_CMD_DEALLOC_XRCD, "DEALLOC_XRCD" },
	{ NICSIM_CMD_ATTACH_MCAST, "ATTACH_MCAST" },
	{ NICSIM_CMD_DETACH_MCAST, "DETACH_MCAST" },
	{ NICSIM_CMD_MODIFY_PORT, "MODIFY_PORT" },
	{ NICSIM_CMD_ALLOC_Q_COUNTER, "ALLOC_Q_COUNTER" },
	{ NICSIM_CMD_SET_QP_COUNTER, "SET_QP_COUNTER" },
	{ NICSIM_CMD_QUERY_Q_COUNTER, "QUERY_Q_COUNTER" },
	{ NICSIM_CMD_DEALLOC_Q_COUNTER, "DEALLOC_Q_COUNTER" },
};

static const char *nicsim_cmd_str(u32 opcode)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(nicsim_cmds); i++)
		if (nicsim_cmds[i].opcode == opcode)
			return nicsim_cmds[i].name;
	return "UNKNOWN_COMMAND";
}

/* Each status's name and errno: mlx5's mlx5_cmd_status_to_err, as the manual says. */
static const struct {
	u32 status;
	int err;
	const char *name;
} nicsim_statuses[] = {
	{ NICSIM_STATUS_OK, 0, "OK" },
	{ NICSIM_STATUS_INT_ERR, -EIO, "INT_ERR" },
	{ NICSIM_STATUS_BAD_OP, -EINVAL, "BAD_OP" },
	{ NICSIM_STATUS_BAD_PARAM, -EINVAL, "BAD_PARAM" },
	{ NICSIM_STATUS_BAD_SYS_STATE, -EIO, "BAD_SYS_STATE" },
	{ NICSIM_STATUS_BAD_RESOURCE, -EINVAL, "BAD_RESOURCE" },
	{ NICSIM_STATUS_RESOURCE_BUSY, -EBUSY, "RESOURCE_BUSY" },
	{ NICSIM_STATUS_EXCEED_LIM, -ENOMEM, "EXCEED_LIM" },
	{ NICSIM_STATUS_BAD_RES_STATE, -EINVAL, "BAD_RES_STATE" },
	{ NICSIM_STATUS_BAD_INDEX, -EINVAL, "BAD_INDEX" },
	{ NICSIM_STATUS_NO_RESOURCES, -EAGAIN, "NO_RESOURCES" },
	{ NICSIM_STATUS_BAD_QP_STATE, -EINVAL, "BAD_QP_STATE" },
	{ NICSIM_STATUS_BAD_SIZE, -EINVAL, "BAD_SIZE" },
	{ NICSIM_STATUS_BAD_INPUT_LEN, -EIO, "BAD_INPUT_LEN" },
	{ NICSIM_STATUS_BAD_OUTPUT_LEN, -EIO, "BAD_OUTPUT_LEN" },
};

static int nicsim_status_to_errno(u32 status, const char **name)
{
	int i;

	for (i = 0; i < ARRAY_SIZE(nicsim_statuses); i++) {
		if (nicsim_statuses[i].status == status) {
			*name = nicsim_statuses[i].name;
			return nicsim_statuses[i].err;
		}
	}
	*name = "UNKNOWN_STATUS";
	return -EINVAL;
}

/* BAR0's 8-byte registers are big-endian. */
static void nicsim_write64_be(u64 val, void __iomem *addr)
{
	writeq((__force u64)cpu_to_be64(val), addr);
}

int nicsim_buf_alloc(struct nicsim_dev *dev, struct nicsim_buf *buf,
		     size_t size)
{
	return nicsim_buf_alloc_gfp(dev, buf, size, GFP_KERNEL);
}

int nicsim_buf_alloc_gfp(struct nicsim_dev *dev, struct nicsim_buf *buf,
			 size_t size, gfp_t gfp)
{
	buf->size = PAGE_ALIGN(size);
	buf->va = dma_alloc_coherent(&dev->pdev->dev, buf->size, &buf->dma,
				     gfp);
	if (!buf->va) {
		buf->size = 0;
		return -ENOMEM;
	}
	return 0;
}

void nicsim_buf_free(struct nicsim_dev *dev, struct nicsim_buf *buf)
{
	if (!buf->va)
		return;
	dma_free_coherent(&dev->pdev->dev, buf->size, buf->va, buf->dma);
	buf->va = NULL;
	buf->size = 0;
}

int nicsim_cmd_init(struct nicsim_dev *dev)
{
	int err;

	mutex_init(&dev->cmd_lock);
	err = nicsim_buf_alloc(dev, &dev->cmd, 3 * NICSIM_MAILBOX_BYTES);
	if (err)
		return err;
	nicsim_write64_be(dev->cmd.dma, dev->bar0 + NICSIM_REG_CMDQ_ADDR);
	return 0;
}

void nicsim_cmd_cleanup(struct nicsim_dev *dev)
{
	nicsim_buf_free(dev, &dev->cmd);
	mutex_destroy(&dev->cmd_lock);
}

/* Waits for the adapter to give the entry back: 0, or -ETIMEDOUT. */
static int nicsim_cmd_wait(struct nicsim_dev *dev, u8 *entry)
{
	unsigned long deadline = jiffies + msecs_to_jiffies(cmd_timeout_ms);

	while (READ_ONCE(entry[NICSIM_ENTRY_OWNER]) & NICSIM_OWNER_HW) {
		if (time_after(jiffies, deadline))
			return -ETIMEDOUT;
		usleep_range(20, 200);
	}
	/* the output mailbox was written before the ownership byte */
	dma_rmb();
	return 0;
}

/*
 * Runs one command: nin input words, nout output words after the header.
 * Returns 0, or the errno of the adapter's status (the command's name, the
 * status, its syndrome and the value that failed the check in the log), or
 * -ETIMEDOUT when the adapter never answered.
 */
int nicsim_cmd_exec(struct nicsim_dev *dev, u32 opcode, const u64 *in,
		    int nin, u64 *out, int nout)
{
	u8 *entry = dev->cmd.va;
	__be64 *ibox = dev->cmd.va + NICSIM_CMD_IN_OFFSET;
	__be64 *obox = dev->cmd.va + NICSIM_CMD_OUT_OFFSET;
	u32 out_len = (NICSIM_OUT_HEADER_WORDS + nout) * sizeof(u64);
	const char *status_name;
	u64 head, value;
	u32 status, syndrome;
	int err, i;

	if (nin * sizeof(u64) > NICSIM_MAILBOX_BYTES ||
	    out_len > NICSIM_MAILBOX_BYTES)
		return -EINVAL;

	mutex_lock(&dev->cmd_lock);
	for (i = 0; i < nin; i++)
		ibox[i] = cpu_to_be64(in[i]);
	memset(obox, 0, out_len);
	memset(entry, 0, NICSIM_ENTRY_BYTES);
	*(__be32 *)(entry + NICSIM_ENTRY_OPCODE) = cpu_to_be32(opcode);
	*(__be32 *)(entry + NICSIM_ENTRY_IN_LEN) =
		cpu_to_be32(nin * sizeof(u64));
	*(__be64 *)(entry + NICSIM_ENTRY_IN_ADDR) =
		cpu_to_be64(dev->cmd.dma + NICSIM_CMD_IN_OFFSET);
	*(__be64 *)(entry + NICSIM_ENTRY_OUT_ADDR) =
		cpu_to_be64(dev->cmd.dma + NICSIM_CMD_OUT_OFFSET);
	*(__be32 *)(entry + NICSIM_ENTRY_OUT_LEN) = cpu_to_be32(out_len);
	*(__be32 *)(entry + NICSIM_ENTRY_TOKEN) = cpu_to_be32(++dev->cmd_token);
	/* the entry and the input whole before the adapter owns them */
	dma_wmb();
	WRITE_ONCE(entry[NICSIM_ENTRY_OWNER], NICSIM_OWNER_HW);
	/* writel orders the memory writes above before the doorbell */
	writel((__force u32)cpu_to_be32(1), dev->bar0 + NICSIM_REG_CMD_DOORBELL);

	err = nicsim_cmd_wait(dev, entry);
	if (err) {
		dev_err(&dev->pdev->dev,
			"command %s (0x%x) timed out after %u ms\n",
			nicsim_cmd_str(opcode), opcode, cmd_timeout_ms);
		goto unlock;
	}
	head = be64_to_cpu(obox[0]);
	value = be64_to_cpu(obox[1]);
	status = head >> 32;
	syndrome = lower_32_bits(head);
	err = nicsim_status_to_errno(status, &status_name);
	if (err) {
		dev_err(&dev->pdev->dev,
			"command %s (0x%x) failed: status %s (0x%x), syndrome %s (%u), value 0x%llx\n",
			nicsim_cmd_str(opcode), opcode, status_name, status,
			nicsim_syndrome_str(syndrome), syndrome, value);
		goto unlock;
	}
	for (i = 0; i < nout; i++)
		out[i] = be64_to_cpu(obox[NICSIM_OUT_HEADER_WORDS + i]);
unlock:
	mutex_unlock(&dev->cmd_lock);
	return err;
}

/* Runs a command whose one output word is the new object's handle. */
int nicsim_cmd_handle(struct nicsim_dev *dev, u32 opcode, const u64 *in,
		      int nin, u32 *handle)
{
	u64 out;
	int err;

	err = nicsim_cmd_exec(dev, opcode, in, nin, &out, 1);
	if (!err)
		*handle = out;
	return err;
}

/* Runs a command whose one input word is the handle of what it frees. */
int nicsim_cmd_destroy(struct nicsim_dev *dev, u32 opcode, u32 handle)
{
	u64 in = handle;

	return nicsim_cmd_exec(dev, opcode, &in, 1, NULL, 0);
}

int nicsim_query_caps(struct nicsim_dev *dev)
{
	u64 cap[NICSIM_QUERY_HCA_CAP_OUT_WORDS];
	struct nicsim_caps *c = &dev->caps;
	int err;

	err = nicsim_cmd_exec(dev, NICSIM_CMD_QUERY_HCA_CAP, NULL, 0, cap,
			      NICSIM_QUERY_HCA_CAP_OUT_WORDS);
	if (err)
		return err;
	c->max_qp = cap[NICSIM_QUERY_HCA_CAP_OUT_MAX_QP];
	c->max_cq = cap[NICSIM_QUERY_HCA_CAP_OUT_MAX_CQ];
	c->max_mkey = cap[NICSIM_QUERY_HCA_CAP_OUT_MAX_MKEY];
	c->max_pd = cap[NICSIM_QUERY_HCA_CAP_OUT_MAX_PD];
	c->max_uar = cap[NICSIM_QUERY_HCA_CAP_OUT_MAX_UAR];
	c->max_qp_wr = cap[NICSIM_QUERY_HCA_CAP_OUT_MAX_QP_WR];
	c->max_cqe = cap[NICSIM_QUERY_HCA_CAP_OUT_MAX_CQE];
	c->max_sge = cap[NICSIM_QUERY_HCA_CAP_OUT_MAX_SGE];
	c->max_inline = cap[NICSIM_QUERY_HCA_CAP_OUT_MAX_INLINE];
	c->max_mtu = cap[NICSIM_QUERY_HCA_CAP_OUT_MAX_MTU];
	c->lid = cap[NICSIM_QUERY_HCA_CAP_OUT_LID];
	c->max_rd_atomic = cap[NICSIM_QUERY_HCA_CAP_OUT_MAX_RD_ATOMIC];
	c->max_msg_size = cap[NICSIM_QUERY_HCA_CAP_OUT_MAX_MSG_SIZE];
	c->max_dm = cap[NICSIM_QUERY_HCA_CAP_OUT_MAX_DM];
	c->uar_base = cap[NICSIM_QUERY_HCA_CAP_OUT_UAR_BASE];
	c->uar_page_size = cap[NICSIM_QUERY_HCA_CAP_OUT_UAR_PAGE_SIZE];
	c->dm_base = cap[NICSIM_QUERY_HCA_CAP_OUT_DM_BASE];
	c->bf_size = cap[NICSIM_QUERY_HCA_CAP_OUT_BF_SIZE];
	c->max_page_shift = cap[NICSIM_QUERY_HCA_CAP_OUT_MAX_PAGE_SHIFT];
	c->sm_lid = cap[NICSIM_QUERY_HCA_CAP_OUT_SM_LID];
	c->node_guid = cap[NICSIM_QUERY_HCA_CAP_OUT_NODE_GUID];
	return 0;
}
