package nicsim.serve;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import nicsim.host.HostMemory;
import nicsim.verbs.Errno;
import nicsim.verbs.VerbsException;

/**
 * An attached program's memory, read and written in place through /proc/&lt;pid&gt;/mem: what the
 * simulated adapter's DMA reaches when the program registered a buffer. The program lets the
 * simulator in (its provider sets PR_SET_PTRACER). An access the kernel refuses (the program
 * freed or unmapped a registered buffer, or exited) reads zeros and writes nothing, as a device
 * DMA into memory taken from under it would: it is counted and the first is kept, for the
 * simulator to report, and the simulation goes on. A program's memory released whole (it exits:
 * Linux removes a killed process's memory before its files close) is {@link #gone}: its driver
 * is then let go as if its device file had closed.
 *
 * <p>While simulated time moves the program waits, so its memory holds still but for what the
 * adapter writes: then ({@link #hold}) each page the adapter touches is read once, the adapter's
 * reads and writes go to that copy, and {@link #settle} writes back the bytes it wrote before the
 * program is let go on. A message then costs no system call of its own: 64 B writes cost two
 * each (about 2 us from Java), more than the simulation of the message's wire.
 */
final class ProcMemory implements AutoCloseable {
    /**
     * What the program's memory is to this thread's server: recorded (serve --record) or replayed from a recording
     * (nicsim replay), or neither (null). Read where a ProcMemory is made, on the simulator's thread.
     */
    static final ThreadLocal<Tap> TAP = new ThreadLocal<>();

    /**
     * A recording of, or a replay from, every access that reaches the kernel: the file's opening, each move of
     * bytes (a read's bytes, a write's checksum), each reading of the mappings, with the kernel's refusals.
     */
    interface Tap {
        /** Whether accesses are answered from a recording (the program is not there). */
        boolean replaying();

        /** Process {@code pid}'s memory was opened, or {@code refused}; a replay throws the recorded refusal. */
        void opened(int pid, IOException refused) throws IOException;

        /**
         * {@code buf}'s bytes from {@code start} were moved from or to {@code va} (up to its position, then
         * {@code refused}); a replay fills a read's bytes, checks a write's, and throws the recorded refusal.
         */
        void moved(int pid, long va, ByteBuffer buf, int start, boolean write, IOException refused) throws IOException;

        /** The program's mappings were read ({@code seen}, or {@code refused}); a replay answers the recorded ones. */
        List<Mapping> mappings(int pid, List<Mapping> seen, IOException refused) throws IOException;

        /** A C driver's posted-write ring (PostedRing) was mapped, or {@code refused}; a replay throws that. */
        void ringOpened(long pid, int fd, VerbsException refused);

        /** Recording: one write taken from a driver's ring, about to go to BAR0. */
        void posted(long pid, long offset, byte[] data);

        /** Recording: a drain of a driver's ring ended (or {@code refused}: a record did not fit). */
        void drained(long pid, VerbsException refused);

        /** Replaying: hands the recorded writes of the next drain to {@code sink}, or throws its refusal; how many. */
        int drain(long pid, PostedRing.Sink sink);
    }

    private final int pid;
    /** Null while replaying: every access is answered by {@link #tap}. */
    private final FileChannel mem;
    private final Tap tap;
    private long failures, writes;
    private String firstFailure;
    /** Whether the kernel moved nothing at all: the process's memory is released (see {@link #gone}). */
    private boolean gone;
    /** What the kernel's read of a released memory gives (no bytes: an address not mapped is EIO instead). */
    private static final String RELEASED = "no bytes moved";
    /** While held: the pages touched, by page number (their bytes read once, or only written so far). */
    private final Map<Long, Page> pages = new HashMap<>();
    private boolean holding;
    private Page last; // the page touched last, looked up without the map

    ProcMemory(int pid) throws IOException {
        this.pid = pid;
        this.tap = TAP.get();
        if (tap != null && tap.replaying()) {
            tap.opened(pid, null);
            mem = null;
            return;
        }
        try {
            mem = FileChannel.open(Path.of("/proc", Integer.toString(pid), "mem"), StandardOpenOption.READ,
                    StandardOpenOption.WRITE);
        } catch (IOException e) {
            if (tap != null) tap.opened(pid, e);
            throw e;
        }
        if (tap != null) tap.opened(pid, null);
    }

    /** The program's bytes from virtual address {@code base} on, as a backing for host memory. */
    HostMemory.Backing at(long base) {
        return new HostMemory.Backing() {
            @Override public void read(long offset, byte[] dst, int off, int len) {
                transfer(base + offset, ByteBuffer.wrap(dst, off, len), false);
            }

            @Override public void write(long offset, byte[] src, int off, int len) {
                transfer(base + offset, ByteBuffer.wrap(src, off, len), true);
            }
        };
    }

    private void transfer(long va, ByteBuffer buf, boolean write) {
        if (write) writes++;
        if (holding) {
            held(va, buf, write);
            return;
        }
        direct(va, buf, write);
    }

    private void direct(long va, ByteBuffer buf, boolean write) {
        int start = buf.position();
        try {
            move(va, buf, write);
        } catch (IOException e) {
            gone |= RELEASED.equals(e.getMessage()); // as recorded, so a replay finds it gone where the run did
            if (failures++ == 0) firstFailure = String.format("process %d: DMA %s of %d bytes at 0x%x: %s", pid,
                    write ? "write" : "read", buf.remaining(), va + buf.position() - start, e.getMessage());
            if (!write) while (buf.hasRemaining()) buf.put((byte) 0);
        }
    }

    /** Moves {@code buf}'s remaining bytes from or to the program at {@code va} on; the kernel's refusal throws. */
    private void move(long va, ByteBuffer buf, boolean write) throws IOException {
        int start = buf.position();
        if (mem == null) {
            tap.moved(pid, va, buf, start, write, null);
            return;
        }
        try {
            for (long at = va; buf.hasRemaining(); ) {
                int n = write ? mem.write(buf, at) : mem.read(buf, at);
                if (n <= 0) throw new IOException(RELEASED);
                at += n;
            }
        } catch (IOException e) {
            if (tap != null) tap.moved(pid, va, buf, start, write, e);
            throw e;
        }
        if (tap != null) tap.moved(pid, va, buf, start, write, null);
    }

    /** The adapter's accesses from now on go to copies of the pages they touch, until {@link #settle}. */
    void hold() { holding = true; }

    /** Writes back what the adapter wrote while held, and forgets the copies: the program may look now. */
    void settle() {
        holding = false;
        last = null;
        if (pages.isEmpty()) return;
        List<Long> numbers = new ArrayList<>(pages.keySet());
        Collections.sort(numbers);
        // a run of dirty bytes that goes on into the next page's goes in the same write
        ByteArrayOutputStream run = new ByteArrayOutputStream();
        long runVa = -1;
        for (long n : numbers) {
            Page p = pages.get(n);
            for (int at = p.dirty.nextSetBit(0); at >= 0; ) {
                int end = p.dirty.nextClearBit(at);
                long va = n * PAGE + at;
                if (runVa + run.size() != va) {
                    flush(runVa, run);
                    runVa = va;
                }
                run.write(p.bytes, at, end - at);
                at = end >= PAGE ? -1 : p.dirty.nextSetBit(end);
            }
        }
        flush(runVa, run);
        pages.clear();
    }

    private void flush(long va, ByteArrayOutputStream run) {
        if (run.size() == 0) return;
        direct(va, ByteBuffer.wrap(run.toByteArray()), true);
        run.reset();
    }

    /** Page size of the copies (the kernel's mappings are whole pages, so a copy is read whole or not at all). */
    private static final int PAGE = 4096;
    /** Pages held at most; past this many, what was written goes back and the copies start again. */
    private static final int MAX_PAGES = 16384;

    /** A held page: its bytes (once read), and which of them the adapter wrote. */
    private static final class Page {
        final long number;
        final byte[] bytes = new byte[PAGE];
        final BitSet dirty = new BitSet(PAGE);
        boolean read, unreadable;
        Page(long number) { this.number = number; }
    }

    private void held(long va, ByteBuffer buf, boolean write) {
        while (buf.hasRemaining()) {
            long n = va / PAGE;
            int off = (int) (va % PAGE), len = Math.min(buf.remaining(), PAGE - off);
            Page p = page(n, !write);
            if (p.unreadable) { // as without the copy: refused, counted, zeros read
                ByteBuffer part = buf.slice();
                part.limit(len);
                direct(va, part, write);
            } else if (write) {
                buf.get(buf.position(), p.bytes, off, len);
                p.dirty.set(off, off + len);
            } else buf.put(buf.position(), p.bytes, off, len);
            buf.position(buf.position() + len);
            va += len;
        }
    }

    /** The held copy of page {@code n}; {@code read}: its bytes are wanted (read them now if only written so far). */
    private Page page(long n, boolean read) {
        Page p = last != null && last.number == n ? last : pages.get(n);
        if (p == null) {
            if (pages.size() >= MAX_PAGES) {
                settle();
                holding = true;
            }
            pages.put(n, p = new Page(n));
        }
        last = p;
        if (read && !p.read && !p.unreadable) {
            byte[] was = p.dirty.isEmpty() ? null : p.bytes.clone();
            try {
                move(n * PAGE, ByteBuffer.wrap(p.bytes), false);
                p.read = true;
                if (was != null) // the adapter's writes stay over what was read
                    for (int i = p.dirty.nextSetBit(0); i >= 0; i = p.dirty.nextSetBit(i + 1)) p.bytes[i] = was[i];
            } catch (IOException e) {
                gone |= RELEASED.equals(e.getMessage());
                p.unreadable = true; // each access goes to the kernel, which refuses it as it did before
                if (was != null) System.arraycopy(was, 0, p.bytes, 0, PAGE);
            }
        }
        return p;
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
            throw new VerbsException(Errno.EFAULT, "reg_mr: cannot read process " + pid + "'s mappings: "
                    + e.getMessage());
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
    record Mapping(long lo, long hi, boolean readable, boolean writable) {}

    /** The program's mappings, in address order. */
    private List<Mapping> mappings() throws IOException {
        if (mem == null) return tap.mappings(pid, null, null);
        List<Mapping> out;
        try {
            out = readMappings();
        } catch (IOException e) {
            if (tap != null) tap.mappings(pid, null, e);
            throw e;
        }
        return tap == null ? out : tap.mappings(pid, out, null);
    }

    private List<Mapping> readMappings() throws IOException {
        List<Mapping> out = new ArrayList<>();
        for (String line : Files.readAllLines(Path.of("/proc", Integer.toString(pid), "maps"))) {
            int dash = line.indexOf('-'), space = line.indexOf(' ');
            out.add(new Mapping(Long.parseUnsignedLong(line.substring(0, dash), 16),
                    Long.parseUnsignedLong(line.substring(dash + 1, space), 16), line.charAt(space + 1) == 'r',
                    line.charAt(space + 2) == 'w'));
        }
        return out;
    }

    /** DMA writes into the program's memory so far (a program spinning on its memory looks again after one). */
    long writes() { return writes; }

    /**
     * Whether the program's memory is released: the kernel found no memory at all behind the process, which exits
     * (its memory goes before its files close), rather than an address not mapped.
     */
    boolean gone() { return gone; }

    /** Accesses the kernel refused. */
    long failures() { return failures; }

    /** What the first refused access was, or null. */
    String firstFailure() { return firstFailure; }

    @Override public void close() {
        if (mem == null) return;
        try { mem.close(); } catch (IOException e) { throw new UncheckedIOException(e); }
    }
}
