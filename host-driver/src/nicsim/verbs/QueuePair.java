package nicsim.verbs;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import nicsim.abi.BigEndian;
import nicsim.abi.Cmd;
import nicsim.abi.Cqe64;
import nicsim.abi.MtuCode;
import nicsim.abi.QpTransitions;
import nicsim.abi.QpcState;
import nicsim.abi.Vendor;
import nicsim.abi.WqeFormat;
import nicsim.abi.WqeLayout;
import nicsim.driver.Driver;
import nicsim.driver.Host;
import nicsim.fabric.Grh;
import nicsim.fabric.Packet;
import nicsim.provider.RecvRing;
import nicsim.provider.SendRing;

/**
 * A queue pair (ibv_qp). This side is the verbs API: the QP's attributes and state, the transition
 * table, and each request checked as the verbs spec and mlx5 check it (refused with the errno
 * libibverbs gives, before anything is written) and described as the device's WQE ({@link
 * SendWqes}, {@link WqeFormat}). The rings are the provider's ({@link SendRing}, {@link RecvRing}): it places the
 * WQEs, keeps their wr_ids, publishes the counters in the doorbell record and rings the doorbell
 * (a single one-WQEBB WQE whole, BlueFlame-style).
 */
public final class QueuePair extends VerbsObject {
    private final ProtectionDomain pd;
    private final Context ctx;
    private final Driver driver;
    private final Host host;
    private final QpType type;
    private final CompletionQueue sendCq, recvCq;
    private final SharedReceiveQueue srq;
    private final int qpn, maxSendWr, maxRecvWr, maxSendSge, maxRecvSge, maxInline;
    private final boolean sqSigAll;
    /**
     * A striding receive queue's stride bytes and strides per WQE (0: not striding), and the strides used of each
     * posted WQE.
     */
    private final int strideBytes, strides;
    private final Map<Integer, Integer> stridesUsed = new HashMap<>();
    /** The provider's rings: WQEs are written and doorbells rung there. */
    private final SendRing sq;
    /** Send requests checked and described as WQEs. */
    private final SendWqes wqes;
    private final RecvRing rq;
    private final long dbrec;
    private QpState state = QpState.RESET;
    /** A DRIVER QP's DC half (null: not DC). */
    private final DcType dcType;
    /** BIND_MW requests by ring slot: the window takes its new rkey when the bind completes. */
    private final Map<Integer, SendWr> pendingBinds = new HashMap<>();

    QueuePair(ProtectionDomain pd, QpInitAttr a) { this(pd, pd.ctx, pd, a); }

    /** An XRC target: no PD, no CQs, no queues; its domain instead. */
    QueuePair(Context ctx, QpInitAttr a) { this(ctx, ctx, null, a); }

    private QueuePair(VerbsObject parent, Context ctx, ProtectionDomain pd, QpInitAttr a) {
        super(parent);
        this.pd = pd;
        this.ctx = ctx;
        this.driver = ctx.driver;
        this.host = driver.host();
        this.type = a.qpType();
        boolean target = type == QpType.XRC_RECV, initiator = type == QpType.XRC_SEND;
        this.dcType = a.dcType();
        if ((type == QpType.DRIVER) != (dcType != null))
            throw new VerbsException(Errno.EINVAL, "createQp: QpInitAttr.dcType is for a DRIVER QP, and a DRIVER QP"
                    + " needs one (qpType " + type + ", dcType " + dcType + ")");
        boolean dct = dcType == DcType.DCT, dci = dcType == DcType.DCI;
        if (dct && (a.srq() == null || a.recvCq() == null))
            throw new VerbsException(Errno.EINVAL, "createQp: a DCT takes its receives from an SRQ and completes them"
                    + " to recvCq (srq " + a.srq() + ", recvCq " + a.recvCq() + ")");
        if (dci && a.srq() != null)
            throw new VerbsException(Errno.EINVAL, "createQp: a DCI only sends; it takes no SRQ");
        if (pd != null && target)
            throw new VerbsException(Errno.EINVAL,
                    "createQp qpType XRC_RECV has no PD: create it with Context.createQp and its xrcd");
        if (target) {
            if (a.xrcd() == null)
                throw new VerbsException(Errno.EINVAL, "createQp qpType XRC_RECV needs QpInitAttr.xrcd");
            a.xrcd().checkUsableBy(ctx, "QpInitAttr.xrcd");
        } else {
            if ((a.sendCq() == null && !dct) || (a.recvCq() == null && !initiator && !dci))
                throw new VerbsException(Errno.EINVAL,
                        "createQp needs sendCq and recvCq (got " + a.sendCq() + ", " + a.recvCq() + ")");
        }
        if (a.srq() != null && a.srq().isClosed()) throw new VerbsException(Errno.EINVAL, "createQp srq is closed");
        if (a.srq() != null && (target || initiator || a.srq().type() == SrqType.XRC))
            throw new VerbsException(Errno.EINVAL, "createQp srq: an XRC SRQ is named by each XRC request,"
                    + " not attached to a QP (and XRC QPs attach none)");
        if (a.srq() != null && a.srq().type() == SrqType.TM && type != QpType.RC)
            throw new VerbsException(Errno.EINVAL, "createQp srq: tag matching is for RC QPs; a " + type
                    + " QP cannot take a tag-matching SRQ");
        this.srq = a.srq();
        if (a.specialQp() != -1 && (type != QpType.UD || a.specialQp() != Cmd.QPT_SMI && a.specialQp() != Cmd.QPT_GSI))
            throw new VerbsException(Errno.EINVAL, "createQp: QpInitAttr.specialQp " + a.specialQp()
                    + " must be 0 (SMI) or 1 (GSI), of a UD QP (qpType " + type + ")");
        var caps = driver.caps();
        check("maxSendWr", a.maxSendWr(), 1, caps.maxQpWr());
        check("maxRecvWr", a.maxRecvWr(), 0, caps.maxQpWr());
        check("maxSendSge", a.maxSendSge(), 0, caps.maxSge());
        check("maxRecvSge", a.maxRecvSge(), 0, caps.maxSge());
        check("maxInlineData", a.maxInlineData(), 0, caps.maxInline());
        if (a.logNumStrides() != 0 || a.logStrideBytes() != 0) {
            if (type != QpType.UD || a.srq() != null)
                throw new VerbsException(Errno.EINVAL, "QpInitAttr.stridingRq: a striding receive queue is for a UD QP"
                        + " with a receive queue of its own");
            check("stridingRq logStrideBytes", a.logStrideBytes(), 6, 13);
            check("stridingRq logNumStrides", a.logNumStrides(), 3, 16);
        }
        this.strideBytes = a.logNumStrides() == 0 ? 0 : 1 << a.logStrideBytes();
        this.strides = a.logNumStrides() == 0 ? 0 : 1 << a.logNumStrides();
        this.sendCq = target || dct ? null : a.sendCq();
        this.recvCq = target || initiator || dci ? null : a.recvCq();
        this.maxSendSge = Math.max(1, a.maxSendSge());
        this.maxRecvSge = Math.max(1, a.maxRecvSge());
        this.sqSigAll = a.sqSigAll();
        // the largest WQE this QP can post: ctrl, address vector (UD), remote address, atomic, then data or inline
        int body = Math.max(maxSendSge * 16, (a.maxInlineData() + 4 + 15) / 16 * 16);
        int overhead = 16 + (type == QpType.UD ? 48 : 16 + 16) + (initiator ? 16 : 0) + (dci ? 48 : 0);
        // a send WQE's slot is at least two blocks, so every QP that sends holds some inline data
        int bbsPerWqe = Math.max(WqeLayout.MIN_SEND_WQEBBS, (overhead + body + 63) / 64);
        // as mlx5: the inline data such a WQE holds (its inline segment's 4-byte header after the overhead), at least
        // what was asked, at most the device's limit; a QP that sends nothing has none
        this.maxInline = target || dct ? 0 : (int) Math.min(caps.maxInline(), bbsPerWqe * 64 - overhead - 4);
        this.maxSendWr = a.maxSendWr();
        int sqSize = Integer.highestOneBit(Math.max(2, maxSendWr * bbsPerWqe - 1)) << 1;
        this.sq = new SendRing(driver, ctx.uar, sqSize, maxSendWr);
        // XRC QPs receive through XRC SRQs only, a DCT through its SRQ
        this.maxRecvWr = target || initiator || dcType != null ? 0 : a.maxRecvWr();
        int rqSize = maxRecvWr == 0 ? 1 : Integer.highestOneBit(Math.max(1, maxRecvWr * 2 - 1));
        int rqStride = Integer.highestOneBit(Math.max(16, maxRecvSge * 16 * 2 - 1));
        this.rq = new RecvRing(host, rqSize, rqStride, Math.min(maxRecvWr, rqSize));
        this.dbrec = host.allocPhysical(8, 8); // the receive counter at byte 0, the send counter at byte 4
        sq.recordAt(dbrec);
        rq.recordAt(dbrec);
        long number;
        try {
            long flags = Cmd.CreateQp.withDcType(Cmd.CreateQp.flags(sqSigAll, a.scatterToCqe(),
                    strides == 0 ? 0 : a.logStrideBytes(), strides == 0 ? 0 : a.logNumStrides()),
                    dcType == null ? 0 : DeviceCodes.device(dcType).value());
            number = DriverCommand.run(driver, Cmd.CREATE_QP, Cmd.CREATE_QP_IN, new Cmd.CreateQp(
                    a.specialQp() >= 0 ? a.specialQp() : DeviceCodes.device(type).value(),
                    target ? a.xrcd().xrcdn : pd.pdn,
                    sendCq == null ? 0 : sendCq.cqn, recvCq == null ? 0 : recvCq.cqn, ctx.uar,
                    dct ? a.dctAccessKey() : sq.base(), Integer.numberOfTrailingZeros(sq.size()), rq.base(),
                    Integer.numberOfTrailingZeros(rq.size()), Integer.numberOfTrailingZeros(rq.stride()), dbrec, flags,
                    srq == null ? 0 : srq.srqn), Cmd.HANDLE).handle();
        } catch (RuntimeException e) {
            freeRings();
            throw e;
        }
        this.qpn = (int) number;
        this.wqes = new SendWqes(type, dcType, qpn, maxSendSge, maxInline, sqSigAll, driver.caps().maxMsgSize(), host);
        ctx.qps.put(qpn, this);
        made();
    }

    private static void check(String field, int value, long min, long max) {
        if (value < min || value > max)
            throw new VerbsException(Errno.EINVAL,
                    "QpInitAttr." + field + " = " + value + " is out of range (" + min + ".." + max + ")");
    }

    public int qpNum() { return qpn; }

    /** Where its doorbell record is in host memory (tests write a malformed one there). */
    long doorbellRecord() { return dbrec; }
    public QpType qpType() { return type; }
    /** A DRIVER QP's DC half (null: not a DC QP). */
    public DcType dcType() { return dcType; }
    /**
     * The QP's state: as the program last set or queried it, or as the adapter moved it by itself,
     * which the library learns from an affiliated error event (ERR) or from an error completion
     * (ERR, or SQE for a send error on UC and UD).
     */
    public QpState state() { return state; }

    /**
     * The adapter moved this QP by itself, on an error. A QP the program has reset or already sees
     * in ERR stays as it is (a late completion does not undo the program's modify); SQE is reached
     * only from the states that send.
     */
    void movedByDevice(QpState s) {
        if (state == QpState.RESET || state == QpState.ERR) return;
        if (dcType == DcType.DCT) return; // a DC target's errors are its responders': the target goes on serving
        if (s == QpState.SQE && state != QpState.RTS && state != QpState.SQD) return;
        state = s;
    }
    public int maxInlineData() { return maxInline; }
    public int maxSendWr() { return maxSendWr; }
    public int maxRecvWr() { return maxRecvWr; }

    /** ibv_modify_qp. Checked against the transition table first; the adapter then applies it. */
    public void modify(QpAttr attr, int mask) {
        checkOpen();
        QpState cur = (mask & QpAttrMask.CUR_STATE) != 0 ? attr.curQpState() : state;
        QpState target;
        try {
            target = DeviceCodes.verbs(QpTransitions.check(DeviceCodes.device(type), DeviceCodes.device(dcType),
                    DeviceCodes.device(cur), DeviceCodes.maskDown(mask), DeviceCodes.device(attr.qpState())));
        } catch (QpTransitions.Rejected r) {
            throw new VerbsException(Errno.EINVAL, "modify QP 0x" + Integer.toHexString(qpn) + ": " + r.getMessage());
        }
        if ((mask & QpAttrMask.PATH_MTU) != 0 && attr.pathMtu().bytes() > ctx.queryPort(1).activeMtu().bytes())
            throw new VerbsException(Errno.EINVAL, "QpAttr.pathMtu " + attr.pathMtu()
                    + " exceeds the port's active MTU " + ctx.queryPort(1).activeMtu());
        if ((mask & QpAttrMask.PORT) != 0 && attr.portNum() != 1)
            throw new VerbsException(Errno.EINVAL,
                    "QpAttr.portNum " + attr.portNum() + " does not exist (port 1 only)");
        if ((mask & QpAttrMask.TIMEOUT) != 0 && (attr.timeout() < 0 || attr.timeout() > 31))
            throw new VerbsException(Errno.EINVAL, "QpAttr.timeout " + attr.timeout() + " must be 0..31");
        if ((mask & QpAttrMask.RETRY_CNT) != 0 && (attr.retryCnt() < 0 || attr.retryCnt() > 7))
            throw new VerbsException(Errno.EINVAL, "QpAttr.retryCnt " + attr.retryCnt() + " must be 0..7");
        if ((mask & QpAttrMask.RNR_RETRY) != 0 && (attr.rnrRetry() < 0 || attr.rnrRetry() > 7))
            throw new VerbsException(Errno.EINVAL, "QpAttr.rnrRetry " + attr.rnrRetry() + " must be 0..7");
        if ((mask & QpAttrMask.MIN_RNR_TIMER) != 0 && (attr.minRnrTimer() < 0 || attr.minRnrTimer() > 31))
            throw new VerbsException(Errno.EINVAL, "QpAttr.minRnrTimer " + attr.minRnrTimer() + " must be 0..31");
        int maxRd = (int) Math.min(driver.caps().maxRdAtomic(), Integer.MAX_VALUE);
        if ((mask & QpAttrMask.MAX_QP_RD_ATOMIC) != 0 && (attr.maxRdAtomic() < 0 || attr.maxRdAtomic() > maxRd))
            throw new VerbsException(Errno.EINVAL, "QpAttr.maxRdAtomic " + attr.maxRdAtomic() + " must be 0.." + maxRd);
        if ((mask & QpAttrMask.MAX_DEST_RD_ATOMIC) != 0
                && (attr.maxDestRdAtomic() < 0 || attr.maxDestRdAtomic() > maxRd))
            throw new VerbsException(Errno.EINVAL,
                    "QpAttr.maxDestRdAtomic " + attr.maxDestRdAtomic() + " must be 0.." + maxRd);
        if ((mask & QpAttrMask.ACCESS_FLAGS) != 0 && (attr.qpAccessFlags() & ~AccessFlags.ALL) != 0)
            throw new VerbsException(Errno.EINVAL,
                    String.format("QpAttr.qpAccessFlags 0x%x has unknown bits", attr.qpAccessFlags()));
        if ((mask & QpAttrMask.PKEY_INDEX) != 0 && attr.pkeyIndex() != 0)
            throw new VerbsException(Errno.EINVAL, "QpAttr.pkeyIndex " + attr.pkeyIndex()
                    + " does not exist (the P_Key table has entry 0)");
        int m = mask;
        DriverCommand.run(driver, Cmd.MODIFY_QP, Cmd.QP_ATTRS, new Cmd.QpAttrs(qpn,
                DeviceCodes.maskDown(m) & 0xFFFFFFFFL, DeviceCodes.device(cur).value(),
                DeviceCodes.device(attr.qpState()).value(), DeviceCodes.accessDown(attr.qpAccessFlags()),
                attr.qkey() & 0xFFFFFFFFL, DeviceCodes.device(attr.pathMtu()).value(),
                attr.destQpNum() & 0xFFFFFF, attr.rqPsn() & 0xFFFFFF, attr.sqPsn() & 0xFFFFFF, attr.ahAttr().dlid(),
                attr.timeout(), attr.retryCnt(), attr.rnrRetry(), attr.minRnrTimer(), attr.maxRdAtomic(),
                attr.maxDestRdAtomic(), attr.portNum(), attr.pkeyIndex(), attr.enSqdAsyncNotify() ? 1 : 0), Cmd.EMPTY);
        if (target == QpState.RESET) {
            // queues start over; completions of this QP not yet polled are removed (mlx5 __mlx5_cq_clean)
            if (sendCq != null) sendCq.clean(qpn);
            if (recvCq != null && recvCq != sendCq) recvCq.clean(qpn);
            sq.reset();
            rq.reset();
            stridesUsed.clear();
            host.memory.write(dbrec, new byte[8]);
        }
        state = target;
    }

    /** ibv_query_qp: the adapter's view, including a state it reached by itself (ERR, SQE). */
    public QpAttr query() {
        checkOpen();
        Cmd.QpAttrs a = DriverCommand.run(driver, Cmd.QUERY_QP, Cmd.HANDLE, new Cmd.Handle(qpn), Cmd.QP_ATTRS);
        state = DeviceCodes.verbs(QpcState.of((int) a.state()));
        return new QpAttr().qpState(state).curQpState(state).qpAccessFlags(DeviceCodes.accessUp((int) a.access()))
                .qkey((int) a.qkey())
                .pathMtu(DeviceCodes.verbs(MtuCode.of((int) a.pathMtu()))).destQpNum((int) a.destQpn())
                .rqPsn((int) a.rqPsn()).sqPsn((int) a.sqPsn())
                .ahAttr(new AhAttr().dlid((int) a.dlid())).timeout((int) a.timeout()).retryCnt((int) a.retryCnt())
                .rnrRetry((int) a.rnrRetry()).minRnrTimer((int) a.minRnrTimer()).maxRdAtomic((int) a.maxRdAtomic())
                .maxDestRdAtomic((int) a.maxDestRdAtomic()).portNum((int) a.port()).pkeyIndex((int) a.pkeyIndex())
                .sqDraining(a.sqDraining() != 0);
    }

    /**
     * ibv_post_send. Refused with EINVAL before RTS (nothing is written); each request is checked
     * (opcode for the QP type, SGE count, inline size, atomic length and alignment) and a full ring
     * is ENOMEM; {@link VerbsException#badWrIndex()} names the first one not posted. In SQE and ERR
     * requests are posted and the adapter completes them with WR_FLUSH_ERR.
     */
    public void postSend(SendWr... wrs) {
        checkOpen();
        if (type == QpType.XRC_RECV)
            throw new VerbsException(Errno.EINVAL, "postSend on XRC_RECV QP 0x" + Integer.toHexString(qpn)
                    + ": an XRC target has no send queue", 0);
        if (dcType == DcType.DCT)
            throw new VerbsException(Errno.EINVAL, "postSend on DCT 0x" + Integer.toHexString(qpn)
                    + ": a DC target has no send queue", 0);
        if (state == QpState.RESET || state == QpState.INIT || state == QpState.RTR)
            throw new VerbsException(Errno.EINVAL, "postSend on QP 0x" + Integer.toHexString(qpn) + " in " + state
                    + ": sends are accepted from RTS on", 0);
        int posted = 0;
        byte[] lastCtrl = null, single = null;
        try {
            for (SendWr wr : wrs) {
                byte[] wqe = wqes.build(wr, posted, sq.head());
                if (!sq.fits(wqe.length / 64))
                    throw new VerbsException(Errno.ENOMEM, "postSend: the send queue of QP 0x"
                            + Integer.toHexString(qpn) + " is full (" + maxSendWr + " WRs)", posted);
                int idx = sq.head() & (sq.size() - 1);
                if (wr.opcode() == WrOpcode.BIND_MW) {
                    pendingBinds.put(idx, wr);
                } else if (!pendingBinds.isEmpty()) { // a post with no bind pending looks up nothing
                    pendingBinds.remove(idx);
                }
                sq.put(wqe, wr.wrId(), wr.opcode().ordinal());
                lastCtrl = wqe;
                single = wqe;
                posted++;
            }
        } catch (VerbsException e) {
            sq.ring(posted, lastCtrl, single);
            if (e.badWrIndex() >= 0) throw e;
            throw new VerbsException(e.errno(), e.getMessage().replaceFirst("^[A-Z]+: ", ""), posted);
        }
        sq.ring(posted, lastCtrl, single);
    }

    /**
     * Posts a WQE exactly as given (whole 64-byte WQEBBs; its ctrl index and QPN are set here, its opmod kept) and
     * rings the doorbell, with none of postSend's checks: for driver developers testing what the
     * adapter does with a WQE the verbs layer would refuse (malformed segments, misaligned atomics).
     * The completion reports {@code wrId}.
     */
    public void postRawWqe(long wrId, byte[] wqe) {
        checkOpen();
        if (wqe.length == 0 || wqe.length % 64 != 0)
            throw new VerbsException(Errno.EINVAL, "raw WQE of " + wqe.length + " bytes: whole 64-byte WQEBBs only");
        if (!sq.fits(wqe.length / 64)) throw new VerbsException(Errno.ENOMEM, "postRawWqe: the send queue is full", 0);
        byte[] w = wqe.clone();
        byte[] ctrl = WqeLayout.ctrl(w[3] & 0xff, sq.head(), qpn, w[7] & 0x3f);
        System.arraycopy(ctrl, 0, w, 0, 8);
        w[0] = wqe[0]; // the opmod: a layout UMR's says which layout segments follow
        pendingBinds.remove(sq.head() & (sq.size() - 1));
        sq.put(w, wrId, WrOpcode.SEND.ordinal());
        sq.ring(1, w, w);
    }

    /**
     * ibv_post_recv: refused in RESET (EINVAL); too many SGEs is EINVAL, a full ring ENOMEM. Writes
     * the receive WQE and the doorbell record (no MMIO, as mlx5). In ERR the adapter flushes it; the
     * driver nudges it with a send doorbell that posts nothing.
     */
    public void postRecv(RecvWr... wrs) {
        checkOpen();
        if (type == QpType.XRC_SEND || type == QpType.XRC_RECV)
            throw new VerbsException(Errno.EINVAL, "postRecv on " + type + " QP 0x" + Integer.toHexString(qpn)
                    + ": XRC receives are posted to an XRC SRQ of the target's domain", 0);
        if (dcType != null)
            throw new VerbsException(Errno.EINVAL, "postRecv on " + dcType + " 0x" + Integer.toHexString(qpn)
                    + (dcType == DcType.DCI ? ": a DC initiator only sends"
                            : ": a DC target's receives are posted to its SRQ"), 0);
        if (srq != null)
            throw new VerbsException(Errno.EINVAL, "postRecv on QP 0x" + Integer.toHexString(qpn)
                    + ", which takes its receives from SRQ " + srq.srqn + " (post to the SRQ)", 0);
        if (state == QpState.RESET)
            throw new VerbsException(Errno.EINVAL, "postRecv on QP 0x" + Integer.toHexString(qpn) + " in RESET", 0);
        int posted = 0;
        for (RecvWr wr : wrs) {
            if (wr.sgList().size() > maxRecvSge) {
                finishRecv(posted);
                throw new VerbsException(Errno.EINVAL,
                        "RecvWr.sgList has " + wr.sgList().size() + " SGEs; the QP allows " + maxRecvSge, posted);
            }
            long wqeBytes = (long) strideBytes * strides;
            if (strides > 0
                    && (wr.sgList().size() != 1 || (wr.sgList().get(0).length() & 0xFFFFFFFFL) < wqeBytes)) {
                finishRecv(posted);
                throw new VerbsException(Errno.EINVAL, "RecvWr on a striding receive queue needs one SGE of at least "
                        + wqeBytes + " bytes (" + strides + " strides of " + strideBytes + " B), got " + wr.sgList(),
                        posted);
            }
            if (rq.full()) {
                finishRecv(posted);
                throw new VerbsException(Errno.ENOMEM, "postRecv: the receive queue of QP 0x"
                        + Integer.toHexString(qpn) + " is full (" + maxRecvWr + " WRs)", posted);
            }
            rq.put(toWqe(wr.sgList()), wr.wrId());
            posted++;
        }
        finishRecv(posted);
    }

    /** Verbs SGEs as the WQE formats take them. */
    static List<WqeFormat.Sge> toWqe(List<Sge> sges) {
        List<WqeFormat.Sge> out = new ArrayList<>(sges.size());
        for (int k = 0; k < sges.size(); k++) { // indexed: no iterator a post
            Sge s = sges.get(k);
            out.add(new WqeFormat.Sge(s.addr(), s.length(), s.lkey()));
        }
        return out;
    }

    private void finishRecv(int posted) {
        if (posted == 0) return;
        rq.publish(posted);
        if (state == QpState.ERR) sq.nudge(WqeLayout.ctrl(0, sq.head(), qpn, 0));
    }

    /** Turns a CQE of this QP into a work completion, retiring the WQEs it covers. */
    WorkCompletion complete(Cqe64.View v, byte[] e) {
        int op = v.opcode();
        boolean requester = op == Cqe64.REQ || (op == Cqe64.REQ_ERR);
        if (op == Cqe64.REQ_ERR || op == Cqe64.RESP_ERR) {
            WcStatus status = DeviceCodes.status(v.syndrome());
            long wrId;
            if (requester) {
                pendingBinds.remove(v.wqeCounter() & (sq.size() - 1));
                wrId = sq.retire(v.wqeCounter()).wrId();
            } else {
                wrId = srq != null ? srq.take(v.wqeCounter()) : rq.take(v.wqeCounter());
            }
            if (status != WcStatus.WR_FLUSH_ERR)
                movedByDevice(requester ? DeviceCodes.verbs(QpTransitions.afterSendError(DeviceCodes.device(type)))
                        : QpState.ERR);
            return new WorkCompletion(wrId, status, WcOpcode.SEND, 0, qpn, 0, 0, 0, v.vendorSyndrome(), why(v, e), 0);
        }
        if (op == Cqe64.REQ) {
            SendWr bind = pendingBinds.remove(v.wqeCounter() & (sq.size() - 1));
            if (bind != null) bind.mw().bound(bind.bindRkey());
            SendRing.Slot slot = sq.retire(v.wqeCounter());
            long wrId = slot.wrId();
            WrOpcode wo = WrOpcode.values()[slot.tag()];
            WcOpcode wc = switch (wo) {
                case RDMA_WRITE, RDMA_WRITE_WITH_IMM -> WcOpcode.RDMA_WRITE;
                case RDMA_READ -> WcOpcode.RDMA_READ;
                case ATOMIC_CMP_AND_SWP -> WcOpcode.COMP_SWAP;
                case ATOMIC_FETCH_AND_ADD -> WcOpcode.FETCH_ADD;
                case LOCAL_INV -> WcOpcode.LOCAL_INV;
                case BIND_MW -> WcOpcode.BIND_MW;
                case DRIVER1 -> WcOpcode.DRIVER1;
                default -> WcOpcode.SEND;
            };
            int flags = wo == WrOpcode.RDMA_WRITE_WITH_IMM || wo == WrOpcode.SEND_WITH_IMM ? WcFlags.WITH_IMM : 0;
            return new WorkCompletion(wrId, WcStatus.SUCCESS, wc, (int) v.byteCount(), qpn, 0, 0, flags, 0, "", 0);
        }
        // responder
        if (strides > 0 && op != Cqe64.RESP_ERR) return strided(v, e);
        byte[] inline = Cqe64.inlineData(e);
        if (inline != null) scatter(host, inline, srq != null ? srq.sges(v.wqeCounter()) : rq.sges(v.wqeCounter()));
        return received(srq != null ? srq.take(v.wqeCounter()) : rq.take(v.wqeCounter()), v, e);
    }

    /**
     * A striding queue's completion: the message's stride and length, or a filler; the WQE stays
     * posted until a completion takes its last stride (STRIDE_BUFFER_CONSUMED), which releases it.
     */
    private WorkCompletion strided(Cqe64.View v, byte[] e) {
        Cqe64.StrideView s = Cqe64.parseStrided(e);
        int slot = v.wqeCounter() & 0xFFFF;
        int used = stridesUsed.merge(slot, s.strides(), Integer::sum);
        boolean consumed = used >= strides;
        long wrId = consumed ? rq.take(v.wqeCounter()) : rq.peek(v.wqeCounter());
        if (consumed) stridesUsed.remove(slot);
        int flags = (s.filler() ? WcFlags.STRIDE_FILLER : 0) | (consumed ? WcFlags.STRIDE_BUFFER_CONSUMED : 0);
        Cqe64.RecvView r = Cqe64.parseRecv(e);
        if (!s.filler() && v.opcode() == Cqe64.RESP_SEND_IMM) flags |= WcFlags.WITH_IMM;
        return new WorkCompletion(wrId, WcStatus.SUCCESS, WcOpcode.RECV, s.filler() ? 0 : s.bytes(), qpn,
                s.filler() ? 0 : (int) r.srcQp(), r.imm(), flags, 0, "", s.filler() ? 0 : r.slid(), s.firstStride());
    }

    /**
     * A receive the adapter put in its CQE: the library copies it to the buffers its WQE named, as mlx5's does in
     * poll_cq.
     */
    static void scatter(Host host, byte[] data, List<WqeFormat.Sge> sges) {
        int at = 0;
        for (WqeFormat.Sge s : sges) {
            if (at == data.length) break;
            int n = Math.min(data.length - at, s.length());
            long pa = host.pa(s.addr());
            if (pa >= 0) host.memory.write(pa, Arrays.copyOfRange(data, at, at + n));
            at += n;
        }
    }

    /** What an error CQE says went wrong, for the work completion's text. */
    static String why(Cqe64.View v, byte[] e) {
        Cqe64.ErrorView d = Cqe64.parseError(e);
        return Vendor.text(v.vendorSyndrome())
                + (d.piece() != 0 ? " in entry " + (d.piece() - 1) + " of the indirect mkey" : "")
                + (d.key() != 0 ? String.format(" (key 0x%x", d.key()) + String.format(", address 0x%x)", d.addr())
                        : "")
                + (d.psn() != 0 ? " at PSN " + d.psn() : "");
    }

    /** The work completion of a receive CQE (of QP {@code v.qpn()}) whose receive WQE had {@code wrId}. */
    static WorkCompletion received(long wrId, Cqe64.View v, byte[] e) {
        int op = v.opcode(), qpn = (int) v.qpn();
        if (op == Cqe64.RESP_ERR)
            return new WorkCompletion(wrId, DeviceCodes.status(v.syndrome()), WcOpcode.SEND, 0, qpn, 0, 0, 0,
                    v.vendorSyndrome(), why(v, e), 0);
        Cqe64.RecvView r = Cqe64.parseRecv(e);
        WcOpcode wc = op == Cqe64.RESP_WR_IMM ? WcOpcode.RECV_RDMA_WITH_IMM : WcOpcode.RECV;
        int flags = op == Cqe64.RESP_WR_IMM || op == Cqe64.RESP_SEND_IMM ? WcFlags.WITH_IMM
                : op == Cqe64.RESP_SEND_INV ? WcFlags.WITH_INV : 0;
        // its data took the source QP and LID fields (meaningful for UD only)
        boolean inline = Cqe64.inlineScattered(e);
        if (!inline && Cqe64.grh(e)) flags |= WcFlags.GRH;
        return new WorkCompletion(wrId, WcStatus.SUCCESS, wc, (int) v.byteCount(), qpn,
                inline ? 0 : (int) r.srcQp(), r.imm(), flags, 0, "", inline ? 0 : r.slid());
    }

    /**
     * ibv_attach_mcast: this UD QP receives what is sent to multicast group {@code gid} (16 bytes, the MGID),
     * whose MLID is {@code lid}. The adapter keys the group by its MGID; the LID is checked (a multicast LID,
     * 0xC000..0xFFFE) as the kernel's verbs layer checks it. Joining the group on the fabric, so that the
     * switch forwards its packets to this port, is the subnet manager's (rdma_join_multicast does both).
     */
    public void attachMcast(byte[] gid, int lid) { mcast(Cmd.ATTACH_MCAST, "attachMcast", gid, lid); }

    /** ibv_detach_mcast: this QP leaves multicast group {@code gid}; EINVAL if it is not attached to it. */
    public void detachMcast(byte[] gid, int lid) { mcast(Cmd.DETACH_MCAST, "detachMcast", gid, lid); }

    private void mcast(int opcode, String verb, byte[] gid, int lid) {
        checkOpen();
        if (gid == null || gid.length != 16)
            throw new VerbsException(Errno.EINVAL, verb + ": gid must be 16 bytes, got "
                    + (gid == null ? "null" : gid.length));
        long hi = BigEndian.get64(gid, 0), lo = BigEndian.get64(gid, 8);
        if ((gid[0] & 0xff) != 0xff)
            throw new VerbsException(Errno.EINVAL, String.format("%s: gid %s is not a multicast GID (its first byte "
                    + "must be 0xff)", verb, Grh.text(hi, lo)));
        if (lid < Packet.MULTICAST_LID_FIRST || lid > Packet.MULTICAST_LID_LAST)
            throw new VerbsException(Errno.EINVAL, String.format("%s: lid 0x%x is not a multicast LID (0xc000..0xfffe)",
                    verb, lid));
        if (type != QpType.UD)
            throw new VerbsException(Errno.EINVAL, verb + ": QP 0x" + Integer.toHexString(qpn) + " is " + type
                    + "; only UD QPs join groups");
        DriverCommand.run(driver, opcode, Cmd.MCAST_ATTACH_IN, new Cmd.McastAttach(qpn, hi, lo), Cmd.EMPTY);
    }

    @Override protected String describe() { return "QueuePair(0x" + Integer.toHexString(qpn) + ")"; }

    @Override protected void destroy() {
        DriverCommand.run(driver, Cmd.DESTROY_QP, Cmd.HANDLE, new Cmd.Handle(qpn), Cmd.EMPTY);
        driver.host().qpCounters().destroyed(qpn);
        ctx.qps.remove(qpn);
        freeRings();
    }

    private void freeRings() {
        sq.free();
        rq.free();
        driver.host().freePhysical(dbrec, 8);
    }
}
