package nicsim.sim;

/**
 * When the bytes of a transfer come in over a wire: the first at {@code head}, the last at
 * {@code tail}, evenly in between. A network port hands a packet to the adapter once its headers
 * are in, and a conventional PCI bus hands read data over one data phase at a time; in both cases
 * the DMA engine fills SRAM as the rest arrives (as a LANai's DMA engines do), so whoever moves the
 * bytes on must not take one before {@link #by} says it is there.
 */
public record Arrival(long head, long tail, int length) {
    public Arrival {
        if (tail < head)
            throw new IllegalArgumentException("payload tail " + tail + " ps before its head " + head + " ps");
        if (length < 0) throw new IllegalArgumentException("payload length " + length + " B");
    }

    /** Picoseconds by which the first {@code n} payload bytes have arrived. */
    public long by(long n) { return by(head, tail, length, n); }

    /** {@link #by} of the arrival ({@code head}, {@code tail}, {@code length}), for a holder of many in arrays. */
    public static long by(long head, long tail, int length, long n) {
        if (n <= 0 || length == 0) return n <= 0 ? head : tail;
        if (n >= length) return tail;
        return head + Math.floorDiv((tail - head) * n + length - 1, length);
    }

    /**
     * {@link #by(long, long, int, long) by} of the counts {@code first}, {@code first + step}, ... ({@code count} of
     * them, {@code step} > 0) into {@code out} from {@code at} on: stepped forward, one division for them all
     * rather than one a count (a DMA engine asks when each beat of a transfer is in).
     */
    public static void byEach(long head, long tail, int length, long first, long step, long[] out, int at, int count) {
        if (step <= 0) throw new IllegalArgumentException("step " + step + " B must be > 0");
        long n = first;
        int i = 0;
        for (; i < count && n <= 0; i++, n += step) out[at + i] = head;
        if (length > 0 && i < count && n < length) {
            // by(n) = head + floor(num / length), num = (tail - head) * n + length - 1: num = q * length + r
            long num = (tail - head) * n + length - 1, d = (tail - head) * step;
            long q = Math.floorDiv(num, length), r = Math.floorMod(num, length);
            long dq = Math.floorDiv(d, length), dr = Math.floorMod(d, length);
            for (; i < count && n < length; i++, n += step) {
                out[at + i] = head + q;
                q += dq;
                r += dr;
                if (r >= length) { q++; r -= length; }
            }
        }
        for (; i < count; i++) out[at + i] = tail;
    }

    /** {@link #byEach(long, long, int, long, long, long[], int, int) byEach} of this arrival. */
    public void byEach(long first, long step, long[] out, int at, int count) {
        byEach(head, tail, length, first, step, out, at, count);
    }

    /** The arrival of the bytes from offset {@code off} on. */
    public Arrival from(int off) {
        if (off < 0 || off > length)
            throw new IllegalArgumentException("offset " + off + " outside a " + length + " B payload");
        return off == 0 ? this : new Arrival(by(off), tail, length - off);
    }
}
