package nicsim.fabric;

import nicsim.sim.Arrival;

/**
 * One InfiniBand-style packet as the transport builds it: the local route (LIDs), the base
 * transport header (opcode, destination QP, PSN, ack-request and solicited bits), and the extended
 * headers each opcode carries (RETH: va, rkey, dma length; AtomicETH: swap/add and compare; AETH:
 * syndrome and MSN; AtomicAckETH: the original value; ImmDt; DETH: qkey and source QP; XRCETH:
 * the XRC SRQ an XRC request is for; DCETH: the DC access key a DC request carries), then the
 * payload. {@link #wireBytes()} counts every header and CRC the way a link serializes them.
 * {@code transport} is the service the BTH opcode's top bits name ({@link #RC}, {@link #UC},
 * {@link #UD}, {@link #XRC}, {@link #DC}); a responder drops a packet whose service is not its QP's.
 * {@code arrival} is set by the fabric on delivery: when the payload's bytes come in (null before, or when all are
 * in). {@code grh}
 * is the global route header a packet to a multicast group carries (null: none, as between ports of one subnet).
 */
public record Packet(int slid, int dlid, Op op, long destQp, long srcQp, int psn, boolean ackReq, boolean solicited,
                     long va, int rkey, long dmaLength, long swapAdd, long compare, int aeth, int msn, long atomicOrig,
                     int imm, int qkey, byte[] payload, int transport, Arrival arrival, int xrcSrqn, long dcKey,
                     Grh grh) {

    /** A packet as the transport builds it: not yet delivered, so no {@link #arrival()}. */
    public Packet(int slid, int dlid, Op op, long destQp, long srcQp, int psn, boolean ackReq, boolean solicited,
                  long va, int rkey, long dmaLength, long swapAdd, long compare, int aeth, int msn, long atomicOrig,
                  int imm, int qkey, byte[] payload, int transport) {
        this(slid, dlid, op, destQp, srcQp, psn, ackReq, solicited, va, rkey, dmaLength, swapAdd, compare, aeth, msn,
                atomicOrig, imm, qkey, payload, transport, null, 0, 0, null);
    }

    /**
     * This request with an XRCETH naming the destination's XRC SRQ {@code srqn} (an XRC request carries one, IBA
     * 9.3.7).
     */
    public Packet withXrcSrqn(int srqn) {
        return new Packet(slid, dlid, op, destQp, srcQp, psn, ackReq, solicited, va, rkey, dmaLength, swapAdd, compare,
                aeth, msn, atomicOrig, imm, qkey, payload, transport, arrival, srqn, dcKey, grh);
    }

    /** This packet with global route header {@code g} (null: none), as a send to a multicast group carries one. */
    public Packet withGrh(Grh g) {
        return new Packet(slid, dlid, op, destQp, srcQp, psn, ackReq, solicited, va, rkey, dmaLength, swapAdd, compare,
                aeth, msn, atomicOrig, imm, qkey, payload, transport, arrival, xrcSrqn, dcKey, g);
    }

    /** Multicast LIDs (IBA 4.1.2: 0xC000..0xFFFE; 0xFFFF is the permissive LID). */
    public static final int MULTICAST_LID_FIRST = 0xC000, MULTICAST_LID_LAST = 0xFFFE;
    /** The destination QP of every packet to a multicast group (IBA 10.8.4.1). */
    public static final long MULTICAST_QPN = 0xFFFFFF;

    /** Whether {@code lid} is a multicast LID: the switch copies such a packet to every port with a member. */
    public static boolean multicastLid(int lid) { return lid >= MULTICAST_LID_FIRST && lid <= MULTICAST_LID_LAST; }

    /** This DC request with a DCETH carrying the DC access key {@code key} the target checks. */
    public Packet withDcKey(long key) {
        return new Packet(slid, dlid, op, destQp, srcQp, psn, ackReq, solicited, va, rkey, dmaLength, swapAdd, compare,
                aeth, msn, atomicOrig, imm, qkey, payload, transport, arrival, xrcSrqn, key, grh);
    }

    /**
     * The BTH opcode's transport bits (IBA 9.2: RC 000, UC 001, UD 011, XRC 101). DC is not in the
     * IBA's table: its packets use manufacturer-specific opcodes (110), as mlx5's do.
     */
    public static final int RC = 0, UC = 1, UD = 3, XRC = 5, DC = 6;

    /**
     * What an opcode is and which headers follow its BTH, one bit each, as rxe_opcode.c's masks: every
     * predicate of {@link Op} reads them, so a new opcode is described in one line.
     */
    public static final class Mask {
        private Mask() {}
        public static final int REQ = 1, ACK = 1 << 1, SEND = 1 << 2, WRITE = 1 << 3, READ = 1 << 4, ATOMIC = 1 << 5;
        public static final int READ_RESP = 1 << 6, DC_CONTROL = 1 << 7, START = 1 << 8, MIDDLE = 1 << 9, END = 1 << 10;
        public static final int IMMDT = 1 << 11, IETH = 1 << 12, RETH = 1 << 13, AETH = 1 << 14, ATMETH = 1 << 15,
                ATMACK = 1 << 16;
    }

    /** BTH opcodes (the low 5 bits of IBA's; the transport is the QP's) and their masks. */
    public enum Op {
        SEND_FIRST(0, Mask.REQ | Mask.SEND | Mask.START),
        SEND_MIDDLE(1, Mask.REQ | Mask.SEND | Mask.MIDDLE),
        SEND_LAST(2, Mask.REQ | Mask.SEND | Mask.END),
        SEND_LAST_IMM(3, Mask.REQ | Mask.SEND | Mask.END | Mask.IMMDT),
        SEND_ONLY(4, Mask.REQ | Mask.SEND | Mask.START | Mask.END),
        SEND_ONLY_IMM(5, Mask.REQ | Mask.SEND | Mask.START | Mask.END | Mask.IMMDT),
        WRITE_FIRST(6, Mask.REQ | Mask.WRITE | Mask.START | Mask.RETH),
        WRITE_MIDDLE(7, Mask.REQ | Mask.WRITE | Mask.MIDDLE),
        WRITE_LAST(8, Mask.REQ | Mask.WRITE | Mask.END),
        WRITE_LAST_IMM(9, Mask.REQ | Mask.WRITE | Mask.END | Mask.IMMDT),
        WRITE_ONLY(10, Mask.REQ | Mask.WRITE | Mask.START | Mask.END | Mask.RETH),
        WRITE_ONLY_IMM(11, Mask.REQ | Mask.WRITE | Mask.START | Mask.END | Mask.RETH | Mask.IMMDT),
        READ_REQ(12, Mask.REQ | Mask.READ | Mask.START | Mask.END | Mask.RETH),
        READ_RESP_FIRST(13, Mask.READ_RESP | Mask.START | Mask.AETH),
        READ_RESP_MIDDLE(14, Mask.READ_RESP | Mask.MIDDLE),
        READ_RESP_LAST(15, Mask.READ_RESP | Mask.END | Mask.AETH),
        READ_RESP_ONLY(16, Mask.READ_RESP | Mask.START | Mask.END | Mask.AETH),
        ACK(17, Mask.ACK | Mask.START | Mask.END | Mask.AETH),
        ATOMIC_ACK(18, Mask.ACK | Mask.START | Mask.END | Mask.AETH | Mask.ATMACK),
        CMP_SWAP(19, Mask.REQ | Mask.ATOMIC | Mask.START | Mask.END | Mask.ATMETH),
        FETCH_ADD(20, Mask.REQ | Mask.ATOMIC | Mask.START | Mask.END | Mask.ATMETH),
        SEND_LAST_INV(22, Mask.REQ | Mask.SEND | Mask.END | Mask.IETH),
        SEND_ONLY_INV(23, Mask.REQ | Mask.SEND | Mask.START | Mask.END | Mask.IETH),
        /**
         * DC: an initiator opens a connection to a target (it takes a PSN and is acknowledged), closes it, or is
         * refused one (CNAK: no responder free).
         */
        DC_CONNECT(24, Mask.DC_CONTROL | Mask.START | Mask.END),
        DC_DISCONNECT(25, Mask.DC_CONTROL | Mask.START | Mask.END),
        DC_CNAK(26, Mask.ACK | Mask.START | Mask.END | Mask.AETH);

        public final int code;
        /** Its {@link Mask} bits. */
        public final int mask;

        Op(int code, int mask) { this.code = code; this.mask = mask; }

        /** Whether it has every bit of {@code m}. */
        public boolean has(int m) { return (mask & m) == m; }

        public boolean isSend() { return has(Mask.SEND); }
        public boolean isWrite() { return has(Mask.WRITE); }
        public boolean isReadResponse() { return has(Mask.READ_RESP); }
        public boolean isAtomic() { return has(Mask.ATOMIC); }
        public boolean isAck() { return has(Mask.ACK); }
        /** Opens or closes a DC connection. */
        public boolean isDcControl() { return has(Mask.DC_CONTROL); }
        /** A request the responder executes (not an ACK or a read response). */
        public boolean isRequest() { return has(Mask.REQ); }
        public boolean first() { return has(Mask.START) && !has(Mask.END); }
        public boolean middle() { return has(Mask.MIDDLE); }
        public boolean last() { return has(Mask.END); }
        /** Starts a message (FIRST or ONLY, or a single-packet request). */
        public boolean starts() { return has(Mask.START); }
        public boolean hasImm() { return has(Mask.IMMDT); }
        public boolean hasReth() { return has(Mask.RETH); }
    }

    /**
     * AETH syndromes (IBA 9.7.5.1): ACK with credit count, RNR NAK with timer, NAK codes; bits 6..5 (ACK, RNR, NAK) are
     * the class.
     */
    public static final int AETH_ACK = 0x00, AETH_RNR = 0x20, AETH_NAK = 0x60, AETH_NAK_PSN = 0x60,
            AETH_NAK_INVALID = 0x61, AETH_NAK_ACCESS = 0x62, AETH_NAK_OP = 0x63, AETH_NAK_INVALID_RD = 0x64;

    public static final int LRH = 8, BTH = 12, RETH = 16, ATOMIC_ETH = 28, AETH_BYTES = 4, ATOMIC_ACK_ETH = 8, IMM = 4,
            DETH = 8, ICRC = 4, VCRC = 2, XRCETH = 4, DCETH = 8;

    /** Bytes on the link: headers for this opcode, payload padded to 4, ICRC and VCRC. */
    public int wireBytes() {
        int h = LRH + BTH + ICRC + VCRC + (grh != null ? Grh.BYTES : 0);
        if (op.has(Mask.RETH)) h += RETH;
        if (op.has(Mask.ATMETH)) h += ATOMIC_ETH;
        if (op.has(Mask.AETH)) h += AETH_BYTES;
        if (op.has(Mask.ATMACK)) h += ATOMIC_ACK_ETH;
        if (op.has(Mask.IMMDT) || op.has(Mask.IETH)) h += IMM; // ImmDt or IETH
        if (transport == UD) h += DETH;
        if (transport == XRC && op.isRequest()) h += XRCETH;
        if (transport == DC && (op.isRequest() || op.isDcControl())) h += DCETH;
        return h + (payload.length + 3) / 4 * 4;
    }

    public Packet withPayload(byte[] p) {
        return new Packet(slid, dlid, op, destQp, srcQp, psn, ackReq, solicited, va, rkey, dmaLength, swapAdd, compare,
                aeth, msn, atomicOrig, imm, qkey, p, transport, arrival, xrcSrqn, dcKey, grh);
    }

    public Packet withSolicited(boolean s) {
        return new Packet(slid, dlid, op, destQp, srcQp, psn, ackReq, s, va, rkey, dmaLength, swapAdd, compare, aeth,
                msn, atomicOrig, imm, qkey, payload, transport, arrival, xrcSrqn, dcKey, grh);
    }

    /** This packet as delivered: its payload comes in as {@code a} says. */
    public Packet arriving(Arrival a) {
        return new Packet(slid, dlid, op, destQp, srcQp, psn, ackReq, solicited, va, rkey, dmaLength, swapAdd, compare,
                aeth, msn, atomicOrig, imm, qkey, payload, transport, a, xrcSrqn, dcKey, grh);
    }

    /** Bytes on the link after the payload: ICRC and VCRC. */
    public static int trailerBytes() { return ICRC + VCRC; }

    /** Bytes on the link before the payload. */
    public int headerBytes() { return wireBytes() - (payload.length + 3) / 4 * 4 - trailerBytes(); }

    @Override public String toString() {
        return String.format("%s psn %d qp 0x%x->0x%x lid %d->%d %dB%s", op, psn, srcQp, destQp, slid, dlid,
                payload.length, op.isAck() ? String.format(" aeth 0x%02x msn %d", aeth, msn) : "");
    }
}
