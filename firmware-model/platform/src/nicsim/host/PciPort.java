package nicsim.host;

import java.util.function.Consumer;
import java.util.function.LongConsumer;
import nicsim.sim.Arrival;
import nicsim.sim.Simulator;

/**
 * A device's handle on the bus: DMA and MSI-X, each issued now and completed later through a
 * callback at the simulated time it finishes (gem5's issue/complete pairs).
 */
public interface PciPort {
    /** The outcome of a DMA. */
    enum DmaStatus {
        OK,
        /** The host address is not backed by memory: the root complex answers Unsupported Request. */
        UNSUPPORTED_REQUEST,
        /** Bus mastering is off in the command register: the device may not issue DMA. */
        BUS_MASTER_DISABLED
    }

    /**
     * A finished DMA read: status, the bytes (empty unless OK), the time it completed, and for a
     * {@link #dmaReadStreamed streamed} read when each byte comes in (null otherwise).
     */
    record ReadResult(DmaStatus status, byte[] data, long completedAt, Incoming incoming) {
        public ReadResult(DmaStatus status, byte[] data, long completedAt) { this(status, data, completedAt, null); }
    }

    /**
     * When a read's bytes come in: the completion at index k carries the bytes from
     * {@code starts[k]} on, arriving as {@code parts[k]} says (completions return in address order).
     */
    record Incoming(int[] starts, Arrival[] parts) implements Times {
        public Incoming {
            if (starts.length != parts.length || parts.length == 0)
                throw new IllegalArgumentException(starts.length + " completion offsets for " + parts.length
                        + " completions");
            for (int k = 1; k < starts.length; k++)
                if (starts[k] <= starts[k - 1])
                    throw new IllegalArgumentException("completion " + k + " starts at byte " + starts[k]
                            + ", not after " + starts[k - 1]);
        }

        /** When the first completion to arrive starts arriving. */
        @Override public long head() {
            long h = Long.MAX_VALUE;
            for (Arrival a : parts) h = Math.min(h, a.head());
            return h;
        }

        /** {@code at[i]} = {@link #by by((i + 1) * step)} for every i, in one pass over the completions. */
        public void byEach(long step, long[] at) {
            int[] i = {0};
            byEach(step, at.length, t -> at[i[0]++] = t);
        }

        /**
         * {@code in} hears {@link #by by((i + 1) * step)} for each i below {@code count}, in order, in one
         * pass over the completions (a reader that keeps no array of them).
         */
        public void byEach(long step, int count, LongConsumer in) {
            int k = 0;
            for (int i = 0; i < count; i++) {
                long n = (i + 1) * step;
                while (k + 1 < starts.length && starts[k + 1] < n) k++;
                in.accept(parts[k].by(n - starts[k]));
            }
        }

        /** Picoseconds by which the first {@code n} bytes are in. */
        @Override public long by(long n) {
            int k = 0;
            while (k + 1 < starts.length && starts[k + 1] < n) k++;
            return parts[k].by(n - starts[k]);
        }
    }

    /**
     * The {@code length} bytes at {@code hostAddr} as they are now, read by no DMA and costing no
     * simulated time: a checker's look (the sanitizer's), not the device's; null where the device
     * could not reach them.
     */
    default byte[] inspect(long hostAddr, int length) { return null; }

    /** A finished DMA write (posted: the time its last byte reached host memory). */
    record WriteResult(DmaStatus status, long completedAt) {}

    Simulator simulator();

    void dmaRead(long hostAddr, int length, Consumer<ReadResult> done);

    /**
     * As {@link #dmaRead}, but {@code done} runs as early as the bytes are known (when the host
     * serves the read, before the first of them comes in), and the result's
     * {@link ReadResult#incoming} says when each one is in: a DMA engine that moves read data on as
     * it arrives must not take a byte sooner.
     */
    void dmaReadStreamed(long hostAddr, int length, Consumer<ReadResult> done);

    /**
     * Where a read puts the bytes its reader keeps, as the host serves it: host bytes
     * {@code [from, from + length)} go to {@code into[at, at + length)}; the read's other bytes are
     * read by no one (a DMA engine reads whole beats around the bytes it keeps).
     */
    record Into(byte[] into, int at, long from, int length) {
        public Into {
            if (at < 0 || length < 0 || at + length > into.length)
                throw new IllegalArgumentException("read into bytes [" + at + ", " + (at + length) + ") of a "
                        + into.length + " B buffer");
        }

        /** Copies the bytes it keeps of {@code data}, read from {@code addr} on. */
        void keep(long addr, byte[] data, int off, int len) {
            long lo = Math.max(addr, from), hi = Math.min(addr + len, from + length);
            if (lo < hi) System.arraycopy(data, off + (int) (lo - addr), into, at + (int) (lo - from), (int) (hi - lo));
        }
    }

    /** When a streamed read's bytes come in, as {@link Incoming} says: the first one's head; the first n bytes. */
    interface Times {
        long head();

        long by(long n);

        /** {@code at[i]} = {@link #by by((i + 1) * step)} for each i below {@code count}. */
        default void byEach(long step, long[] at, int count) {
            for (int i = 0; i < count; i++) at[i] = by((i + 1) * step);
        }
    }

    /**
     * Hears a streamed read whose bytes went straight to an {@link Into}: how it ended and when its bytes
     * come in. The times are read during the call only: the bus serves its next read with the same object,
     * so a read costs the reader no result, no arrival record and no array.
     */
    @FunctionalInterface
    interface IntoAnswer {
        void answered(DmaStatus status, Times in);
    }

    /**
     * As {@link #dmaReadStreamed(long, int, Into, Consumer)}, answered without a {@link ReadResult}: what a
     * DMA engine moving payload as a copy issues for every read request.
     */
    default void dmaReadStreamed(long hostAddr, int length, Into into, IntoAnswer answer) {
        dmaReadStreamed(hostAddr, length, into, (Consumer<ReadResult>) r -> answer.answered(r.status(), r.incoming()));
    }

    /**
     * As {@link #dmaReadStreamed(long, int, Consumer)}, the bytes kept going straight to {@code into}
     * (when the read is OK) rather than in the result, whose data is then empty: a read whose bytes
     * move on as a copy, with no buffer of its own.
     */
    default void dmaReadStreamed(long hostAddr, int length, Into into, Consumer<ReadResult> done) {
        dmaReadStreamed(hostAddr, length, r -> {
            if (r.status() == DmaStatus.OK) into.keep(hostAddr, r.data(), 0, length);
            done.accept(new ReadResult(r.status(), new byte[0], r.completedAt(), r.incoming()));
        });
    }

    void dmaWrite(long hostAddr, byte[] data, Consumer<WriteResult> done);

    /**
     * As {@link #dmaWrite}, from a DMA engine that began feeding these bytes at {@code since} (no
     * later than now) and has fed the last of them now. On a conventional PCI bus the engine holds
     * the bus while it feeds (wait states), so the write may have started at {@code since} if the
     * bus was free then, and ends no sooner than the last data phase after now; a PCIe TLP leaves
     * only once its whole payload is there, as {@link #dmaWrite}. The bytes are
     * {@code data[offset, offset + length)}, read when the write lands: the engine must not change them
     * until {@code done} (so a slice of the engine's buffer goes to memory with no copy on the way).
     */
    void dmaWriteStreamed(long hostAddr, byte[] data, int offset, int length, long since, Consumer<WriteResult> done);

    /** {@link #dmaWriteStreamed(long, byte[], int, int, long, Consumer)} of all of {@code data}. */
    default void dmaWriteStreamed(long hostAddr, byte[] data, long since, Consumer<WriteResult> done) {
        dmaWriteStreamed(hostAddr, data, 0, data.length, since, done);
    }

    /**
     * As {@link #dmaWriteStreamed}, for a write whose completion nobody waits for (a DMA engine
     * counts only the last write of a transfer), so none is scheduled. Only for a write that
     * {@link #dmaWriteLands} says lands: a failed one must be reported through {@code done}. The bytes
     * must not change until a write issued after this one has landed (the bus keeps posted writes in order).
     */
    void dmaWriteStreamedPosted(long hostAddr, byte[] data, int offset, int length, long since);

    /** {@link #dmaWriteStreamedPosted(long, byte[], int, int, long)} of all of {@code data}. */
    default void dmaWriteStreamedPosted(long hostAddr, byte[] data, long since) {
        dmaWriteStreamedPosted(hostAddr, data, 0, data.length, since);
    }

    /**
     * Whether a DMA write of {@code length} bytes at {@code hostAddr} issued now would land in host memory (bus
     * mastering on, in bounds).
     */
    boolean dmaWriteLands(long hostAddr, int length);

    /** Sends MSI-X {@code vector}; returns false (and counts it) if it could not be sent now. */
    boolean msix(int vector);
}
