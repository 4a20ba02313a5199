package nicsim.host;

/**
 * A function's MSI-X table, 16 bytes a vector (message address low/high, message data, vector
 * control with the mask bit), and its pending bits. It lives in a BAR at the offset the
 * capability names; the bus's function core serves those MMIO accesses, as a PCIe IP core does.
 */
public final class MsixTable {
    public static final int ENTRY_BYTES = 16;
    private final int[] words;
    private final boolean[] pending;

    public MsixTable(int vectors) {
        words = new int[vectors * 4];
        pending = new boolean[vectors];
        for (int v = 0; v < vectors; v++) words[v * 4 + 3] = 1; // vectors start masked, as the spec requires
    }

    public int vectors() { return pending.length; }
    public long bytes() { return (long) pending.length * ENTRY_BYTES; }

    public long address(int v) {
        return Integer.toUnsignedLong(words[v * 4]) | (Integer.toUnsignedLong(words[v * 4 + 1]) << 32);
    }
    public int data(int v) { return words[v * 4 + 2]; }
    public boolean masked(int v) { return (words[v * 4 + 3] & 1) != 0; }
    public boolean pending(int v) { return pending[v]; }
    void setPending(int v, boolean p) { pending[v] = p; }

    /** Writes dwords of the table (offset relative to the table's start, dword aligned). */
    void write(long offset, byte[] data) {
        if ((offset & 3) != 0 || (data.length & 3) != 0)
            throw new IllegalArgumentException("MSI-X table write at +0x" + Long.toHexString(offset) + " of "
                    + data.length + " bytes must be dword aligned");
        for (int i = 0; i < data.length; i += 4) {
            int w = (data[i] & 0xff) | (data[i + 1] & 0xff) << 8 | (data[i + 2] & 0xff) << 16
                    | (data[i + 3] & 0xff) << 24;
            words[(int) (offset / 4) + i / 4] = w;
        }
    }

    byte[] read(long offset, int length) {
        byte[] out = new byte[length];
        for (int i = 0; i < length; i++) {
            long b = offset + i;
            out[i] = (byte) (words[(int) (b / 4)] >>> (8 * (b % 4)));
        }
        return out;
    }
}
