package nicsim.serve;

import java.nio.ByteBuffer;
import nicsim.serve.CmLayout.SaPathRecord;
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
            boolean routed = routed(id);
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

    /** IB_PATH_GMP | IB_PATH_PRIMARY | IB_PATH_BIDIRECTIONAL: how the kernel's ucma_query_path marks each path. */
    static final int PATH_FLAGS = 0x01 | 0x02 | 0x08 | 0x20;

    /** Whether {@code id} has its path: its route resolved, or a connection request came (the REQ's path). */
    private static boolean routed(CmId id) {
        return id.node >= 0 && id.remoteNode >= 0 && id.state != CmId.State.ADDR_RESOLVED
                && id.state != CmId.State.ADDR_QUERY;
    }

    /**
     * QUERY (RDMA_USER_CM_CMD_QUERY, librdmacm's way once its AF_IB bind succeeds), as the kernel's ucma_query:
     * {@code option} ADDR (struct rdma_ucm_query_addr_resp: the addresses in their own families), GID (the same, as
     * AF_IB addresses: the ports' GIDs and the service IDs) or PATH (struct rdma_ucm_query_path_resp), in at most
     * {@code out} bytes (fewer than the answer's fixed part: ENOSPC).
     */
    static byte[] query(RdmaCm cm, CmId id, int option, int out) {
        int need = option == CmAbi.QUERY_PATH ? CmLayout.QueryPathResp.S.size : CmLayout.QueryAddrResp.S.size;
        if (option < CmAbi.QUERY_ADDR || option > CmAbi.QUERY_GID)
            throw new VerbsException(Errno.ENOSYS, "query: option " + option
                    + " is none of ADDR (0), PATH (1), GID (2)");
        if (out < need) throw new VerbsException(Errno.ENOSPC, "query: " + out + " bytes of room for an answer of "
                + need);
        return option == CmAbi.QUERY_PATH ? paths(cm, id, out) : addresses(cm, id, option == CmAbi.QUERY_GID);
    }

    /** struct rdma_ucm_query_addr_resp: the identifier's addresses as they are, or ({@code gids}) as AF_IB ones. */
    private static byte[] addresses(RdmaCm cm, CmId id, boolean gids) {
        ByteBuffer b = CmAbi.le(new byte[CmLayout.QueryAddrResp.S.size]);
        if (id.node >= 0) {
            CmLayout.QueryAddrResp.NODE_GUID.put64(b, Long.reverseBytes(DeviceQueries.nodeGuid(id.node)));
            CmLayout.QueryAddrResp.PORT_NUM.put8(b, 1);
            CmLayout.QueryAddrResp.PKEY.put16(b, 0xffff); // the default partition's, in network order
        }
        CmAbi.Addr src = id.src, dst = id.dst;
        if (gids) {
            byte[] none = new byte[16];
            src = asIb(id, src, id.node >= 0 ? cm.ib.gid(id.node) : none);
            dst = asIb(id, dst, id.node >= 0 && id.remoteNode >= 0 ? cm.ib.gid(id.remoteNode) : none);
        }
        int size = CmLayout.QueryAddrResp.SRC_ADDR.bytes();
        CmLayout.QueryAddrResp.SRC_SIZE.put16(b, src.size());
        CmLayout.QueryAddrResp.DST_SIZE.put16(b, dst.size());
        if (src.size() > 0) CmLayout.QueryAddrResp.SRC_ADDR.putBytes(b, 0, src.sockaddr(size), size);
        if (dst.size() > 0) CmLayout.QueryAddrResp.DST_ADDR.putBytes(b, 0, dst.sockaddr(size), size);
        CmLayout.QueryAddrResp.IBDEV_INDEX.put32(b, -1); // not given: librdmacm matches the device by its GUID
        return b.array();
    }

    /**
     * An address as QUERY's GID option gives it: an AF_IB one as it is; an IP one as the port's GID, the default
     * P_Key and the service ID of its port space and port (the kernel's rdma_get_service_id).
     */
    private static CmAbi.Addr asIb(CmId id, CmAbi.Addr a, byte[] gid) {
        if (a.ib() != null) return a;
        int port = a == CmAbi.Addr.NONE ? 0 : a.port();
        return new CmAbi.Addr(a.ip(), port, false, new CmAbi.Ib(0, 0, 0xffff, 0, CmIb.ps(id.ps) | port, 0, 0)
                .withGid(gid));
    }

    /** struct rdma_ucm_query_path_resp and its paths: one, once the route is known, as an SA PathRecord. */
    private static byte[] paths(RdmaCm cm, CmId id, int out) {
        int one = CmLayout.PathRecData.S.size, fixed = CmLayout.QueryPathResp.S.size;
        boolean routed = routed(id);
        // the kernel copies a path only while more than a whole one's room is left (ucma_query_path)
        int copied = routed && out - fixed > one ? 1 : 0;
        ByteBuffer b = CmAbi.le(new byte[fixed + copied * one]);
        CmLayout.QueryPathResp.NUM_PATHS.put32(b, routed ? 1 : 0);
        if (copied == 0) return b.array();
        CmLayout.PathRecData.FLAGS.put32(b, fixed, PATH_FLAGS);
        CmAgent a = cm.agent(id.node), r = cm.agent(id.remoteNode);
        CmLayout.PathRecData.PATH_REC.putBytes(b, fixed, saPathRecord(serviceId(id), r.gid, a.gid, r.lid, a.lid,
                pathMtu(cm, id)), SaPathRecord.S.size);
        return b.array();
    }

    /** The service ID of {@code id}'s connection: its AF_IB address's, or its port space's and the listener's port. */
    static long serviceId(CmId id) {
        CmAbi.Addr served = id.passive ? id.src : id.dst;
        if (served.ib() != null) return served.ib().sid();
        return CmIb.ps(id.ps) | served.port();
    }

    /** A PathRecord as the SA packs it (IBA 15.2.5.16, network order): what ib_sa_pack_path gives the kernel's ucma. */
    static byte[] saPathRecord(long sid, byte[] dgid, byte[] sgid, int dlid, int slid, int mtu) {
        ByteBuffer r = CmAbi.le(new byte[SaPathRecord.S.size]);
        SaPathRecord.SERVICE_ID.put64(r, sid);
        SaPathRecord.DGID.putBytes(r, 0, dgid, 16);
        SaPathRecord.SGID.putBytes(r, 0, sgid, 16);
        SaPathRecord.DLID.put16(r, dlid);
        SaPathRecord.SLID.put16(r, slid);
        SaPathRecord.REVERSIBLE_NUMPATH.put8(r, 0x81); // reversible, one path
        SaPathRecord.PKEY.put16(r, 0xffff);
        SaPathRecord.MTU.put8(r, 2 << 6 | mtu); // each selector "exactly" (2)
        SaPathRecord.RATE.put8(r, 2 << 6 | RATE);
        SaPathRecord.PACKETLIFETIME.put8(r, 2 << 6 | PACKET_LIFE);
        return r.array();
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
