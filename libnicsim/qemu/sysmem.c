/*
 * The guest's RAM for the adapter's DMA. QEMU sends its RAM regions (SYNC_SYSMEM) as memfds with
 * their guest-physical ranges whenever the guest's memory map changes; each is mapped shared here and
 * given to serve at a fixed IOVA equal to its guest-physical address, so the bus addresses a guest
 * driver writes into the device's structures are where the adapter's reads and writes land. serve
 * reaches the mapping through /proc/<pid>/mem of this process, which is the guest's page cache of
 * the memfd: the guest sees the adapter's writes as a device's DMA.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bridge.h"

/* Whether region r is the one message m's entry i describes (same file, range and place). */
static int same(const struct region *r, const struct mpqemu_msg *m, int i) {
	struct stat st;
	return fstat(m->fds[i], &st) == 0 && st.st_dev == r->dev && st.st_ino == r->ino &&
	       m->data.sysmem.gpa[i] == r->gpa && m->data.sysmem.size[i] == r->size &&
	       m->data.sysmem.offset[i] == r->offset;
}

static void drop(struct bridge *b, struct region *r) {
	if (nicsim_dma_unmap(b->dev, r->gpa))
		fprintf(stderr, "nicsim-qemu-remote: unmapping guest RAM at 0x%llx: %s\n",
			(unsigned long long)r->gpa, strerror(errno));
	munmap(r->host, r->size);
	r->host = NULL;
}

/* Maps entry i of m at its guest-physical address: 0, or -1 with the reason told. */
static int add(struct bridge *b, struct region *r, const struct mpqemu_msg *m, int i) {
	const struct mpqemu_sysmem *s = &m->data.sysmem;
	struct stat st;
	long page = sysconf(_SC_PAGESIZE);
	if (fstat(m->fds[i], &st) || s->size[i] == 0 || (s->gpa[i] | s->size[i] | s->offset[i]) % (uint64_t)page) {
		fprintf(stderr, "nicsim-qemu-remote: guest RAM region %d (gpa 0x%llx, 0x%llx bytes at 0x%llx of fd): "
			"not whole pages of a file\n", i, (unsigned long long)s->gpa[i], (unsigned long long)s->size[i],
			(unsigned long long)s->offset[i]);
		return -1;
	}
	void *p = mmap(NULL, s->size[i], PROT_READ | PROT_WRITE, MAP_SHARED, m->fds[i], (off_t)s->offset[i]);
	if (p == MAP_FAILED) {
		fprintf(stderr, "nicsim-qemu-remote: mapping guest RAM at gpa 0x%llx: %s (is the RAM backend "
			"memory-backend-memfd with share=on?)\n", (unsigned long long)s->gpa[i], strerror(errno));
		return -1;
	}
	if (nicsim_dma_map_at(b->dev, p, s->size[i], NICSIM_DMA_WRITABLE, s->gpa[i])) {
		fprintf(stderr, "nicsim-qemu-remote: serve refused guest RAM at gpa 0x%llx, 0x%llx bytes: %s\n",
			(unsigned long long)s->gpa[i], (unsigned long long)s->size[i], strerror(errno));
		munmap(p, s->size[i]);
		return -1;
	}
	*r = (struct region){.gpa = s->gpa[i], .size = s->size[i], .offset = s->offset[i], .host = p,
			     .dev = st.st_dev, .ino = st.st_ino};
	return 0;
}

int sysmem_sync(struct bridge *b, struct mpqemu_msg *m) {
	int rc = 0;
	int keep[MPQEMU_MAX_FDS] = {0}; /* which of the new entries is an old region kept as it was */
	struct region next[MPQEMU_MAX_FDS] = {0};
	/* a region that did not change stays mapped: QEMU resends the whole map on every change */
	for (int j = 0; j < b->nregions; j++) {
		int kept = 0;
		for (int i = 0; i < m->nfds && !kept; i++)
			if (!keep[i] && same(&b->regions[j], m, i)) {
				keep[i] = 1;
				next[i] = b->regions[j];
				kept = 1;
			}
		if (!kept)
			drop(b, &b->regions[j]);
	}
	int n = 0;
	for (int i = 0; i < m->nfds; i++) {
		if (keep[i] || !add(b, &next[i], m, i))
			b->regions[n++] = next[i];
		else
			rc = -1;
		close(m->fds[i]); /* the mapping holds the memory */
	}
	m->nfds = 0;
	b->nregions = n;
	return rc;
}

void sysmem_release(struct bridge *b) {
	for (int j = 0; j < b->nregions; j++)
		drop(b, &b->regions[j]);
	b->nregions = 0;
}
