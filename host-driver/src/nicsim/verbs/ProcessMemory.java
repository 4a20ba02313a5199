package nicsim.verbs;

import nicsim.driver.Host;

/** The memory a program on a node allocates from (page-aligned buffers in that node's host memory). */
public final class ProcessMemory {
    private final Host host;

    public ProcessMemory(Host host) { this.host = host; }

    /** A zeroed, page-aligned buffer of {@code length} bytes. */
    public HostBuffer alloc(long length) {
        if (length <= 0) throw new VerbsException(Errno.EINVAL, "alloc length " + length + " must be > 0");
        long pa = host.allocPhysical(length, host.memory.pageSize());
        return new HostBuffer(host, host.va(pa), length);
    }
}
