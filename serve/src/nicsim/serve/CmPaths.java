package nicsim.serve;

import java.nio.ByteBuffer;
import nicsim.verbs.AccessFlags;
import nicsim.verbs.Errno;
import nicsim.verbs.QpAttrMask;
import nicsim.verbs.VerbsException;

/**
 * What the kernel's RDMA CM copies out about a connection: its path (rdma_query_route) and the QP
 * attributes for each step of the QP's way to RTS (rdma_init_qp_attr), as the IB CM exchange left
 * them.
 */
final class CmPaths {
    /** The path's packet life time (4.096 us x 2^13); the QPs' ACK timeout is one more, as the kernel sets it. */
    static final int PACKET_LIFE = 13;
    /** The path's rate: IB_RATE_100_GBPS, a 4X EDR port. */
    static final int RATE = 16;

    private CmPaths() {}

    /** The path's MTU: the smaller of the two ports'. */
    static int pathMtu(RdmaCm cm, CmId id) {
        return Math.min(cm.agent(id.node).mtu.value(), cm.agent(id.remoteNode).mtu.value());
    }

    /** The Q_Key of a UD identifier: its port space's, or the one {@code given}. */
    static int udQkey(CmId id, int given) {
        return switch (id.ps) {
            case CmAbi.PS_UDP -> CmAbi.RDMA_UDP_QKEY;
            case CmAbi.PS_IPOIB -> CmAbi.IPOIB_QKEY;
            default -> given != 0 ? given : CmAbi.RDMA_UDP_QKEY;
        };
    }

    /** Whether REQ and REP went between the two sides: the peer's QP is known. */
    private static boolean exchanged(CmId id) {
        return switch (id.state) {
            case REQ_RCVD, REP_SENT, REP_RCVD, ESTABLISHED, DREQ_SENT, DREQ_RCVD, DISCONNECTED -> true;
            default -> false;
        };
    }

    /** struct rdma_ucm_query_route_resp for {@code id}. */
    static byte[] route(RdmaCm cm, CmId id) {
        ByteBuffer b = CmAbi.le(new byte[CmLayout.QueryRouteResp.S.size]);
        int path = CmLayout.QueryRouteResp.IB_ROUTE.offset();
        if (id.node >= 0) {
            CmAgent a = cm.agent(id.node);
            CmLayout.QueryRouteResp.NODE_GUID.put64(b, Long.reverseBytes(DeviceQueries.nodeGuid(id.node)));
            boolean routed = id.remoteNode >= 0 && id.state != CmId.State.ADDR_RESOLVED
                    && id.state != CmId.State.ADDR_QUERY;
            if (id.remoteNode >= 0) {
                CmAgent r = cm.agent(id.remoteNode);
                CmAbi.pathRecord(b, path, r.gid, a.gid, r.lid, a.lid, pathMtu(cm, id), RATE, PACKET_LIFE);
                if (routed) CmLayout.QueryRouteResp.NUM_PATHS.put32(b, 1);
            } else {
                CmLayout.PathRec.SGID.putBytes(b, path, a.gid, 16);
                CmLayout.PathRec.PKEY.put16(b, path, 0xffff);
            }
            CmLayout.QueryRouteResp.PORT_NUM.put8(b, 1);
        }
        int size = CmLayout.QueryRouteResp.SRC_ADDR.bytes();
        CmLayout.QueryRouteResp.SRC_ADDR.putBytes(b, 0, id.src.sockaddr(size), size);
        if (id.dst != CmAbi.Addr.NONE) CmLayout.QueryRouteResp.DST_ADDR.putBytes(b, 0, id.dst.sockaddr(size), size);
        // ibdev_index: not given (librdmacm matches the device by its GUID)
        CmLayout.QueryRouteResp.IBDEV_INDEX.put32(b, -1);
        return b.array();
    }

    /** struct ib_uverbs_qp_attr: what rdma_init_qp_attr gives for moving {@code id}'s QP to {@code qpState}. */
    static byte[] initQpAttr(RdmaCm cm, CmId id, int qpState) {
        if (id.node < 0) throw new VerbsException(Errno.EINVAL, "init_qp_attr: cm_id " + id.handle
                + " is not bound to a device");
        if (!id.ud() && qpState > 1 && !exchanged(id))
            throw new VerbsException(Errno.EINVAL, "init_qp_attr: cm_id " + id.handle + " is " + id.state
                    + "; the peer's QP is known once the CM has exchanged REQ and REP");
        ByteBuffer b = CmAbi.le(new byte[CmLayout.QpAttr.S.size]);
        int mask = QpAttrMask.STATE | switch (qpState) {
            case 1 -> toInit(id, b);
            case 2 -> toRtr(cm, id, b);
            case 3 -> toRts(id, b);
            default -> throw new VerbsException(Errno.EINVAL, "init_qp_attr: qp_state " + qpState
                    + " is none of INIT, RTR, RTS");
        };
        CmLayout.QpAttr.QP_ATTR_MASK.put32(b, mask);
        CmLayout.QpAttr.QP_STATE.put32(b, qpState);
        return b.array();
    }

    private static int toInit(CmId id, ByteBuffer b) {
        CmLayout.QpAttr.PORT_NUM.put8(b, 1);
        if (id.ud()) {
            CmLayout.QpAttr.QKEY.put32(b, udQkey(id, 0));
            return QpAttrMask.PKEY_INDEX | QpAttrMask.PORT | QpAttrMask.QKEY;
        }
        boolean rc = id.qpType != CmAbi.QPT_UC; // RC or either XRC half: the kernel's CM treats them alike here
        int access = !exchanged(id) ? 0 : AccessFlags.REMOTE_WRITE
                | (rc && id.respRes > 0 ? AccessFlags.REMOTE_READ | AccessFlags.REMOTE_ATOMIC : 0);
        CmLayout.QpAttr.QP_ACCESS_FLAGS.put32(b, access);
        return QpAttrMask.PKEY_INDEX | QpAttrMask.PORT | QpAttrMask.ACCESS_FLAGS;
    }

    private static int toRtr(RdmaCm cm, CmId id, ByteBuffer b) {
        if (id.ud()) return 0;
        int mask = QpAttrMask.AV | QpAttrMask.PATH_MTU | QpAttrMask.DEST_QPN | QpAttrMask.RQ_PSN;
        CmLayout.QpAttr.PATH_MTU.put32(b, id.mtu != 0 ? id.mtu : pathMtu(cm, id));
        CmLayout.QpAttr.RQ_PSN.put32(b, id.remotePsn);
        CmLayout.QpAttr.DEST_QP_NUM.put32(b, id.remoteQpn);
        CmAbi.ahAttr(b, CmLayout.QpAttr.AH_ATTR.offset(), cm.agent(id.remoteNode).lid);
        // the receiving halves (RC, an XRC target) answer reads and take RNR NAKs: cm_init_qp_rtr_attr
        if (id.qpType != CmAbi.QPT_RC && id.qpType != CmAbi.QPT_XRC_TGT) return mask;
        CmLayout.QpAttr.MAX_DEST_RD_ATOMIC.put8(b, id.respRes);
        CmLayout.QpAttr.MIN_RNR_TIMER.put8(b, 0);
        return mask | QpAttrMask.MAX_DEST_RD_ATOMIC | QpAttrMask.MIN_RNR_TIMER;
    }

    private static int toRts(CmId id, ByteBuffer b) {
        if (!id.ud()) CmLayout.QpAttr.SQ_PSN.put32(b, id.localPsn);
        if (id.qpType == CmAbi.QPT_UC || id.ud()) return QpAttrMask.SQ_PSN;
        // an XRC target sends only acknowledgements: its ACK timeout, no retries (cm_init_qp_rts_attr)
        CmLayout.QpAttr.TIMEOUT.put8(b, id.ackTimeout >= 0 ? id.ackTimeout : PACKET_LIFE + 1);
        if (id.qpType == CmAbi.QPT_XRC_TGT) return QpAttrMask.SQ_PSN | QpAttrMask.TIMEOUT;
        CmLayout.QpAttr.MAX_RD_ATOMIC.put8(b, id.initDepth);
        CmLayout.QpAttr.RETRY_CNT.put8(b, id.retry);
        CmLayout.QpAttr.RNR_RETRY.put8(b, id.rnrRetry);
        return QpAttrMask.SQ_PSN | QpAttrMask.TIMEOUT | QpAttrMask.RETRY_CNT | QpAttrMask.RNR_RETRY
                | QpAttrMask.MAX_QP_RD_ATOMIC;
    }
}
