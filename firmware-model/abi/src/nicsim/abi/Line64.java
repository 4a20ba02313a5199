package nicsim.abi;

/**
 * A 64-byte line (a WQEBB, a CQE) as the eight 64-bit words the blocks' ports carry, each packing
 * 8 bytes little-endian: byte 8i of the line in bits 7..0 of word i.
 */
public final class Line64 {
    private Line64() {}

    public static final int BYTES = 64;

    /** The words of the 64 bytes at {@code off} in {@code b}. */
    public static long[] words(byte[] b, int off) {
        long[] w = new long[8];
        for (int k = 0; k < 8; k++) for (int j = 7; j >= 0; j--) w[k] = (w[k] << 8) | (b[off + k * 8 + j] & 0xff);
        return w;
    }

    public static byte[] bytes(long[] w) {
        byte[] b = new byte[BYTES];
        for (int k = 0; k < 8; k++) for (int j = 0; j < 8; j++) b[k * 8 + j] = (byte) (w[k] >>> (8 * j));
        return b;
    }
}
