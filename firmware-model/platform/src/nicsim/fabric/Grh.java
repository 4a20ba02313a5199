package nicsim.fabric;

import nicsim.abi.BigEndian;

/**
 * An InfiniBand global route header (IBA 8.3): the source and destination GIDs (each as two big-endian
 * 64-bit halves), traffic class, flow label and hop limit. A packet to a multicast group carries one,
 * whose DGID is the group's MGID: that is how a receiving adapter knows which group's QPs take it. A
 * receiver writes it, 40 bytes, into the first 40 bytes of the receive buffer (the space every UD
 * receive reserves) and reports IBV_WC_GRH.
 */
public record Grh(long sgidHi, long sgidLo, long dgidHi, long dgidLo, int trafficClass, int flowLabel, int hopLimit) {
    /** Bytes on the link. */
    public static final int BYTES = 40;
    /** NxtHdr of a GRH followed by a BTH (IBA 8.3.1). */
    public static final int NEXT_HEADER_BTH = 0x1B;

    /** Whether {@code hi} (a GID's first 8 bytes) is a multicast GID's: its first byte is 0xFF (IBA 4.1.1). */
    public static boolean multicast(long hi) { return hi >>> 56 == 0xFF; }

    /** The header as a receive buffer gets it, for a packet of {@code payloadLength} bytes after the GRH. */
    public byte[] bytes(int payloadLength) {
        byte[] b = new byte[BYTES];
        BigEndian.put32(b, 0, 6L << 28 | (long) (trafficClass & 0xFF) << 20 | flowLabel & 0xFFFFF); // IP version 6
        b[4] = (byte) (payloadLength >> 8);
        b[5] = (byte) payloadLength;
        b[6] = (byte) NEXT_HEADER_BTH;
        b[7] = (byte) hopLimit;
        BigEndian.put64(b, 8, sgidHi);
        BigEndian.put64(b, 16, sgidLo);
        BigEndian.put64(b, 24, dgidHi);
        BigEndian.put64(b, 32, dgidLo);
        return b;
    }

    /** A GID's text as Linux prints one (eight groups of four hex digits). */
    public static String text(long hi, long lo) {
        StringBuilder s = new StringBuilder();
        for (int i = 0; i < 8; i++) {
            long v = (i < 4 ? hi >>> (48 - 16 * i) : lo >>> (48 - 16 * (i - 4))) & 0xFFFF;
            if (i > 0) s.append(':');
            s.append(String.format("%04x", v));
        }
        return s.toString();
    }
}
