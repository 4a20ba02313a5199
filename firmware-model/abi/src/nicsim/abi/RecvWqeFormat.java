package nicsim.abi;

import java.util.ArrayList;
import java.util.List;
import nicsim.abi.WqeFormat.Sge;

/**
 * The receive WQE (docs/sources.md#mlx5-doorbells), one definition for the driver, which writes it into a receive
 * queue or SRQ, and the firmware, which reads it: one 16-byte data segment per non-empty SGE (byte
 * count, lkey, address, big-endian), then, if the WQE's stride has room, a terminator (byte count
 * 0, lkey MLX5_INVALID_LKEY 0x100).
 */
public final class RecvWqeFormat {
    private RecvWqeFormat() {}

    /** A data segment's bytes (WqeFormat.DATA_* its fields); the lkey of the segment that ends the list. */
    public static final int SEGMENT = 16, INVALID_LKEY = 0x100;

    /** A WQE of {@code stride} bytes scattering to {@code sges}. */
    public static byte[] encode(List<Sge> sges, int stride) {
        byte[] w = new byte[stride];
        int at = 0;
        for (Sge s : sges) {
            if (s.length() == 0) continue;
            if (at + SEGMENT > stride)
                throw new IllegalArgumentException(sges.size() + " SGEs do not fit a " + stride + "-byte receive WQE");
            BigEndian.put32(w, at + WqeFormat.DATA_BYTE_COUNT, s.length());
            BigEndian.put32(w, at + WqeFormat.DATA_LKEY, s.lkey());
            BigEndian.put64(w, at + WqeFormat.DATA_ADDR, s.addr());
            at += SEGMENT;
        }
        if (at < stride) BigEndian.put32(w, at + WqeFormat.DATA_LKEY, INVALID_LKEY);
        return w;
    }

    /** The scatter list of a WQE as read from the ring (up to the terminator or the stride's end). */
    public static List<Sge> decode(byte[] w) {
        List<Sge> sges = new ArrayList<>();
        for (int at = 0; at + SEGMENT <= w.length; at += SEGMENT) {
            long count = BigEndian.get32(w, at + WqeFormat.DATA_BYTE_COUNT);
            int lkey = (int) BigEndian.get32(w, at + WqeFormat.DATA_LKEY);
            if (count == 0 && lkey == INVALID_LKEY) break;
            sges.add(new Sge(BigEndian.get64(w, at + WqeFormat.DATA_ADDR), (int) count, lkey));
        }
        return sges;
    }
}
