package nicsim.serve;

import java.io.IOException;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import nicsim.verbs.Errno;
import nicsim.verbs.VerbsException;

/**
 * A driver's posted writes to BAR0 in shared memory rather than on its socket (PCI_POSTED_RING),
 * as a CPU's writes to a BAR leave it without waiting: the driver appends each write to a ring
 * in a memfd both processes map, and the device takes them in order before the driver's next
 * request and before simulated time moves, so they land at the simulated moment a socket's would,
 * without a system call each. Layout (little-endian): the producer's byte count (u64) at 0, the
 * consumer's at 64, records from {@link #DATA}: u32 record bytes (a multiple of 16), u32 data bytes
 * ({@link #PAD}: none, skip to the ring's start), u64 BAR0 offset, the data padded to 16.
 */
final class PostedRing {
    static final int HEAD = 0, TAIL = 64, DATA = 4096, RECORD_HEADER = 16;
    static final int PAD = -1;
    /** Ring sizes a driver may ask for (bytes of records, a power of two). */
    static final int MIN_BYTES = 4096, MAX_BYTES = 1 << 20;
    private static final VarHandle LONGS = MethodHandles.byteBufferViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);

    /** Where drained writes go: BAR0 offset and bytes. */
    interface Sink { void write(long offset, byte[] data); }

    /** The shared ring; null when a replay answers every drain ({@link #tap}). */
    private final MappedByteBuffer map;
    private final int bytes;
    private final long pid;
    /** serve --record or a replay (ProcMemory.TAP where the ring was opened), or null. */
    private final ProcMemory.Tap tap;
    private long tail;
    long drained;

    private PostedRing(MappedByteBuffer map, int bytes, long pid, ProcMemory.Tap tap) {
        this.map = map;
        this.bytes = bytes;
        this.pid = pid;
        this.tap = tap;
        if (map == null) return;
        map.order(ByteOrder.LITTLE_ENDIAN);
        this.tail = (long) LONGS.getAcquire(map, TAIL);
    }

    /** The ring in file descriptor {@code fd} of process {@code pid}, of {@code bytes} record bytes. */
    static PostedRing open(long pid, int fd, int bytes) {
        if (bytes < MIN_BYTES || bytes > MAX_BYTES || Integer.bitCount(bytes) != 1)
            throw new VerbsException(Errno.EINVAL, "PCI_POSTED_RING size " + bytes + ": a power of two, "
                    + MIN_BYTES + ".." + MAX_BYTES);
        ProcMemory.Tap tap = ProcMemory.TAP.get();
        if (tap != null && tap.replaying()) {
            tap.ringOpened(pid, fd, null);
            return new PostedRing(null, bytes, pid, tap);
        }
        try {
            PostedRing r = map(pid, fd, bytes, tap);
            if (tap != null) tap.ringOpened(pid, fd, null);
            return r;
        } catch (VerbsException x) {
            if (tap != null) tap.ringOpened(pid, fd, x);
            throw x;
        }
    }

    private static PostedRing map(long pid, int fd, int bytes, ProcMemory.Tap tap) {
        Path file = Path.of("/proc", Long.toString(pid), "fd", Integer.toString(fd));
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            if (ch.size() < DATA + bytes)
                throw new VerbsException(Errno.EINVAL, "PCI_POSTED_RING fd " + fd + ": " + ch.size()
                        + " bytes, less than the ring's " + (DATA + bytes));
            return new PostedRing(ch.map(FileChannel.MapMode.READ_WRITE, 0, DATA + bytes), bytes, pid, tap);
        } catch (IOException e) {
            throw new VerbsException(Errno.EBADF, "PCI_POSTED_RING fd " + fd + " of process " + pid + ": " + e);
        }
    }

    /**
     * Hands every write the driver has published since the last drain to {@code sink}, in order, then
     * tells the driver the room is free; how many. A record that does not fit the ring is malformed.
     */
    int drain(Sink sink) {
        if (map == null) { // replaying: the recorded writes, in order, and the recorded end of the drain
            int n = tap.drain(pid, sink);
            drained += n;
            return n;
        }
        Sink to = tap == null ? sink : (offset, data) -> {
            tap.posted(pid, offset, data);
            sink.write(offset, data);
        };
        try {
            int n = drainRing(to);
            if (tap != null) tap.drained(pid, null);
            return n;
        } catch (VerbsException x) {
            if (tap != null) tap.drained(pid, x);
            throw x;
        }
    }

    private int drainRing(Sink sink) {
        long head = (long) LONGS.getAcquire(map, HEAD);
        int n = 0;
        while (tail < head) {
            int at = (int) (tail & (bytes - 1));
            int size = map.getInt(DATA + at), len = map.getInt(DATA + at + 4);
            if (size < RECORD_HEADER || size % 16 != 0 || size > bytes - at || len != PAD
                    && (len < 0 || RECORD_HEADER + len > size)) {
                tail = head; // the rest cannot be read: dropped, and said so
                LONGS.setRelease(map, TAIL, tail);
                throw new VerbsException(Errno.EINVAL, String.format("posted-write ring record at byte %d: %d bytes "
                        + "with %d of data does not fit (records of 16..%d bytes, a multiple of 16)", at, size, len,
                        bytes - at));
            }
            if (len != PAD) {
                byte[] data = new byte[len];
                map.get(DATA + at + RECORD_HEADER, data);
                sink.write(map.getLong(DATA + at + 8), data);
                n++;
            }
            tail += size;
        }
        LONGS.setRelease(map, TAIL, tail);
        drained += n;
        return n;
    }
}
