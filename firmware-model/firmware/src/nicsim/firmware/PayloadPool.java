package nicsim.firmware;

import java.util.ArrayDeque;

/**
 * The byte arrays a reliable QP's streamed packets carry, given back once the requester is done with
 * them, so a message's payload costs a copy from host memory and no new heap (issue 56). One pool per
 * adapter, touched only by that adapter's simulator (its host's thread when hosts run apart): which
 * array a packet gets never depends on threads or GC, and its bytes are always those the DMA read
 * from host memory, every one of them written before the packet leaves.
 *
 * <p>What must hold for an array given back: no one reads it again. The requester gives a packet's
 * array back only when an ACK covered its PSN ({@link Completer#retire}) and no copy of its op's packets is
 * in the fabric ({@link SendOp#gone}): a responder acknowledges a PSN only once it has taken every request
 * up to it and their DMA writes have landed ({@link Responder#ack}), and a go-back-N resend or a duplicate
 * still crossing the fabric when the ACK came keeps the bytes it was sent with until it is delivered or
 * dropped (the responder answers it from the headers, but a watched wire sees its bytes).
 * Unreliable services complete a message as it leaves, with no word of when the receiver has read it:
 * their arrays are not pooled.
 */
final class PayloadPool {
    /** Arrays of a path MTU's length are kept, 2^MIN_SHIFT..2^MAX_SHIFT bytes: every full packet of a message. */
    private static final int MIN_SHIFT = 8, MAX_SHIFT = 12;
    /** Most bytes kept per length: what a burst gave back above that is left to the collector. */
    static final int KEEP_BYTES = 4 << 20;
    /**
     * Other lengths (a message's last packet, a short message's only one) are kept too, a few lengths at a time,
     * at most ODD_KEEP_BYTES each: a length not kept takes the place of the one kept longest.
     */
    static final int ODD_LENGTHS = 8, ODD_KEEP_BYTES = 1 << 20;

    @SuppressWarnings("unchecked")
    private final ArrayDeque<byte[]>[] free = new ArrayDeque[MAX_SHIFT - MIN_SHIFT + 1];
    @SuppressWarnings("unchecked")
    private final ArrayDeque<byte[]>[] odd = new ArrayDeque[ODD_LENGTHS];
    private final int[] oddLength = new int[ODD_LENGTHS]; // the length each of odd keeps (0: none yet)
    private int oddNext; // the odd length given up next for a new one
    private long taken, reused;

    PayloadPool() {
        for (int i = 0; i < free.length; i++) free[i] = new ArrayDeque<>();
        for (int i = 0; i < odd.length; i++) odd[i] = new ArrayDeque<>();
    }

    /** The class of arrays of {@code length} bytes (-1: not an MTU's length). */
    private static int slot(int length) {
        if (Integer.bitCount(length) != 1) return -1;
        int shift = Integer.numberOfTrailingZeros(length);
        return shift < MIN_SHIFT || shift > MAX_SHIFT ? -1 : shift - MIN_SHIFT;
    }

    /** Where the odd length {@code length} is kept (-1: it is not). */
    private int oddSlot(int length) {
        for (int i = 0; i < oddLength.length; i++) if (oddLength[i] == length) return i;
        return -1;
    }

    /** An array of {@code length} bytes whose contents are stale: the caller overwrites every byte. */
    byte[] take(int length) {
        taken++;
        int s = slot(length);
        byte[] b = null;
        if (s >= 0) b = free[s].pollLast();
        else if (length > 0 && (s = oddSlot(length)) >= 0) b = odd[s].pollLast();
        if (b == null) return new byte[length];
        reused++;
        return b;
    }

    /** {@code b} (null: nothing) is read by no one from now on. */
    void give(byte[] b) {
        if (b == null || b.length == 0) return;
        int s = slot(b.length);
        if (s >= 0) {
            if ((long) (free[s].size() + 1) * b.length <= KEEP_BYTES) free[s].addLast(b);
            return;
        }
        s = oddSlot(b.length);
        if (s < 0) { // the length kept longest makes room
            s = oddNext;
            oddNext = (oddNext + 1) % odd.length;
            odd[s].clear();
            oddLength[s] = b.length;
        }
        if ((long) (odd[s].size() + 1) * b.length <= ODD_KEEP_BYTES) odd[s].addLast(b);
    }

    /** Arrays handed out so far, and how many of them were given back ones. */
    long taken() { return taken; }

    long reused() { return reused; }
}
