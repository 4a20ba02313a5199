package nicsim.verbs;

/**
 * The usual transitions (RESET to INIT to RTR to RTS) with perftest's attributes, and what two
 * sides exchange to connect: LID, QP number and starting PSN (rdma-core examples send these over
 * TCP; in one simulated cluster the program passes them directly).
 */
public final class Connect {
    private Connect() {}

    /**
     * What one side tells the other: its LID, QP number, starting PSN, and (for RDMA) a buffer's address and
     * rkey.
     */
    public record Dest(int lid, int qpn, int psn, long addr, int rkey) {
        public static Dest of(Context ctx, QueuePair qp, int psn) {
            return new Dest(ctx.queryPort(1).lid(), qp.qpNum(), psn, 0, 0);
        }

        public Dest withBuffer(long a, int k) { return new Dest(lid, qpn, psn, a, k); }
    }

    public static final int ALL_REMOTE = AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE | AccessFlags.REMOTE_READ
            | AccessFlags.REMOTE_ATOMIC;
    /** perftest's QP attributes (docs/sources.md#perftest-defaults). */
    public static final int TIMEOUT = 14, RETRY_CNT = 7, RNR_RETRY = 7, MIN_RNR_TIMER = 12, OUT_READS = 4;
    public static final int QKEY = 0x11111111;

    /** RESET to INIT: port 1, P_Key index 0, and the access flags (RC, UC, XRC) or qkey (UD). */
    public static void toInit(QueuePair qp, int access) {
        QpAttr a = new QpAttr().qpState(QpState.INIT).pkeyIndex(0).portNum(1);
        int mask = QpAttrMask.STATE | QpAttrMask.PKEY_INDEX | QpAttrMask.PORT;
        if (qp.qpType() == QpType.UD) qp.modify(a.qkey(QKEY), mask | QpAttrMask.QKEY);
        else if (qp.dcType() == DcType.DCI) qp.modify(a, mask);
        else qp.modify(a.qpAccessFlags(access), mask | QpAttrMask.ACCESS_FLAGS);
    }

    /** INIT to RTR towards {@code remote}, at {@code mtu}. */
    public static void toRtr(QueuePair qp, Dest remote, Mtu mtu) {
        QpAttr a = new QpAttr().qpState(QpState.RTR);
        switch (qp.qpType()) {
            case UD -> qp.modify(a, QpAttrMask.STATE);
            case UC, XRC_SEND -> qp.modify(a.pathMtu(mtu).destQpNum(remote.qpn()).rqPsn(remote.psn())
                            .ahAttr(new AhAttr().dlid(remote.lid())),
                    QpAttrMask.STATE | QpAttrMask.AV | QpAttrMask.PATH_MTU | QpAttrMask.DEST_QPN | QpAttrMask.RQ_PSN);
            default -> qp.modify(a.pathMtu(mtu).destQpNum(remote.qpn()).rqPsn(remote.psn())
                            .ahAttr(new AhAttr().dlid(remote.lid()))
                            .maxDestRdAtomic(OUT_READS).minRnrTimer(MIN_RNR_TIMER),
                    QpAttrMask.STATE | QpAttrMask.AV | QpAttrMask.PATH_MTU | QpAttrMask.DEST_QPN | QpAttrMask.RQ_PSN
                            | QpAttrMask.MAX_DEST_RD_ATOMIC | QpAttrMask.MIN_RNR_TIMER);
        }
    }

    /** RTR to RTS with starting PSN {@code psn}. */
    public static void toRts(QueuePair qp, int psn) {
        QpAttr a = new QpAttr().qpState(QpState.RTS).sqPsn(psn);
        if (qp.qpType() == QpType.RC || qp.qpType() == QpType.XRC_SEND)
            qp.modify(a.timeout(TIMEOUT).retryCnt(RETRY_CNT).rnrRetry(RNR_RETRY).maxRdAtomic(OUT_READS),
                    QpAttrMask.STATE | QpAttrMask.SQ_PSN | QpAttrMask.TIMEOUT | QpAttrMask.RETRY_CNT
                            | QpAttrMask.RNR_RETRY | QpAttrMask.MAX_QP_RD_ATOMIC);
        else if (qp.qpType() == QpType.XRC_RECV)
            qp.modify(a.timeout(TIMEOUT), QpAttrMask.STATE | QpAttrMask.SQ_PSN | QpAttrMask.TIMEOUT);
        else qp.modify(a, QpAttrMask.STATE | QpAttrMask.SQ_PSN);
    }

    /**
     * A DC QP made ready, as perftest's DC setup does: a DCI to RTS (it names no peer: each request
     * does), starting at PSN {@code psn}; a DCT to RTR, where it answers any initiator, with access
     * flags {@code access}.
     */
    public static void dc(QueuePair qp, int access, Mtu mtu, int psn) {
        toInit(qp, access);
        QpAttr a = new QpAttr().qpState(QpState.RTR).pathMtu(mtu);
        if (qp.dcType() == DcType.DCT) {
            qp.modify(a.minRnrTimer(MIN_RNR_TIMER), QpAttrMask.STATE | QpAttrMask.PATH_MTU | QpAttrMask.MIN_RNR_TIMER);
            return;
        }
        qp.modify(a, QpAttrMask.STATE | QpAttrMask.PATH_MTU);
        qp.modify(new QpAttr().qpState(QpState.RTS).sqPsn(psn).timeout(TIMEOUT).retryCnt(RETRY_CNT)
                        .rnrRetry(RNR_RETRY).maxRdAtomic(OUT_READS),
                QpAttrMask.STATE | QpAttrMask.SQ_PSN | QpAttrMask.TIMEOUT | QpAttrMask.RETRY_CNT | QpAttrMask.RNR_RETRY
                        | QpAttrMask.MAX_QP_RD_ATOMIC);
    }

    /** All three, for a QP connected to {@code remote}. */
    public static void up(QueuePair qp, int access, Dest remote, Mtu mtu, int myPsn) {
        toInit(qp, access);
        toRtr(qp, remote, mtu);
        toRts(qp, myPsn);
    }
}
