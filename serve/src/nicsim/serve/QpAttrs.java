package nicsim.serve;

import nicsim.verbs.AhAttr;
import nicsim.verbs.Errno;
import nicsim.verbs.Mtu;
import nicsim.verbs.QpAttr;
import nicsim.verbs.QpAttrMask;
import nicsim.verbs.QpState;
import nicsim.verbs.VerbsException;

/**
 * struct ibv_qp_attr on the wire: modify_qp's fields read under their mask bits, query_qp's written.
 * A field counts only under its mask bit: programs leave the others as they are (rdma-core's
 * xsrq_pingpong leaves them uninitialised; librdmacm moves a QP to ERR with nothing but qp_state).
 */
final class QpAttrs {
    private QpAttrs() {}

    /** The attributes of a modify_qp request, those under {@code mask} set. */
    static QpAttr decode(WireLayout.QpAttr w, int mask) {
        QpAttr a = new QpAttr();
        if (has(mask, QpAttrMask.STATE)) a.qpState(qpState(w.qpState(), "qp_state"));
        if (has(mask, QpAttrMask.CUR_STATE)) a.curQpState(qpState(w.curQpState(), "cur_qp_state"));
        if (has(mask, QpAttrMask.PATH_MTU)) a.pathMtu(Mtu.of(w.pathMtu()));
        if (has(mask, QpAttrMask.QKEY)) a.qkey(w.qkey());
        if (has(mask, QpAttrMask.RQ_PSN)) a.rqPsn(w.rqPsn());
        if (has(mask, QpAttrMask.SQ_PSN)) a.sqPsn(w.sqPsn());
        if (has(mask, QpAttrMask.DEST_QPN)) a.destQpNum(w.destQpNum());
        if (has(mask, QpAttrMask.ACCESS_FLAGS)) a.qpAccessFlags(w.qpAccessFlags());
        if (has(mask, QpAttrMask.PKEY_INDEX)) a.pkeyIndex(w.pkeyIndex());
        if (has(mask, QpAttrMask.PORT)) a.portNum(w.portNum());
        if (has(mask, QpAttrMask.MAX_QP_RD_ATOMIC)) a.maxRdAtomic(w.maxRdAtomic());
        if (has(mask, QpAttrMask.MAX_DEST_RD_ATOMIC)) a.maxDestRdAtomic(w.maxDestRdAtomic());
        if (has(mask, QpAttrMask.MIN_RNR_TIMER)) a.minRnrTimer(w.minRnrTimer());
        if (has(mask, QpAttrMask.TIMEOUT)) a.timeout(w.timeout());
        if (has(mask, QpAttrMask.RETRY_CNT)) a.retryCnt(w.retryCnt());
        if (has(mask, QpAttrMask.RNR_RETRY)) a.rnrRetry(w.rnrRetry());
        if (has(mask, QpAttrMask.EN_SQD_ASYNC_NOTIFY)) a.enSqdAsyncNotify(w.sqDraining());
        // the fabric routes by LID: a GRH (is_global) and the static rate change nothing here
        if (has(mask, QpAttrMask.AV)) a.ahAttr(new AhAttr().dlid(w.ahDlid()).sl(w.ahSl()).srcPathBits(w.ahSrcPathBits())
                .portNum(w.ahPortNum() == 0 ? 1 : w.ahPortNum()));
        return a;
    }

    private static boolean has(int mask, int bit) { return (mask & bit) != 0; }

    private static QpState qpState(int v, String field) {
        for (QpState s : QpState.values()) if (s.value() == v) return s;
        throw new VerbsException(Errno.EINVAL, "modify_qp " + field + " " + Integer.toUnsignedString(v)
                + " is no ibv_qp_state");
    }

    /** query_qp's attributes, in modify_qp's order (the init attributes follow). */
    static WireLayout.QpAttr encode(QpAttr a) {
        AhAttr ah = a.ahAttr();
        return new WireLayout.QpAttr(a.qpState().value(), a.curQpState().value(), a.pathMtu().value(), a.qkey(),
                a.rqPsn(), a.sqPsn(), a.destQpNum(), a.qpAccessFlags(), a.pkeyIndex(), a.portNum(), a.maxRdAtomic(),
                a.maxDestRdAtomic(), a.minRnrTimer(), a.timeout(), a.retryCnt(), a.rnrRetry(), a.sqDraining(),
                ah.dlid(), ah.sl(), ah.srcPathBits(), 0, ah.isGlobal(), ah.portNum());
    }
}
