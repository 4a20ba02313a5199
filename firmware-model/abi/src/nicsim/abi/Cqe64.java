package nicsim.abi;

import java.util.Arrays;

/**
 * mlx5's 64-byte completion entry (docs/sources.md#mlx5-cqe), the fields nicsim fills so far: byte count,
 * sop_drop_qpn (the send WQE's mlx5 opcode and the QP), the WQE counter, and op_own (CQE opcode in
 * bits 7..4, the owner bit in bit 0, which the CqeWriter sets). Multi-byte fields are big-endian.
 */
public final class Cqe64 {
    private Cqe64() {}

    public static final int BYTES = 64;

    /*
     * Byte offsets of the CQE's fields (mlx5_cqe64's names where it has them), multi-byte ones big-endian. The model
     * writes and reads CQEs through these; DeviceHeader gives them to the C drivers as NICSIM_CQE_<name>.
     */
    /** A tag-matching receive: the tag (8 bytes); an error CQE: the failed check's address (8 bytes). */
    public static final int TAG = 0, ERR_ADDR = 0;
    /** A striding receive: the message's first stride in the WQE (2 bytes). */
    public static final int STRIDE = 2;
    /** A tag-matching receive: the sender's app context (4 bytes); an error CQE: the failed check's key. */
    public static final int PRIV = 8, ERR_KEY = 8;
    /** An error CQE: the PSN of the failed request (4 bytes). */
    public static final int ERR_PSN = 12;
    /** A UD receive: the source LID (2 bytes); flags_rqpn: the source QP (bits 23..0) and the GRH flag. */
    public static final int SLID = 22, SRC_QP = 24;
    /** The XRC or tag-matching SRQ of a receive (srqn_uidx, bits 23..0). */
    public static final int SRQN = 32;
    /** The immediate or the invalidated rkey (4 bytes); an error CQE: the failed indirect mkey entry + 1 (2). */
    public static final int IMM = 36, ERR_PIECE = 36;
    /** Tag matching: app (1 on a tag-matching SRQ's CQE), app_op (TM_*), app_info (CqeTmFlags). */
    public static final int APP = 40, APP_OP = 41, APP_INFO = 42;
    /** The byte count (4 bytes; a striding receive's holds filler, strides and bytes). */
    public static final int BYTE_CNT = 44;
    /** An error CQE: vendor syndrome and syndrome (1 byte each). */
    public static final int VENDOR_SYNDROME = 54, SYNDROME = 55;
    /** sop_drop_qpn: the send WQE's opcode (byte 56) and the QPN (bits 23..0). */
    public static final int SOP_QPN = 56;
    /** The WQE counter (2 bytes) and op_own (opcode bits 7..4, solicited bit 1, owner bit 0). */
    public static final int WQE_COUNTER = 60, OP_OWN = 63;
    /** CQE opcodes (op_own bits 7..4). */
    public static final int REQ = 0, RESP_WR_IMM = 1, RESP_SEND = 2, RESP_SEND_IMM = 3, RESP_SEND_INV = 4, REQ_ERR = 13,
            RESP_ERR = 14, INVALID = 15;
    /** op_own bit 1: the completion is solicited. */
    public static final int SOLICITED_BIT = 0x02;
    /**
     * op_own bit 2 (mlx5's MLX5_INLINE_SCATTER_32): the received bytes are in the CQE's first 32 bytes, not in the
     * buffer.
     */
    public static final int INLINE_SCATTER_32 = 0x04, INLINE_SCATTER_BYTES = 32;
    /** ctrl segment byte 11 (fm_ce_se): the WQE asks for a completion. */
    public static final int CQ_UPDATE = 0x08;

    /** A requester completion for the WQE at {@code wqeCounter} of {@code qpn}, as eight little-endian words. */
    public static long[] requester(long qpn, int wqeCounter, int wqeOpcode, long byteCount) {
        byte[] b = new byte[BYTES];
        BigEndian.put32(b, BYTE_CNT, byteCount);
        BigEndian.put32(b, SOP_QPN, (long) (wqeOpcode & 0xff) << 24 | (qpn & 0xFFFFFF));
        b[WQE_COUNTER] = (byte) (wqeCounter >> 8);
        b[WQE_COUNTER + 1] = (byte) wqeCounter;
        b[OP_OWN] = (byte) (REQ << 4);
        return Line64.words(b, 0);
    }

    /**
     * mlx5 error syndromes (mlx5_err_cqe byte 55; docs/sources.md#mlx5-cqe): the device's code for a failed
     * work request. The verbs library maps each to the ibv_wc_status named as it is (SYNDROME_X to X; anything
     * else to GENERAL_ERR), as mlx5's provider does.
     */
    public static final int SYNDROME_LOC_LEN_ERR = 0x01, SYNDROME_LOC_QP_OP_ERR = 0x02, SYNDROME_LOC_PROT_ERR = 0x04,
            SYNDROME_WR_FLUSH_ERR = 0x05, SYNDROME_MW_BIND_ERR = 0x06, SYNDROME_BAD_RESP_ERR = 0x10,
            SYNDROME_LOC_ACCESS_ERR = 0x11, SYNDROME_REM_INV_REQ_ERR = 0x12, SYNDROME_REM_ACCESS_ERR = 0x13,
            SYNDROME_REM_OP_ERR = 0x14, SYNDROME_RETRY_EXC_ERR = 0x15, SYNDROME_RNR_RETRY_EXC_ERR = 0x16,
            SYNDROME_REM_ABORT_ERR = 0x22, SYNDROME_GENERAL_ERR = 0xFF;

    /**
     * A responder completion ({@code cqeOpcode} RESP_SEND, RESP_SEND_IMM, RESP_WR_IMM or RESP_SEND_INV)
     * of receive WQE {@code wqeCounter}: byte count, immediate (or invalidated rkey), the source QP
     * and LID (UD), and whether it is solicited.
     */
    public static long[] responder(long qpn, int wqeCounter, int cqeOpcode, long byteCount, int imm, long srcQp,
                                   int slid, boolean solicited) {
        return responder(qpn, wqeCounter, cqeOpcode, byteCount, imm, srcQp, slid, solicited, 0);
    }

    /**
     * As above, for a receive WQE of XRC SRQ {@code srqn} (srqn_uidx, bytes 32..35): the library finds
     * the WQE's SRQ by it, since the QP, an XRC target, may belong to another process.
     */
    public static long[] responder(long qpn, int wqeCounter, int cqeOpcode, long byteCount, int imm, long srcQp,
                                   int slid, boolean solicited, long srqn) {
        byte[] b = received(qpn, wqeCounter, cqeOpcode, imm, solicited, srqn);
        source(b, srcQp, slid);
        BigEndian.put32(b, BYTE_CNT, byteCount);
        return Line64.words(b, 0);
    }

    /*
     * Tag matching, where mlx5 puts it: byte 40 (app) is 1 on a tag-matching SRQ's completion, byte
     * 41 (app_op) says what it is (nicsim's TM_*), byte 42 (app_info) carries libibverbs' TM flags
     * (CqeTmFlags); a matched message's tag is in bytes 0..7 and the sender's app context in
     * 8..11. The SRQ's number is in bytes 32..35.
     */
    public static final int TM_NONE = 0, TM_MATCHED = 1, TM_NO_TAG = 2, TM_UNEXPECTED = 3, TM_ADD = 4, TM_DEL = 5,
            TM_SYNC = 6;
    /**
     * nicsim's syndrome for a tag-list operation that failed (a TAG_DEL of an entry a message consumed): IBV_WC_TM_ERR.
     */
    public static final int SYNDROME_TM_ERR = 0x30;
    /** nicsim's syndrome for a rendezvous request whose tagged buffer is too short: IBV_WC_TM_RNDV_INCOMPLETE. */
    public static final int SYNDROME_TM_RNDV_INCOMPLETE = 0x31;

    /**
     * A receive of tag-matching SRQ {@code srqn}: matched (wqeCounter: the tag entry's handle), NO_TAG or unexpected
     * (an SRQ WQE).
     */
    public static long[] tmReceive(long qpn, int wqeCounter, int kind, int tmFlags, long byteCount, long tag, int priv,
                                   long srcQp, int slid, long srqn) {
        byte[] b = received(qpn, wqeCounter, RESP_SEND, 0, false, srqn);
        source(b, srcQp, slid);
        BigEndian.put32(b, BYTE_CNT, byteCount);
        BigEndian.put64(b, TAG, tag);
        BigEndian.put32(b, PRIV, priv);
        tm(b, kind, tmFlags);
        return Line64.words(b, 0);
    }

    /**
     * The completion of tag-list operation {@code opIndex} ({@code kind} TM_ADD, TM_DEL or TM_SYNC)
     * of SRQ {@code srqn}; {@code syndrome} 0: done, else an error naming {@code vendor}.
     */
    public static long[] tmOp(long srqn, int opIndex, int kind, int tmFlags, int syndrome, int vendor) {
        byte[] b = syndrome == 0 ? received(0, opIndex, RESP_SEND, 0, false, srqn)
                : Line64.bytes(error(false, 0, opIndex, 0, syndrome, vendor, 0, 0, 0, srqn));
        tm(b, kind, tmFlags);
        return Line64.words(b, 0);
    }

    /** {@code cqe} (an error completion of a tag-matching SRQ's receive) saying what the message was. */
    public static long[] withTm(long[] cqe, int kind, int tmFlags) {
        byte[] b = Line64.bytes(cqe);
        tm(b, kind, tmFlags);
        return Line64.words(b, 0);
    }

    private static void tm(byte[] b, int kind, int tmFlags) {
        b[APP] = 1; // mlx5's MLX5_CQE_APP_TAG_MATCHING
        b[APP_OP] = (byte) kind;
        b[APP_INFO] = (byte) tmFlags;
    }

    /** A tag-matching SRQ's completion as the library reads it (kind TM_NONE: not one). */
    public record TmView(int kind, int flags, long tag, int priv) {}

    public static TmView parseTm(byte[] b) {
        return new TmView(b[APP_OP] & 0xff, b[APP_INFO] & 0xff, BigEndian.get64(b, TAG),
                (int) BigEndian.get32(b, PRIV));
    }

    /** The fields every responder CQE has: the XRC SRQ, immediate, QPN, WQE counter and op_own. */
    private static byte[] received(long qpn, int wqeCounter, int cqeOpcode, int imm, boolean solicited, long srqn) {
        byte[] b = new byte[BYTES];
        BigEndian.put32(b, SRQN, srqn & 0xFFFFFF);
        BigEndian.put32(b, IMM, imm);
        BigEndian.put32(b, SOP_QPN, qpn & 0xFFFFFF);
        b[WQE_COUNTER] = (byte) (wqeCounter >> 8);
        b[WQE_COUNTER + 1] = (byte) wqeCounter;
        b[OP_OWN] = (byte) (cqeOpcode << 4 | (solicited ? SOLICITED_BIT : 0));
        return b;
    }

    /** The sender of a received message: source LID (bytes 22..23) and QP (24..27). */
    /** flags_rqpn bits 29..28 (byte 24), mlx5's "g": 1 when a GRH came with the message (IBV_WC_GRH). */
    public static final int GRH_BYTE = SRC_QP, GRH_FLAG = 0x10, GRH_MASK = 0x30;

    /** {@code cqe} saying that a GRH came: it is in the receive buffer's first 40 bytes. */
    public static long[] withGrh(long[] cqe) {
        byte[] b = Line64.bytes(cqe);
        b[GRH_BYTE] |= GRH_FLAG;
        return Line64.words(b, 0);
    }

    /** Whether a responder CQE says a GRH came. */
    public static boolean grh(byte[] b) { return (b[GRH_BYTE] & GRH_MASK) != 0; }

    private static void source(byte[] b, long srcQp, int slid) {
        b[SLID] = (byte) (slid >> 8);
        b[SLID + 1] = (byte) slid;
        BigEndian.put32(b, SRC_QP, srcQp & 0xFFFFFF);
    }

    /**
     * An error completion with the details of the failed check in mlx5_err_cqe's reserved bytes
     * (nicsim's use of them): bytes 0..7 the address, 8..11 the key, 12..15 the PSN.
     */
    public static long[] error(boolean requester, long qpn, int wqeCounter, int wqeOpcode, int syndrome,
                               int vendorSyndrome, long addr, int key, int psn) {
        return error(requester, qpn, wqeCounter, wqeOpcode, syndrome, vendorSyndrome, addr, key, psn, 0);
    }

    /** As above, for a receive WQE of XRC SRQ {@code srqn} (mlx5_err_cqe's srqn, bytes 32..35). */
    public static long[] error(boolean requester, long qpn, int wqeCounter, int wqeOpcode, int syndrome,
                               int vendorSyndrome, long addr, int key, int psn, long srqn) {
        byte[] b = new byte[BYTES];
        BigEndian.put32(b, SRQN, srqn & 0xFFFFFF);
        BigEndian.put64(b, ERR_ADDR, addr);
        BigEndian.put32(b, ERR_KEY, key);
        BigEndian.put32(b, ERR_PSN, psn);
        b[VENDOR_SYNDROME] = (byte) vendorSyndrome;
        b[SYNDROME] = (byte) syndrome;
        BigEndian.put32(b, SOP_QPN, (long) (wqeOpcode & 0xff) << 24 | (qpn & 0xFFFFFF));
        b[WQE_COUNTER] = (byte) (wqeCounter >> 8);
        b[WQE_COUNTER + 1] = (byte) wqeCounter;
        b[OP_OWN] = (byte) ((requester ? REQ_ERR : RESP_ERR) << 4);
        return Line64.words(b, 0);
    }

    /**
     * A requester error completion (mlx5_err_cqe, CQE opcode REQ_ERR): {@code syndrome} picks the
     * verbs status; {@code vendorSyndrome} (copied to wc.vendor_err) says exactly what failed.
     */
    public static long[] requesterError(long qpn, int wqeCounter, int wqeOpcode, int syndrome, int vendorSyndrome) {
        byte[] b = new byte[BYTES];
        b[VENDOR_SYNDROME] = (byte) vendorSyndrome;
        b[SYNDROME] = (byte) syndrome;
        BigEndian.put32(b, SOP_QPN, (long) (wqeOpcode & 0xff) << 24 | (qpn & 0xFFFFFF));
        b[WQE_COUNTER] = (byte) (wqeCounter >> 8);
        b[WQE_COUNTER + 1] = (byte) wqeCounter;
        b[OP_OWN] = (byte) (REQ_ERR << 4);
        return Line64.words(b, 0);
    }

    /**
     * A responder completion whose message ({@code data}, at most {@link #INLINE_SCATTER_BYTES}) is
     * in the CQE itself, scattered to the CQE instead of the receive buffer (docs/sources.md#mlx5-cqe):
     * bytes 0..31 hold it, so the source QP and LID fields (meaningful for UD only) are not there.
     */
    public static long[] responderInline(long qpn, int wqeCounter, int cqeOpcode, int imm, boolean solicited,
            long srqn, byte[] data) {
        if (data.length > INLINE_SCATTER_BYTES)
            throw new IllegalArgumentException("inline scatter of " + data.length
                    + " bytes: at most 32 fit a 64-byte CQE");
        byte[] b = received(qpn, wqeCounter, cqeOpcode, imm, solicited, srqn);
        System.arraycopy(data, 0, b, 0, data.length);
        BigEndian.put32(b, BYTE_CNT, data.length);
        b[OP_OWN] |= INLINE_SCATTER_32;
        return Line64.words(b, 0);
    }

    /** Whether a CQE carries its message's bytes (an error CQE never does). */
    public static boolean inlineScattered(byte[] cqe) {
        return (cqe[OP_OWN] & INLINE_SCATTER_32) != 0 && !isError(cqe);
    }

    /** The bytes an inline-scattered CQE carries (its byte count of them), or null if the CQE is not one. */
    public static byte[] inlineData(byte[] cqe) {
        if (!inlineScattered(cqe)) return null;
        int n = (int) Math.min(INLINE_SCATTER_BYTES, BigEndian.get32(cqe, BYTE_CNT));
        return Arrays.copyOf(cqe, n);
    }

    /**
     * A striding receive queue's completion (mlx5's multi-packet RQ CQE): its message is at stride
     * {@code firstStride} of WQE {@code wqeCounter} (bytes 2..3) and took {@code strides} strides; the
     * byte count word holds bit 31 filler (only strides used up, no message), bits 29..16 the strides,
     * bits 15..0 the bytes.
     */
    public static long[] responderStrided(long qpn, int wqeCounter, int cqeOpcode, int bytes, int imm, long srcQp,
                                          int slid, boolean solicited, int firstStride, int strides, boolean filler) {
        byte[] b = received(qpn, wqeCounter, cqeOpcode, imm, solicited, 0);
        b[STRIDE] = (byte) (firstStride >> 8);
        b[STRIDE + 1] = (byte) firstStride;
        source(b, srcQp, slid);
        BigEndian.put32(b, BYTE_CNT, (filler ? 1L << 31 : 0) | (long) (strides & 0x3FFF) << 16 | (bytes & 0xFFFF));
        return Line64.words(b, 0);
    }

    /**
     * The stride fields of a striding receive queue's CQE: first stride, strides taken, bytes, and whether it is a
     * filler.
     */
    public record StrideView(int firstStride, int strides, int bytes, boolean filler) {}

    public static StrideView parseStrided(byte[] b) {
        long w = BigEndian.get32(b, BYTE_CNT);
        return new StrideView((b[STRIDE] & 0xff) << 8 | (b[STRIDE + 1] & 0xff), (int) (w >>> 16 & 0x3FFF),
                (int) (w & 0xFFFF), (w & 1L << 31) != 0);
    }

    /** A CQE as software reads it; syndrome and vendor syndrome are meaningful in error CQEs. */
    public record View(int opcode, int owner, long qpn, int wqeOpcode, int wqeCounter, long byteCount, int syndrome,
            int vendorSyndrome) {}

    public static View parse(byte[] b) {
        return new View(opcode(b), b[OP_OWN] & 1, qpn(b), (int) (BigEndian.get32(b, SOP_QPN) >>> 24), wqeCounter(b),
                BigEndian.get32(b, BYTE_CNT), b[SYNDROME] & 0xff, b[VENDOR_SYNDROME] & 0xff);
    }

    /** The CQE's opcode ({@link View#opcode}), read without a view. */
    public static int opcode(byte[] b) { return (b[OP_OWN] & 0xff) >> 4; }

    /** The CQE's QP number ({@link View#qpn}), read without a view. */
    public static long qpn(byte[] b) { return BigEndian.get32(b, SOP_QPN) & 0xFFFFFF; }

    /** The CQE's WQE counter ({@link View#wqeCounter}), read without a view. */
    public static int wqeCounter(byte[] b) { return (b[WQE_COUNTER] & 0xff) << 8 | (b[WQE_COUNTER + 1] & 0xff); }

    /**
     * The fields of a responder CQE beyond {@link View}: immediate, source QP and LID, solicited, the XRC SRQ (0:
     * none).
     */
    public record RecvView(int imm, long srcQp, int slid, boolean solicited, long srqn) {}

    public static RecvView parseRecv(byte[] b) {
        return new RecvView((int) BigEndian.get32(b, IMM), BigEndian.get32(b, SRC_QP) & 0xFFFFFF,
                (b[SLID] & 0xff) << 8 | (b[SLID + 1] & 0xff), (b[OP_OWN] & SOLICITED_BIT) != 0,
                BigEndian.get32(b, SRQN) & 0xFFFFFF);
    }

    /** The details of an error CQE (see {@link #error}): address, key, PSN, the XRC SRQ (0: none). */
    public record ErrorView(long addr, int key, int psn, long srqn, int piece) {}

    public static ErrorView parseError(byte[] b) {
        return new ErrorView(BigEndian.get64(b, ERR_ADDR), (int) BigEndian.get32(b, ERR_KEY),
                (int) BigEndian.get32(b, ERR_PSN), BigEndian.get32(b, SRQN) & 0xFFFFFF,
                (b[ERR_PIECE] & 0xff) << 8 | (b[ERR_PIECE + 1] & 0xff));
    }

    /**
     * An error CQE that names the entry of an indirect mkey whose check failed ({@code piece} =
     * entry + 1, in bytes 36..37, reserved in mlx5_err_cqe; 0: the key itself).
     */
    public static long[] withPiece(long[] cqe, int piece) {
        if (piece == 0) return cqe;
        byte[] b = Line64.bytes(cqe);
        b[ERR_PIECE] = (byte) (piece >> 8);
        b[ERR_PIECE + 1] = (byte) piece;
        return Line64.words(b, 0);
    }



    /**
     * Byte of mlx5's 64-bit completion timestamp (HCA core clock cycles, big-endian) in a CQE that is not an error's.
     */
    public static final int TIMESTAMP = 48;

    /** Whether CQE {@code b} reports an error (then its bytes 48..55 are the error's, with no timestamp). */
    public static boolean isError(byte[] b) {
        int op = opcode(b);
        return op == REQ_ERR || op == RESP_ERR;
    }

    /** The completion timestamp of CQE {@code b} in core clock cycles (0 for an error's). */
    public static long timestamp(byte[] b) { return isError(b) ? 0 : BigEndian.get64(b, TIMESTAMP); }
}
