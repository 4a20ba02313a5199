package nicsim.firmware;

import java.util.ArrayDeque;
import java.util.List;
import java.util.TreeMap;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import nicsim.abi.AccessBits;
import nicsim.abi.BigEndian;
import nicsim.abi.Cmd;
import nicsim.abi.Cqe64;
import nicsim.abi.DcRole;
import nicsim.abi.DoorbellRecord;
import nicsim.abi.EqeType;
import nicsim.abi.MtuCode;
import nicsim.abi.QpModifyMask;
import nicsim.abi.QpTransitions;
import nicsim.abi.QpcState;
import nicsim.abi.ServiceType;
import nicsim.abi.Vendor;
import nicsim.abi.WqeFormat.Sge;
import nicsim.adapter.MttPorts.XlateRsp;

/**
 * One queue pair's context and transport, as the firmware runs it: the state machine (transitions
 * checked against {@link QpTransitions}), the requester (WQEs to packets, PSNs, ACK/NAK handling,
 * the retransmit timer with retry_cnt, RNR waits with rnr_retry, go-back-N), the responder (PSN
 * checks, duplicates, RNR NAK, receive WQEs read from the host ring, RDMA WRITE/READ/atomics
 * through the rkey checks), completions and flushes, and the errors of docs/sources.md#responder-errors and
 * docs/sources.md#verbs-error-model with the state change each causes.
 *
 * <p>Each role is a file of its own over this context, as rxe's QP has its req, comp and resp parts.
 * The requester keeps its own state (the send ring's counters as firmware knows them, the next PSN,
 * the reads and atomics outstanding), the completer its own (the newest PSN acknowledged, retries
 * left, the retransmit timer, an RNR wait), the responder its own (the expected PSN, the MSN, the
 * message being received, the requests waiting, the writes in flight) and its reads and atomics theirs
 * (those in progress, the atomics' replies), each clearing it on RESET; Qp keeps what the roles share:
 * the attributes and the send operations pending and outstanding. A role asks another through its
 * methods, never its fields.
 */
final class Qp {
    // the roles, each a file of its own over this context
    final Requester requester = new Requester(this);
    final Completer completer = new Completer(this);
    final Responder responder = new Responder(this);
    final ReadsAndAtomics reads = new ReadsAndAtomics(this);
    final TaggedReceives tagged = new TaggedReceives(this);
    final OnDemandPaging odp = new OnDemandPaging(this);
    final Placement placement = new Placement(this);

    static final int WINDOW_PSNS = 128;
    /** RNR timer encodings to microseconds (docs/sources.md#libibverbs-values, from IBA table 45). */
    static final int[] RNR_US = {655360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640, 960, 1280, 1920, 2560,
            3840, 5120, 7680, 10240, 15360, 20480, 30720, 40960, 61440, 81920, 122880, 163840, 245760, 327680, 491520};

    final Firmware fw;
    final long qpn;
    final ServiceType type;
    /**
     * A DRIVER QP's DC half (null: not DC); a DC target's pool of responders, a DC initiator's connection (each null
     * unless that half).
     */
    final DcRole dc;
    final DcTarget dct;
    final DcInitiator dci;
    /** A DC responder (DCR): the target it serves (null: not a DCR). */
    final Qp dcrOf;
    final Service service;
    final long pd;
    /** An XRC target's domain: the XRC SRQs its requests may name (0: not an XRC target). */
    final long xrcd;
    final long uar;
    final Cq scq, rcq;
    final RecvRingReader rq;
    /** The doorbell record: the receive counter at byte 0, the send counter at byte 4 (0: none). */
    final long dbrec;
    /** Whether a doorbell found the record's send counter behind it (told once); doorbells seen since the last look. */
    private boolean staleRecordTold;
    private int doorbellsUnchecked;
    /** The send ring (its counters as firmware knows them are the requester's). */
    final long sqAddr;
    final int sqLogSize;
    /** The SRQ this QP takes receives from, or null. */
    final Srq srq;
    final boolean sqSigAll;
    /**
     * Receives of at most {@code cqe.scatter.max} bytes go into the CQE instead of the buffer
     * (MLX5DV_QP_CREATE_ALLOW_SCATTER_TO_CQE).
     */
    final boolean scatterToCqe;
    /**
     * A striding receive queue (UD): bytes per stride and strides per WQE (0: not striding); the WQE being filled and
     * its next stride.
     */
    final int strideBytes, strides;

    /** The port's special QP this UD QP is a driver's side of: 0 (SMI), 1 (GSI), or -1 (an ordinary QP). */
    int special = -1;

    QpcState state = QpcState.RESET;
    int access, qkey, mtu = 256, destQpn, dlid, timeout, retryCnt, rnrRetry, minRnrTimer, maxRdAtomic, maxDestRdAtomic;
    int port = 1, pkeyIndex;
    boolean sqdNotify, draining;

    // the send operations, which requester and completer share: those not yet sent, and those sent and not acknowledged
    final ArrayDeque<SendOp> pending = new ArrayDeque<>();
    final Outstanding outstanding = new Outstanding();

    /** The q counter set it counts in too (SET_QP_COUNTER; null: none), and that set's number. */
    long[] counterSet;
    long counterSetId;

    /** Counts {@code s} for the adapter, and in the QP's q counter set if it has one and the set counts it. */
    void count(FirmwareStat s) { count(s, 1); }

    void count(FirmwareStat s, long n) {
        fw.stats.add(s, n);
        countOwn(s, n);
    }

    /** Counts {@code s} in the QP's q counter set only (the adapter counted it before the QP was known). */
    void countOwn(FirmwareStat s, long n) {
        int i = s.inSet();
        if (counterSet != null && i >= 0) counterSet[i] += n;
    }

    /**
     * Bumps on RESET and destroy: a new life of the QP (see {@link #live(Runnable)}). An int, not a long: a wrapper
     * that keeps it is 24 bytes, not 32, and one is made for every asynchronous step.
     */
    int generation;

    /**
     * {@code r} as a continuation of this QP's current life. A firmware task, DMA, translation or
     * timer started before a reset or destroy may come back after it; its continuation is then
     * dropped, so nothing of an older life touches the new one. Every asynchronous step of the
     * roles goes through here.
     */
    Runnable live(Runnable r) {
        int g = generation;
        return () -> { if (g == generation) r.run(); };
    }

    /** {@link #live(Runnable)} for a continuation that takes a result. */
    <T> Consumer<T> live(Consumer<T> c) {
        int g = generation;
        return v -> { if (g == generation) c.accept(v); };
    }

    /**
     * {@link #live(Runnable)} of {@code c} given {@code v}: one object a step where {@code c} is made once (a task of
     * every packet or WQE).
     */
    <T> Runnable live(Consumer<T> c, T v) {
        int g = generation;
        return () -> { if (g == generation) c.accept(v); };
    }

    /** {@link #live(Runnable)} for a continuation that takes two results. */
    <A, B> BiConsumer<A, B> live(BiConsumer<A, B> c) {
        int g = generation;
        return (a, b) -> { if (g == generation) c.accept(a, b); };
    }


    Qp(Firmware fw, long qpn, ServiceType type, Cmd.CreateQp c, Cq scq, Cq rcq, Srq srq) {
        this.fw = fw;
        this.qpn = qpn;
        this.type = type;
        this.service = Service.of(type);
        this.dc = type == ServiceType.DRIVER ? DcRole.of(c.dcType()) : null;
        this.dct = dc == DcRole.DCT ? new DcTarget(this, c.dctAccessKey()) : null;
        this.dci = dc == DcRole.DCI ? new DcInitiator(this) : null;
        this.dcrOf = null;
        this.pd = type == ServiceType.XRC_RECV ? 0 : c.pd();
        this.xrcd = type == ServiceType.XRC_RECV ? c.xrcd() : 0;
        this.uar = c.uar();
        this.scq = scq;
        this.rcq = rcq;
        this.rq = new RecvRingReader(fw, String.format("qpn 0x%x", qpn), c.rqAddr(), 1 << c.rqLogSize(),
                (int) c.rqStrideLog(), c.dbrec());
        this.dbrec = c.dbrec();
        this.srq = srq;
        this.sqAddr = c.sqAddr();
        this.sqLogSize = (int) c.sqLogSize();
        this.sqSigAll = c.sqSigAll() != 0;
        this.scatterToCqe = c.scatterToCqe();
        this.strideBytes = c.logStrides() == 0 ? 0 : 1 << c.logStrideBytes();
        this.strides = c.logStrides() == 0 ? 0 : 1 << c.logStrides();
        this.mtu = fw.fabric().maxMtu(); // UD uses the port's MTU; RC and UC set theirs in INIT to RTR
    }

    /**
     * The sanitizer's look at a send doorbell announcing {@code producer}: as mlx5's order has it, the
     * driver publishes the producer counter in the doorbell record before it rings, so a record behind
     * the doorbell is a driver's bug (the adapter goes by the doorbell). Told once per QP; it costs no
     * simulated time (no DMA: a checker's look), but a look into an attached program's memory costs
     * wall time, so the first doorbell of a QP is looked at and then one in {@link #RECORD_CHECK_EVERY}
     * (a driver that forgets the record forgets it every time).
     */
    static final int RECORD_CHECK_EVERY = 256;

    void checkSendRecord(int producer) {
        if (dbrec == 0 || staleRecordTold || doorbellsUnchecked++ % RECORD_CHECK_EVERY != 0) return;
        byte[] b = fw.adapter.port().inspect(dbrec + DoorbellRecord.SEND, 4);
        if (b == null) return;
        int recorded = (int) (BigEndian.get32(b, 0) & 0xFFFF), behind = (producer - recorded) & 0xFFFF;
        if (behind == 0 || behind >= 0x8000) return;
        staleRecordTold = true;
        fw.adapter.report(String.format("STALE_DBREC on qpn 0x%x: a doorbell announces producer 0x%x but the doorbell "
                + "record's send counter (at 0x%x) is 0x%x: the record was not updated before the doorbell", qpn,
                producer & 0xFFFF, dbrec + DoorbellRecord.SEND, recorded));
    }

    /**
     * A DC responder (DCR) of target {@code t} for the initiator at LID {@code lid}, QP {@code qpn},
     * whose connect took PSN {@code psn}: an RC responder over the target's SRQ, CQ, PD and access
     * flags, answering as the target's number, until the initiator disconnects.
     */
    Qp(Qp t, int lid, long qpn, int psn) {
        this.fw = t.fw;
        this.qpn = t.qpn;
        this.type = t.type;
        this.dc = DcRole.DCT;
        this.dct = null;
        this.dci = null;
        this.dcrOf = t;
        this.service = t.service;
        this.pd = t.pd;
        this.xrcd = 0;
        this.uar = t.uar;
        this.scq = null;
        this.rcq = t.rcq;
        this.rq = t.rq;
        this.dbrec = 0;
        this.srq = t.srq;
        this.sqAddr = 0;
        this.sqLogSize = 0;
        this.sqSigAll = false;
        this.scatterToCqe = t.scatterToCqe;
        this.strideBytes = 0;
        this.strides = 0;
        this.state = QpcState.RTR;
        responder.established(); // the target's owner hears nothing per connection
        this.counterSet = t.counterSet; // a responder's events are its target's
        this.counterSetId = t.counterSetId;
        this.access = t.access;
        this.mtu = t.mtu;
        this.minRnrTimer = t.minRnrTimer;
        // a DCT takes no max_dest_rd_atomic: its responders allow the device's most
        this.maxDestRdAtomic = Commands.MAX_RD_ATOMIC;
        this.dlid = lid;
        this.destQpn = (int) qpn;
        responder.expect((psn + 1) & 0xFFFFFF);
        this.dcConnectPsn = psn;
    }

    /** A DCR's connect PSN (a repeated connect is answered again; another one opens a new connection). */
    int dcConnectPsn;
    /** When a DCR last took a packet. */
    long lastUse;

    // ------------------------------------------------------------------ state machine

    /**
     * MODIFY_QP: checks the whole request first (rxe_qp_chk_attr), then applies it (rxe_qp_from_attr);
     * a refusal changes nothing.
     */
    void modify(Cmd.QpAttrs a) {
        QpcState to = check(a);
        applyAttributes(a);
        moveTo(to, (int) a.mask());
    }

    /** The state the request leads to, or CommandRefused naming the first field that cannot be taken. */
    private QpcState check(Cmd.QpAttrs a) {
        int mask = (int) a.mask();
        int states = QpcState.values().length; // a driver's field, whatever it holds: refused, never a crash
        if (a.state() >= states) throw new CommandRefused(Cmd.Syndrome.BAD_ATTRIBUTE, a.state());
        if ((mask & QpModifyMask.CUR_STATE) != 0 && a.curState() >= states)
            throw new CommandRefused(Cmd.Syndrome.BAD_ATTRIBUTE, a.curState());
        QpcState next = QpcState.values()[(int) a.state()];
        if ((mask & QpModifyMask.CUR_STATE) != 0 && QpcState.values()[(int) a.curState()] != state)
            throw new CommandRefused(Cmd.Syndrome.CUR_STATE_MISMATCH, state.value());
        QpcState to;
        try {
            to = QpTransitions.check(type, dc, state, mask, next);
        } catch (QpTransitions.Rejected r) {
            throw new CommandRefused(Cmd.Syndrome.BAD_TRANSITION, (long) state.value() << 8 | next.value());
        }
        if ((mask & QpModifyMask.PATH_MTU) != 0 && (a.pathMtu() < 1 || a.pathMtu() > 5
                || MtuCode.of((int) a.pathMtu()).bytes() > fw.fabric().maxMtu()))
            throw new CommandRefused(Cmd.Syndrome.BAD_ATTRIBUTE, a.pathMtu());
        if ((mask & QpModifyMask.PORT) != 0 && a.port() != 1)
            throw new CommandRefused(Cmd.Syndrome.BAD_ATTRIBUTE, a.port());
        if ((mask & QpModifyMask.ACCESS_FLAGS) != 0 && (a.access() & ~AccessBits.ALL) != 0)
            throw new CommandRefused(Cmd.Syndrome.BAD_ATTRIBUTE, a.access());
        if ((mask & QpModifyMask.MAX_QP_RD_ATOMIC) != 0 && a.maxRdAtomic() > Commands.MAX_RD_ATOMIC)
            throw new CommandRefused(Cmd.Syndrome.BAD_ATTRIBUTE, a.maxRdAtomic());
        if ((mask & QpModifyMask.MAX_DEST_RD_ATOMIC) != 0 && a.maxDestRdAtomic() > Commands.MAX_RD_ATOMIC)
            throw new CommandRefused(Cmd.Syndrome.BAD_ATTRIBUTE, a.maxDestRdAtomic());
        return to;
    }

    /** Takes the attributes the mask names (checked already). */
    private void applyAttributes(Cmd.QpAttrs a) {
        int mask = (int) a.mask();
        if ((mask & QpModifyMask.ACCESS_FLAGS) != 0) access = (int) a.access();
        if ((mask & QpModifyMask.QKEY) != 0) qkey = (int) a.qkey();
        if ((mask & QpModifyMask.PATH_MTU) != 0) mtu = MtuCode.of((int) a.pathMtu()).bytes();
        if ((mask & QpModifyMask.DEST_QPN) != 0) destQpn = (int) a.destQpn();
        if ((mask & QpModifyMask.AV) != 0) dlid = (int) a.dlid();
        if ((mask & QpModifyMask.RQ_PSN) != 0) responder.expect((int) a.rqPsn());
        if ((mask & QpModifyMask.SQ_PSN) != 0) {
            requester.startAt((int) a.sqPsn());
            completer.startAt((int) a.sqPsn());
        }
        if ((mask & QpModifyMask.TIMEOUT) != 0) timeout = (int) a.timeout();
        if ((mask & QpModifyMask.RETRY_CNT) != 0) { retryCnt = (int) a.retryCnt(); completer.renewRetries(); }
        if ((mask & QpModifyMask.RNR_RETRY) != 0) { rnrRetry = (int) a.rnrRetry(); completer.renewRnrRetries(); }
        if ((mask & QpModifyMask.MIN_RNR_TIMER) != 0) minRnrTimer = (int) a.minRnrTimer();
        if ((mask & QpModifyMask.MAX_QP_RD_ATOMIC) != 0) maxRdAtomic = (int) a.maxRdAtomic();
        if ((mask & QpModifyMask.MAX_DEST_RD_ATOMIC) != 0) maxDestRdAtomic = (int) a.maxDestRdAtomic();
        if ((mask & QpModifyMask.PORT) != 0) port = (int) a.port();
        if ((mask & QpModifyMask.PKEY_INDEX) != 0) pkeyIndex = (int) a.pkeyIndex();
    }

    /** Enters state {@code to}: RESET clears the QP, ERR flushes it, SQD drains, RTS after SQD or SQE sends again. */
    private void moveTo(QpcState to, int mask) {
        QpcState was = state;
        if (to == QpcState.RESET) reset();
        else if (to == QpcState.ERR && was != QpcState.ERR) toError();
        else {
            state = to;
            if (to == QpcState.SQD && was == QpcState.RTS) {
                draining = true;
                sqdNotify = (mask & QpModifyMask.EN_SQD_ASYNC_NOTIFY) != 0;
                checkDrained();
            }
            if (to == QpcState.RTS && (was == QpcState.SQD || was == QpcState.SQE)) {
                draining = false;
                requester.pump();
            }
        }
    }

    Cmd.QpAttrs query() {
        return new Cmd.QpAttrs(qpn, 0, state.value(), state.value(), access, qkey & 0xFFFFFFFFL,
                Integer.numberOfTrailingZeros(mtu) - 7, destQpn, responder.expectedPsn() & 0xFFFFFF,
                requester.nextPsn() & 0xFFFFFF,
                dlid,
                timeout, retryCnt, rnrRetry, minRnrTimer, maxRdAtomic, maxDestRdAtomic, port, pkeyIndex,
                draining && !outstanding.isEmpty() ? 1 : 0);
    }

    void reset() {
        generation++;
        state = QpcState.RESET;
        pending.clear();
        outstanding.clear();
        requester.reset();
        completer.reset();
        responder.reset();
        rq.reset();
        unissued.clear();
        afterIssued.clear();
        draining = false;
        if (dct != null) dct.releaseAll();
        if (dci != null) dci.reset();
        fw.sqContexts.reset(this);
    }

    void destroy() {
        generation++;
        completer.stopTimer();
        if (dct != null) dct.releaseAll();
    }

    /** Moves to ERR: every queued and unfinished send WQE and every posted receive completes WR_FLUSH_ERR, in order. */
    void toError() {
        if (state == QpcState.ERR) return;
        if (dcrOf != null) { // a DCR in error is given back; its target goes on serving the others
            state = QpcState.ERR;
            dcrOf.dct.release(this);
            return;
        }
        if (dct != null) dct.releaseAll();
        state = QpcState.ERR;
        completer.stopTimer();
        completer.resetProgress();
        responder.flush();
        flushSq();
        flushRq();
    }

    /** UD/UC requester errors stop only the send queue (SQE); its WQEs flush, receives continue. */
    void toSqError() {
        state = QpcState.SQE;
        completer.stopTimer();
        flushSq();
    }

    void flushSq() {
        completer.retire();
        while (!outstanding.isEmpty()) flush(outstanding.poll());
        while (!pending.isEmpty()) flush(pending.poll());
        requester.readsFlushed();
    }

    void flush(SendOp op) {
        if (op.control) { // the adapter's own: its owner hears (a DC connect has none)
            if (op.failed != null) op.failed.accept(Cqe64.SYNDROME_WR_FLUSH_ERR, Vendor.FLUSHED);
            return;
        }
        count(FirmwareStat.FLUSHED);
        fw.complete(scq, Cqe64.error(true, qpn, op.index, op.opcode, Cqe64.SYNDROME_WR_FLUSH_ERR, Vendor.FLUSHED,
                0, 0, 0), false);
    }

    void flushRq() {
        // no receive queue of their own
        if (type == ServiceType.XRC_SEND || type == ServiceType.XRC_RECV || dci != null) return;
        if (srq != null) { // an SRQ's WQEs belong to other QPs too: nothing is flushed, the QP hears its last WQE went
            fw.event(EqeType.QP_LAST_WQE_REACHED, qpn);
            return;
        }
        rq.readProducer(live(() -> {
            if (state != QpcState.ERR) return;
            for (int index : rq.drain()) {
                count(FirmwareStat.FLUSHED);
                fw.complete(rcq, Cqe64.error(false, qpn, index, 0, Cqe64.SYNDROME_WR_FLUSH_ERR, Vendor.FLUSHED,
                        0, 0, 0), false);
            }
        }));
    }

    void onDoorbell() {
        if (state == QpcState.ERR && srq == null) flushRq();
    }

    void checkDrained() {
        if (state == QpcState.SQD && draining && outstanding.isEmpty()) {
            draining = false;
            if (sqdNotify) fw.event(EqeType.SQ_DRAINED, qpn);
        }
    }

    // ------------------------------------------------------------------ requester

    /**
     * A translated stretch of a message: {@code length} bytes at host address {@code pa}, from {@code sge} (null: under
     * an rkey).
     */
    record Piece(long pa, long length, Sge sge) {}

    // ------------------------------------------------------------------ responder

    /** A QP that only sends (XRC initiator, DC initiator): requests sent to it are dropped. */
    boolean sendOnly() { return type == ServiceType.XRC_SEND || dci != null; }

    /** This QP's service as the BTH opcode names it. */
    int transport() { return service.transport; }


    // ------------------------------------------------------------------ data movement

    /** Why a local gather/scatter failed. */
    record Failure(int vendor, long addr, int key, long faultMtt, long faultPages, int piece) {
        Failure(int vendor, long addr, int key) { this(vendor, addr, key, -1, 0, 0); }

        /** A failed translation of {@code length} bytes at {@code addr} under {@code key}. */
        static Failure of(XlateRsp bad, long addr, int key, long faultPages) {
            return new Failure(Vendor.LOCAL_XLATE + (int) bad.status(), addr, key, Placement.faultMtt(bad), faultPages,
                    (int) bad.piece());
        }

        /**
         * A page not present (on-demand paging) at MTT index {@link #faultMtt}: brought in by the host, then tried
         * again.
         */
        boolean pageFault() { return faultMtt >= 0; }
    }

    /*
     * Completions after data. A completion may be written as soon as the PCI writes of its data have
     * left the adapter: PCI keeps posted writes in order, so it lands after them. A message's packets
     * may take different DMA channels and leave out of order, so each incoming payload takes a number
     * when it arrives and its completion waits for every payload numbered up to its own.
     */
    long writeSeq;
    final Unissued unissued = new Unissued(); // payloads whose PCI writes have not all left
    final TreeMap<Long, List<Runnable>> afterIssued = new TreeMap<>();}
