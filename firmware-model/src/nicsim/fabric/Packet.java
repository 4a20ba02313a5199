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
 * {@link #UD}, {@link #XRC}, {@link #DC}); a responder drops a packet whose service is not its QP's. {@code arrival} is set
 * by the fabric on delivery: when the payload's bytes come in (null before, or when all are in).
 */
public record Packet(int slid, int dlid, Op op, long destQp, long srcQp, int psn, boolean ackReq, boolean solicited,
                     long va, int rkey, long dmaLength, long swapAdd, long compare, int aeth, int msn, long atomicOrig,
                     int imm, int qkey, byte[] payload, int transport, Arrival arrival, int xrcSrqn, long dcKey) {

    /** A packet as the transport builds it: not yet delivered, so no {@link #arrival()}. */
    public Packet(int slid, int dlid, Op op, long destQp, long srcQp, int psn, boolean ackReq, boolean solicited, long va, int rkey,
                  long dmaLength, long swapAdd, long compare, int aeth, int msn, long atomicOrig, int imm, int qkey, byte[] payload,
                  int transport) {
        this(slid, dlid, op, destQp, srcQp, psn, ackReq, solicited, va, rkey, dmaLength, swapAdd, compare, aeth, msn, atomicOrig, imm,
                qkey, payload, transport, null, 0, 0);
    }

    /** This request with an XRCETH naming the destination's XRC SRQ {@code srqn} (an XRC request carries one, IBA 9.3.7). */
    public Packet withXrcSrqn(int srqn) {
        return new Packet(slid, dlid, op, destQp, srcQp, psn, ackReq, solicited, va, rkey, dmaLength, swapAdd, compare, aeth, msn,
                atomicOrig, imm, qkey, payload, transport, arrival, srqn, dcKey);
    }

    /** This DC request with a DCETH carrying the DC access key {@code key} the target checks. */
    public Packet withDcKey(long key) {
        return new Packet(slid, dlid, op, destQp, srcQp, psn, ackReq, solicited, va, rkey, dmaLength, swapAdd, compare, aeth, msn,
                atomicOrig, imm, qkey, payload, transport, arrival, xrcSrqn, key);
    }

    /**
     * The BTH opcode's transport bits (IBA 9.2: RC 000, UC 001, UD 011, XRC 101). DC is not in the
     * IBA's table: its packets use manufacturer-specific opcodes (110), as mlx5's do.
     */
    public static final int RC = 0, UC = 1, UD = 3, XRC = 5, DC = 6;

    /** BTH opcodes (the low 5 bits of IBA's; the transport is the QP's). */
    public enum Op {
        SEND_FIRST(0), SEND_MIDDLE(1), SEND_LAST(2), SEND_LAST_IMM(3), SEND_ONLY(4), SEND_ONLY_IMM(5),
        WRITE_FIRST(6), WRITE_MIDDLE(7), WRITE_LAST(8), WRITE_LAST_IMM(9), WRITE_ONLY(10), WRITE_ONLY_IMM(11),
        READ_REQ(12), READ_RESP_FIRST(13), READ_RESP_MIDDLE(14), READ_RESP_LAST(15), READ_RESP_ONLY(16),
        ACK(17), ATOMIC_ACK(18), CMP_SWAP(19), FETCH_ADD(20), SEND_LAST_INV(22), SEND_ONLY_INV(23),
        /** DC: an initiator opens a connection to a target (it takes a PSN and is acknowledged), closes it, or is refused one (CNAK: no responder free). */
        DC_CONNECT(24), DC_DISCONNECT(25), DC_CNAK(26);

        public final int code;

        Op(int code) { this.code = code; }

        public boolean isSend() { return this.compareTo(SEND_ONLY_IMM) <= 0 || this == SEND_LAST_INV || this == SEND_ONLY_INV; }
        public boolean isWrite() { return this.compareTo(WRITE_FIRST) >= 0 && this.compareTo(WRITE_ONLY_IMM) <= 0; }
        public boolean isReadResponse() { return this.compareTo(READ_RESP_FIRST) >= 0 && this.compareTo(READ_RESP_ONLY) <= 0; }
        public boolean isAtomic() { return this == CMP_SWAP || this == FETCH_ADD; }
        public boolean isAck() { return this == ACK || this == ATOMIC_ACK || this == DC_CNAK; }
        /** Opens or closes a DC connection. */
        public boolean isDcControl() { return this == DC_CONNECT || this == DC_DISCONNECT; }
        /** A request the responder executes (not an ACK or a read response). */
        public boolean isRequest() { return isSend() || isWrite() || this == READ_REQ || isAtomic(); }
        public boolean first() { return this == SEND_FIRST || this == WRITE_FIRST || this == READ_RESP_FIRST; }
        public boolean middle() { return this == SEND_MIDDLE || this == WRITE_MIDDLE || this == READ_RESP_MIDDLE; }
        public boolean last() { return !first() && !middle(); }
        /** Starts a message (FIRST or ONLY, or a single-packet request). */
        public boolean starts() { return !middle() && !(this == SEND_LAST || this == SEND_LAST_IMM || this == SEND_LAST_INV
                || this == WRITE_LAST || this == WRITE_LAST_IMM || this == READ_RESP_LAST); }
        public boolean hasImm() { return this == SEND_LAST_IMM || this == SEND_ONLY_IMM || this == WRITE_LAST_IMM || this == WRITE_ONLY_IMM; }
        public boolean hasReth() { return this == WRITE_FIRST || this == WRITE_ONLY || this == WRITE_ONLY_IMM || this == READ_REQ; }
    }

    /** AETH syndromes (IBA 9.7.5.1): ACK with credit count, RNR NAK with timer, NAK codes; bits 6..5 (ACK, RNR, NAK) are the class. */
    public static final int AETH_ACK = 0x00, AETH_RNR = 0x20, AETH_NAK = 0x60, AETH_NAK_PSN = 0x60, AETH_NAK_INVALID = 0x61,
            AETH_NAK_ACCESS = 0x62, AETH_NAK_OP = 0x63, AETH_NAK_INVALID_RD = 0x64;

    public static final int LRH = 8, BTH = 12, RETH = 16, ATOMIC_ETH = 28, AETH_BYTES = 4, ATOMIC_ACK_ETH = 8, IMM = 4, DETH = 8,
            ICRC = 4, VCRC = 2, XRCETH = 4, DCETH = 8;

    /** Bytes on the link: headers for this opcode, payload padded to 4, ICRC and VCRC. */
    public int wireBytes() {
        int h = LRH + BTH + ICRC + VCRC;
        if (op.hasReth()) h += RETH;
        if (op.isAtomic()) h += ATOMIC_ETH;
        if (op.isAck() || op == Op.READ_RESP_FIRST || op == Op.READ_RESP_LAST || op == Op.READ_RESP_ONLY) h += AETH_BYTES;
        if (op == Op.ATOMIC_ACK) h += ATOMIC_ACK_ETH;
        if (op.hasImm() || op == Op.SEND_LAST_INV || op == Op.SEND_ONLY_INV) h += IMM; // ImmDt or IETH
        if (transport == UD) h += DETH;
        if (transport == XRC && op.isRequest()) h += XRCETH;
        if (transport == DC && (op.isRequest() || op.isDcControl())) h += DCETH;
        return h + (payload.length + 3) / 4 * 4;
    }

    public Packet withPayload(byte[] p) {
        return new Packet(slid, dlid, op, destQp, srcQp, psn, ackReq, solicited, va, rkey, dmaLength, swapAdd, compare, aeth, msn,
                atomicOrig, imm, qkey, p, transport, arrival, xrcSrqn, dcKey);
    }

    public Packet withSolicited(boolean s) {
        return new Packet(slid, dlid, op, destQp, srcQp, psn, ackReq, s, va, rkey, dmaLength, swapAdd, compare, aeth, msn,
                atomicOrig, imm, qkey, payload, transport, arrival, xrcSrqn, dcKey);
    }

    /** This packet as delivered: its payload comes in as {@code a} says. */
    public Packet arriving(Arrival a) {
        return new Packet(slid, dlid, op, destQp, srcQp, psn, ackReq, solicited, va, rkey, dmaLength, swapAdd, compare, aeth, msn,
                atomicOrig, imm, qkey, payload, transport, a, xrcSrqn, dcKey);
    }

    /** Bytes on the link after the payload: ICRC and VCRC. */
    public static int trailerBytes() { return ICRC + VCRC; }

    /** Bytes on the link before the payload. */
    public int headerBytes() { return wireBytes() - (payload.length + 3) / 4 * 4 - trailerBytes(); }

    @Override public String toString() {
        return String.format("%s psn %d qp 0x%x->0x%x lid %d->%d %dB%s", op, psn, srcQp, destQp, slid, dlid, payload.length,
                op.isAck() ? String.format(" aeth 0x%02x msn %d", aeth, msn) : "");
    }
}
