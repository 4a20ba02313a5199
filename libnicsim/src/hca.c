/*
 * Bring-up and commands, as a kernel driver does them (docs/device.md, "Bringing it up" and
 * "Commands"): config space, BAR0, MSI-X, the command entry and mailboxes, QUERY_HCA_CAP, the
 * event queue and tables, INIT_HCA.
 */
#include <errno.h>
#include <string.h>

#include "nicsim-internal.h"
#include "nicsim/device.h"

/* Where this driver puts BAR0 in the bus's memory space. */
#define BAR0_BASE 0xe0000000ull
#define EQ_LOG_SIZE 8
#define MTT_ENTRIES (1u << 16)
/* Simulated time a command may take before the driver gives up (mlx5's command timeout: 60 s). */
#define COMMAND_TIMEOUT_PS 60000000000000ull
#define WAIT_STEP_PS 1000000000ull

static int fail(int err) {
	errno = err;
	return -err;
}

int nicsim_cmd(struct nicsim_dev *d, uint32_t opcode, const uint64_t *in, int nin, uint64_t *out, int nout,
	       uint32_t *syndrome) {
	if (d->user)
		return nicsim_user_cmd(d, opcode, in, nin, out, nout, syndrome);
	if (!d->entry || nin < 0 || nout < 0 || nin * 8 > 4096 || (NICSIM_OUT_HEADER_WORDS + nout) * 8 > 4096)
		return fail(EINVAL);
	uint32_t out_len = (uint32_t)(NICSIM_OUT_HEADER_WORDS + nout) * 8;
	for (int i = 0; i < nin; i++)
		nicsim_put64(d->in_box + 8 * i, in[i]);
	memset(d->out_box, 0, out_len);
	memset(d->entry, 0, NICSIM_ENTRY_BYTES);
	nicsim_put32(d->entry + NICSIM_ENTRY_OPCODE, opcode);
	nicsim_put32(d->entry + NICSIM_ENTRY_IN_LEN, (uint32_t)nin * 8);
	nicsim_put64(d->entry + NICSIM_ENTRY_IN_ADDR, d->in_iova);
	nicsim_put64(d->entry + NICSIM_ENTRY_OUT_ADDR, d->out_iova);
	nicsim_put32(d->entry + NICSIM_ENTRY_OUT_LEN, out_len);
	__atomic_store_n(&d->entry[NICSIM_ENTRY_OWNER], NICSIM_OWNER_HW, __ATOMIC_RELEASE);
	uint8_t one[4];
	nicsim_put32(one, 1);
	int rc = nicsim_mmio_write(d, NICSIM_REG_CMD_DOORBELL, one, 4);
	if (rc)
		return rc;
	uint64_t waited = 0;
	uint32_t vectors[64];
	while (__atomic_load_n(&d->entry[NICSIM_ENTRY_OWNER], __ATOMIC_ACQUIRE) != 0) {
		if (waited >= COMMAND_TIMEOUT_PS)
			return fail(ETIMEDOUT);
		rc = nicsim_wait(d, WAIT_STEP_PS, vectors, 64, NULL);
		if (rc < 0)
			return rc;
		d->interrupts += (uint64_t)rc;
		waited += WAIT_STEP_PS;
	}
	uint64_t head = nicsim_get64(d->out_box);
	if (syndrome)
		*syndrome = (uint32_t)head;
	for (int i = 0; i < nout; i++)
		out[i] = nicsim_get64(d->out_box + 8 * (NICSIM_OUT_HEADER_WORDS + i));
	return (int)(head >> 32);
}

int nicsim_status_errno(int status) { return nicsim_status_to_errno(status); }

const char *nicsim_syndrome_name(uint32_t s) { return nicsim_syndrome_str(s); }

const struct nicsim_caps *nicsim_caps(const struct nicsim_dev *d) { return d->probed ? &d->caps : NULL; }

uint64_t nicsim_uar_offset(const struct nicsim_dev *d, uint32_t uar) {
	return d->caps.uar_base + (uint64_t)uar * d->caps.uar_page_size;
}

/* Runs a command whose failure stops the bring-up: its status as an errno. */
static int must(struct nicsim_dev *d, uint32_t opcode, const uint64_t *in, int nin, uint64_t *out, int nout) {
	int st = nicsim_cmd(d, opcode, in, nin, out, nout, NULL);
	if (st < 0)
		return st;
	return st ? fail(nicsim_status_errno(st)) : 0;
}

static void *table(struct nicsim_dev *d, uint64_t len, uint64_t *iova, uint64_t *kept) {
	*kept = len;
	return nicsim_dma_alloc(d, len, iova);
}

int nicsim_query_caps(struct nicsim_dev *d) {
	int rc;
	uint64_t cap[NICSIM_QUERY_HCA_CAP_OUT_WORDS];
	if ((rc = must(d, NICSIM_CMD_QUERY_HCA_CAP, NULL, 0, cap, NICSIM_QUERY_HCA_CAP_OUT_WORDS)))
		return rc;
	struct nicsim_caps *c = &d->caps;
	c->max_qp = (uint32_t)cap[NICSIM_QUERY_HCA_CAP_OUT_MAX_QP];
	c->max_cq = (uint32_t)cap[NICSIM_QUERY_HCA_CAP_OUT_MAX_CQ];
	c->max_mkey = (uint32_t)cap[NICSIM_QUERY_HCA_CAP_OUT_MAX_MKEY];
	c->max_pd = (uint32_t)cap[NICSIM_QUERY_HCA_CAP_OUT_MAX_PD];
	c->max_uar = (uint32_t)cap[NICSIM_QUERY_HCA_CAP_OUT_MAX_UAR];
	c->max_qp_wr = (uint32_t)cap[NICSIM_QUERY_HCA_CAP_OUT_MAX_QP_WR];
	c->max_cqe = (uint32_t)cap[NICSIM_QUERY_HCA_CAP_OUT_MAX_CQE];
	c->max_sge = (uint32_t)cap[NICSIM_QUERY_HCA_CAP_OUT_MAX_SGE];
	c->max_inline = (uint32_t)cap[NICSIM_QUERY_HCA_CAP_OUT_MAX_INLINE];
	c->max_mtu = (uint32_t)cap[NICSIM_QUERY_HCA_CAP_OUT_MAX_MTU];
	c->lid = (uint32_t)cap[NICSIM_QUERY_HCA_CAP_OUT_LID];
	c->max_rd_atomic = (uint32_t)cap[NICSIM_QUERY_HCA_CAP_OUT_MAX_RD_ATOMIC];
	c->max_msg_size = (uint32_t)cap[NICSIM_QUERY_HCA_CAP_OUT_MAX_MSG_SIZE];
	c->max_dm = (uint32_t)cap[NICSIM_QUERY_HCA_CAP_OUT_MAX_DM];
	c->uar_base = cap[NICSIM_QUERY_HCA_CAP_OUT_UAR_BASE];
	c->uar_page_size = (uint32_t)cap[NICSIM_QUERY_HCA_CAP_OUT_UAR_PAGE_SIZE];
	c->dm_base = cap[NICSIM_QUERY_HCA_CAP_OUT_DM_BASE];
	c->bf_size = (uint32_t)cap[NICSIM_QUERY_HCA_CAP_OUT_BF_SIZE];
	c->max_page_shift = (uint32_t)cap[NICSIM_QUERY_HCA_CAP_OUT_MAX_PAGE_SHIFT];
	if (d->user)
		d->probed = 1;
	return 0;
}

int nicsim_probe(struct nicsim_dev *d) {
	uint32_t id, bar;
	int rc;
	if ((rc = nicsim_config_read(d, NICSIM_CFG_VENDOR_ID, &id)))
		return rc;
	if ((id & 0xffff) != NICSIM_PCI_VENDOR || id >> 16 != NICSIM_PCI_DEVICE)
		return fail(ENODEV);
	if ((rc = nicsim_config_write(d, NICSIM_CFG_BAR0, 0xffffffffu)) || (rc = nicsim_config_read(d, NICSIM_CFG_BAR0, &bar)))
		return rc;
	uint64_t size = (uint64_t)(~(bar & 0xfffffff0u)) + 1;
	if (size < 4096 || size != d->bar0_size)
		return fail(EIO);
	if ((rc = nicsim_config_write(d, NICSIM_CFG_BAR0, (uint32_t)BAR0_BASE)) ||
	    (rc = nicsim_config_write(d, NICSIM_CFG_BAR0 + 4, (uint32_t)(BAR0_BASE >> 32))) ||
	    (rc = nicsim_config_write(d, NICSIM_CFG_COMMAND, NICSIM_CFG_CMD_MEMORY_SPACE | NICSIM_CFG_CMD_BUS_MASTER)) ||
	    (rc = nicsim_config_write(d, NICSIM_CFG_MSIX_CAP, (uint32_t)NICSIM_MSIX_ENABLE << 16)))
		return rc;
	/* MSI-X vector 0, the async event queue's: the table entry is little-endian (address, data, control) */
	uint32_t msix[4] = {(uint32_t)d->msi_address, (uint32_t)(d->msi_address >> 32), 0, 0};
	if ((rc = nicsim_mmio_write(d, NICSIM_REG_MSIX_TABLE, msix, sizeof(msix))))
		return rc;
	uint64_t boxes;
	uint8_t *b = nicsim_dma_alloc(d, 3 * 4096, &boxes);
	if (!b)
		return -errno;
	d->entry = b;
	d->in_box = b + 4096;
	d->out_box = b + 8192;
	d->entry_iova = boxes;
	d->in_iova = boxes + 4096;
	d->out_iova = boxes + 8192;
	uint8_t addr[8];
	nicsim_put64(addr, d->entry_iova);
	if ((rc = nicsim_mmio_write(d, NICSIM_REG_CMDQ_ADDR, addr, 8)))
		return rc;
	if ((rc = nicsim_query_caps(d)))
		return rc;
	struct nicsim_caps *c = &d->caps;
	d->eq = table(d, 64ull << EQ_LOG_SIZE, &d->eq_iova, &d->eq_len);
	d->mtt = table(d, 8ull * MTT_ENTRIES, &d->mtt_iova, &d->mtt_len);
	d->qpc = table(d, 256ull * (c->max_qp + 1ull), &d->qpc_iova, &d->qpc_len);
	d->mkc = table(d, 64ull * (c->max_mkey + 1ull), &d->mkc_iova, &d->mkc_len);
	if (!d->eq || !d->mtt || !d->qpc || !d->mkc)
		return -errno;
	uint64_t init[NICSIM_INIT_HCA_IN_WORDS];
	init[NICSIM_INIT_HCA_IN_EQ_ADDR] = d->eq_iova;
	init[NICSIM_INIT_HCA_IN_EQ_LOG_SIZE] = EQ_LOG_SIZE;
	init[NICSIM_INIT_HCA_IN_MTT_ADDR] = d->mtt_iova;
	init[NICSIM_INIT_HCA_IN_MTT_ENTRIES] = MTT_ENTRIES;
	init[NICSIM_INIT_HCA_IN_QPC_ADDR] = d->qpc_iova;
	init[NICSIM_INIT_HCA_IN_MKC_ADDR] = d->mkc_iova;
	if ((rc = must(d, NICSIM_CMD_INIT_HCA, init, NICSIM_INIT_HCA_IN_WORDS, NULL, 0)))
		return rc;
	d->probed = 1;
	return 0;
}

int nicsim_open_context(struct nicsim_dev **dev, int node, uint32_t session) {
	int rc = nicsim_face_open_context(dev, node, session);
	if (rc)
		return rc;
	if ((rc = nicsim_query_caps(*dev))) {
		nicsim_close(*dev);
		*dev = NULL;
	}
	return rc;
}

void nicsim_close(struct nicsim_dev *d) {
	if (!d)
		return;
	nicsim_teardown(d);
	nicsim_face_close(d);
}

int nicsim_teardown(struct nicsim_dev *d) {
	if (!d->probed || d->user) /* a user context's adapter is the kernel's to take down */
		return 0;
	int rc = must(d, NICSIM_CMD_TEARDOWN_HCA, NULL, 0, NULL, 0);
	if (rc)
		return rc;
	d->probed = 0;
	nicsim_dma_free(d, d->eq, d->eq_len, d->eq_iova);
	nicsim_dma_free(d, d->mtt, d->mtt_len, d->mtt_iova);
	nicsim_dma_free(d, d->qpc, d->qpc_len, d->qpc_iova);
	nicsim_dma_free(d, d->mkc, d->mkc_len, d->mkc_iova);
	nicsim_dma_free(d, d->entry, 3 * 4096, d->entry_iova);
	d->entry = d->in_box = d->out_box = NULL;
	return 0;
}
