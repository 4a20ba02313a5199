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

    /** The arrival of the bytes from offset {@code off} on. */
    public Arrival from(int off) {
        if (off < 0 || off > length)
            throw new IllegalArgumentException("offset " + off + " outside a " + length + " B payload");
        return off == 0 ? this : new Arrival(by(off), tail, length - off);
    }
}
