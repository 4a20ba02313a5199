/*
 * libnicsim: a C driver for nicsim's simulated adapter, through the device's own interface.
 *
 * Two layers. The PCI face (nicsim_open ... nicsim_wait) is what a bus gives a driver: config
 * space, BAR0 reads and writes, DMA mappings of the driver's own memory, and MSI-X interrupts;
 * `nicsim serve` offers each node's adapter as such a function, and the driver's process is its
 * one client. On top of it, the bring-up and command layer (nicsim_probe, nicsim_cmd) does what a
 * kernel driver does at probe time and for every verb's command. docs/device.md is the manual of
 * everything under these calls; nicsim/device.h holds its numbers.
 *
 * Simulated time moves only while the driver waits on the device: in an MMIO read, or in
 * nicsim_wait. A driver that polls a ring in its memory calls nicsim_wait between looks.
 *
 * Every call returns 0 or a negative errno (and sets errno), unless said otherwise.
 */
#ifndef NICSIM_NICSIM_H
#define NICSIM_NICSIM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct nicsim_dev;

/* ---- the PCI face ---- */

/*
 * Opens node `node`'s adapter as a PCI function (node < 0: $NICSIM_NODE, else 0) from the serve
 * whose socket is $NICSIM_SOCKET (`nicsim attach` sets both). EBUSY if another driver, or a
 * libibverbs program, holds it. A function still resetting (serve resets one its driver left) is
 * waited for, in simulated time, up to PCIe's 100 ms (ETIMEDOUT after).
 */
int nicsim_open(struct nicsim_dev **dev, int node);
/* nicsim_open_flags's flags: BAR0 is a 32-bit non-prefetchable BAR while this driver holds the function. */
enum { NICSIM_OPEN_BAR0_32BIT = 1 };
/* As nicsim_open, with NICSIM_OPEN_* flags: the device as a bus that cannot place a 64-bit BAR needs it. */
int nicsim_open_flags(struct nicsim_dev **dev, int node, uint32_t flags);
/*
 * Opens a user context on node `node`'s adapter, which the kernel (the simulator's own driver)
 * brought up: as a provider under a kernel driver has it. Commands (nicsim_cmd) go through the
 * kernel's command queue and may name only this context's objects; BAR0 writes reach only its
 * UAR pages; its CQs' interrupts come to nicsim_wait; config writes and MMIO reads are refused.
 * Several processes may each hold one on the same node. The adapter's capabilities are read.
 * `session`: the libibverbs context (its simulator session) whose completion channels the
 * context's CQ events go to (nicsim_cq_channel), or 0.
 */
int nicsim_open_context(struct nicsim_dev **dev, int node, uint32_t session);
/*
 * A user context's CQ `cqn` signals its events, once armed, to completion channel `channel` of its
 * session (the number the program's channel was registered with), as the kernel's uverbs does.
 */
int nicsim_cq_channel(struct nicsim_dev *dev, uint32_t cqn, uint32_t channel);
/*
 * Whether the user context (one this process imported too: nicsim_open_context with the session of
 * the process that opened it joins it) has an object that `destroy` (its destroying command's opcode:
 * DEALLOC_PD, DESTROY_MKEY, DEALLOC_DM) destroys under `handle`: 0 and its length in *length (an
 * MR's, device memory's; 0 for others), -ENOENT if there is none, -EINVAL if the handle is another kind's.
 */
int nicsim_user_import(struct nicsim_dev *dev, uint32_t destroy, uint32_t handle, uint64_t *length);
/* Closes the function (after nicsim_teardown if the adapter is up): the driver's DMA mappings go. */
void nicsim_close(struct nicsim_dev *dev);

/* BAR0's size, the MSI-X vectors, and the platform's MSI address (what an MSI-X entry must hold). */
uint64_t nicsim_bar0_size(const struct nicsim_dev *dev);
uint32_t nicsim_msix_vectors(const struct nicsim_dev *dev);
uint64_t nicsim_msi_address(const struct nicsim_dev *dev);

/* A dword of config space (offset dword-aligned, below 256). */
int nicsim_config_read(struct nicsim_dev *dev, uint32_t offset, uint32_t *value);
int nicsim_config_write(struct nicsim_dev *dev, uint32_t offset, uint32_t value);

/* A posted write of `len` bytes at BAR0 + `offset`: no answer, as on PCIe. */
int nicsim_mmio_write(struct nicsim_dev *dev, uint64_t offset, const void *data, uint32_t len);
/* A read of 4 or 8 bytes at BAR0 + `offset`, answered once the simulated read completes;
 * -EIO if it hit nothing (an unsupported request: all ones). */
int nicsim_mmio_read(struct nicsim_dev *dev, uint64_t offset, void *data, uint32_t len);

/* nicsim_dma_map's flags: the adapter may write the pages; a write into them ends a user context's wait. */
enum { NICSIM_DMA_WRITABLE = 1, NICSIM_DMA_WAKE = 2 };
/*
 * Maps the driver's pages [addr, addr + len) (page-aligned) for the adapter's DMA: their bus
 * address. A whole function's nicsim_wait returns on any write into its mappings; a user
 * context's only on writes into those mapped NICSIM_DMA_WAKE (its CQ rings), so a poll that found
 * nothing is not woken by each piece of data landing in its buffers.
 */
int nicsim_dma_map(struct nicsim_dev *dev, void *addr, uint64_t len, int flags, uint64_t *iova);
/*
 * As nicsim_dma_map, at bus address `iova` (page-aligned; clear of the driver's other mappings) rather
 * than one the device chooses: a guest's RAM at its guest-physical addresses, as a VM's bus sees it.
 */
int nicsim_dma_map_at(struct nicsim_dev *dev, void *addr, uint64_t len, int flags, uint64_t iova);
int nicsim_dma_unmap(struct nicsim_dev *dev, uint64_t iova);
/* Zeroed, page-aligned memory of `len` bytes, mapped for DMA at *iova; NULL on failure. */
void *nicsim_dma_alloc(struct nicsim_dev *dev, uint64_t len, uint64_t *iova);
/* As nicsim_dma_alloc, mapped with `flags` (NICSIM_DMA_*). */
void *nicsim_dma_alloc_flags(struct nicsim_dev *dev, uint64_t len, int flags, uint64_t *iova);
void nicsim_dma_free(struct nicsim_dev *dev, void *addr, uint64_t len, uint64_t iova);

/*
 * Lets simulated time move for at most `picos`, until an MSI-X interrupt comes or the adapter
 * writes into the driver's mapped memory. Returns the number of interrupts (their MSI data, the
 * vector's, in `vectors`, at most `max` of them), and the simulated time in *now if not NULL.
 */
int nicsim_wait(struct nicsim_dev *dev, uint64_t picos, uint32_t *vectors, int max, uint64_t *now);

/* ---- bring-up and commands ---- */

/* What QUERY_HCA_CAP answered (docs/device.md, "Limits"). */
struct nicsim_caps {
	uint32_t max_qp, max_cq, max_mkey, max_pd, max_uar, max_qp_wr, max_cqe, max_sge, max_inline;
	uint32_t max_mtu, lid, max_rd_atomic, max_msg_size, max_dm, uar_page_size;
	uint32_t bf_size; /* the most bytes of a lone WQE a send doorbell carries whole (BlueFlame); 0: none */
	uint32_t max_page_shift; /* the largest translation page (log2) to register pinned memory in */
	uint64_t uar_base, dm_base;
};

/*
 * Probes and brings the adapter up as a kernel driver does: checks the vendor and device IDs,
 * sizes and assigns BAR0, enables memory space, bus mastering and MSI-X (vector 0: the async
 * event queue), sets up the command entry and mailboxes, runs QUERY_HCA_CAP, allocates the event
 * queue, MTT and context tables, and runs INIT_HCA.
 */
int nicsim_probe(struct nicsim_dev *dev);
/*
 * Takes the adapter down (TEARDOWN_HCA) and frees what nicsim_probe allocated, as a driver being
 * unloaded does: the adapter refuses (-EBUSY) while any object it made for the driver is alive.
 */
int nicsim_teardown(struct nicsim_dev *dev);
const struct nicsim_caps *nicsim_caps(const struct nicsim_dev *dev);

/*
 * Runs command `opcode` with `nin` input words and room for `nout` output words (after the
 * header). Returns the command's status (0: OK; docs/device.md, "Statuses") and puts its syndrome
 * in *syndrome if not NULL; a negative errno if the command could not be run.
 */
int nicsim_cmd(struct nicsim_dev *dev, uint32_t opcode, const uint64_t *in, int nin, uint64_t *out, int nout,
	       uint32_t *syndrome);
/* A command's status as the errno mlx5 gives for it (0 for OK). */
int nicsim_status_errno(int status);

/* The name of a command syndrome ("UNKNOWN_PD"...), for messages. */
const char *nicsim_syndrome_name(uint32_t syndrome);

/* BAR0 offset of UAR page `uar` (its CQ doorbell and BlueFlame registers are in it). */
uint64_t nicsim_uar_offset(const struct nicsim_dev *dev, uint32_t uar);

/* ---- big-endian fields of the device's structures ---- */

static inline void nicsim_put16(void *p, uint16_t v) {
	uint8_t *b = (uint8_t *)p;
	b[0] = (uint8_t)(v >> 8); b[1] = (uint8_t)v;
}
static inline uint16_t nicsim_get16(const void *p) {
	const uint8_t *b = (const uint8_t *)p;
	return (uint16_t)(b[0] << 8 | b[1]);
}
static inline void nicsim_put32(void *p, uint32_t v) {
	uint8_t *b = (uint8_t *)p;
	b[0] = (uint8_t)(v >> 24); b[1] = (uint8_t)(v >> 16); b[2] = (uint8_t)(v >> 8); b[3] = (uint8_t)v;
}
static inline void nicsim_put64(void *p, uint64_t v) {
	nicsim_put32(p, (uint32_t)(v >> 32));
	nicsim_put32((uint8_t *)p + 4, (uint32_t)v);
}
static inline uint32_t nicsim_get32(const void *p) {
	const uint8_t *b = (const uint8_t *)p;
	return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
}
static inline uint64_t nicsim_get64(const void *p) {
	return (uint64_t)nicsim_get32(p) << 32 | nicsim_get32((const uint8_t *)p + 4);
}

#ifdef __cplusplus
}
#endif
#endif
