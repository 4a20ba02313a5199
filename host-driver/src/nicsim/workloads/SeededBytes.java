package nicsim.workloads;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;

/**
 * The bytes {@code new java.util.Random(seed).nextBytes} gives, byte for byte, a word at a time. Random takes an
 * atomic update of its seed for every four bytes: filling 16 MiB of payload for write_bw 1 MiB cost a sixth of
 * the run. The generator is Random's documented one: a 48-bit linear congruence, each int its seed's top 32 bits,
 * laid out low byte first.
 */
final class SeededBytes {
    private static final long MULTIPLIER = 0x5DEECE66DL, ADDEND = 0xBL, MASK = (1L << 48) - 1;
    private static final VarHandle LONGS =
            MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);

    private long seed;

    SeededBytes(long seed) { this.seed = (seed ^ MULTIPLIER) & MASK; }

    private int nextInt() {
        seed = (seed * MULTIPLIER + ADDEND) & MASK;
        return (int) (seed >>> 16);
    }

    /** Fills {@code bytes} as Random's nextBytes would, and moves on as far as it would. */
    void nextBytes(byte[] bytes) {
        int i = 0, len = bytes.length;
        for (; i + 8 <= len; i += 8) {
            long lo = nextInt() & 0xFFFFFFFFL;
            LONGS.set(bytes, i, lo | (long) nextInt() << 32);
        }
        while (i < len) // Random's tail: an int a four bytes, the last in part
            for (int r = nextInt(), n = Math.min(len - i, 4); n-- > 0; r >>= 8) bytes[i++] = (byte) r;
    }
}
