/*
 * nicsim-qemu-remote: one node's adapter as a QEMU guest's PCI function.
 *
 *     NICSIM_SOCKET=<serve's socket> nicsim-qemu-remote [--node N] [--quantum-ns T] -- qemu-system-x86_64 ARGS...
 *
 * A driver on serve's PCI face (libnicsim), like any other: serve checks and logs what the guest's
 * driver does as it does for a driver process. It opens the node's function with BAR0 as a 32-bit
 * non-prefetchable BAR (the only kind QEMU's proxy places), starts QEMU with ARGS plus
 * `-device x-pci-proxy-dev,id=nicsim0,fd=K` on one end of a socketpair, and answers the proxy's
 * mpqemu messages (mpqemu.h) on the other until QEMU exits; it then exits with QEMU's status, and
 * closing its socket to serve gives the function back as any driver's exit does.
 *
 * Time: simulated time moves only while a driver of the PCI face waits. The guest runs at TCG's
 * pace, never waiting on serve but in a BAR read, so while no message from QEMU is pending this
 * program asks serve for a WAIT of at most one quantum of simulated time: the adapter works on what
 * the guest's driver gave it (commands, doorbells) between the guest's accesses. A WAIT that found
 * nothing to do is followed by a millisecond's look at QEMU's socket, so an idle guest costs little,
 * and the next WAIT may run longer (IDLE_GROWTH).
 *
 * Interrupts: the proxy has none under TCG, so the bridge also serves a stock ivshmem-doorbell
 * device (doorbell.c; `--doorbell-vectors 0` leaves it out): the adapter's MSI-X message with data d,
 * as a WAIT returns it, raises the doorbell function's MSI-X vector d in the guest.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bridge.h"
#include "nicsim/device.h"

#define IDLE_POLL_MS 1
/*
 * While the guest leaves the device alone, each WAIT may run twice the last, up to this many quanta:
 * a driver that holds time holds it for every program on the fabric, so an idle guest should not
 * slow the others to a quantum a millisecond; its next access brings the quantum back.
 */
#define IDLE_GROWTH 64

static void usage(void) {
	fprintf(stderr, "usage: NICSIM_SOCKET=<serve's socket> nicsim-qemu-remote [--node N] [--quantum-ns T] "
			"[--doorbell-vectors V] -- qemu-system-x86_64 ARGS...\n");
	exit(2);
}

/* The BAR0 base the guest programmed, read back from config space after a write to it. */
static int refresh_bar0(struct bridge *b) {
	uint32_t v;
	if (nicsim_config_read(b->dev, NICSIM_CFG_BAR0, &v))
		return -1;
	b->bar0_base = v & ~0xfu;
	return 0;
}

static uint64_t config_read(struct bridge *b, const struct mpqemu_config *c) {
	uint32_t v, shift = (c->addr & 3u) * 8;
	if (c->addr > 252 || c->len < 1 || c->len > 4 || (c->addr & 3u) + (uint32_t)c->len > 4)
		return UINT64_MAX;
	if (nicsim_config_read(b->dev, c->addr & ~3u, &v))
		return UINT64_MAX;
	return c->len == 4 ? v : (v >> shift) & ((1u << (8 * c->len)) - 1);
}

/*
 * A write of 1, 2 or 4 bytes: the device takes dwords, so a narrower one is merged with the dword's
 * other bytes as read (the status register beside the command register ignores writes).
 */
static uint64_t config_write(struct bridge *b, const struct mpqemu_config *c) {
	uint32_t dword = c->addr & ~3u, shift = (c->addr & 3u) * 8, v = c->val;
	if (c->addr > 252 || c->len < 1 || c->len > 4 || (c->addr & 3u) + (uint32_t)c->len > 4)
		return UINT64_MAX;
	if (c->len < 4) {
		uint32_t old, mask = ((1u << (8 * c->len)) - 1) << shift;
		if (nicsim_config_read(b->dev, dword, &old))
			return UINT64_MAX;
		v = (old & ~mask) | ((c->val << shift) & mask);
	}
	if (nicsim_config_write(b->dev, dword, v) || (dword == NICSIM_CFG_BAR0 && refresh_bar0(b)))
		return UINT64_MAX;
	return 0;
}

/* BAR0's offset of a guest-physical address, or -1 outside BAR0 (or in I/O space). */
static int64_t bar_offset(const struct bridge *b, const struct mpqemu_bar *a) {
	if (!a->memory || !b->bar0_base || a->addr < b->bar0_base || a->addr - b->bar0_base >= b->bar0_size)
		return -1;
	return (int64_t)(a->addr - b->bar0_base);
}

static uint64_t bar_write(struct bridge *b, const struct mpqemu_bar *a) {
	int64_t off = bar_offset(b, a);
	if (off < 0 || a->size < 1 || a->size > 8 || (a->size & (a->size - 1))) {
		fprintf(stderr, "nicsim-qemu-remote: BAR write of %u bytes at 0x%llx: not in BAR0 (0x%llx, 0x%llx "
			"bytes)\n", a->size, (unsigned long long)a->addr, (unsigned long long)b->bar0_base,
			(unsigned long long)b->bar0_size);
		return UINT64_MAX;
	}
	b->accesses++;
	b->busy = 1; /* a doorbell or register write: the adapter likely has work now */
	return nicsim_mmio_write(b->dev, (uint64_t)off, &a->val, a->size) ? UINT64_MAX : 0;
}

/* A read of 4 or 8 bytes as the device answers it; narrower ones are cut from the dword around them. */
static uint64_t bar_read(struct bridge *b, const struct mpqemu_bar *a) {
	int64_t off = bar_offset(b, a);
	uint64_t v = 0;
	if (off < 0 || a->size < 1 || a->size > 8 || (a->size & (a->size - 1)) ||
	    (a->size < 4 && ((uint64_t)off & 3) + a->size > 4))
		return UINT64_MAX;
	b->accesses++;
	b->reads++;
	uint32_t len = a->size == 8 ? 8 : 4;
	uint64_t at = a->size == 8 ? (uint64_t)off : (uint64_t)off & ~3ull;
	if (nicsim_mmio_read(b->dev, at, &v, len))
		return UINT64_MAX; /* an unsupported request reads all ones, as on PCIe */
	if (a->size < 4)
		v = (v >> (8 * ((uint64_t)off & 3))) & ((1ull << (8 * a->size)) - 1);
	return v;
}

/* PCIe r4.0 sec. 7.5.3: the PCI Express capability's ID, Device Capabilities' and Device Control's FLR bits. */
#define CAP_ID_PCIE 0x10
#define DEVCAP_FLR (1u << 28)
#define DEVCTL_INITIATE_FLR (1u << 15)
/* How long the bridge waits for a function-level reset, in steps: PCIe's bound on one (100 ms). */
#define FLR_STEP_PS 100000000ull
#define FLR_LIMIT_PS 100000000000ull

/* Device Control's offset when the function is FLR capable (its PCI Express capability says so), else 0. */
static uint32_t flr_devctl(struct bridge *b) {
	uint32_t at, head, cap;
	if (nicsim_config_read(b->dev, 0x34, &at))
		return 0;
	for (int hops = 0; (at &= 0xfc) && hops < 48; hops++, at = head >> 8) {
		if (nicsim_config_read(b->dev, at, &head))
			return 0;
		if ((head & 0xff) == CAP_ID_PCIE)
			return nicsim_config_read(b->dev, at + 4, &cap) || !(cap & DEVCAP_FLR) ? 0 : at + 8;
	}
	return 0;
}

/*
 * QEMU resets the function (at start and at the guest's reboot), as a host resets a passed-through
 * device: a function-level reset (docs/device.md, "Function-level reset"), which gives the next boot a
 * fresh adapter, config space at its reset values (memory space, bus mastering and MSI-X off, BAR0
 * unassigned). The bridge waits, in simulated time, until the function answers again. Without FLR it
 * clears those config registers only, and the adapter keeps its state.
 */
static uint64_t device_reset(struct bridge *b) {
	uint32_t devctl = flr_devctl(b), v;
	uint64_t start, now;
	b->resets++;
	b->bar0_base = 0;
	if (!devctl)
		return nicsim_config_write(b->dev, NICSIM_CFG_COMMAND, 0) || nicsim_config_write(b->dev, NICSIM_CFG_BAR0, 0) ||
		       nicsim_config_write(b->dev, NICSIM_CFG_MSIX_CAP, 0) ? UINT64_MAX : 0;
	if (nicsim_config_read(b->dev, devctl, &v) || nicsim_config_write(b->dev, devctl, v | DEVCTL_INITIATE_FLR) ||
	    nicsim_wait(b->dev, 0, NULL, 0, &start) < 0)
		return UINT64_MAX;
	now = start;
	/* a resetting function answers no config read: the root complex makes all ones of it */
	while (!nicsim_config_read(b->dev, NICSIM_CFG_COMMAND, &v) && v == 0xffffffffu && now - start < FLR_LIMIT_PS)
		if (nicsim_wait(b->dev, FLR_STEP_PS, NULL, 0, &now) < 0)
			return UINT64_MAX;
	return v == 0xffffffffu ? UINT64_MAX : 0;
}

/* Answers one message: 0, or -1 when the bridge cannot go on (serve or QEMU gone, protocol broken). */
static int handle(struct bridge *b, struct mpqemu_msg *m) {
	uint64_t ret;
	switch (m->cmd) {
	case MPQEMU_SYNC_SYSMEM:
		if (m->size != sizeof(m->data.sysmem) || m->nfds == 0)
			break;
		sysmem_sync(b, m); /* a region refused is told; the guest runs on, its DMA there refused by serve */
		return 0;
	case MPQEMU_SET_IRQFD: /* INTx through eventfds: wired by KVM only, and the device signals by MSI-X */
		for (int i = 0; i < m->nfds; i++)
			close(m->fds[i]);
		m->nfds = 0;
		return 0;
	case MPQEMU_PCI_CFGREAD:
	case MPQEMU_PCI_CFGWRITE:
		if (m->size != sizeof(m->data.config))
			break;
		ret = m->cmd == MPQEMU_PCI_CFGREAD ? config_read(b, &m->data.config) : config_write(b, &m->data.config);
		return mpqemu_ret(b->qemu, ret);
	case MPQEMU_BAR_READ:
	case MPQEMU_BAR_WRITE:
		if (m->size != sizeof(m->data.bar))
			break;
		ret = m->cmd == MPQEMU_BAR_READ ? bar_read(b, &m->data.bar) : bar_write(b, &m->data.bar);
		return mpqemu_ret(b->qemu, ret);
	case MPQEMU_DEVICE_RESET:
		return mpqemu_ret(b->qemu, device_reset(b));
	default:
		break;
	}
	fprintf(stderr, "nicsim-qemu-remote: QEMU sent %s (%d) with %llu bytes and %d fds: not a message the "
		"device answers\n", mpqemu_name(m->cmd), m->cmd, (unsigned long long)m->size, m->nfds);
	for (int i = 0; i < m->nfds; i++)
		close(m->fds[i]);
	return -1;
}

/*
 * Lets simulated time move by at most a quantum while the guest computes. busy is left set when the
 * device did something (an interrupt, a DMA write ending the WAIT early): the next look is at once.
 */
static int let_time_move(struct bridge *b) {
	uint32_t vectors[64];
	uint64_t now = 0;
	int n = nicsim_wait(b->dev, b->step, vectors, 64, &now);
	if (n < 0)
		return -1;
	b->interrupts += (uint64_t)n;
	for (int i = 0; i < n && i < 64; i++)
		doorbell_ring(b, vectors[i]);
	b->busy = n > 0 || (now > b->now && now - b->now < b->step);
	b->step = b->busy ? b->quantum : b->step < b->quantum * IDLE_GROWTH ? 2 * b->step : b->step;
	b->now = now;
	return 0;
}

/* Starts QEMU with its args, the proxy device on `fd` and the doorbell device if any; its pid, or -1. */
static pid_t start_qemu(const struct bridge *b, char **args, int nargs, int fd) {
	char opt[96], chardev[128], doorbell[128];
	snprintf(opt, sizeof(opt), "x-pci-proxy-dev,id=nicsim0,fd=%d", fd);
	snprintf(chardev, sizeof(chardev), "socket,id=nicsim0-doorbell,path=%s", b->doorbell_path);
	snprintf(doorbell, sizeof(doorbell), "ivshmem-doorbell,id=nicsim0-irq,chardev=nicsim0-doorbell,vectors=%d",
		 b->doorbell_vectors);
	char **argv = calloc((size_t)nargs + 7, sizeof(*argv));
	if (!argv)
		return -1;
	memcpy(argv, args, (size_t)nargs * sizeof(*argv));
	argv[nargs] = "-device";
	argv[nargs + 1] = opt;
	if (b->doorbell_listen >= 0) {
		argv[nargs + 2] = "-chardev";
		argv[nargs + 3] = chardev;
		argv[nargs + 4] = "-device";
		argv[nargs + 5] = doorbell;
	}
	pid_t pid = fork();
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGTERM); /* a guest whose device is gone goes too */
		fcntl(fd, F_SETFD, 0);            /* QEMU's end stays open across exec */
		execvp(argv[0], argv);
		fprintf(stderr, "nicsim-qemu-remote: starting %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	free(argv);
	return pid;
}

static int serve_loop(struct bridge *b) {
	for (;;) {
		struct pollfd p[2] = {{.fd = b->qemu, .events = POLLIN}, {.fd = b->doorbell_listen, .events = POLLIN}};
		int r = poll(p, 2, b->busy ? 0 : IDLE_POLL_MS); /* a negative fd (no doorbell device) is ignored */
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -1;
		if ((p[1].revents & POLLIN) && doorbell_accept(b)) /* QEMU's doorbell device waits for its setup */
			return -1;
		if (!p[0].revents) { /* nothing from QEMU: the adapter's turn */
			if (r == 0 && let_time_move(b)) {
				fprintf(stderr, "nicsim-qemu-remote: serve's WAIT failed: %s\n", strerror(errno));
				return -1;
			}
			continue;
		}
		struct mpqemu_msg m;
		int got = mpqemu_recv(b->qemu, &m);
		if (got == 0)
			return 0; /* QEMU closed its end: it is exiting */
		if (got < 0) {
			fprintf(stderr, "nicsim-qemu-remote: reading QEMU's message: %s\n", strerror(errno));
			return -1;
		}
		b->step = b->quantum; /* the guest is at the device: time moves in small steps again */
		if (handle(b, &m))
			return -1;
	}
}

int main(int argc, char **argv) {
	int node = -1, i = 1;
	uint64_t quantum_ns = 10000;
	int doorbell_vectors = -1; /* -1: as many as the adapter has MSI-X vectors */
	for (; i < argc && strcmp(argv[i], "--"); i++) {
		char *end;
		if (!strcmp(argv[i], "--node") && i + 1 < argc) {
			node = (int)strtol(argv[++i], &end, 10);
			if (*end || node < 0) {
				fprintf(stderr, "nicsim-qemu-remote: --node %s: a node number\n", argv[i]);
				return 2;
			}
		} else if (!strcmp(argv[i], "--quantum-ns") && i + 1 < argc) {
			quantum_ns = strtoull(argv[++i], &end, 10);
			if (*end || quantum_ns == 0 || quantum_ns > 1000000000ull) {
				fprintf(stderr, "nicsim-qemu-remote: --quantum-ns %s: 1..1000000000\n", argv[i]);
				return 2;
			}
		} else if (!strcmp(argv[i], "--doorbell-vectors") && i + 1 < argc) {
			doorbell_vectors = (int)strtol(argv[++i], &end, 10);
			if (*end || doorbell_vectors < 0 || doorbell_vectors > 2048) {
				fprintf(stderr, "nicsim-qemu-remote: --doorbell-vectors %s: 0..2048\n", argv[i]);
				return 2;
			}
		} else
			usage();
	}
	if (i + 1 >= argc)
		usage();
	struct bridge b = {.quantum = quantum_ns * 1000, .step = quantum_ns * 1000, .doorbell_listen = -1,
			   .doorbell_client = -1};
	if (nicsim_open_flags(&b.dev, node, NICSIM_OPEN_BAR0_32BIT)) {
		fprintf(stderr, "nicsim-qemu-remote: opening node %d's adapter on $NICSIM_SOCKET (%s): %s\n", node,
			getenv("NICSIM_SOCKET") ? getenv("NICSIM_SOCKET") : "unset", strerror(errno));
		return 1;
	}
	b.bar0_size = nicsim_bar0_size(b.dev);
	if (doorbell_vectors < 0)
		doorbell_vectors = (int)nicsim_msix_vectors(b.dev);
	if (doorbell_vectors > 0 && doorbell_listen(&b, doorbell_vectors)) {
		perror("nicsim-qemu-remote: the doorbell device's socket");
		return 1;
	}
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv)) {
		perror("nicsim-qemu-remote: socketpair");
		return 1;
	}
	signal(SIGPIPE, SIG_IGN);
	pid_t qemu = start_qemu(&b, argv + i + 1, argc - i - 1, sv[1]);
	close(sv[1]);
	if (qemu < 0) {
		perror("nicsim-qemu-remote: fork");
		return 1;
	}
	b.qemu = sv[0];
	int rc = serve_loop(&b);
	if (rc)
		kill(qemu, SIGTERM); /* the device is gone: so is the guest's machine */
	close(b.qemu);
	int status = 0;
	while (waitpid(qemu, &status, 0) < 0 && errno == EINTR)
		;
	sysmem_release(&b);
	doorbell_close(&b);
	fprintf(stderr, "nicsim-qemu-remote: node %d: %llu BAR accesses (%llu reads), %llu MSI-X messages (%llu "
		"raised a doorbell vector, %llu dropped), %llu resets, simulated time %.3f us\n", node,
		(unsigned long long)b.accesses, (unsigned long long)b.reads, (unsigned long long)b.interrupts,
		(unsigned long long)b.delivered, (unsigned long long)b.dropped, (unsigned long long)b.resets,
		(double)b.now / 1e6);
	nicsim_close(b.dev);
	if (rc)
		return 1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}
