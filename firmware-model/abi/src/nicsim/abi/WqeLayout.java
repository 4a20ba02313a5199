package nicsim.abi;

import java.util.List;

/**
 * Send WQE format facts, mlx5-like (docs/sources.md#mlx5-sizes, docs/sources.md#mlx5-send-wqe), defined once for the
 * model, the RTL and the driver. A WQE is DS 16-byte units in ceil(DS/4) 64-byte WQEBBs; its first 16 bytes are the
 * control segment: bytes 0..3 big-endian (opmod << 24 | wqe index << 8 | opcode), bytes 4..7 big-endian
 * (qpn << 8 | ds).
 */
public final class WqeLayout {
    private WqeLayout() {}

    public static final int WQEBB = 64;
    public static final int DS_UNIT = 16;
    /**
     * The control segment's fields (byte offsets): opmod, the WQE index (2 bytes), the opcode, the QPN (3 bytes),
     * DS, fm_ce_se (WqeFormat's flags), the immediate or the key to invalidate (4 bytes). The segment's first word is
     * opmod << 24 | index << 8 | opcode, its second QPN << 8 | DS, both big-endian.
     */
    public static final int CTRL_OPMOD = 0, CTRL_INDEX = 1, CTRL_OPCODE = 3, CTRL_QPN = 4, CTRL_DS = 7,
            CTRL_FM_CE_SE = 11, CTRL_IMM = 12, CTRL_BYTES = 16;
    public static final int MAX_WQEBBS = 16;
    /**
     * The fewest WQEBBs nicsim's drivers give a send WQE's slot in the ring. mlx5 sizes an RC WQE for a
     * memory-window bind (256 bytes for one SGE) and reports the spare room as inline data, so programs written
     * against it post a few bytes inline on a QP that asked for none (librdmacm's rdma_xclient: 16). nicsim's RC
     * WQE of one SGE fits one WQEBB with 12 bytes to spare; two give every QP that sends at least 28 bytes inline
     * (76 on RC and UC, 60 on UD and XRC, 28 on a DC initiator). A WQE still takes only the WQEBBs its DS needs.
     */
    public static final int MIN_SEND_WQEBBS = 2;

    public static final int OP_NOP = 0x00, OP_SEND_INVAL = 0x01, OP_RDMA_WRITE = 0x08, OP_RDMA_WRITE_IMM = 0x09,
            OP_SEND = 0x0a, OP_SEND_IMM = 0x0b, OP_RDMA_READ = 0x10, OP_ATOMIC_CS = 0x11, OP_ATOMIC_FA = 0x12,
            OP_LOCAL_INVAL = 0x1b, OP_UMR = 0x25;

    /** Opcodes the adapter executes; any other is a malformed WQE (LOC_QP_OP_ERR). */
    public static final List<Integer> OPCODES = List.of(OP_NOP, OP_SEND_INVAL, OP_RDMA_WRITE, OP_RDMA_WRITE_IMM,
            OP_SEND, OP_SEND_IMM, OP_RDMA_READ, OP_ATOMIC_CS, OP_ATOMIC_FA, OP_LOCAL_INVAL, OP_UMR);

    private static final boolean[] LEGAL = new boolean[256];
    static { for (int op : OPCODES) LEGAL[op] = true; }

    public static boolean legalOpcode(int op) { return op >= 0 && op < LEGAL.length && LEGAL[op]; }

    /** Whether a WQE of opcode {@code op} goes to a peer (not a local operation on the mkey table, nor a NOP). */
    public static boolean remote(int op) { return op != OP_NOP && op != OP_UMR && op != OP_LOCAL_INVAL; }

    /**
     * Whether a send doorbell whose producer index is {@code producer} announced WQEBB {@code index} (16-bit
     * counters: the WQEBBs before the producer, up to half the counter's range behind it).
     */
    public static boolean announced(long producer, long index) {
        long ahead = (producer - index) & 0xFFFF;
        return ahead != 0 && ahead < 0x8000;
    }

    /** WQEBBs a WQE of {@code ds} 16-byte units takes. */
    public static int wqebbs(int ds) { return (ds * DS_UNIT + WQEBB - 1) / WQEBB; }

    /** The first 8 bytes of a control segment, as the driver writes them (also the doorbell value). */
    public static byte[] ctrl(int opcode, int wqeIndex, long qpn, int ds) {
        byte[] b = new byte[8];
        b[CTRL_INDEX] = (byte) (wqeIndex >> 8);
        b[CTRL_INDEX + 1] = (byte) wqeIndex;
        b[CTRL_OPCODE] = (byte) opcode;
        b[CTRL_QPN] = (byte) (qpn >> 16);
        b[CTRL_QPN + 1] = (byte) (qpn >> 8);
        b[CTRL_QPN + 2] = (byte) qpn;
        b[CTRL_DS] = (byte) ds;
        return b;
    }

    /** Control-segment fields read from the first 8 bytes packed little-endian (byte 0 in bits 7..0). */
    public static int opcode(long w) { return ctrlByte(w, CTRL_OPCODE); }
    public static int index(long w) { return ctrlByte(w, CTRL_INDEX) << 8 | ctrlByte(w, CTRL_INDEX + 1); }
    public static long qpn(long w) {
        return (long) ctrlByte(w, CTRL_QPN) << 16 | ctrlByte(w, CTRL_QPN + 1) << 8 | ctrlByte(w, CTRL_QPN + 2);
    }
    public static int ds(long w) { return ctrlByte(w, CTRL_DS) & 0x3f; }

    /** Byte {@code at} of the control segment's first 8 bytes packed little-endian. */
    private static int ctrlByte(long w, int at) { return (int) (w >>> 8 * at) & 0xff; }

    /**
     * Whether a QP of {@code type} may carry WQEs of device opcode {@code op}: UD sends only; UC
     * adds RDMA WRITE, the invalidations and memory-window binds (UMR) and NOP; RC everything
     * (docs/sources.md#libibverbs-values, ibv_post_send(3)). The verbs library refuses the others
     * at post time, the firmware when a WQE written by hand reaches it.
     */
    public static boolean allowedOn(ServiceType type, int op) {
        return switch (type) {
            case UD -> op == OP_SEND || op == OP_SEND_IMM;
            case UC -> op == OP_SEND || op == OP_SEND_IMM || op == OP_RDMA_WRITE || op == OP_RDMA_WRITE_IMM
                    || op == OP_NOP || op == OP_SEND_INVAL || op == OP_LOCAL_INVAL || op == OP_UMR;
            default -> true;
        };
    }
}
