package nicsim.abi;

/** Big-endian fields in byte arrays: the byte order of mlx5's WQE and CQE formats. */
public final class BigEndian {
    private BigEndian() {}

    public static void put32(byte[] b, int at, long v) {
        for (int i = 0; i < 4; i++) b[at + i] = (byte) (v >>> (24 - 8 * i));
    }

    public static void put64(byte[] b, int at, long v) {
        for (int i = 0; i < 8; i++) b[at + i] = (byte) (v >>> (56 - 8 * i));
    }

    public static long get32(byte[] b, int at) {
        long v = 0;
        for (int i = 0; i < 4; i++) v = (v << 8) | (b[at + i] & 0xff);
        return v;
    }

    public static long get64(byte[] b, int at) {
        long v = 0;
        for (int i = 0; i < 8; i++) v = (v << 8) | (b[at + i] & 0xff);
        return v;
    }
}
