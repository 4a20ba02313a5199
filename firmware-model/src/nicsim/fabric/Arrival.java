package nicsim.fabric;

/**
 * When a delivered packet's payload comes off the link: its first byte right after the headers,
 * at {@code head}, its last at {@code tail}, evenly in between. A port hands a packet to the adapter
 * once its headers are in (the receive engine fills SRAM as the rest arrives, as a LANai's receive
 * DMA and a modern adapter's cut-through receive do), so whoever moves the payload on must not take
 * a byte before {@link #by} says it is there.
 */
public record Arrival(long head, long tail, int length) {
    public Arrival {
        if (tail < head) throw new IllegalArgumentException("payload tail " + tail + " ps before its head " + head + " ps");
        if (length < 0) throw new IllegalArgumentException("payload length " + length + " B");
    }

    /** Picoseconds by which the first {@code n} payload bytes have arrived. */
    public long by(long n) {
        if (n <= 0 || length == 0) return n <= 0 ? head : tail;
        if (n >= length) return tail;
        return head + Math.floorDiv((tail - head) * n + length - 1, length);
    }

    /** The arrival of the bytes from offset {@code off} on. */
    public Arrival from(int off) {
        if (off < 0 || off > length) throw new IllegalArgumentException("offset " + off + " outside a " + length + " B payload");
        return new Arrival(off == 0 ? head : by(off), tail, length - off);
    }
}
