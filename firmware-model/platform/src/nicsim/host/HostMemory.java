package nicsim.host;

import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.TreeMap;
import nicsim.profile.Profile;
import nicsim.profile.Require;

/**
 * Simulated host physical memory: sparse (a page takes space only once written), byte
 * addressable, little-endian for multi-byte accessors, with bounds checks that name the access.
 * Unwritten memory reads as zero. Also a simple allocator the driver and tests use to place
 * buffers and rings.
 *
 * <p>A range can be backed by memory outside the simulation ({@link #attach}): an attached
 * program's registered buffer, which the adapter's DMA then reads and writes in place.
 */
public final class HostMemory {
    private final long size;
    private final int pageSize;
    private final int pageShift;
    /**
     * Pages that hold data, by number: chunk {@code number >>> chunkShift}, made when a page in it is first
     * written (null: none yet), holds them at {@code number & chunkMask}. Every DMA TLP finds its page by two
     * array indexes, with no hash and no boxed key. A page above the chunks (a memory of more than 2^28 pages,
     * as a test's stimulus takes) is in {@code farPages}.
     */
    private final byte[][][] chunks;
    private final int chunkShift;
    private final long chunkMask;
    private final Map<Long, byte[]> farPages = new HashMap<>();
    private int pagesTouched;
    /** Ranges backed from outside, by start address. */
    private final TreeMap<Long, Window> windows = new TreeMap<>();
    private boolean attached; // windows is not empty: an access that finds it false reads no map
    // the page last found, by number (-1: none): a run of accesses to one page reads no table, and with
    // many nodes each node's table lines are cold at every window
    private long lastNumber = -1;
    private byte[] lastPage;
    private long version;
    private Runnable onWrite; // told of every write (a cluster's tally of writes to all its hosts)
    // allocation starts above the first MiB so that address 0 is never a valid buffer
    private long nextFree = 1 << 20;
    /** Ranges released, reused only once the never-used space above nextFree is spent. */
    private final FreeRanges released = new FreeRanges(0);
    private long bytesReleased;
    /** Bytes {@link #allocate} gave that {@link #release} has not had back. */
    private long bytesAllocated;

    /**
     * What host memory takes from the profile: its page size ({@code host.page.size}), in which sparse memory
     * allocates. (The firmware's {@code Config} reads the same key for its translations and checks it alike.)
     */
    public record Config(int pageBytes) {
        public Config {
            Require.powerOfTwo("host.page.size", pageBytes, 64, 1L << 30, "B");
        }

        public static Config from(Profile p) {
            return new Config(p.bytesInt("host.page.size"));
        }
    }

    public HostMemory(long size, int pageSize) {
        if (pageSize < 64 || Integer.bitCount(pageSize) != 1)
            throw new IllegalArgumentException("host page size " + pageSize + " must be a power of two >= 64");
        if (size <= 0 || size % pageSize != 0)
            throw new IllegalArgumentException("host memory size " + size
                    + " must be a positive multiple of the page size " + pageSize);
        this.size = size;
        this.pageSize = pageSize;
        this.pageShift = Integer.numberOfTrailingZeros(pageSize);
        // at most 4096 chunks of 2^10 to 2^16 pages (a few KiB of table per host, 1 TiB in pages of 4 KiB)
        long pages = size >>> pageShift;
        this.chunkShift = Math.min(16, Math.max(10, 64 - Long.numberOfLeadingZeros(pages - 1) - 12));
        this.chunkMask = (1L << chunkShift) - 1;
        this.chunks = new byte[(int) Math.min(4096, (pages + chunkMask) >>> chunkShift)][][];
    }

    public long size() { return size; }
    public int pageSize() { return pageSize; }
    /** Pages that hold data: the memory the simulation really uses. */
    public int pagesTouched() { return pagesTouched; }
    /** Bytes allocated and not yet released: what a test compares before and after to see that nothing leaked. */
    public long bytesAllocated() { return bytesAllocated; }

    public boolean inBounds(long addr, long len) { return addr >= 0 && len >= 0 && addr <= size - len; }

    private void check(long addr, long len, String what) {
        if (!inBounds(addr, len))
            throw new MemoryAccessException(String.format("host memory %s of %d bytes at 0x%x is outside 0..0x%x",
                    what, len, addr, size));
    }

    /** Memory outside the simulation that backs a range of host memory (offsets from the range's start). */
    public interface Backing {
        void read(long offset, byte[] dst, int off, int len);
        void write(long offset, byte[] src, int off, int len);
    }

    private record Window(long start, long length, Backing backing) {
        long end() { return start + length; }
    }

    /**
     * From now on bytes {@code [addr, addr + length)} are {@code backing}'s: reads and writes go to
     * it. The range must be page-aligned, in bounds and not overlap another attached one.
     */
    public void attach(long addr, long length, Backing backing) {
        check(addr, length, "attach");
        if ((addr | length) % pageSize != 0 || length == 0)
            throw new IllegalArgumentException(String.format("attach 0x%x + 0x%x: not whole pages of %d bytes",
                    addr, length, pageSize));
        var below = windows.floorEntry(addr + length - 1);
        if (below != null && below.getValue().end() > addr)
            throw new IllegalArgumentException(String.format("attach 0x%x + 0x%x overlaps the range at 0x%x",
                    addr, length, below.getKey()));
        windows.put(addr, new Window(addr, length, backing));
        attached = true;
    }

    /** The range attached at {@code addr} is simulated memory again (reading as it was before, or zero). */
    public void detach(long addr) {
        if (windows.remove(addr) == null)
            throw new IllegalArgumentException(String.format("no range attached at 0x%x", addr));
        attached = !windows.isEmpty();
    }

    /** The attached range holding {@code addr}, or null. */
    private Window windowAt(long addr) {
        if (!attached) return null;
        var e = windows.floorEntry(addr);
        return e != null && e.getValue().end() > addr ? e.getValue() : null;
    }

    public byte[] read(long addr, int len) {
        byte[] out = new byte[len];
        read(addr, out, 0, len);
        return out;
    }

    /** The byte at {@code addr} (a poll's look at an owner bit: no array made unless a backed range holds it). */
    public byte readByte(long addr) {
        check(addr, 1, "read");
        if (windowAt(addr) != null) return read(addr, 1)[0];
        byte[] page = page(addr >>> pageShift, false);
        return page == null ? 0 : page[(int) (addr & (pageSize - 1))];
    }

    public void read(long addr, byte[] dst, int off, int len) {
        check(addr, len, "read");
        int done = 0;
        while (done < len) {
            long a = addr + done;
            int inPage = (int) (a & (pageSize - 1));
            int n = Math.min(len - done, pageSize - inPage);
            Window w = windowAt(a);
            if (w != null) {
                w.backing().read(a - w.start(), dst, off + done, n);
                done += n;
                continue;
            }
            byte[] page = page(a >>> pageShift, false);
            if (page == null) Arrays.fill(dst, off + done, off + done + n, (byte) 0);
            else System.arraycopy(page, inPage, dst, off + done, n);
            done += n;
        }
    }

    public void write(long addr, byte[] src) { write(addr, src, 0, src.length); }

    /** Writes so far: a program that only polls memory need not look again until this moves. */
    public long version() { return version; }

    /** Runs {@code hook} on every write from now on (a cluster's tally of writes to all its hosts). */
    public void onWrite(Runnable hook) { onWrite = hook; }

    public void write(long addr, byte[] src, int off, int len) {
        check(addr, len, "write");
        version++;
        if (onWrite != null) onWrite.run();
        int done = 0;
        while (done < len) {
            long a = addr + done;
            int inPage = (int) (a & (pageSize - 1));
            int n = Math.min(len - done, pageSize - inPage);
            Window w = windowAt(a);
            if (w != null) {
                w.backing().write(a - w.start(), src, off + done, n);
                done += n;
                continue;
            }
            // zeros on an unwritten page change nothing (looked at only when the page is not there yet)
            byte[] page = page(a >>> pageShift, false);
            if (page == null && !zeros(src, off + done, n)) page = page(a >>> pageShift, true);
            if (page != null) System.arraycopy(src, off + done, page, inPage, n);
            done += n;
        }
    }

    private static boolean zeros(byte[] b, int off, int n) {
        for (int i = off; i < off + n; i++) if (b[i] != 0) return false;
        return true;
    }

    /** Page {@code number}, made if {@code make} and absent (else null). */
    private byte[] page(long number, boolean make) {
        if (number == lastNumber) return lastPage;
        byte[] p = findPage(number, make);
        if (p != null) {
            lastNumber = number;
            lastPage = p;
        }
        return p;
    }

    private byte[] findPage(long number, boolean make) {
        long c = number >>> chunkShift;
        if (c >= chunks.length) return farPage(number, make);
        byte[][] chunk = chunks[(int) c];
        if (chunk == null) {
            if (!make) return null;
            chunk = chunks[(int) c] = new byte[1 << chunkShift][];
        }
        int i = (int) (number & chunkMask);
        byte[] p = chunk[i];
        if (p == null && make) {
            p = chunk[i] = new byte[pageSize];
            pagesTouched++;
        }
        return p;
    }

    private byte[] farPage(long number, boolean make) {
        byte[] p = farPages.get(number);
        if (p == null && make) {
            farPages.put(number, p = new byte[pageSize]);
            pagesTouched++;
        }
        return p;
    }

    /** Page {@code number} takes no memory again (reads as zero). */
    private void drop(long number) {
        if (number == lastNumber) {
            lastNumber = -1;
            lastPage = null;
        }
        long c = number >>> chunkShift;
        if (c >= chunks.length) {
            if (farPages.remove(number) != null) pagesTouched--;
            return;
        }
        byte[][] chunk = chunks[(int) c];
        if (chunk == null || chunk[(int) (number & chunkMask)] == null) return;
        chunk[(int) (number & chunkMask)] = null;
        pagesTouched--;
    }

    public long readLong(long addr) {
        byte[] b = read(addr, 8);
        long v = 0;
        for (int i = 7; i >= 0; i--) v = (v << 8) | (b[i] & 0xff);
        return v;
    }

    public void writeLong(long addr, long v) {
        byte[] b = new byte[8];
        for (int i = 0; i < 8; i++) b[i] = (byte) (v >>> (8 * i));
        write(addr, b);
    }

    public int readInt(long addr) {
        byte[] b = read(addr, 4);
        return (b[0] & 0xff) | (b[1] & 0xff) << 8 | (b[2] & 0xff) << 16 | (b[3] & 0xff) << 24;
    }

    public void writeInt(long addr, int v) {
        write(addr, new byte[]{(byte) v, (byte) (v >>> 8), (byte) (v >>> 16), (byte) (v >>> 24)});
    }

    /**
     * Reserves {@code length} bytes aligned to {@code alignment} (a power of two) and returns the
     * address. Addresses are fresh ones while any are left, which keeps traces easy to read and
     * keeps a late DMA to a released range off its next owner; then released ranges are reused.
     */
    public long allocate(long length, long alignment) {
        if (length <= 0) throw new IllegalArgumentException("allocation length " + length + " must be > 0");
        if (alignment <= 0 || Long.bitCount(alignment) != 1)
            throw new IllegalArgumentException("allocation alignment " + alignment + " must be a power of two");
        long addr = (nextFree + alignment - 1) & -alignment;
        if (!inBounds(addr, length)) {
            long again = released.takeAligned(length, alignment);
            if (again >= 0) {
                bytesReleased -= length;
                bytesAllocated += length;
                return again;
            }
            throw new MemoryAccessException("host memory exhausted: cannot allocate " + length + " bytes (size 0x"
                    + Long.toHexString(size) + ", next free 0x" + Long.toHexString(addr) + ", " + bytesReleased
                    + " bytes released in pieces)");
        }
        nextFree = addr + length;
        bytesAllocated += length;
        return addr;
    }

    /**
     * Takes {@code [addr, addr + length)}, at or above every address given so far, as if {@link #allocate}
     * had given it: the same bus addresses in a fresh memory after a function-level reset, for the
     * mappings its driver keeps. The space skipped below it may be allocated again.
     */
    public void reserve(long addr, long length) {
        check(addr, length, "reserve");
        if (addr < nextFree)
            throw new IllegalArgumentException(String.format("reserve 0x%x + 0x%x: below the next free address 0x%x",
                    addr, length, nextFree));
        if (addr > nextFree) {
            released.give(nextFree, addr);
            bytesReleased += addr - nextFree;
        }
        nextFree = addr + length;
        bytesAllocated += length;
    }

    private byte[] zero;

    private byte[] zeroPage() {
        if (zero == null) zero = new byte[pageSize];
        return zero;
    }

    /**
     * Gives back {@code [addr, addr + length)}, which {@link #allocate} gave: its pages stop taking
     * memory (bytes of a page the range shares with others read as zero), and the range may be
     * allocated again.
     */
    public void release(long addr, long length) {
        if (length <= 0) return;
        check(addr, length, "release");
        long end = addr + length;
        for (long p = addr >>> pageShift; p <= (end - 1) >>> pageShift; p++) {
            long from = Math.max(addr, p << pageShift), to = Math.min(end, (p + 1) << pageShift);
            if (to - from == pageSize) drop(p);
            else {
                byte[] page = page(p, false);
                int at = (int) (from & (pageSize - 1));
                if (page != null) {
                    Arrays.fill(page, at, at + (int) (to - from), (byte) 0);
                    if (Arrays.equals(page, zeroPage())) drop(p); // nothing left in it: as if never written
                }
            }
        }
        released.give(addr, end);
        bytesReleased += length;
        bytesAllocated -= length;
    }
}
