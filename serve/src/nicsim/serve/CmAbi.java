package nicsim.serve;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import nicsim.fabric.Grh;
import nicsim.verbs.Errno;
import nicsim.verbs.VerbsException;

/**
 * The kernel's RDMA CM file as librdmacm speaks to it (linux/include/uapi/rdma/rdma_user_cm.h, ABI
 * version 4): command numbers, the answers (the kernel's own structures byte for byte, their fields
 * where {@link CmLayout} declares them), and IPv4 socket addresses.
 */
final class CmAbi {
    private CmAbi() {}

    static final int ABI_VERSION = 4;
    static final int CREATE_ID = 0, DESTROY_ID = 1, BIND_IP = 2, RESOLVE_IP = 3, RESOLVE_ROUTE = 4, QUERY_ROUTE = 5,
            CONNECT = 6, LISTEN = 7, ACCEPT = 8, REJECT = 9, DISCONNECT = 10, INIT_QP_ATTR = 11, GET_EVENT = 12,
            GET_OPTION = 13, SET_OPTION = 14, NOTIFY = 15, JOIN_IP_MCAST = 16, LEAVE_MCAST = 17, MIGRATE_ID = 18,
            QUERY = 19, BIND = 20, RESOLVE_ADDR = 21, JOIN_MCAST = 22;
    static final int PS_IPOIB = 0x0002, PS_IB = 0x013F, PS_TCP = 0x0106, PS_UDP = 0x0111;
    /** enum ib_qp_type (and ibv_qp_type): XRC_INI and XRC_TGT are libibverbs' XRC_SEND and XRC_RECV. */
    static final int QPT_RC = 2, QPT_UC = 3, QPT_UD = 4, QPT_XRC_INI = 9, QPT_XRC_TGT = 10;
    static final int RDMA_UDP_QKEY = 0x01234567, IPOIB_QKEY = 0x0b1b;
    /** enum rdma_cm_event_type. */
    static final int ADDR_RESOLVED = 0, ADDR_ERROR = 1, ROUTE_RESOLVED = 2, ROUTE_ERROR = 3, CONNECT_REQUEST = 4,
            CONNECT_RESPONSE = 5, CONNECT_ERROR = 6, UNREACHABLE = 7, REJECTED = 8, ESTABLISHED = 9, DISCONNECTED = 10,
            DEVICE_REMOVAL = 11;
    static final int AF_INET = 2, AF_INET6 = 10, AF_IB = 27;
    /**
     * An AF_IB address's service ID: the IP port spaces' IDs (RDMA_IB_IP_PS_TCP, _UDP, _IB) are 0x1_PPPP_xxxx, the
     * port space P then the port (rdma_cma.h); PS_MASK covers the port space's part.
     */
    static final long IB_PS_MASK = 0xFFFF_FFFF_FFFF_0000L, IB_PS_TCP = 0x0000_0000_0106_0000L,
            IB_PS_UDP = 0x0000_0000_0111_0000L, IB_PS_IB = 0x0000_0000_013F_0000L;
    /**
     * ::ffff:0:0/96, what an IPv4-mapped IPv6 address has before its IPv4 part (RFC 4291 sec. 2.5.5.2): ten zero
     * bytes, then 0xffff.
     */
    static final byte[] V4_MAPPED = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, (byte) 0xff, (byte) 0xff};
    /** enum rdma_ucm_query's options (QUERY). */
    static final int QUERY_ADDR = 0, QUERY_PATH = 1, QUERY_GID = 2;

    static String command(int cmd) {
        String[] names = {"CREATE_ID", "DESTROY_ID", "BIND_IP", "RESOLVE_IP", "RESOLVE_ROUTE", "QUERY_ROUTE",
            "CONNECT", "LISTEN", "ACCEPT", "REJECT", "DISCONNECT", "INIT_QP_ATTR", "GET_EVENT", "GET_OPTION",
            "SET_OPTION", "NOTIFY", "JOIN_IP_MCAST", "LEAVE_MCAST", "MIGRATE_ID", "QUERY", "BIND", "RESOLVE_ADDR",
            "JOIN_MCAST"};
        return cmd >= 0 && cmd < names.length ? names[cmd] : "command " + cmd;
    }

    static ByteBuffer le(byte[] b) { return ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN); }

    /**
     * An AF_IB address (struct sockaddr_ib): a port's GID (0 and 0: any), its P_Key, flow label and scope, and the
     * service ID with its mask (the port is the ID's low 16 bits).
     */
    record Ib(long hi, long lo, int pkey, int flow, long sid, long sidMask, long scope) {
        boolean any() { return hi == 0 && lo == 0; }
        byte[] gid() { return ByteBuffer.allocate(16).putLong(hi).putLong(lo).array(); }
        Ib withGid(byte[] g) {
            ByteBuffer b = ByteBuffer.wrap(g);
            return new Ib(b.getLong(0), b.getLong(8), pkey, flow, sid, sidMask, scope);
        }
        Ib withSid(long s, long mask) { return new Ib(hi, lo, pkey, flow, s, mask, scope); }
    }

    /**
     * An IPv4 address and port (0.0.0.0 is any), and whether it came as IPv6 (:: or ::ffff:a.b.c.d); or, with
     * {@code ib}, an AF_IB address, whose {@code ip} is the address of the node whose port has the GID (0: any).
     */
    record Addr(int ip, int port, boolean v6, Ib ib) {
        static final Addr NONE = new Addr(0, 0, false);
        Addr(int ip, int port, boolean v6) { this(ip, port, v6, null); }
        boolean any() { return ip == 0; }
        int family() { return ib != null ? AF_IB : v6 ? AF_INET6 : AF_INET; }

        /** What the kernel's rdma_addr_size gives: the sockaddr's size in its family (0: no address yet). */
        int size() {
            return this == NONE ? 0 : ib != null ? CmLayout.SockaddrIb.S.size
                    : v6 ? CmLayout.SockaddrIn6.S.size : CmLayout.SockaddrIn.S.size;
        }

        /** struct sockaddr_in (or _in6, or _ib) of this address, in {@code size} bytes. */
        byte[] sockaddr(int size) {
            ByteBuffer b = le(new byte[Math.max(size, CmLayout.SockaddrIb.S.size)]); // cut to size: QUERY_ROUTE's 28
            if (ib != null) {
                CmLayout.SockaddrIb.FAMILY.put16(b, AF_IB);
                CmLayout.SockaddrIb.PKEY.put16(b, ib.pkey);
                CmLayout.SockaddrIb.FLOWINFO.put32(b, ib.flow);
                CmLayout.SockaddrIb.SUBNET_PREFIX.put64(b, ib.hi);
                CmLayout.SockaddrIb.INTERFACE_ID.put64(b, ib.lo);
                CmLayout.SockaddrIb.SID.put64(b, ib.sid);
                CmLayout.SockaddrIb.SID_MASK.put64(b, ib.sidMask);
                CmLayout.SockaddrIb.SCOPE_ID.put64(b, ib.scope);
            } else if (v6) {
                CmLayout.SockaddrIn6.FAMILY.put16(b, AF_INET6);
                CmLayout.SockaddrIn6.PORT.put16(b, port);
                if (ip != 0) { // ::ffff:a.b.c.d
                    CmLayout.SockaddrIn6.ADDR.putBytes(b, 0, V4_MAPPED, V4_MAPPED.length);
                    CmLayout.SockaddrIn6.ADDR_IP4.put32(b, 0, ip);
                }
            } else {
                CmLayout.SockaddrIn.FAMILY.put16(b, AF_INET);
                CmLayout.SockaddrIn.PORT.put16(b, port);
                CmLayout.SockaddrIn.ADDR.put32(b, ip);
            }
            return Arrays.copyOf(b.array(), size);
        }

        @Override public String toString() {
            if (ib != null) return Grh.text(ib.hi, ib.lo) + " sid 0x" + Long.toHexString(ib.sid);
            return (ip >>> 24) + "." + (ip >>> 16 & 0xff) + "." + (ip >>> 8 & 0xff) + "." + (ip & 0xff) + ":" + port;
        }
    }

    /** The size rdma_addr_size gives the sockaddr at {@code off} of {@code b}: by its family; 0 for another. */
    static int addrSize(byte[] b, int off) {
        return switch (family(b, off)) {
            case AF_INET -> CmLayout.SockaddrIn.S.size;
            case AF_INET6 -> CmLayout.SockaddrIn6.S.size;
            case AF_IB -> CmLayout.SockaddrIb.S.size;
            default -> 0;
        };
    }

    /** The family of the sockaddr at {@code off} of {@code b} (sin_family, sin6_family and sib_family alike). */
    static int family(byte[] b, int off) { return CmLayout.SockaddrIn.FAMILY.u16(le(b), off); }

    /**
     * The address in the sockaddr at {@code off} of {@code b} ({@code field} names it in errors): AF_INET,
     * AF_INET6 when it is :: or an IPv4-mapped address, or AF_IB (its node not known yet: ip 0, a GID that is not
     * zero sets {@link Ib}); another family is EAFNOSUPPORT.
     */
    static Addr addr(byte[] b, int off, String field) {
        ByteBuffer l = le(b);
        int family = family(b, off);
        if (family == AF_INET)
            return new Addr(CmLayout.SockaddrIn.ADDR.u32(l, off), CmLayout.SockaddrIn.PORT.u16(l, off), false);
        if (family == AF_INET6) {
            int port = CmLayout.SockaddrIn6.PORT.u16(l, off), a = CmLayout.SockaddrIn6.ADDR.at(off);
            int n = CmLayout.SockaddrIn6.ADDR.bytes();
            if (Arrays.equals(b, a, a + n, new byte[n], 0, n)) return new Addr(0, port, true); // ::, any
            if (Arrays.equals(b, a, a + V4_MAPPED.length, V4_MAPPED, 0, V4_MAPPED.length))
                return new Addr(CmLayout.SockaddrIn6.ADDR_IP4.u32(l, off), port, true);
            throw new VerbsException(Errno.EADDRNOTAVAIL, field + ": an IPv6 address; nicsim's nodes have IPv4 ones");
        }
        if (family == AF_IB) {
            long sid = CmLayout.SockaddrIb.SID.u64(l, off), mask = CmLayout.SockaddrIb.SID_MASK.u64(l, off);
            Ib ib = new Ib(CmLayout.SockaddrIb.SUBNET_PREFIX.u64(l, off),
                    CmLayout.SockaddrIb.INTERFACE_ID.u64(l, off), CmLayout.SockaddrIb.PKEY.u16(l, off),
                    CmLayout.SockaddrIb.FLOWINFO.u32(l, off), sid, mask, CmLayout.SockaddrIb.SCOPE_ID.u64(l, off));
            return new Addr(0, (int) (sid & mask) & 0xffff, false, ib);
        }
        throw new VerbsException(Errno.EAFNOSUPPORT, field + ": address family " + family
                + "; nicsim's RDMA CM takes AF_INET, AF_INET6 and AF_IB");
    }

    /** struct ib_user_path_rec at {@code off}: the path between two ports. */
    static void pathRecord(ByteBuffer b, int off, byte[] dgid, byte[] sgid, int dlid, int slid, int mtu, int rate,
                           int packetLife) {
        CmLayout.PathRec.DGID.putBytes(b, off, dgid, 16);
        CmLayout.PathRec.SGID.putBytes(b, off, sgid, 16);
        CmLayout.PathRec.DLID.put16(b, off, dlid);
        CmLayout.PathRec.SLID.put16(b, off, slid);
        CmLayout.PathRec.REVERSIBLE.put32(b, off, 1);
        CmLayout.PathRec.MTU.put32(b, off, mtu);
        CmLayout.PathRec.PKEY.put16(b, off, 0xffff);
        CmLayout.PathRec.NUMB_PATH.put8(b, off, 1);
        CmLayout.PathRec.MTU_SELECTOR.put8(b, off, 2); // exactly
        CmLayout.PathRec.RATE_SELECTOR.put8(b, off, 2);
        CmLayout.PathRec.RATE.put8(b, off, rate);
        CmLayout.PathRec.PACKET_LIFE_TIME_SELECTOR.put8(b, off, 2);
        CmLayout.PathRec.PACKET_LIFE_TIME.put8(b, off, packetLife);
    }

    /** struct ib_uverbs_ah_attr at {@code off}: no GRH, port 1. */
    static void ahAttr(ByteBuffer b, int off, int dlid) {
        CmLayout.AhAttr.DLID.put16(b, off, dlid);
        CmLayout.AhAttr.PORT_NUM.put8(b, off, 1);
    }

    /** struct rdma_ucm_event_resp: uid, id, event, status; the parameters follow ({@link #PARAM}). */
    static ByteBuffer event(long uid, int id, int event, int status) {
        ByteBuffer b = le(new byte[CmLayout.EventResp.S.size]);
        CmLayout.EventResp.UID.put64(b, uid);
        CmLayout.EventResp.ID.put32(b, id);
        CmLayout.EventResp.EVENT.put32(b, event);
        CmLayout.EventResp.STATUS.put32(b, status);
        return b;
    }

    /** Where an event's parameters (struct rdma_ucm_conn_param or _ud_param) begin. */
    static final int PARAM = CmLayout.EventResp.PARAM.offset();

    /** struct rdma_ucm_conn_param at {@code off}. */
    static void connParam(ByteBuffer b, int off, int qpn, byte[] priv, int respRes, int initDepth, int retry,
                          int rnrRetry, boolean srq) {
        CmLayout.ConnParam.QP_NUM.put32(b, off, qpn);
        CmLayout.ConnParam.PRIVATE_DATA.putBytes(b, off, priv, Math.min(priv.length, 256));
        CmLayout.ConnParam.PRIVATE_DATA_LEN.put8(b, off, Math.min(priv.length, 255));
        CmLayout.ConnParam.SRQ.put8(b, off, srq ? 1 : 0);
        CmLayout.ConnParam.RESPONDER_RESOURCES.put8(b, off, respRes);
        CmLayout.ConnParam.INITIATOR_DEPTH.put8(b, off, initDepth);
        CmLayout.ConnParam.RETRY_COUNT.put8(b, off, retry);
        CmLayout.ConnParam.RNR_RETRY_COUNT.put8(b, off, rnrRetry);
    }

    /** struct rdma_ucm_ud_param at {@code off}. */
    static void udParam(ByteBuffer b, int off, int qpn, int qkey, int dlid, byte[] priv) {
        CmLayout.UdParam.QP_NUM.put32(b, off, qpn);
        CmLayout.UdParam.QKEY.put32(b, off, qkey);
        if (dlid != 0) ahAttr(b, CmLayout.UdParam.AH_ATTR.at(off), dlid);
        CmLayout.UdParam.PRIVATE_DATA.putBytes(b, off, priv, Math.min(priv.length, 256));
        CmLayout.UdParam.PRIVATE_DATA_LEN.put8(b, off, Math.min(priv.length, 255));
    }
}
