/*
 * QEMU's multi-process protocol (mpqemu), as QEMU 7.2's x-pci-proxy-dev speaks it over a Unix stream
 * socket to the process that implements the device: the facts of hw/remote/mpqemu-link.h, on x86-64.
 *
 * A message is a 16-byte header (int cmd, 4 bytes of padding, size_t size) and `size` bytes of data;
 * file descriptors ride with it as SCM_RIGHTS. QEMU speaks first, always: config and BAR accesses and
 * DEVICE_RESET each wait for one RET (data: a u64) from the device; SYNC_SYSMEM (the guest's RAM as
 * memfds) and SET_IRQFD (INTx eventfds, wired by KVM only) get no answer.
 */
#ifndef NICSIM_QEMU_MPQEMU_H
#define NICSIM_QEMU_MPQEMU_H

#include <stdint.h>

enum mpqemu_cmd {
	MPQEMU_SYNC_SYSMEM = 0,
	MPQEMU_RET = 1,
	MPQEMU_PCI_CFGWRITE = 2,
	MPQEMU_PCI_CFGREAD = 3,
	MPQEMU_BAR_WRITE = 4,
	MPQEMU_BAR_READ = 5,
	MPQEMU_SET_IRQFD = 6,
	MPQEMU_DEVICE_RESET = 7,
};

/* The most fds (and so RAM regions) one message carries. */
#define MPQEMU_MAX_FDS 8

struct mpqemu_config {
	uint32_t addr; /* config space offset, below 256 */
	uint32_t val;  /* a write's value, in the low `len` bytes */
	int32_t len;   /* 1, 2 or 4 */
};

struct mpqemu_bar {
	uint64_t addr; /* guest-physical: the BAR's base as the guest programmed it, plus the offset */
	uint64_t val;  /* a write's value, little-endian in the low `size` bytes */
	uint32_t size; /* 1, 2, 4 or 8 */
	uint8_t memory; /* 1: memory space; 0: I/O space */
	uint8_t pad[3];
};

struct mpqemu_sysmem {
	uint64_t gpa[MPQEMU_MAX_FDS];    /* where each fd's range sits in guest-physical space */
	uint64_t size[MPQEMU_MAX_FDS];   /* its bytes */
	uint64_t offset[MPQEMU_MAX_FDS]; /* its start within the fd */
};

struct mpqemu_msg {
	int32_t cmd;
	uint32_t pad;
	uint64_t size; /* bytes of data after the header */
	union {
		uint64_t u64;
		struct mpqemu_config config;
		struct mpqemu_bar bar;
		struct mpqemu_sysmem sysmem;
	} data;
	int fds[MPQEMU_MAX_FDS]; /* received with the message, not on the wire */
	int nfds;
};

_Static_assert(sizeof(struct mpqemu_config) == 12, "PciConfDataMsg");
_Static_assert(sizeof(struct mpqemu_bar) == 24, "BarAccessMsg");
_Static_assert(sizeof(struct mpqemu_sysmem) == 192, "SyncSysmemMsg");

#define MPQEMU_HEADER 16u

/*
 * Reads one message from `fd`, with the descriptors that came with it: 1, 0 at the end of the stream,
 * or -1 (errno set; EPROTO for a message too big or with too many fds) on an error.
 */
int mpqemu_recv(int fd, struct mpqemu_msg *m);
/* Answers the message QEMU waits on: a RET carrying `value`. 0 or -1 (errno set). */
int mpqemu_ret(int fd, uint64_t value);
/* The command's name, for messages. */
const char *mpqemu_name(int cmd);

#endif
