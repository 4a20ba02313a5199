package nicsim.verbs;

import nicsim.driver.Host;

/** The memory a program on a node allocates from (page-aligned buffers in that node's host memory). */
public final class ProcessMemory {
    private final Host host;

    public ProcessMemory(Host host) { this.host = host; }

    /**
     * The OS swaps out the pages of [addr, addr + length): on-demand MRs over them have the adapter's
     * translations invalidated first, and fault the pages back in on the next access. (The bytes
     * stay: the simulation keeps them where they were.) Returns the MRs invalidated.
     */
    public int evict(long addr, long length) {
        if (length <= 0) throw new VerbsException(Errno.EINVAL, "evict length " + length + " must be > 0");
        return host.driver().evict(addr, length);
    }

    /** A zeroed, page-aligned buffer of {@code length} bytes. */
    public HostBuffer alloc(long length) {
        if (length <= 0) throw new VerbsException(Errno.EINVAL, "alloc length " + length + " must be > 0");
        long pa = host.allocPhysical(length, host.memory.pageSize());
        return new HostBuffer(host, host.va(pa), length);
    }
}
