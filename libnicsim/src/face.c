/*
 * The PCI face: a driver's requests to the function `nicsim serve` offers (docs/device.md, "The
 * PCI face"). Each request is u32 length (of what follows), u32 op, its fields; each answer u32
 * length, u32 status (0 or an errno), its fields; little-endian. MMIO writes are posted and get
 * no answer.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "nicsim-internal.h"
#include "nicsim/device.h"
#include "nicsim/wire.h"

#define MAX_REQUEST 4096

static int fail(int err) {
	errno = err;
	return -err;
}

struct req {
	uint8_t b[MAX_REQUEST];
	uint32_t n;
};

static void start(struct req *r, uint32_t op) {
	r->n = 8;
	memcpy(r->b + 4, &op, 4);
}

static void put32(struct req *r, uint32_t v) {
	memcpy(r->b + r->n, &v, 4);
	r->n += 4;
}

static void put64(struct req *r, uint64_t v) {
	memcpy(r->b + r->n, &v, 8);
	r->n += 8;
}

static int put_bytes(struct req *r, const void *p, uint32_t len) {
	if (r->n + len > sizeof(r->b))
		return -1;
	memcpy(r->b + r->n, p, len);
	r->n += len;
	return 0;
}

/* A message's fixed part: a struct nicsim_wire_* generated from serve's declaration of it (wire.h). */
#define PUT(r, s) put_bytes((r), &(s), sizeof(s))

static int full_write(int fd, const void *p, size_t n) {
	const uint8_t *b = p;
	while (n > 0) {
		ssize_t w = write(fd, b, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return fail(EIO);
		b += w;
		n -= (size_t)w;
	}
	return 0;
}

static int full_read(int fd, void *p, size_t n) {
	uint8_t *b = p;
	while (n > 0) {
		ssize_t r = read(fd, b, n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return fail(EIO);
		b += r;
		n -= (size_t)r;
	}
	return 0;
}

/*
 * The device with posted writes the simulator may not have taken yet. Each function has a socket of
 * its own, and the simulator reads sockets in no set order: before a request to another function
 * (a WAIT on one adapter after a doorbell to the other), the posted writes are fenced by a request
 * that is answered, so the simulator applies them first and the run stays repeatable.
 */
static struct nicsim_dev *posted_on;

static int call(struct nicsim_dev *d, struct req *r, void *out, uint32_t want);

static int fence(void) {
	struct nicsim_dev *p = posted_on;
	struct req r;
	struct nicsim_wire_config_offset q = { .offset = 0 };
	struct nicsim_wire_config_value v;
	posted_on = NULL;
	start(&r, NICSIM_OP_PCI_CONFIG_READ);
	PUT(&r, q);
	return call(p, &r, &v, sizeof(v));
}

static int send_req(struct nicsim_dev *d, struct req *r) {
	uint32_t len = r->n - 4;
	int rc;
	if (posted_on && posted_on != d && (rc = fence()))
		return rc;
	memcpy(r->b, &len, 4);
	return full_write(d->fd, r->b, r->n);
}

/* Sends `r` and reads the whole answer into `body` (MAX_REQUEST bytes): its length, or a negative errno. */
static int exchange(struct nicsim_dev *d, struct req *r, uint8_t *body) {
	uint32_t head[2];
	int rc = send_req(d, r);
	if (rc)
		return rc;
	if ((rc = full_read(d->fd, head, sizeof(head))))
		return rc;
	if (head[0] < 4 || head[0] - 4 > MAX_REQUEST)
		return fail(EPROTO);
	if ((rc = full_read(d->fd, body, head[0] - 4)))
		return rc;
	return head[1] ? fail((int)head[1]) : (int)(head[0] - 4);
}

/* Sends `r` and reads the answer's fields into `out` (at least `want` bytes come; NULL when none). */
static int call(struct nicsim_dev *d, struct req *r, void *out, uint32_t want) {
	uint8_t body[MAX_REQUEST];
	int n = exchange(d, r, body);
	if (n < 0)
		return n;
	if ((uint32_t)n < want)
		return fail(EPROTO);
	if (want)
		memcpy(out, body, want);
	return 0;
}

/*
 * The posted-write ring (docs/device.md, "Posted writes in shared memory"): a memfd both processes
 * map; each BAR0 write is a record appended to it, taken by the device before this driver's next
 * request and before simulated time moves. The producer's byte count is at 0, the consumer's at 64,
 * records from POSTED_DATA.
 */
#define POSTED_DATA 4096u
#define POSTED_BYTES (64u * 1024u)
#define POSTED_PAD 0xffffffffu

static void posted_ring(struct nicsim_dev *d) {
	const char *mode = getenv("NICSIM_POSTED");
	if (mode && !strcmp(mode, "socket")) /* every write on the socket, as before the ring */
		return;
	int fd = memfd_create("nicsim-posted", MFD_CLOEXEC);
	if (fd < 0)
		return;
	void *p = MAP_FAILED;
	if (!ftruncate(fd, POSTED_DATA + POSTED_BYTES))
		p = mmap(NULL, POSTED_DATA + POSTED_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p != MAP_FAILED) {
		struct req r;
		struct nicsim_wire_posted_ring_request q = { .fd = (uint32_t)fd, .ring_bytes = POSTED_BYTES };
		start(&r, NICSIM_OP_PCI_POSTED_RING);
		PUT(&r, q);
		if (!call(d, &r, NULL, 0))
			d->posted = p;
		else
			munmap(p, POSTED_DATA + POSTED_BYTES);
	}
	close(fd); /* the simulator opened it through /proc: both mappings stay */
}

/* Appends one write to the ring: 0, or -1 when it has no room (by_ring then waits for the device to take some). */
static int ring_write(struct nicsim_dev *d, uint64_t offset, const void *data, uint32_t len) {
	uint8_t *ring = d->posted + POSTED_DATA;
	uint64_t head = d->posted_head, tail = __atomic_load_n((uint64_t *)(void *)(d->posted + 64), __ATOMIC_ACQUIRE);
	uint32_t need = (16 + len + 15) & ~15u, at = (uint32_t)(head & (POSTED_BYTES - 1)), to_end = POSTED_BYTES - at;
	uint32_t pad = need > to_end ? to_end : 0;
	if (need > POSTED_BYTES / 2 || head + pad + need - tail > POSTED_BYTES)
		return -1;
	if (pad) { /* a record does not wrap: skip to the start */
		uint32_t h[2] = {to_end, POSTED_PAD};
		memcpy(ring + at, h, sizeof(h));
		head += pad;
		at = 0;
	}
	uint32_t h[2] = {need, len};
	memcpy(ring + at, h, sizeof(h));
	memcpy(ring + at + 8, &offset, 8);
	memcpy(ring + at + 16, data, len);
	d->posted_head = head + need;
	__atomic_store_n((uint64_t *)(void *)d->posted, d->posted_head, __ATOMIC_RELEASE);
	return 0;
}

/*
 * Opens node `node`'s adapter by `op`: PCI_OPEN (the whole function) or UCTX_OPEN (a user context,
 * tied to libibverbs session `session`).
 */
static int open_as(struct nicsim_dev **dev, int node, uint32_t op, uint32_t session, uint32_t flags) {
	const char *path = getenv("NICSIM_SOCKET"), *env = getenv("NICSIM_NODE");
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	if (!path || strlen(path) >= sizeof(a.sun_path))
		return fail(ENODEV);
	if (node < 0)
		node = env ? atoi(env) : 0;
	struct nicsim_dev *d = calloc(1, sizeof(*d));
	if (!d)
		return fail(ENOMEM);
	strcpy(a.sun_path, path);
	d->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (d->fd < 0 || connect(d->fd, (struct sockaddr *)&a, sizeof(a))) {
		int err = errno;
		if (d->fd >= 0)
			close(d->fd);
		free(d);
		return fail(err);
	}
	/* the simulator reads our memory for DMA and sees where we wait (/proc/<pid>/mem, syscall) */
	prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
	struct req r;
	struct nicsim_wire_pci_open_request q = {
		.version = NICSIM_WIRE_VERSION, .node = (uint32_t)node, .pid = (uint32_t)getpid(),
		.socket_fd = (uint32_t)d->fd,
	};
	start(&r, op);
	PUT(&r, q);
	char name[256];
	ssize_t n = readlink("/proc/self/exe", name, sizeof(name) - 1);
	if (n < 0)
		n = 0;
	put32(&r, (uint32_t)n);
	put_bytes(&r, name, (uint32_t)n);
	struct nicsim_wire_open_argument arg = { .value = op == NICSIM_OP_UCTX_OPEN ? session : flags };
	PUT(&r, arg);
	struct nicsim_wire_pci_open_reply o;
	int rc = call(d, &r, &o, sizeof(o));
	if (rc) {
		close(d->fd);
		free(d);
		return fail(-rc);
	}
	d->node = node;
	posted_ring(d);
	d->bar0_size = o.bar0_size;
	d->vectors = o.msix_vectors;
	d->msi_address = o.msi_address;
	*dev = d;
	return 0;
}


_Static_assert(NICSIM_OPEN_BAR0_32BIT == NICSIM_PCI_OPEN_BAR0_32BIT, "nicsim.h and wire.h agree");

/* PCIe's bound on a function-level reset (100 ms), and how often a resetting function is looked at. */
#define RESET_LIMIT_PS 100000000000ull
#define RESET_POLL_PS 100000000ull

/*
 * serve resets a function its last driver left (docs/device.md, "Function-level reset"); until the
 * reset completes, a config read gives all ones. Waits for it in simulated time, as Linux's
 * pci_dev_wait waits for a function after a reset.
 */
static int await_reset(struct nicsim_dev *d) {
	uint32_t id;
	uint64_t start, now;
	int rc = nicsim_config_read(d, 0, &id);
	if (rc || id != 0xffffffffu)
		return rc;
	if ((rc = nicsim_wait(d, 0, NULL, 0, &start)) < 0)
		return rc;
	for (now = start; id == 0xffffffffu;) {
		if (now - start >= RESET_LIMIT_PS)
			return fail(ETIMEDOUT);
		if ((rc = nicsim_wait(d, RESET_POLL_PS, NULL, 0, &now)) < 0 || (rc = nicsim_config_read(d, 0, &id)))
			return rc;
	}
	return 0;
}

int nicsim_open(struct nicsim_dev **dev, int node) { return nicsim_open_flags(dev, node, 0); }

int nicsim_open_flags(struct nicsim_dev **dev, int node, uint32_t flags) {
	int rc = open_as(dev, node, NICSIM_OP_PCI_OPEN, 0, flags);
	if (rc)
		return rc;
	if ((rc = await_reset(*dev))) {
		nicsim_face_close(*dev);
		*dev = NULL;
	}
	return rc;
}

int nicsim_face_open_context(struct nicsim_dev **dev, int node, uint32_t session) {
	int rc = open_as(dev, node, NICSIM_OP_UCTX_OPEN, session, 0);
	if (rc)
		return rc;
	(*dev)->user = 1;
	return 0;
}

int nicsim_cq_channel(struct nicsim_dev *d, uint32_t cqn, uint32_t channel) {
	struct req r;
	struct nicsim_wire_cq_channel_request q = { .cqn = cqn, .channel = channel };
	start(&r, NICSIM_OP_UCTX_CQ_CHANNEL);
	PUT(&r, q);
	return call(d, &r, NULL, 0);
}

int nicsim_user_import(struct nicsim_dev *d, uint32_t destroy, uint32_t handle, uint64_t *length) {
	struct req r;
	struct nicsim_wire_uctx_import_request q = { .kind = destroy, .handle = handle };
	struct nicsim_wire_uctx_import_reply a;
	start(&r, NICSIM_OP_UCTX_IMPORT);
	PUT(&r, q);
	int rc = call(d, &r, &a, sizeof(a));
	if (!rc)
		*length = a.length;
	return rc;
}

int nicsim_user_cmd(struct nicsim_dev *d, uint32_t opcode, const uint64_t *in, int nin, uint64_t *out, int nout,
		    uint32_t *syndrome) {
	struct req r;
	uint8_t body[MAX_REQUEST];
	if (nin < 0 || nout < 0 || 16 + 8 * nin > MAX_REQUEST || 8 * (NICSIM_OUT_HEADER_WORDS + nout) > MAX_REQUEST)
		return fail(EINVAL);
	struct nicsim_wire_uctx_cmd_request q = { .opcode = opcode, .input_words = (uint32_t)nin };
	start(&r, NICSIM_OP_UCTX_CMD);
	PUT(&r, q);
	for (int i = 0; i < nin; i++)
		put64(&r, in[i]);
	put32(&r, (uint32_t)nout);
	int len = exchange(d, &r, body);
	if (len < 0)
		return len;
	if (len < 8 * (NICSIM_OUT_HEADER_WORDS + nout))
		return fail(EPROTO);
	uint64_t head;
	memcpy(&head, body, 8);
	if (syndrome)
		*syndrome = (uint32_t)head;
	for (int i = 0; i < nout; i++)
		memcpy(&out[i], body + sizeof(uint64_t) * (NICSIM_OUT_HEADER_WORDS + i), 8);
	return (int)(head >> 32);
}

void nicsim_face_close(struct nicsim_dev *d) {
	if (posted_on == d)
		posted_on = NULL;
	if (d->posted)
		munmap(d->posted, POSTED_DATA + POSTED_BYTES);
	close(d->fd);
	free(d);
}

uint64_t nicsim_bar0_size(const struct nicsim_dev *d) { return d->bar0_size; }
uint32_t nicsim_msix_vectors(const struct nicsim_dev *d) { return d->vectors; }
uint64_t nicsim_msi_address(const struct nicsim_dev *d) { return d->msi_address; }

int nicsim_config_read(struct nicsim_dev *d, uint32_t offset, uint32_t *value) {
	struct req r;
	struct nicsim_wire_config_offset q = { .offset = offset };
	struct nicsim_wire_config_value v;
	start(&r, NICSIM_OP_PCI_CONFIG_READ);
	PUT(&r, q);
	int rc = call(d, &r, &v, sizeof(v));
	if (!rc)
		*value = v.value;
	return rc;
}

int nicsim_config_write(struct nicsim_dev *d, uint32_t offset, uint32_t value) {
	struct req r;
	struct nicsim_wire_config_write q = { .offset = offset, .value = value };
	start(&r, NICSIM_OP_PCI_CONFIG_WRITE);
	PUT(&r, q);
	return call(d, &r, NULL, 0);
}

/* A request answered only after the device took everything before it on d's socket and in d's ring. */
static int sync_writes(struct nicsim_dev *d) {
	struct req r;
	struct nicsim_wire_config_offset q = { .offset = 0 };
	struct nicsim_wire_config_value v;
	start(&r, NICSIM_OP_PCI_CONFIG_READ);
	PUT(&r, q);
	int rc = call(d, &r, &v, sizeof(v));
	if (!rc)
		d->socket_pending = 0;
	return rc;
}

/*
 * Whether the write went into d's ring. Writes land in the order made: after one that went on the
 * socket, the ring waits until the device has taken it; a full ring waits until the device has
 * taken what is in it (both by a request answered after them).
 */
static int by_ring(struct nicsim_dev *d, uint64_t offset, const void *data, uint32_t len) {
	if (!d->posted || (posted_on && posted_on != d) || (d->socket_pending && sync_writes(d)))
		return 0;
	if (ring_write(d, offset, data, len) && (sync_writes(d) || ring_write(d, offset, data, len)))
		return 0;
	posted_on = d;
	return 1;
}

int nicsim_mmio_write(struct nicsim_dev *d, uint64_t offset, const void *data, uint32_t len) {
	if (by_ring(d, offset, data, len))
		return 0;
	struct req r;
	struct nicsim_wire_bar_access q = { .bar = 0, .offset = offset, .length = len };
	start(&r, NICSIM_OP_PCI_MMIO_WRITE);
	PUT(&r, q);
	if (put_bytes(&r, data, len))
		return fail(EINVAL);
	int rc = send_req(d, &r);
	if (!rc) {
		posted_on = d;
		d->socket_pending = d->posted != NULL; /* the ring's next write must not overtake it */
	}
	return rc;
}

int nicsim_mmio_read(struct nicsim_dev *d, uint64_t offset, void *data, uint32_t len) {
	struct req r;
	struct nicsim_wire_bar_access q = { .bar = 0, .offset = offset, .length = len };
	struct nicsim_wire_mmio_read_status status;
	uint8_t out[sizeof(status) + 8];
	if (len != 4 && len != 8)
		return fail(EINVAL);
	start(&r, NICSIM_OP_PCI_MMIO_READ);
	PUT(&r, q);
	int rc = call(d, &r, out, (uint32_t)sizeof(status) + len);
	if (rc)
		return rc;
	memcpy(data, out + sizeof(status), len);
	memcpy(&status, out, sizeof(status));
	return status.status ? fail(EIO) : 0;
}

int nicsim_dma_map(struct nicsim_dev *d, void *addr, uint64_t len, int flags, uint64_t *iova) {
	struct req r;
	struct nicsim_wire_dma_map_request q = {
		.address = (uint64_t)(uintptr_t)addr, .length = len,
		.flags = (uint32_t)flags & (NICSIM_DMA_WRITABLE | NICSIM_DMA_WAKE),
	};
	struct nicsim_wire_iova a;
	start(&r, NICSIM_OP_PCI_DMA_MAP);
	PUT(&r, q);
	int rc = call(d, &r, &a, sizeof(a));
	if (!rc)
		*iova = a.iova;
	return rc;
}

int nicsim_dma_map_at(struct nicsim_dev *d, void *addr, uint64_t len, int flags, uint64_t iova) {
	struct req r;
	struct nicsim_wire_dma_map_request q = {
		.address = (uint64_t)(uintptr_t)addr, .length = len,
		.flags = ((uint32_t)flags & (NICSIM_DMA_WRITABLE | NICSIM_DMA_WAKE)) | NICSIM_PCI_DMA_FIXED,
	};
	struct nicsim_wire_iova at = { .iova = iova }, got;
	start(&r, NICSIM_OP_PCI_DMA_MAP);
	PUT(&r, q);
	PUT(&r, at);
	return call(d, &r, &got, sizeof(got));
}

int nicsim_dma_unmap(struct nicsim_dev *d, uint64_t iova) {
	struct req r;
	struct nicsim_wire_iova q = { .iova = iova };
	start(&r, NICSIM_OP_PCI_DMA_UNMAP);
	PUT(&r, q);
	return call(d, &r, NULL, 0);
}

void *nicsim_dma_alloc(struct nicsim_dev *d, uint64_t len, uint64_t *iova) {
	return nicsim_dma_alloc_flags(d, len, NICSIM_DMA_WRITABLE, iova);
}

void *nicsim_dma_alloc_flags(struct nicsim_dev *d, uint64_t len, int flags, uint64_t *iova) {
	long page = sysconf(_SC_PAGESIZE);
	len = (len + (uint64_t)page - 1) / (uint64_t)page * (uint64_t)page;
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	if (nicsim_dma_map(d, p, len, flags, iova)) {
		int err = errno;
		munmap(p, len);
		errno = err;
		return NULL;
	}
	return p;
}

void nicsim_dma_free(struct nicsim_dev *d, void *addr, uint64_t len, uint64_t iova) {
	long page = sysconf(_SC_PAGESIZE);
	len = (len + (uint64_t)page - 1) / (uint64_t)page * (uint64_t)page;
	nicsim_dma_unmap(d, iova);
	munmap(addr, len);
}

int nicsim_wait(struct nicsim_dev *d, uint64_t picos, uint32_t *vectors, int max, uint64_t *now) {
	struct req r;
	struct nicsim_wire_pci_wait_request q = { .picoseconds = picos };
	struct nicsim_wire_interrupts head;
	const int at = (int)sizeof(head); /* the vectors follow */
	uint8_t body[MAX_REQUEST];
	start(&r, NICSIM_OP_PCI_WAIT);
	PUT(&r, q);
	int len = exchange(d, &r, body);
	if (len < 0)
		return len;
	if (len < at)
		return fail(EPROTO);
	memcpy(&head, body, sizeof(head));
	if (now)
		*now = head.now;
	for (uint32_t i = 0; i < head.n && (int)i < max && at + 4 * (int)i + 4 <= len; i++)
		memcpy(&vectors[i], body + at + 4 * i, 4);
	return (int)head.n;
}
