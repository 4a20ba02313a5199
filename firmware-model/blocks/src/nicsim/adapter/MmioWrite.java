package nicsim.adapter;

import nicsim.sim.Layout;

/**
 * A posted MMIO write as it reaches an adapter block: offset in the BAR, up to 8 data bytes packed
 * little-endian (byte 0 of the write in bits 7:0), and the byte count.
 */
public record MmioWrite(long offset, long data, long length) {
    public static final Layout<MmioWrite> LAYOUT = Layout.<MmioWrite>builder("MmioWrite")
            .field("offset", 32, MmioWrite::offset)
            .field("data", 64, MmioWrite::data)
            .field("length", 4, MmioWrite::length)
            .build(v -> new MmioWrite(v[0], v[1], v[2]));

    /** Packs up to 8 bytes of a write. */
    public static MmioWrite of(long offset, byte[] bytes) {
        if (bytes.length > 8)
            throw new IllegalArgumentException("MMIO write of " + bytes.length + " bytes: at most 8 fit one MmioWrite");
        long d = 0;
        for (int i = bytes.length - 1; i >= 0; i--) d = (d << 8) | (bytes[i] & 0xff);
        return new MmioWrite(offset, d, bytes.length);
    }

    /** Byte {@code i} of the write. */
    public int byteAt(int i) { return (int) (data >>> (8 * i)) & 0xff; }

    @Override public String toString() { return String.format("MmioWrite(+0x%x %d B 0x%016x)", offset, length, data); }
}
