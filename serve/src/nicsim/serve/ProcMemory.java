package nicsim.serve;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import nicsim.host.HostMemory;
import nicsim.verbs.Errno;
import nicsim.verbs.VerbsException;

/**
 * An attached program's memory, read and written in place through /proc/&lt;pid&gt;/mem: what the
 * simulated adapter's DMA reaches when the program registered a buffer. The program lets the
 * simulator in (its provider sets PR_SET_PTRACER). An access the kernel refuses (the program
 * freed or unmapped a registered buffer, or exited) reads zeros and writes nothing, as a device
 * DMA into memory taken from under it would: it is counted and the first is kept, for the
 * simulator to report, and the simulation goes on.
 */
final class ProcMemory implements AutoCloseable {
    private final int pid;
    private final FileChannel mem;
    private long failures, writes;
    private String firstFailure;

    ProcMemory(int pid) throws IOException {
        this.pid = pid;
        this.mem = FileChannel.open(Path.of("/proc", Integer.toString(pid), "mem"), StandardOpenOption.READ, StandardOpenOption.WRITE);
    }

    /** The program's bytes from virtual address {@code base} on, as a backing for host memory. */
    HostMemory.Backing at(long base) {
        return new HostMemory.Backing() {
            @Override public void read(long offset, byte[] dst, int off, int len) { transfer(base + offset, ByteBuffer.wrap(dst, off, len), false); }
            @Override public void write(long offset, byte[] src, int off, int len) { transfer(base + offset, ByteBuffer.wrap(src, off, len), true); }
        };
    }

    private void transfer(long va, ByteBuffer buf, boolean write) {
        if (write) writes++;
        long at = va;
        try {
            while (buf.hasRemaining()) {
                int n = write ? mem.write(buf, at) : mem.read(buf, at);
                if (n <= 0) throw new IOException("no bytes moved");
                at += n;
            }
        } catch (IOException e) {
            if (failures++ == 0) firstFailure = String.format("process %d: DMA %s of %d bytes at 0x%x: %s", pid, write ? "write" : "read",
                    buf.remaining(), at, e.getMessage());
            if (!write) while (buf.hasRemaining()) buf.put((byte) 0);
        }
    }

    /**
     * Refuses (EFAULT, as the kernel's pinning of user pages does) a range not wholly mapped in the
     * program, or, when the adapter is to write it, mapped read-only.
     */
    void checkMapped(long start, long length, boolean write) {
        long at = start, end = start + length;
        List<Mapping> maps;
        try {
            maps = mappings();
        } catch (IOException | RuntimeException e) {
            throw new VerbsException(Errno.EFAULT, "reg_mr: cannot read process " + pid + "'s mappings: " + e.getMessage());
        }
        for (Mapping m : maps) {
            if (m.lo() <= at && at < m.hi() && m.readable() && (!write || m.writable())) at = m.hi();
            if (at >= end) return;
        }
        throw new VerbsException(Errno.EFAULT, String.format("reg_mr: 0x%x is not mapped%s in process %d", at,
                write ? " writable" : "", pid));
    }

    /** Whether anything readable of the program is mapped in {@code [start, start + length)}. */
    boolean anyMapped(long start, long length) {
        try {
            for (Mapping m : mappings()) if (m.readable() && m.lo() < start + length && start < m.hi()) return true;
        } catch (IOException | RuntimeException e) {
            return false;
        }
        return false;
    }

    /** One line of /proc/&lt;pid&gt;/maps: its range and whether it may be read and written. */
    private record Mapping(long lo, long hi, boolean readable, boolean writable) {}

    /** The program's mappings, in address order. */
    private List<Mapping> mappings() throws IOException {
        List<Mapping> out = new java.util.ArrayList<>();
        for (String line : java.nio.file.Files.readAllLines(Path.of("/proc", Integer.toString(pid), "maps"))) {
            int dash = line.indexOf('-'), space = line.indexOf(' ');
            out.add(new Mapping(Long.parseUnsignedLong(line.substring(0, dash), 16),
                    Long.parseUnsignedLong(line.substring(dash + 1, space), 16), line.charAt(space + 1) == 'r',
                    line.charAt(space + 2) == 'w'));
        }
        return out;
    }

    /** DMA writes into the program's memory so far (a program spinning on its memory looks again after one). */
    long writes() { return writes; }

    /** Accesses the kernel refused. */
    long failures() { return failures; }

    /** What the first refused access was, or null. */
    String firstFailure() { return firstFailure; }

    @Override public void close() {
        try { mem.close(); } catch (IOException e) { throw new UncheckedIOException(e); }
    }
}
