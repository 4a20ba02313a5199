package nicsim.verbs;

import nicsim.driver.Host;

/** A buffer in a node's host memory: its virtual address, length, and byte access for the program. */
public final class HostBuffer {
    private final Host host;
    private final long va, length;

    public HostBuffer(Host host, long va, long length) {
        this.host = host;
        this.va = va;
        this.length = length;
    }

    public long addr() { return va; }
    public long length() { return length; }

    public byte[] read(long off, int len) {
        check(off, len);
        return host.memory.read(host.pa(va + off), len);
    }

    public void write(long off, byte[] data) {
        check(off, data.length);
        host.memory.write(host.pa(va + off), data);
    }

    private void check(long off, long len) {
        if (off < 0 || len < 0 || off + len > length)
            throw new IndexOutOfBoundsException("offset " + off + " + length " + len + " outside the " + length
                    + "-byte buffer at 0x" + Long.toHexString(va));
    }

    @Override public String toString() { return String.format("HostBuffer(0x%x, %d B)", va, length); }
}
