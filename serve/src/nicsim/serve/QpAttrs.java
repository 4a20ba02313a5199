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
    static QpAttr decode(Wire.In in, int mask) {
        in.expect(WireLayout.QP_ATTR);
        int state = in.u32("qp_state"), cur = in.u32("cur_qp_state"), mtu = in.u32("path_mtu");
        int qkey = in.u32("qkey"), rqPsn = in.u32("rq_psn"), sqPsn = in.u32("sq_psn"), dest = in.u32("dest_qp_num");
        int access = in.u32("qp_access_flags"), pkey = in.u32("pkey_index"), port = in.u32("port_num");
        int rd = in.u32("max_rd_atomic"), destRd = in.u32("max_dest_rd_atomic"), rnrTimer = in.u32("min_rnr_timer");
        int timeout = in.u32("timeout"), retry = in.u32("retry_cnt"), rnrRetry = in.u32("rnr_retry");
        boolean draining = in.u32("sq_draining") != 0;
        AhAttr ah = addressVector(in);
        QpAttr a = new QpAttr();
        if (has(mask, QpAttrMask.STATE)) a.qpState(qpState(state, "qp_state"));
        if (has(mask, QpAttrMask.CUR_STATE)) a.curQpState(qpState(cur, "cur_qp_state"));
        if (has(mask, QpAttrMask.PATH_MTU)) a.pathMtu(Mtu.of(mtu));
        if (has(mask, QpAttrMask.QKEY)) a.qkey(qkey);
        if (has(mask, QpAttrMask.RQ_PSN)) a.rqPsn(rqPsn);
        if (has(mask, QpAttrMask.SQ_PSN)) a.sqPsn(sqPsn);
        if (has(mask, QpAttrMask.DEST_QPN)) a.destQpNum(dest);
        if (has(mask, QpAttrMask.ACCESS_FLAGS)) a.qpAccessFlags(access);
        if (has(mask, QpAttrMask.PKEY_INDEX)) a.pkeyIndex(pkey);
        if (has(mask, QpAttrMask.PORT)) a.portNum(port);
        if (has(mask, QpAttrMask.MAX_QP_RD_ATOMIC)) a.maxRdAtomic(rd);
        if (has(mask, QpAttrMask.MAX_DEST_RD_ATOMIC)) a.maxDestRdAtomic(destRd);
        if (has(mask, QpAttrMask.MIN_RNR_TIMER)) a.minRnrTimer(rnrTimer);
        if (has(mask, QpAttrMask.TIMEOUT)) a.timeout(timeout);
        if (has(mask, QpAttrMask.RETRY_CNT)) a.retryCnt(retry);
        if (has(mask, QpAttrMask.RNR_RETRY)) a.rnrRetry(rnrRetry);
        if (has(mask, QpAttrMask.EN_SQD_ASYNC_NOTIFY)) a.enSqdAsyncNotify(draining);
        if (has(mask, QpAttrMask.AV)) a.ahAttr(ah);
        return a;
    }

    private static boolean has(int mask, int bit) { return (mask & bit) != 0; }

    /** The address vector (ibv_ah_attr) of a modify_qp request. */
    private static AhAttr addressVector(Wire.In in) {
        int dlid = in.u32("ah_dlid"), sl = in.u32("ah_sl"), pathBits = in.u32("ah_src_path_bits");
        in.u32("ah_static_rate");
        in.u32("ah_is_global"); // the fabric routes by LID; a GRH changes nothing here
        int port = in.u32("ah_port_num");
        return new AhAttr().dlid(dlid).sl(sl).srcPathBits(pathBits).portNum(port == 0 ? 1 : port);
    }

    private static QpState qpState(int v, String field) {
        for (QpState s : QpState.values()) if (s.value() == v) return s;
        throw new VerbsException(Errno.EINVAL, "modify_qp " + field + " " + Integer.toUnsignedString(v)
                + " is no ibv_qp_state");
    }

    /** query_qp's reply: the attributes, in modify_qp's order (the init attributes follow). */
    static Wire.Out encode(QpAttr a) {
        AhAttr ah = a.ahAttr();
        return new Wire.Out(WireLayout.QP_ATTR).u32("qp_state", a.qpState().value())
                .u32("cur_qp_state", a.curQpState().value()).u32("path_mtu", a.pathMtu().value()).u32("qkey", a.qkey())
                .u32("rq_psn", a.rqPsn()).u32("sq_psn", a.sqPsn()).u32("dest_qp_num", a.destQpNum())
                .u32("qp_access_flags", a.qpAccessFlags()).u32("pkey_index", a.pkeyIndex())
                .u32("port_num", a.portNum()).u32("max_rd_atomic", a.maxRdAtomic())
                .u32("max_dest_rd_atomic", a.maxDestRdAtomic()).u32("min_rnr_timer", a.minRnrTimer())
                .u32("timeout", a.timeout()).u32("retry_cnt", a.retryCnt()).u32("rnr_retry", a.rnrRetry())
                .u32("sq_draining", a.sqDraining() ? 1 : 0).u32("ah_dlid", ah.dlid()).u32("ah_sl", ah.sl())
                .u32("ah_src_path_bits", ah.srcPathBits()).u32("ah_static_rate", 0)
                .u32("ah_is_global", ah.isGlobal() ? 1 : 0).u32("ah_port_num", ah.portNum());
    }
}
