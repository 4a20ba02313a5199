package nicsim.abi;

/**
 * 64-bit words in host memory as the host's CPU reads them: little-endian, as on x86-64 and
 * aarch64. Atomics operate on memory in this order, and the original value lands in the
 * requester's buffer in it (as on rxe, and on ConnectX with its atomic endianness set to the
 * host's), so a program reads both with a plain load.
 */
public final class HostOrder {
    private HostOrder() {}

    public static void put64(byte[] b, int at, long v) {
        for (int i = 0; i < 8; i++) b[at + i] = (byte) (v >>> (8 * i));
    }

    public static long get64(byte[] b, int at) {
        long v = 0;
        for (int i = 7; i >= 0; i--) v = (v << 8) | (b[at + i] & 0xff);
        return v;
    }
}
