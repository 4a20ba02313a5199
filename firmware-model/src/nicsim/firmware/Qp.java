package nicsim.firmware;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import nicsim.abi.BigEndian;
import nicsim.abi.Cmd;
import nicsim.abi.Cqe64;
import nicsim.abi.QpTransitions;
import nicsim.abi.Vendor;
import nicsim.abi.WqeFormat;
import nicsim.abi.WqeFormat.SendWqe;
import nicsim.abi.WqeFormat.Sge;
import nicsim.abi.WqeLayout;
import nicsim.adapter.MttPorts;
import nicsim.adapter.MttPorts.XlateRsp;
import nicsim.fabric.Packet;
import nicsim.fabric.Packet.Op;
import nicsim.host.PciPort;
import nicsim.sim.Arrival;
import nicsim.sim.Simulator;
import nicsim.verbs.AccessFlags;
import nicsim.verbs.EventType;
import nicsim.verbs.Mtu;
import nicsim.verbs.QpAttrMask;
import nicsim.verbs.QpState;
import nicsim.verbs.QpType;

/**
 * One queue pair's context and transport, as the firmware runs it: the state machine (transitions
 * checked against {@link QpTransitions}), the requester (WQEs to packets, PSNs, ACK/NAK handling,
 * the retransmit timer with retry_cnt, RNR waits with rnr_retry, go-back-N), the responder (PSN
 * checks, duplicates, RNR NAK, receive WQEs read from the host ring, RDMA WRITE/READ/atomics
 * through the rkey checks), completions and flushes, and the errors of docs/sources.md#responder-errors and docs/sources.md#verbs-error-model with
 * the state change each causes.
 */
final class Qp {
    private static final int WINDOW_PSNS = 128;
    /** RNR timer encodings to microseconds (docs/sources.md#libibverbs-values, from IBA table 45). */
    static final int[] RNR_US = {655360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640, 960, 1280, 1920, 2560, 3840, 5120,
            7680, 10240, 15360, 20480, 30720, 40960, 61440, 81920, 122880, 163840, 245760, 327680, 491520};

    final Firmware fw;
    final long qpn;
    final QpType type;
    final long pd;
    final long uar;
    final Firmware.Cq scq, rcq;
    private final RecvRing rq;
    /** The send ring, and its counters as firmware knows them: the newest doorbell's producer, the WQEBB after the last delivered WQE. */
    final long sqAddr;
    final int sqLogSize;
    int sqProducerSeen, sqDelivered;
    /** After a refused WQE that gave no size: the WQEBBs before {@code sqSkipEnd} are searched for the next WQE (-1: none). */
    private int sqSkipEnd = -1;
    /** The SRQ this QP takes receives from, or null. */
    final Srq srq;
    private final boolean sqSigAll;

    QpState state = QpState.RESET;
    private int access, qkey, mtu = 256, destQpn, dlid, timeout, retryCnt, rnrRetry, minRnrTimer, maxRdAtomic, maxDestRdAtomic;
    private int port = 1, pkeyIndex;
    private boolean sqdNotify, draining;

    // requester
    private final ArrayDeque<SendOp> pending = new ArrayDeque<>();
    private final ArrayDeque<SendOp> outstanding = new ArrayDeque<>();
    private int nextPsn, ackedPsn, retriesLeft, rnrLeft, readsOutstanding;
    private Simulator.Event timer; // the event that checks the retransmit timer, at or before timerDue
    private long timerDue = -1; // when the retransmit timer expires (-1: not running)
    private boolean rnrWaiting;

    // responder
    private int epsn, msn;
    private boolean nakSent, commEst;
    private final ArrayDeque<Packet> rx = new ArrayDeque<>();
    private boolean rxBusy;
    private InMsg cur;
    /** The results of the latest atomics by PSN, oldest first, so a repeated request gets its original answer (64 kept: more than max_dest_rd_atomic). */
    private final Map<Integer, Long> atomicReplay = new java.util.LinkedHashMap<>() {
        @Override protected boolean removeEldestEntry(Map.Entry<Integer, Long> eldest) { return size() > 64; }
    };
    private long generation; // bumps on RESET/destroy: callbacks of an older generation are dropped

    /** A send WQE on its way: its PSNs, packets (kept for retransmission), and what has come back. */
    private static final class SendOp {
        final int index, opcode;
        final SendWqe w;
        final long length;
        int firstPsn, lastPsn, respPsn;
        byte[] payload;
        boolean ready, transmitted, done, onWire, answered;
        /** Streamed: packets leave as soon as their bytes have been read from the host (cut-through). */
        boolean streaming;
        int npkts, sent;
        final java.util.TreeMap<Integer, Long> heads = new java.util.TreeMap<>(); // packets whose head left the send engine -> feed ps
        final List<Packet> packets = new ArrayList<>();

        SendOp(int index, SendWqe w, long length) {
            this.index = index;
            this.opcode = w.opcode();
            this.w = w;
            this.length = length;
        }

        boolean readOrAtomic() { return Firmware.isReadOrAtomic(opcode); }
    }

    /** A receive WQE: its counter and scatter list. */

    /** An inbound SEND or WRITE spanning packets. */
    private static final class InMsg {
        final boolean send;
        RecvRing.Wqe wqe;
        long offset;
        List<XlateRsp> target; // WRITE: the translated remote range
        long dmaLength;

        InMsg(boolean send) { this.send = send; }
    }

    Qp(Firmware fw, long qpn, QpType type, Cmd.CreateQp c, Firmware.Cq scq, Firmware.Cq rcq, Srq srq) {
        this.fw = fw;
        this.qpn = qpn;
        this.type = type;
        this.pd = c.pd();
        this.uar = c.uar();
        this.scq = scq;
        this.rcq = rcq;
        this.rq = new RecvRing(fw.adapter.port(), c.rqAddr(), 1 << c.rqLogSize(), (int) c.rqStrideLog(), c.dbrec(), fw.recvPrefetch);
        this.srq = srq;
        this.sqAddr = c.sqAddr();
        this.sqLogSize = (int) c.sqLogSize();
        this.sqSigAll = c.sqSigAll() != 0;
        this.mtu = fw.fabric().maxMtu(); // UD uses the port's MTU; RC and UC set theirs in INIT to RTR
    }

    // ------------------------------------------------------------------ state machine

    void modify(Cmd.QpAttrs a) {
        int mask = (int) a.mask();
        QpState next = Firmware.state(a.state());
        if ((mask & QpAttrMask.CUR_STATE) != 0 && Firmware.state(a.curState()) != state)
            throw new Firmware.Fail(Cmd.Syndrome.CUR_STATE_MISMATCH, state.value());
        QpState target;
        try {
            target = QpTransitions.check(type, state, mask, next);
        } catch (QpTransitions.Rejected r) {
            throw new Firmware.Fail(Cmd.Syndrome.BAD_TRANSITION, (long) state.value() << 8 | next.value());
        }
        if ((mask & QpAttrMask.PATH_MTU) != 0 && (a.pathMtu() < 1 || a.pathMtu() > 5 || Mtu.of((int) a.pathMtu()).bytes() > fw.fabric().maxMtu()))
            throw new Firmware.Fail(Cmd.Syndrome.BAD_ATTRIBUTE, a.pathMtu());
        if ((mask & QpAttrMask.PORT) != 0 && a.port() != 1) throw new Firmware.Fail(Cmd.Syndrome.BAD_ATTRIBUTE, a.port());
        if ((mask & QpAttrMask.ACCESS_FLAGS) != 0 && (a.access() & ~AccessFlags.ALL) != 0)
            throw new Firmware.Fail(Cmd.Syndrome.BAD_ATTRIBUTE, a.access());
        if ((mask & QpAttrMask.MAX_QP_RD_ATOMIC) != 0 && a.maxRdAtomic() > Firmware.MAX_RD_ATOMIC)
            throw new Firmware.Fail(Cmd.Syndrome.BAD_ATTRIBUTE, a.maxRdAtomic());
        if ((mask & QpAttrMask.MAX_DEST_RD_ATOMIC) != 0 && a.maxDestRdAtomic() > Firmware.MAX_RD_ATOMIC)
            throw new Firmware.Fail(Cmd.Syndrome.BAD_ATTRIBUTE, a.maxDestRdAtomic());
        // accepted: apply the attributes, then the state
        if ((mask & QpAttrMask.ACCESS_FLAGS) != 0) access = (int) a.access();
        if ((mask & QpAttrMask.QKEY) != 0) qkey = (int) a.qkey();
        if ((mask & QpAttrMask.PATH_MTU) != 0) mtu = Mtu.of((int) a.pathMtu()).bytes();
        if ((mask & QpAttrMask.DEST_QPN) != 0) destQpn = (int) a.destQpn();
        if ((mask & QpAttrMask.AV) != 0) dlid = (int) a.dlid();
        if ((mask & QpAttrMask.RQ_PSN) != 0) epsn = (int) a.rqPsn();
        if ((mask & QpAttrMask.SQ_PSN) != 0) { nextPsn = (int) a.sqPsn(); ackedPsn = (nextPsn - 1) & 0xFFFFFF; }
        if ((mask & QpAttrMask.TIMEOUT) != 0) timeout = (int) a.timeout();
        if ((mask & QpAttrMask.RETRY_CNT) != 0) { retryCnt = (int) a.retryCnt(); retriesLeft = retryCnt; }
        if ((mask & QpAttrMask.RNR_RETRY) != 0) { rnrRetry = (int) a.rnrRetry(); rnrLeft = rnrRetry; }
        if ((mask & QpAttrMask.MIN_RNR_TIMER) != 0) minRnrTimer = (int) a.minRnrTimer();
        if ((mask & QpAttrMask.MAX_QP_RD_ATOMIC) != 0) maxRdAtomic = (int) a.maxRdAtomic();
        if ((mask & QpAttrMask.MAX_DEST_RD_ATOMIC) != 0) maxDestRdAtomic = (int) a.maxDestRdAtomic();
        if ((mask & QpAttrMask.PORT) != 0) port = (int) a.port();
        if ((mask & QpAttrMask.PKEY_INDEX) != 0) pkeyIndex = (int) a.pkeyIndex();
        QpState was = state;
        if (target == QpState.RESET) reset();
        else if (target == QpState.ERR && was != QpState.ERR) toError();
        else {
            state = target;
            if (target == QpState.SQD && was == QpState.RTS) {
                draining = true;
                sqdNotify = (mask & QpAttrMask.EN_SQD_ASYNC_NOTIFY) != 0;
                checkDrained();
            }
            if (target == QpState.RTS && (was == QpState.SQD || was == QpState.SQE)) {
                draining = false;
                pump();
            }
        }
    }

    Cmd.QpAttrs query() {
        return new Cmd.QpAttrs(qpn, 0, state.value(), state.value(), access, qkey & 0xFFFFFFFFL,
                Integer.numberOfTrailingZeros(mtu) - 7, destQpn, epsn & 0xFFFFFF, nextPsn & 0xFFFFFF, dlid, timeout, retryCnt, rnrRetry,
                minRnrTimer, maxRdAtomic, maxDestRdAtomic, port, pkeyIndex, draining && !outstanding.isEmpty() ? 1 : 0);
    }

    private void reset() {
        generation++;
        state = QpState.RESET;
        pending.clear();
        outstanding.clear();
        rx.clear();
        cancelTimer();
        cur = null;
        rxBusy = false;
        rnrWaiting = false;
        readsOutstanding = 0;
        rq.reset();
        msn = 0;
        commEst = false;
        nakSent = false;
        atomicReplay.clear();
        readsInProgress = 0;
        deferredAcks.clear();
        writesInFlight = 0;
        unissued.clear();
        afterIssued.clear();
        draining = false;
        fw.sqReset(this);
    }

    void destroy() {
        generation++;
        cancelTimer();
    }

    /** Moves to ERR: every queued and unfinished send WQE and every posted receive completes WR_FLUSH_ERR, in order. */
    void toError() {
        if (state == QpState.ERR) return;
        state = QpState.ERR;
        cancelTimer();
        cur = null;
        rx.clear();
        flushSq();
        flushRq();
    }

    /** UD/UC requester errors stop only the send queue (SQE); its WQEs flush, receives continue. */
    private void toSqError() {
        state = QpState.SQE;
        cancelTimer();
        flushSq();
    }

    private void flushSq() {
        retire();
        while (!outstanding.isEmpty()) flush(outstanding.poll());
        while (!pending.isEmpty()) flush(pending.poll());
        readsOutstanding = 0;
    }

    private void flush(SendOp op) {
        fw.counters.counter("Firmware.flushed").inc();
        fw.complete(scq, Cqe64.error(true, qpn, op.index, op.opcode, Cqe64.SYNDROME_WR_FLUSH_ERR, Vendor.FLUSHED, 0, 0, 0), false);
    }

    private void flushRq() {
        if (srq != null) { // an SRQ's WQEs belong to other QPs too: nothing is flushed, the QP hears its last WQE went
            fw.event(EventType.QP_LAST_WQE_REACHED, qpn);
            return;
        }
        long gen = generation;
        rq.readProducer(() -> {
            if (gen != generation || state != QpState.ERR) return;
            for (int index : rq.drain()) {
                fw.counters.counter("Firmware.flushed").inc();
                fw.complete(rcq, Cqe64.error(false, qpn, index, 0, Cqe64.SYNDROME_WR_FLUSH_ERR, Vendor.FLUSHED, 0, 0, 0), false);
            }
        });
    }

    void onDoorbell() {
        if (state == QpState.ERR && srq == null) flushRq();
    }

    private void checkDrained() {
        if (state == QpState.SQD && draining && outstanding.isEmpty()) {
            draining = false;
            if (sqdNotify) fw.event(EventType.SQ_DRAINED, qpn);
        }
    }

    // ------------------------------------------------------------------ requester

    /** Nothing of this send queue is in the fetcher: every WQEBB announced has been delivered. */
    boolean sqIdle() { return sqDelivered == sqProducerSeen; }

    /** Searches the WQEBBs before {@code end} for the next WQE (-1: stops searching). */
    void skipUpTo(int end) { sqSkipEnd = end; }

    /** Whether WQEBB {@code index}, refused by the fetcher, lies in the search after a refused WQE: it is not a WQE. */
    boolean skipping(int index) {
        int left = (sqSkipEnd - index) & 0xFFFF;
        return sqSkipEnd >= 0 && left != 0 && left < 0x8000;
    }

    void onWqe(int index, byte[] bytes) {
        sqDelivered = (index + bytes.length / WqeLayout.WQEBB) & 0xFFFF;
        sqSkipEnd = -1; // a WQE boundary again
        if (sqIdle()) fw.tryLoad(fw.sqSlot(qpn));
        int opcode = bytes[3] & 0xff;
        SendWqe w;
        try {
            w = WqeFormat.decode(bytes, type == QpType.UD);
        } catch (WqeFormat.Malformed m) {
            fw.adapter.report("malformed WQE " + index + " of QP 0x" + Long.toHexString(qpn) + ": " + m.getMessage());
            localError(index, opcode, Cqe64.SYNDROME_LOC_QP_OP_ERR, Vendor.SEGMENTS, 0, 0);
            return;
        }
        long length = w.inline() != null ? w.inline().length : w.sges().stream().mapToLong(s -> s.length() & 0xFFFFFFFFL).sum();
        SendOp op = new SendOp(index, w, length);
        switch (state) {
            case ERR, SQE -> { flush(op); return; }
            case RESET, INIT, RTR -> {
                fw.adapter.report(String.format("WQE %d for QP 0x%x in %s: not executed", index, qpn, state));
                complete(op, Cqe64.error(true, qpn, index, opcode, Cqe64.SYNDROME_LOC_QP_OP_ERR, Vendor.QP_NOT_READY, 0, 0, 0));
                return;
            }
            default -> {}
        }
        pending.add(op);
        pump();
    }

    /** The fetcher or the decoder refused a WQE; it completes in error and the send queue stops. */
    void localError(int index, int opcode, int syndrome, int vendor, long addr, int key) {
        if (state == QpState.ERR || state == QpState.SQE) {
            flush(new SendOp(index, new SendWqe(opcode, index, qpn, 0, 0, null, 0, 0, 0, 0, List.of(), null), 0));
            return;
        }
        retire();
        fw.complete(scq, Cqe64.error(true, qpn, index, opcode, syndrome, vendor, addr, key, 0), false);
        if (QpTransitions.afterSendError(type) == QpState.ERR) toError(); else toSqError();
    }

    private void pump() {
        while (!pending.isEmpty() && state == QpState.RTS) { // SQD starts no new WQEs
            SendOp op = pending.peek();
            if ((op.w.fenced() || op.opcode == WqeLayout.OP_LOCAL_INVAL) && readsOutstanding > 0) return; // LOCAL_INV is always fenced
            if (op.readOrAtomic() && readsOutstanding >= Math.max(1, maxRdAtomic)) return;
            if (!outstanding.isEmpty() && Firmware.psnDiff(nextPsn, outstanding.peek().firstPsn) >= WINDOW_PSNS) return;
            pending.poll();
            start(op);
        }
    }

    private void start(SendOp op) {
        int o = op.opcode;
        outstanding.add(op);
        if (o == WqeLayout.OP_NOP) {
            op.ready = op.transmitted = op.done = true;
            retire();
            return;
        }
        if (!WqeLayout.allowedOn(type, o)) { requesterError(op, Cqe64.SYNDROME_LOC_QP_OP_ERR, Vendor.OPCODE_FOR_QP_TYPE, 0, 0, 0); return; }
        if (o == WqeLayout.OP_UMR || o == WqeLayout.OP_LOCAL_INVAL) {
            // local operations on the mkey table: done when executed, completed in order
            long gen = generation;
            fw.exec(fw.wqeCycles, () -> {
                if (gen != generation || state != QpState.RTS && state != QpState.SQD) return;
                int bad = o == WqeLayout.OP_UMR
                        ? fw.bindWindow(this, op.w.rkey() & 0xFFFFFFFFL, op.w.compare() >>> 32, op.w.remoteAddr(), op.w.swapAdd(), (int) op.w.compare())
                        : fw.invalidate(this, op.w.imm() & 0xFFFFFFFFL);
                if (bad != 0) {
                    requesterError(op, o == WqeLayout.OP_UMR ? Cqe64.SYNDROME_MW_BIND_ERR : Cqe64.SYNDROME_LOC_QP_OP_ERR, bad, op.w.remoteAddr(),
                            o == WqeLayout.OP_UMR ? op.w.rkey() : op.w.imm(), 0);
                    return;
                }
                op.ready = op.transmitted = op.done = true;
                retire();
            });
            return;
        }
        if (op.length > fw.maxMsg) { requesterError(op, Cqe64.SYNDROME_LOC_LEN_ERR, Vendor.MESSAGE_TOO_LONG, 0, 0, 0); return; }
        if (op.readOrAtomic()) readsOutstanding++;
        // PSNs in WQE order
        int npkts = o == WqeLayout.OP_RDMA_READ ? (int) Math.max(1, (op.length + mtu - 1) / mtu)
                : op.readOrAtomic() ? 1 : (int) Math.max(1, (op.length + mtu - 1) / mtu);
        op.firstPsn = nextPsn;
        op.respPsn = nextPsn;
        op.lastPsn = (nextPsn + npkts - 1) & 0xFFFFFF;
        if (type != QpType.UD) nextPsn = (nextPsn + npkts) & 0xFFFFFF;
        long gen = generation;
        fw.exec(fw.wqeCycles, () -> {
            if (gen != generation) return;
            if (o == WqeLayout.OP_RDMA_READ || op.readOrAtomic()) { op.payload = new byte[0]; build(op); return; }
            if (op.w.inline() != null) { op.payload = op.w.inline(); build(op); return; }
            if (type != QpType.UD) { stream(op, gen); return; }
            gather(op.w.sges(), op.index, (data, fail) -> {
                if (gen != generation || state == QpState.ERR || state == QpState.SQE) return;
                if (fail != null) { requesterError(op, Cqe64.SYNDROME_LOC_PROT_ERR, fail.vendor, fail.addr, fail.key, 0); return; }
                op.payload = data;
                fw.adapter.traceWqe(qpn, op.index, "payload_read", data.length + " B by DMA");
                build(op);
            });
        });
    }

    private void build(SendOp op) {
        int o = op.opcode;
        if (type == QpType.UD) {
            if (op.payload.length > mtu) {
                // C10-93.1.1: a UD message longer than the path MTU completes without being sent
                fw.counters.counter("Firmware.ud_too_long").inc();
                op.ready = op.transmitted = op.done = true;
                retire();
                return;
            }
            boolean imm = o == WqeLayout.OP_SEND_IMM;
            op.packets.add(new Packet(fw.lid(), op.w.av().rlid(), imm ? Op.SEND_ONLY_IMM : Op.SEND_ONLY, op.w.av().remoteQpn(), qpn,
                    op.firstPsn, false, op.w.solicited(), 0, 0, 0, 0, 0, 0, 0, 0, op.w.imm(), op.w.av().qkey() == 0 ? 1 : op.w.av().qkey(),
                    op.payload, Packet.UD));
        } else if (o == WqeLayout.OP_RDMA_READ) {
            op.packets.add(request(Op.READ_REQ, op.firstPsn, true, op.w.remoteAddr(), op.w.rkey(), op.length, 0, 0, 0, new byte[0]));
        } else if (op.readOrAtomic()) {
            op.packets.add(request(o == WqeLayout.OP_ATOMIC_CS ? Op.CMP_SWAP : Op.FETCH_ADD, op.firstPsn, true, op.w.remoteAddr(),
                    op.w.rkey(), 8, op.w.swapAdd(), op.w.compare(), 0, new byte[0]));
        } else {
            int n = (int) Math.max(1, (op.payload.length + mtu - 1) / mtu);
            for (int i = 0; i < n; i++) op.packets.add(packetOf(op, i, n));
        }
        op.ready = true;
        transmit();
    }

    /** Packet {@code i} of the {@code n} of a SEND or WRITE, its bytes taken from the op's payload. */
    private Packet packetOf(SendOp op, int i, int n) {
        int o = op.opcode;
        boolean write = o == WqeLayout.OP_RDMA_WRITE || o == WqeLayout.OP_RDMA_WRITE_IMM;
        boolean imm = o == WqeLayout.OP_RDMA_WRITE_IMM || o == WqeLayout.OP_SEND_IMM;
        boolean inv = o == WqeLayout.OP_SEND_INVAL;
        Op po;
        if (n == 1) po = write ? (imm ? Op.WRITE_ONLY_IMM : Op.WRITE_ONLY) : inv ? Op.SEND_ONLY_INV : (imm ? Op.SEND_ONLY_IMM : Op.SEND_ONLY);
        else if (i == 0) po = write ? Op.WRITE_FIRST : Op.SEND_FIRST;
        else if (i < n - 1) po = write ? Op.WRITE_MIDDLE : Op.SEND_MIDDLE;
        else po = write ? (imm ? Op.WRITE_LAST_IMM : Op.WRITE_LAST) : inv ? Op.SEND_LAST_INV : (imm ? Op.SEND_LAST_IMM : Op.SEND_LAST);
        byte[] chunk = java.util.Arrays.copyOfRange(op.payload, i * mtu, Math.min(op.payload.length, (i + 1) * mtu));
        boolean ackReq = type == QpType.RC && (i == n - 1 || (i + 1) % fw.ackCoalesce == 0);
        return request(po, (op.firstPsn + i) & 0xFFFFFF, ackReq, i == 0 ? op.w.remoteAddr() : 0, i == 0 ? op.w.rkey() : 0,
                i == 0 ? op.payload.length : 0, 0, 0, po.hasImm() || inv && i == n - 1 ? op.w.imm() : 0, chunk)
                .withSolicited(i == n - 1 && op.w.solicited());
    }

    /**
     * Streams a SEND or WRITE's payload to the link packet by packet, as a control program does: the
     * SGEs are translated; the adapter reads each packet's bytes into SRAM, the firmware builds its
     * headers, and the send engine streams the bytes out ({@link nicsim.adapter.DmaPath#readOut}).
     * With {@code link.transmit} "cut-through" the packet goes on the wire as its first beat leaves
     * the engine; with "store-and-forward", once all of it is out.
     */
    private void stream(SendOp op, long gen) {
        op.payload = new byte[(int) op.length];
        op.streaming = true;
        op.npkts = (int) Math.max(1, (op.length + mtu - 1) / mtu);
        op.ready = true;
        translateAll(op.w.sges(), op.index, (pieces, fail) -> {
            if (gen != generation || state == QpState.ERR || state == QpState.SQE) return;
            if (fail != null) { requesterError(op, Cqe64.SYNDROME_LOC_PROT_ERR, fail.vendor, fail.addr, fail.key, 0); return; }
            int[] left = {op.npkts};
            int i = 0; // the first piece not wholly before the packet, found in one pass over the message
            long at = 0; // its offset in the message
            for (int k = 0; k < op.npkts; k++) {
                long from = (long) k * mtu, to = Math.min(op.length, from + mtu);
                while (i < pieces.size() && at + pieces.get(i).length() <= from) at += pieces.get(i++).length();
                List<nicsim.adapter.DmaPath.Range> ranges = new ArrayList<>();
                long pos = at;
                for (int j = i; j < pieces.size() && pos < to; pos += pieces.get(j++).length()) {
                    Piece p = pieces.get(j);
                    long lo = Math.max(from, pos), hi = Math.min(to, pos + p.length());
                    if (lo < hi) ranges.add(new nicsim.adapter.DmaPath.Range(p.pa() + (lo - pos), (int) (hi - lo)));
                }
                streamPacket(op, gen, k, ranges, i < pieces.size() ? pieces.get(i).sge() : null, left);
            }
        });
    }

    /** Packet {@code k} of a streamed op, from host {@code ranges}: its bytes into SRAM, its header cycles, then out to the link. */
    private void streamPacket(SendOp op, long gen, int k, List<nicsim.adapter.DmaPath.Range> ranges, Sge sge, int[] left) {
        long from = (long) k * mtu;
        fw.adapter.dma().readOut(ranges, go -> fw.exec(fw.packetCycles, go), (bytes, feed) -> {
            if (gen != generation) return;
            System.arraycopy(bytes, 0, op.payload, (int) from, bytes.length);
            if (fw.cutThroughTx) { op.heads.put(k, feed); transmit(); }
        }, out -> {
            if (gen != generation || state == QpState.ERR || state == QpState.SQE) return;
            if (out == null) { requesterError(op, Cqe64.SYNDROME_LOC_PROT_ERR, Vendor.DMA_FAILED, sge.addr(), sge.lkey(), 0); return; }
            fw.counters.counter("Firmware.dma_read_bytes").add(out.length);
            if (!fw.cutThroughTx) { op.heads.put(k, 0L); transmit(); }
            if (--left[0] == 0) fw.adapter.traceWqe(qpn, op.index, "payload_read", op.length + " B by DMA");
        });
    }

    /** A translated stretch of a message: {@code length} bytes at host address {@code pa}, from {@code sge} (null: under an rkey). */
    private record Piece(long pa, long length, Sge sge) {}

    /** Translates every SGE under its lkey; {@code done} gets the message's pieces in order, or the first failure. */
    private void translateAll(List<Sge> sges, int traceIndex, java.util.function.BiConsumer<List<Piece>, Failure> done) {
        List<List<XlateRsp>> got = new ArrayList<>(java.util.Collections.nCopies(sges.size(), (List<XlateRsp>) null));
        int[] left = {sges.size()};
        boolean[] over = {false};
        long gen = generation;
        Runnable finish = () -> {
            List<Piece> pieces = new ArrayList<>();
            for (int i = 0; i < sges.size(); i++)
                if (got.get(i) != null) for (XlateRsp c : got.get(i)) pieces.add(new Piece(c.pa(), c.length(), sges.get(i)));
            if (traceIndex >= 0 && !pieces.isEmpty()) fw.adapter.traceWqe(qpn, traceIndex, "translated", pieces.size() + " page chunk(s)");
            done.accept(pieces, null);
        };
        if (sges.isEmpty()) { finish.run(); return; }
        for (int i = 0; i < sges.size(); i++) {
            Sge s = sges.get(i);
            int n = i;
            if (s.length() == 0) { if (--left[0] == 0) finish.run(); continue; }
            fw.translate(s.lkey() & 0xFFFFFFFFL, s.addr(), s.length() & 0xFFFFFFFFL, 0, pd, qpn, rsp -> {
                if (gen != generation || over[0]) return;
                XlateRsp bad = failed(rsp);
                if (bad != null) {
                    over[0] = true;
                    done.accept(null, new Failure(Vendor.LOCAL_XLATE + (int) bad.status(), s.addr(), s.lkey()));
                    return;
                }
                got.set(n, rsp);
                if (--left[0] == 0) finish.run();
            });
        }
    }

    private Packet request(Op op, int psn, boolean ackReq, long va, int rkey, long len, long swap, long cmp, int imm, byte[] payload) {
        return new Packet(fw.lid(), dlid, op, destQpn, qpn, psn, ackReq, false, op.hasReth() || op.isAtomic() ? va : 0,
                op.hasReth() || op.isAtomic() ? rkey : 0, op.hasReth() ? len : 0, swap, cmp, 0, 0, 0, imm, 0, payload, transport());
    }

    /** Sends the packets of ready WQEs, in PSN order. */
    private void transmit() {
        for (SendOp op : outstanding) {
            if (op.transmitted) continue;
            if (!op.ready) return;
            if (op.streaming) {
                // each packet's header cycles were spent before its bytes left SRAM: it goes now, in PSN order
                while (op.sent < op.npkts && op.heads.containsKey(op.sent)) {
                    Packet p = packetOf(op, op.sent, op.npkts);
                    op.packets.add(p);
                    put(p, op.heads.remove(op.sent), op, op.sent == op.npkts - 1);
                    op.sent++;
                }
                if (op.sent < op.npkts) return; // later messages wait: PSN order
            } else sendPackets(op.packets, op, true);
            op.transmitted = true;
        }
    }

    private void sendPackets(List<Packet> packets, SendOp op, boolean endsMessage) {
        long gen = generation;
        for (int i = 0; i < packets.size(); i++) {
            Packet p = packets.get(i);
            boolean lastOne = endsMessage && i == packets.size() - 1;
            fw.exec(fw.packetCycles, () -> {
                if (gen == generation) put(p, 0, op, lastOne);
            });
        }
    }

    /** Puts a packet of {@code op} on the wire, its bytes fed in {@code feed} ps. */
    private void put(Packet p, long feed, SendOp op, boolean lastOne) {
        if (state == QpState.ERR || (state == QpState.SQE && type != QpType.RC)) return;
        fw.send(p, feed);
        if (!op.onWire) {
            op.onWire = true;
            fw.adapter.traceMessageOut(qpn, op.index, fw.lid(), p.psn(), p.op() + " psn " + p.psn());
        }
        if (type == QpType.RC) armTimer();
        else if (lastOne) {
            op.done = true;
            retire();
        }
    }

    /** Completes finished WQEs in order (a CQE for signaled ones), then starts more. */
    private void retire() {
        while (!outstanding.isEmpty() && outstanding.peek().done) {
            SendOp op = outstanding.poll();
            if (op.readOrAtomic()) readsOutstanding--;
            if (type == QpType.RC) fw.adapter.traceWqe(qpn, op.index, "acked", "psn " + op.lastPsn);
            if (op.w.signaled() || sqSigAll)
                complete(op, Cqe64.requester(qpn, op.index, op.opcode, op.readOrAtomic() && op.opcode != WqeLayout.OP_RDMA_READ ? 8 : op.length));
        }
        if (outstanding.isEmpty()) cancelTimer();
        checkDrained();
        pump();
    }

    private void complete(SendOp op, long[] cqe) { fw.complete(scq, cqe, false); }

    private void requesterError(SendOp op, int syndrome, int vendor, long addr, int key, int psn) {
        // an earlier READ or atomic whose answer is in but still being written locally completes first
        for (SendOp b : outstanding) {
            if (b == op || Firmware.psnDiff(b.firstPsn, op.firstPsn) >= 0) break;
            if (b.answered && !b.done) {
                long gen = generation;
                fw.sim.scheduleIn(fw.core.cyclesToPicos(8), () -> {
                    if (gen == generation && state != QpState.ERR && outstanding.contains(op)) requesterError(op, syndrome, vendor, addr, key, psn);
                });
                return;
            }
        }
        // WQEs before it that finished complete first; the failed one gets its error CQE; the rest flush
        outstanding.remove(op);
        if (op.readOrAtomic() && readsOutstanding > 0) readsOutstanding--;
        retire();
        List<SendOp> before = new ArrayList<>();
        while (!outstanding.isEmpty() && Firmware.psnDiff(outstanding.peek().firstPsn, op.firstPsn) < 0) before.add(outstanding.poll());
        for (SendOp b : before) flush(b);
        fw.counters.counter("Firmware.requester_errors").inc();
        fw.complete(scq, Cqe64.error(true, qpn, op.index, op.opcode, syndrome, vendor, addr, key, psn), false);
        if (QpTransitions.afterSendError(type) == QpState.ERR) toError(); else toSqError();
    }

    /**
     * Starts the retransmit timer if it is not running. An ACK restarts it, many times a round trip,
     * so the timer keeps one pending event that, when it comes early, moves itself to the newest
     * expiry instead of each restart scheduling an event and cancelling the last one.
     */
    private void armTimer() {
        if (timerDue >= 0 || timeout == 0 || outstanding.isEmpty()) return;
        timerDue = fw.sim.now() + (4_096_000L << timeout);
        if (timer != null && timer.time() > timerDue) { timer.cancel(); timer = null; } // a shorter timeout since
        if (timer == null) checkTimerAt(timerDue);
    }

    private void checkTimerAt(long at) {
        timer = fw.sim.schedule(at, () -> {
            timer = null;
            if (timerDue < 0) return;
            if (fw.sim.now() < timerDue) { checkTimerAt(timerDue); return; }
            timerDue = -1;
            if (!rnrWaiting) onTimeout();
        });
    }

    private void restartTimer() {
        cancelTimer();
        armTimer();
    }

    private void cancelTimer() { timerDue = -1; }

    private SendOp oldestUndone() {
        for (SendOp op : outstanding) if (!op.done) return op;
        return null;
    }

    private void onTimeout() {
        SendOp op = oldestUndone();
        if (op == null || state == QpState.ERR) return;
        fw.counters.counter("Firmware.timeouts").inc();
        if (retriesLeft == 0) {
            requesterError(op, Cqe64.SYNDROME_RETRY_EXC_ERR, Vendor.RETRY_EXCEEDED, 0, 0, op.respPsn);
            return;
        }
        retriesLeft--;
        goBack(op.respPsn);
    }

    /** Retransmits everything from {@code psn} on (go-back-N); a READ resumes where its responses stopped. */
    private void goBack(int psn) {
        fw.counters.counter("Firmware.retransmits").inc();
        for (SendOp op : outstanding) {
            if (op.done || op.packets.isEmpty() || Firmware.psnDiff(op.lastPsn, psn) < 0) continue;
            List<Packet> again = new ArrayList<>();
            if (op.opcode == WqeLayout.OP_RDMA_READ) {
                int from = Firmware.psnDiff(op.respPsn, op.firstPsn);
                long off = (long) from * mtu;
                again.add(request(Op.READ_REQ, op.respPsn, true, op.w.remoteAddr() + off, op.w.rkey(), op.length - off, 0, 0, 0, new byte[0]));
            } else {
                for (Packet p : op.packets) if (Firmware.psnDiff(p.psn(), psn) >= 0) again.add(p);
            }
            sendPackets(again, op, false);
        }
        restartTimer();
    }

    private void onAck(Packet p) {
        if (type != QpType.RC || state == QpState.ERR || state == QpState.RESET) return;
        int syn = p.aeth();
        int kind = syn & 0xE0;
        if (p.op() == Op.ACK && kind == Packet.AETH_RNR) {
            SendOp op = opAt(p.psn());
            if (op == null) return;
            ackBefore(p.psn());
            fw.counters.counter("Firmware.rnr_naks").inc();
            if (rnrLeft == 0) { requesterError(op, Cqe64.SYNDROME_RNR_RETRY_EXC_ERR, Vendor.RNR_RETRY_EXCEEDED, 0, 0, p.psn()); return; }
            if (rnrRetry != 7) rnrLeft--;
            cancelTimer();
            rnrWaiting = true;
            long gen = generation;
            fw.sim.scheduleIn(RNR_US[syn & 0x1f] * 1_000_000L, () -> {
                if (gen != generation || state == QpState.ERR) return;
                rnrWaiting = false;
                goBack(p.psn());
            });
            return;
        }
        if (p.op() == Op.ACK && kind == 0x60) {
            SendOp op = opAt(p.psn());
            int code = syn & 0x1f;
            ackBefore(p.psn());
            if (op == null) return;
            if (code == 0) { // PSN sequence error: go back to the PSN the responder expects
                fw.counters.counter("Firmware.psn_naks").inc();
                if (retriesLeft == 0) { requesterError(op, Cqe64.SYNDROME_RETRY_EXC_ERR, Vendor.RETRY_EXCEEDED, 0, 0, p.psn()); return; }
                retriesLeft--;
                goBack(p.psn());
                return;
            }
            int synd = code == 1 ? Cqe64.SYNDROME_REM_INV_REQ_ERR : code == 2 ? Cqe64.SYNDROME_REM_ACCESS_ERR : Cqe64.SYNDROME_REM_OP_ERR;
            int vendor = code == 1 ? Vendor.NAK_INVALID_REQUEST : code == 2 ? Vendor.NAK_REMOTE_ACCESS : Vendor.NAK_REMOTE_OP;
            requesterError(op, synd, vendor, op.w.remoteAddr(), op.w.rkey(), p.psn());
            return;
        }
        if (p.op() == Op.ATOMIC_ACK) {
            SendOp op = opAt(p.psn());
            if (op == null || op.done || !op.readOrAtomic() || op.opcode == WqeLayout.OP_RDMA_READ) return;
            ackBefore(p.psn());
            op.answered = true;
            byte[] orig = new byte[8];
            BigEndian.put64(orig, 0, p.atomicOrig());
            scatterLocal(op, 0, p.withPayload(orig).arriving(null), true); // the original value is in the headers: all in
            return;
        }
        // a plain ACK: everything up to its PSN that is not waiting for read data is done
        ackThrough(p.psn());
    }

    private SendOp opAt(int psn) {
        for (SendOp op : outstanding)
            if (Firmware.psnDiff(psn, op.firstPsn) >= 0 && Firmware.psnDiff(psn, op.lastPsn) <= 0) return op;
        return null;
    }

    /** Ops wholly before {@code psn} are acknowledged (an ACK, NAK or response for a later PSN implies it). */
    private void ackBefore(int psn) { ackThrough((psn - 1) & 0xFFFFFF); }

    private void ackThrough(int psn) {
        // progress is any PSN newly acknowledged, even inside a long message: it renews the retry budget
        boolean progress = Firmware.psnDiff(psn, ackedPsn) > 0 && Firmware.psnDiff(psn, nextPsn) < 0;
        if (progress) ackedPsn = psn;
        for (SendOp op : outstanding) {
            if (Firmware.psnDiff(op.lastPsn, psn) > 0) break;
            if (op.readOrAtomic()) { if (!op.done) break; continue; }
            if (!op.done) { op.done = true; progress = true; }
        }
        if (progress) {
            retriesLeft = retryCnt;
            rnrLeft = rnrRetry;
            retire();
            restartTimer();
        }
    }

    private void onReadResponse(Packet p) {
        if (type != QpType.RC || state == QpState.ERR || state == QpState.RESET) return;
        SendOp op = opAt(p.psn());
        if (op == null || op.opcode != WqeLayout.OP_RDMA_READ || op.done || p.psn() != op.respPsn) {
            fw.counters.counter("Firmware.read_responses_ignored").inc();
            return;
        }
        ackBefore(op.firstPsn);
        long off = (long) Firmware.psnDiff(p.psn(), op.firstPsn) * mtu;
        op.respPsn = (op.respPsn + 1) & 0xFFFFFF;
        boolean last = p.op() == Op.READ_RESP_LAST || p.op() == Op.READ_RESP_ONLY;
        retriesLeft = retryCnt;
        restartTimer();
        if (last) op.answered = true;
        scatterLocal(op, off, p, last);
    }

    /** Writes response data into {@code op}'s local SGEs; the {@code last} response's then finishes it. */
    private void scatterLocal(SendOp op, long off, Packet p, boolean last) {
        long gen = generation;
        scatter(op.w.sges(), off, p.payload(), p.arrival(), MttPorts.LOCAL_WRITE, fail -> {
            if (gen != generation || state == QpState.ERR || fail == null) return;
            requesterError(op, Cqe64.SYNDROME_LOC_PROT_ERR, fail.vendor, fail.addr, fail.key, 0);
        }, () -> {
            if (gen != generation || state == QpState.ERR || !last) return;
            op.done = true;
            retire();
        });
    }

    // ------------------------------------------------------------------ responder

    /** This QP's service as the BTH opcode names it. */
    private int transport() { return type == QpType.RC ? Packet.RC : type == QpType.UC ? Packet.UC : Packet.UD; }

    void onPacket(Packet p) {
        if (p.op().isAck()) { onAck(p); return; }
        if (p.op().isReadResponse()) { onReadResponse(p); return; }
        if (state != QpState.RTR && state != QpState.RTS && state != QpState.SQD && state != QpState.SQE) {
            fw.counters.counter("Firmware.packets_dropped_state").inc();
            return;
        }
        // docs/sources.md#responder-discards: a packet of another service, or (connected QPs) from a port other than the
        // QP's destination, is dropped without touching the QP
        if (p.transport() != transport()) { fw.counters.counter("Firmware.packets_dropped_type").inc(); return; }
        if (type != QpType.UD && p.slid() != dlid) { fw.counters.counter("Firmware.packets_dropped_path").inc(); return; }
        if (p.op().starts()) fw.adapter.traceMessageIn(p.slid(), p.srcQp(), p.psn(), p.op() + " psn " + p.psn());
        rx.add(p);
        processRx();
    }

    private void processRx() {
        if (rxBusy || rx.isEmpty()) return;
        rxBusy = true;
        Packet p = rx.poll();
        long gen = generation;
        fw.exec(fw.packetCycles, () -> {
            if (gen != generation) return;
            handle(p, () -> {
                if (gen != generation) return;
                rxBusy = false;
                processRx();
            });
        });
    }

    private void handle(Packet p, Runnable next) {
        if (state == QpState.ERR || state == QpState.RESET || state == QpState.INIT) { next.run(); return; }
        if (type == QpType.UD) { handleUd(p, next); return; }
        int d = Firmware.psnDiff(p.psn(), epsn);
        if (d > 0) {
            fw.counters.counter("Firmware.psn_gaps").inc();
            if (type == QpType.RC) {
                if (!nakSent) { nakSent = true; ack(Op.ACK, epsn, Packet.AETH_NAK_PSN, 0); }
                next.run();
                return;
            }
            // UC: the message in progress is lost; resynchronise on a packet that starts one
            cur = null;
            if (!p.op().starts()) { next.run(); return; }
            epsn = p.psn();
        } else if (d < 0) {
            fw.counters.counter("Firmware.duplicates").inc();
            if (type == QpType.RC) duplicate(p, next); else next.run();
            return;
        }
        nakSent = false;
        if (state == QpState.RTR && !commEst) {
            commEst = true;
            fw.event(EventType.COMM_EST, qpn);
        }
        // opcode sequence
        if ((cur != null) == p.op().starts() || (cur != null && cur.send != p.op().isSend())) {
            if (type == QpType.UC) { cur = null; if (!p.op().starts()) { next.run(); return; } }
            else { responderError(p, Packet.AETH_NAK_INVALID, EventType.QP_REQ_ERR, null, 0, Vendor.OPCODE_SEQUENCE); next.run(); return; }
        }
        Op o = p.op();
        int need = o.isWrite() ? AccessFlags.REMOTE_WRITE : o == Op.READ_REQ ? AccessFlags.REMOTE_READ : o.isAtomic() ? AccessFlags.REMOTE_ATOMIC : 0;
        if ((access & need) != need) {
            responderError(p, Packet.AETH_NAK_INVALID, EventType.QP_REQ_ERR, null, 0, Vendor.QP_ACCESS_DENIES);
            next.run();
            return;
        }
        if (o.isSend()) handleSend(p, next);
        else if (o.isWrite()) handleWrite(p, next);
        else if (o == Op.READ_REQ) handleRead(p, next, true);
        else handleAtomic(p, next);
    }

    private void handleUd(Packet p, Runnable next) {
        if (p.qkey() != qkey) { fw.counters.counter("Firmware.qkey_mismatch").inc(); next.run(); return; }
        long gen = generation;
        takeRecvWqe(w -> {
            if (gen != generation) return;
            if (w == null) { fw.counters.counter("Firmware.ud_no_receive").inc(); next.run(); return; }
            long len = p.payload().length + 40L; // the first 40 bytes hold the GRH (absent on IB: left untouched)
            if (len > w.capacity()) { // UD: too long for the buffer: dropped, no error (docs/sources.md#responder-errors *1)
                fw.counters.counter("Firmware.ud_too_long_for_receive").inc();
                untakeRecvWqe(w); // the WQE is not consumed
                next.run();
                return;
            }
            scatter(w.sges(), 40, p.payload(), p.arrival(), MttPorts.LOCAL_WRITE, fail -> {
                if (gen != generation) return;
                if (fail != null)
                    fw.complete(rcq, Cqe64.error(false, qpn, w.index(), 0, Cqe64.SYNDROME_LOC_PROT_ERR, fail.vendor, fail.addr, fail.key, p.psn()), false);
                next.run();
            }, () -> {
                if (gen != generation) return;
                fw.complete(rcq, Cqe64.responder(qpn, w.index(), p.op().hasImm() ? Cqe64.RESP_SEND_IMM : Cqe64.RESP_SEND, len, p.imm(),
                        p.srcQp(), p.slid(), p.solicited()), p.solicited());
            });
        });
    }

    private void handleSend(Packet p, Runnable next) {
        long gen = generation;
        Consumer<RecvRing.Wqe> go = w -> {
            if (gen != generation) return;
            if (w == null) {
                if (type == QpType.RC) { ack(Op.ACK, p.psn(), Packet.AETH_RNR | minRnrTimer, 0); fw.counters.counter("Firmware.rnr_sent").inc(); }
                else fw.counters.counter("Firmware.uc_no_receive").inc();
                next.run();
                return;
            }
            if (cur == null) { cur = new InMsg(true); cur.wqe = w; }
            InMsg m = cur;
            if (type != QpType.UD && m.offset + p.payload().length > fw.maxMsg) { // docs/sources.md#responder-errors: LOC_LEN_ERR here, REM_INV_REQ_ERR there
                responderError(p, Packet.AETH_NAK_INVALID, null, w, Cqe64.SYNDROME_LOC_LEN_ERR, Vendor.MESSAGE_TOO_LONG);
                next.run();
                return;
            }
            if (m.offset + p.payload().length > w.capacity()) {
                responderError(p, Packet.AETH_NAK_INVALID, null, w, Cqe64.SYNDROME_LOC_LEN_ERR, Vendor.RECV_TOO_SMALL);
                next.run();
                return;
            }
            long off = m.offset;
            m.offset += p.payload().length;
            epsn = (epsn + 1) & 0xFFFFFF;
            Runnable[] complete = {null}; // the last packet's completion, once its writes and those before it have left
            scatter(w.sges(), off, p.payload(), p.arrival(), MttPorts.LOCAL_WRITE, fail -> {
                if (gen != generation) return;
                if (fail != null) {
                    epsn = (epsn - 1) & 0xFFFFFF;
                    responderError(p, Packet.AETH_NAK_OP, null, w, Cqe64.SYNDROME_LOC_PROT_ERR, fail.vendor);
                    next.run();
                    return;
                }
                if (p.op().last()) {
                    boolean inv = p.op() == Op.SEND_LAST_INV || p.op() == Op.SEND_ONLY_INV;
                    if (inv) {
                        int bad = fw.invalidate(this, p.imm() & 0xFFFFFFFFL);
                        if (bad != 0) { // class J: the responder completes REM_INV_REQ_ERR, the requester hears NAK invalid request
                            epsn = (epsn - 1) & 0xFFFFFF;
                            responderError(p, Packet.AETH_NAK_INVALID, null, w, Cqe64.SYNDROME_REM_INV_REQ_ERR, bad);
                            next.run();
                            return;
                        }
                    }
                    cur = null;
                    msn = (msn + 1) & 0xFFFFFF;
                    long[] cqe = Cqe64.responder(qpn, w.index(), inv ? Cqe64.RESP_SEND_INV : p.op().hasImm() ? Cqe64.RESP_SEND_IMM
                            : Cqe64.RESP_SEND, m.offset, p.imm(), p.srcQp(), p.slid(), p.solicited());
                    complete[0] = () -> fw.complete(rcq, cqe, p.solicited());
                }
                if (p.ackReq()) ack(Op.ACK, p.psn(), Packet.AETH_ACK, 0);
                next.run();
            }, () -> {
                if (gen == generation && complete[0] != null) complete[0].run();
            });
        };
        if (cur != null) go.accept(cur.wqe);
        else takeRecvWqe(go);
    }

    private void handleWrite(Packet p, Runnable next) {
        long gen = generation;
        Runnable body = () -> {
            InMsg m = cur;
            if (m.offset + p.payload().length > m.dmaLength) {
                responderError(p, Packet.AETH_NAK_INVALID, EventType.QP_REQ_ERR, null, 0, Vendor.MESSAGE_TOO_LONG);
                next.run();
                return;
            }
            long off = m.offset;
            m.offset += p.payload().length;
            Runnable after = () -> {
                epsn = (epsn + 1) & 0xFFFFFF;
                if (p.op().last()) {
                    cur = null;
                    msn = (msn + 1) & 0xFFFFFF;
                }
                if (p.ackReq()) ack(Op.ACK, p.psn(), Packet.AETH_ACK, 0);
                next.run();
            };
            long seq = payloadArrived();
            writeChunks(m.target, off, p.payload(), p.arrival(), () -> payloadIssued(seq));
            if (p.op().hasImm()) {
                takeRecvWqe(w -> {
                    if (gen != generation) return;
                    if (w == null) {
                        m.offset = off; // the packet is taken again after the RNR wait
                        if (p.op().starts()) cur = null;
                        if (type == QpType.RC) ack(Op.ACK, p.psn(), Packet.AETH_RNR | minRnrTimer, 0);
                        next.run();
                        return;
                    }
                    long[] cqe = Cqe64.responder(qpn, w.index(), Cqe64.RESP_WR_IMM, m.dmaLength, p.imm(), p.srcQp(), p.slid(), p.solicited());
                    whenIssued(seq, () -> fw.complete(rcq, cqe, p.solicited()));
                    after.run();
                });
            } else after.run();
        };
        if (p.op().starts()) {
            if (p.dmaLength() > fw.maxMsg) { // docs/sources.md#responder-errors: known from the first packet, reported as a WRITE's (5.2)
                cur = null;
                responderError(p, Packet.AETH_NAK_INVALID, EventType.QP_REQ_ERR, null, 0, Vendor.MESSAGE_TOO_LONG);
                next.run();
                return;
            }
            cur = new InMsg(false);
            cur.dmaLength = p.dmaLength();
            if (p.dmaLength() == 0) { cur.target = List.of(); body.run(); return; } // C9-88: no rkey check
            fw.translate(p.rkey(), p.va(), p.dmaLength(), MttPorts.REMOTE_WRITE, pd, qpn, rsp -> {
                if (gen != generation) return;
                XlateRsp bad = failed(rsp);
                if (bad != null) {
                    cur = null;
                    responderError(p, Packet.AETH_NAK_ACCESS, EventType.QP_ACCESS_ERR, null, 0, Vendor.REMOTE_XLATE + (int) bad.status());
                    next.run();
                    return;
                }
                cur.target = rsp;
                body.run();
            });
        } else body.run();
    }

    private void handleRead(Packet p, Runnable next, boolean fresh) {
        long gen = generation;
        long len = p.dmaLength();
        int npkts = (int) Math.max(1, (len + mtu - 1) / mtu);
        if (fresh) {
            if (len > fw.maxMsg) {
                responderError(p, Packet.AETH_NAK_INVALID, EventType.QP_REQ_ERR, null, 0, Vendor.MESSAGE_TOO_LONG);
                next.run();
                return;
            }
            if (tooManyReads(p)) { next.run(); return; }
            epsn = (epsn + npkts) & 0xFFFFFF;
            msn = (msn + 1) & 0xFFFFFF;
        }
        readsInProgress++;
        Consumer<byte[]> respond = data -> {
            for (int i = 0; i < npkts; i++) {
                Op o = npkts == 1 ? Op.READ_RESP_ONLY : i == 0 ? Op.READ_RESP_FIRST : i == npkts - 1 ? Op.READ_RESP_LAST : Op.READ_RESP_MIDDLE;
                byte[] chunk = java.util.Arrays.copyOfRange(data, i * mtu, (int) Math.min(len, (long) (i + 1) * mtu));
                Packet r = new Packet(fw.lid(), p.slid(), o, p.srcQp(), qpn, (p.psn() + i) & 0xFFFFFF, false, false, 0, 0, 0, 0, 0,
                        Packet.AETH_ACK, msn, 0, 0, 0, chunk, Packet.RC);
                boolean lastOne = i == npkts - 1;
                fw.exec(fw.packetCycles, () -> {
                    if (gen != generation) return;
                    long left = fw.send(r); // made before any later error: it still goes out
                    // the read stays in progress until its last response has left the port
                    if (lastOne) fw.sim.schedule(left, () -> { if (gen == generation) readsInProgress--; });
                });
            }
            next.run();
        };
        if (len == 0) { respond.accept(new byte[0]); return; }
        fw.translate(p.rkey(), p.va(), len, MttPorts.REMOTE_READ, pd, qpn, rsp -> {
            if (gen != generation) return;
            XlateRsp bad = failed(rsp);
            if (bad != null) {
                readsInProgress--;
                responderError(p, Packet.AETH_NAK_ACCESS, EventType.QP_ACCESS_ERR, null, 0, Vendor.REMOTE_XLATE + (int) bad.status());
                next.run();
                return;
            }
            readPieces(rsp.stream().map(c -> new Piece(c.pa(), c.length(), null)).toList(), (data, unread) -> {
                if (gen != generation) return;
                if (data == null) {
                    readsInProgress--;
                    responderError(p, Packet.AETH_NAK_OP, EventType.QP_REQ_ERR, null, 0, Vendor.DMA_FAILED);
                    next.run();
                    return;
                }
                respond.accept(data);
            });
        });
    }

    /**
     * A READ or atomic beyond max_dest_rd_atomic (including any when it is 0): QP_ACCESS_ERR at the
     * responder, REM_INV_REQ_ERR at the requester (docs/sources.md#responder-errors).
     */
    private boolean tooManyReads(Packet p) {
        if (readsInProgress < maxDestRdAtomic) return false;
        responderError(p, Packet.AETH_NAK_INVALID, EventType.QP_ACCESS_ERR, null, 0, Vendor.TOO_MANY_READS);
        return true;
    }

    private int readsInProgress;

    private void handleAtomic(Packet p, Runnable next) {
        long gen = generation;
        if (tooManyReads(p)) { next.run(); return; }
        if ((p.va() & 7) != 0) {
            responderError(p, Packet.AETH_NAK_INVALID, EventType.QP_ACCESS_ERR, null, 0, Vendor.MISALIGNED_ATOMIC);
            next.run();
            return;
        }
        fw.translate(p.rkey(), p.va(), 8, MttPorts.REMOTE_ATOMIC, pd, qpn, rsp -> {
            if (gen != generation) return;
            XlateRsp bad = failed(rsp);
            if (bad != null) {
                responderError(p, Packet.AETH_NAK_ACCESS, EventType.QP_ACCESS_ERR, null, 0, Vendor.REMOTE_XLATE + (int) bad.status());
                next.run();
                return;
            }
            long pa = rsp.get(0).pa();
            fw.atomicAt(pa, release -> {
                if (gen != generation) { release.run(); return; } // reset while it waited for the address
                readModifyWrite(p, pa, gen, release, next);
            });
        });
    }

    /** An atomic's read and write of its 8 bytes at {@code pa}, holding the address until the write is issued. */
    private void readModifyWrite(Packet p, long pa, long gen, Runnable release, Runnable next) {
        fw.adapter.port().dmaRead(pa, 8, r -> {
            if (gen != generation) { release.run(); return; }
            if (r.status() != PciPort.DmaStatus.OK) {
                release.run();
                responderError(p, Packet.AETH_NAK_OP, EventType.QP_REQ_ERR, null, 0, Vendor.DMA_FAILED);
                next.run();
                return;
            }
            long orig = BigEndian.get64(r.data(), 0);
            long now = p.op() == Op.CMP_SWAP ? (orig == p.compare() ? p.swapAdd() : orig) : orig + p.swapAdd();
            byte[] nb = new byte[8];
            BigEndian.put64(nb, 0, now);
            writesInFlight++;
            fw.adapter.port().dmaWrite(pa, nb, w -> { if (gen == generation) writeLanded(); });
            release.run();
            atomicReplay.put(p.psn(), orig);
            epsn = (epsn + 1) & 0xFFFFFF;
            msn = (msn + 1) & 0xFFFFFF;
            ack(Op.ATOMIC_ACK, p.psn(), Packet.AETH_ACK, orig);
            next.run();
        });
    }

    /** A repeated request (RC): SEND/WRITE are acknowledged again, a READ re-executes, an atomic replays its saved result. */
    private void duplicate(Packet p, Runnable next) {
        if (p.op() == Op.READ_REQ) { handleRead(p, next, false); return; }
        if (p.op().isAtomic()) {
            Long orig = atomicReplay.get(p.psn());
            if (orig != null) ack(Op.ATOMIC_ACK, p.psn(), Packet.AETH_ACK, orig);
            next.run();
            return;
        }
        ack(Op.ACK, (epsn - 1) & 0xFFFFFF, Packet.AETH_ACK, 0);
        next.run();
    }

    /**
     * Sends an ACK or NAK. It waits behind the DMA writes still on their way to host memory, so an
     * acknowledged byte is always in memory when the requester completes.
     */
    private void ack(Op op, int psn, int aeth, long orig) {
        if (type != QpType.RC) return;
        Packet a = new Packet(fw.lid(), dlid, op, destQpn, qpn, psn, false, false, 0, 0, 0, 0, 0, aeth, msn, orig, 0, 0, new byte[0], Packet.RC);
        if (writesInFlight > 0) deferredAcks.add(a);
        else sendResponse(a);
    }

    /** Responses (ACKs, NAKs, read responses) leave in the order they were made: each is built by the firmware in turn. */
    private void sendResponse(Packet a) {
        long gen = generation;
        fw.exec(fw.packetCycles, () -> { if (gen == generation) fw.send(a); });
    }

    private int writesInFlight;
    private final ArrayDeque<Packet> deferredAcks = new ArrayDeque<>();

    private void writeLanded() {
        if (--writesInFlight == 0) {
            long gen = generation;
            while (!deferredAcks.isEmpty() && gen == generation) sendResponse(deferredAcks.poll());
        }
    }

    /**
     * A responder-side error (docs/sources.md#responder-errors): NAK to the requester (RC), an error CQE if a
     * receive WQE is in use or else an async event, and the QP goes to ERR.
     */
    private void responderError(Packet p, int nak, EventType event, RecvRing.Wqe w, int syndrome, int vendor) {
        fw.counters.counter("Firmware.responder_errors").inc();
        if (type == QpType.RC) ack(Op.ACK, p.psn(), nak, 0);
        if (w != null) fw.complete(rcq, Cqe64.error(false, qpn, w.index(), 0, syndrome, vendor, p.va(), p.rkey(), p.psn()), false);
        else if (event != null) fw.event(event, qpn);
        cur = null;
        toError();
    }

    // ------------------------------------------------------------------ receive queue

    /** The next receive WQE, from the SRQ or the QP's own ring, or null if there is none. */
    private void takeRecvWqe(Consumer<RecvRing.Wqe> done) {
        if (srq != null) srq.take(done);
        else rq.take(done);
    }

    private void untakeRecvWqe(RecvRing.Wqe w) {
        if (srq != null) srq.ring.untake(w); else rq.untake(w);
    }

    // ------------------------------------------------------------------ data movement

    /** Why a local gather/scatter failed. */
    record Failure(int vendor, long addr, int key) {}

    private static XlateRsp failed(List<XlateRsp> rsp) {
        for (XlateRsp r : rsp) if (r.status() != MttPorts.Status.OK.ordinal()) return r;
        return null;
    }

    /**
     * Reads the bytes of a scatter/gather list: each SGE translated under its lkey, then read by DMA;
     * {@code traceIndex} (a send WQE's index, or -1) gets a "translated" stage in the timeline.
     */
    private void gather(List<Sge> sges, int traceIndex, java.util.function.BiConsumer<byte[], Failure> done) {
        translateAll(sges, traceIndex, (pieces, fail) -> {
            if (fail != null) { done.accept(null, fail); return; }
            readPieces(pieces, (out, bad) -> done.accept(out, bad == null ? null : new Failure(Vendor.DMA_FAILED, bad.sge().addr(), bad.sge().lkey())));
        });
    }

    /** Reads translated pieces by DMA into one buffer, in order; {@code done} gets it, or null and the first piece whose read failed. */
    private void readPieces(List<Piece> pieces, java.util.function.BiConsumer<byte[], Piece> done) {
        byte[] out = new byte[(int) pieces.stream().mapToLong(Piece::length).sum()];
        if (pieces.isEmpty()) { done.accept(out, null); return; }
        int[] left = {pieces.size()};
        boolean[] bad = {false};
        int at = 0;
        for (Piece p : pieces) {
            int base = at;
            at += (int) p.length();
            fw.adapter.dma().read(p.pa(), (int) p.length(), data -> {
                if (bad[0]) return;
                if (data == null) { bad[0] = true; done.accept(null, p); return; }
                System.arraycopy(data, 0, out, base, data.length);
                fw.counters.counter("Firmware.dma_read_bytes").add(data.length);
                if (--left[0] == 0) done.accept(out, null);
            });
        }
    }

    /*
     * Completions after data. A completion may be written as soon as the PCI writes of its data have
     * left the adapter: PCI keeps posted writes in order, so it lands after them. A message's packets
     * may take different DMA channels and leave out of order, so each incoming payload takes a number
     * when it arrives and its completion waits for every payload numbered up to its own.
     */
    private long writeSeq;
    private final java.util.TreeSet<Long> unissued = new java.util.TreeSet<>(); // payloads whose PCI writes have not all left
    private final java.util.TreeMap<Long, List<Runnable>> afterIssued = new java.util.TreeMap<>(); // what waits for payloads up to a number

    /** Numbers an incoming payload that will be written to host memory. */
    private long payloadArrived() {
        unissued.add(++writeSeq);
        return writeSeq;
    }

    /** Payload {@code seq}'s PCI writes have all left (or it was refused). */
    private void payloadIssued(long seq) {
        unissued.remove(seq);
        while (!afterIssued.isEmpty() && (unissued.isEmpty() || afterIssued.firstKey() < unissued.first()))
            for (Runnable r : afterIssued.pollFirstEntry().getValue()) r.run();
    }

    /** Runs {@code r} once every payload numbered up to {@code upTo} has left the adapter. */
    private void whenIssued(long upTo, Runnable r) {
        if (unissued.isEmpty() || unissued.first() > upTo) r.run();
        else afterIssued.computeIfAbsent(upTo, k -> new ArrayList<>()).add(r);
    }

    /**
     * Writes {@code data} at offset {@code off} of a translated range, its bytes coming in as
     * {@code arrival} says (null: all in); {@code written} runs once its posted PCI writes have all
     * left the adapter. ACKs wait longer, until they landed ({@link #writeLanded}).
     */
    private void writeChunks(List<XlateRsp> chunks, long off, byte[] data, Arrival arrival, Runnable written) {
        long pos = 0;
        int done = 0;
        int[] pending = {1};
        Runnable one = () -> { if (--pending[0] == 0) written.run(); };
        for (XlateRsp c : chunks) {
            long end = pos + c.length();
            if (end > off + done && done < data.length) {
                long start = off + done - pos;
                int n = (int) Math.min(c.length() - start, data.length - done);
                pending[0]++;
                writesInFlight++;
                long gen = generation;
                fw.adapter.dma().write(c.pa() + start, java.util.Arrays.copyOfRange(data, done, done + n),
                        arrival == null ? null : arrival.from(done), () -> {
                    if (gen == generation) one.run();
                }, ok -> {
                    if (gen == generation) writeLanded();
                });
                fw.counters.counter("Firmware.dma_write_bytes").add(n);
                done += n;
            }
            pos = end;
            if (done >= data.length) break;
        }
        one.run();
    }

    /**
     * Writes {@code data} at message offset {@code off} into a scatter list, each touched SGE
     * translated under its lkey. {@code placed} hears once every part is translated and its writes
     * are on their way, so the next packet may be taken; a failure is told only once every payload
     * that arrived before it has left the adapter, so its error completion follows theirs.
     * {@code issued} runs after a success, once its PCI writes and those of every payload that
     * arrived before it have left the adapter (a completion may follow).
     */
    private void scatter(List<Sge> sges, long off, byte[] data, Arrival arrival, int access, Consumer<Failure> placed, Runnable issued) {
        long seq = payloadArrived();
        // each waits under its own number before that number is cleared, so what waits for earlier numbers runs first
        scatterPayload(sges, off, data, arrival, access, fail -> {
            if (fail == null) { placed.accept(null); return; }
            whenIssued(seq, () -> placed.accept(fail));
            payloadIssued(seq);
        }, () -> {
            whenIssued(seq, issued);
            payloadIssued(seq);
        });
    }

    private void scatterPayload(List<Sge> sges, long off, byte[] data, Arrival arrival, int access, Consumer<Failure> placed, Runnable issued) {
        if (data.length == 0) { placed.accept(null); issued.run(); return; }
        List<long[]> parts = new ArrayList<>(); // {sge index, offset within sge, length, offset within data}
        long pos = 0;
        int taken = 0;
        for (int i = 0; i < sges.size() && taken < data.length; i++) {
            long len = sges.get(i).length() & 0xFFFFFFFFL;
            if (pos + len > off + taken) {
                long within = off + taken - pos;
                int n = (int) Math.min(len - within, data.length - taken);
                parts.add(new long[]{i, within, n, taken});
                taken += n;
            }
            pos += len;
        }
        if (taken < data.length) { placed.accept(new Failure(Vendor.RECV_TOO_SMALL, 0, 0)); return; }
        long gen = generation;
        int[] untranslated = {parts.size()}, unissued = {parts.size() + 1}; // issued waits for placed too
        Runnable oneIssued = () -> { if (--unissued[0] == 0) issued.run(); };
        boolean[] failedOnce = {false};
        for (long[] part : parts) {
            Sge s = sges.get((int) part[0]);
            fw.translate(s.lkey() & 0xFFFFFFFFL, s.addr() + part[1], part[2], access, pd, qpn, rsp -> {
                if (gen != generation || failedOnce[0]) return;
                XlateRsp bad = failed(rsp);
                if (bad != null) {
                    failedOnce[0] = true;
                    placed.accept(new Failure(Vendor.LOCAL_XLATE + (int) bad.status(), s.addr() + part[1], s.lkey()));
                    return;
                }
                writeChunks(rsp, 0, java.util.Arrays.copyOfRange(data, (int) part[3], (int) (part[3] + part[2])),
                        arrival == null ? null : arrival.from((int) part[3]), oneIssued);
                if (--untranslated[0] == 0) { placed.accept(null); oneIssued.run(); }
            });
        }
    }
}
