package nicsim.serve;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import nicsim.verbs.Errno;
import nicsim.verbs.VerbsException;

/**
 * The kernel's RDMA CM file as librdmacm speaks to it (linux/include/uapi/rdma/rdma_user_cm.h, ABI
 * version 4): command numbers, the answers' layouts (little-endian, the kernel's own structures
 * byte for byte), and IPv4 socket addresses.
 */
final class CmAbi {
    private CmAbi() {}

    static final int ABI_VERSION = 4;
    static final int CREATE_ID = 0, DESTROY_ID = 1, BIND_IP = 2, RESOLVE_IP = 3, RESOLVE_ROUTE = 4, QUERY_ROUTE = 5,
            CONNECT = 6, LISTEN = 7, ACCEPT = 8, REJECT = 9, DISCONNECT = 10, INIT_QP_ATTR = 11, GET_EVENT = 12,
            GET_OPTION = 13, SET_OPTION = 14, NOTIFY = 15, JOIN_IP_MCAST = 16, LEAVE_MCAST = 17, MIGRATE_ID = 18,
            QUERY = 19, BIND = 20, RESOLVE_ADDR = 21, JOIN_MCAST = 22;
    static final int PS_IPOIB = 0x0002, PS_IB = 0x013F, PS_TCP = 0x0106, PS_UDP = 0x0111;
    static final int QPT_RC = 2, QPT_UC = 3, QPT_UD = 4;
    static final int RDMA_UDP_QKEY = 0x01234567, IPOIB_QKEY = 0x0b1b;
    /** enum rdma_cm_event_type. */
    static final int ADDR_RESOLVED = 0, ADDR_ERROR = 1, ROUTE_RESOLVED = 2, ROUTE_ERROR = 3, CONNECT_REQUEST = 4,
            CONNECT_RESPONSE = 5, CONNECT_ERROR = 6, UNREACHABLE = 7, REJECTED = 8, ESTABLISHED = 9, DISCONNECTED = 10,
            DEVICE_REMOVAL = 11;
    static final int EVENT_SIZE = 336, ROUTE_SIZE = 208, QP_ATTR_SIZE = 144, CONN_PARAM_SIZE = 272;
    static final int AF_INET = 2, AF_INET6 = 10, AF_IB = 27;

    static String command(int cmd) {
        String[] names = {"CREATE_ID", "DESTROY_ID", "BIND_IP", "RESOLVE_IP", "RESOLVE_ROUTE", "QUERY_ROUTE", "CONNECT",
            "LISTEN", "ACCEPT", "REJECT", "DISCONNECT", "INIT_QP_ATTR", "GET_EVENT", "GET_OPTION", "SET_OPTION",
                    "NOTIFY",
            "JOIN_IP_MCAST", "LEAVE_MCAST", "MIGRATE_ID", "QUERY", "BIND", "RESOLVE_ADDR", "JOIN_MCAST"};
        return cmd >= 0 && cmd < names.length ? names[cmd] : "command " + cmd;
    }

    static ByteBuffer le(byte[] b) { return ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN); }

    /** An IPv4 address and port (0.0.0.0 is any), and whether it came as IPv6 (:: or ::ffff:a.b.c.d). */
    record Addr(int ip, int port, boolean v6) {
        static final Addr NONE = new Addr(0, 0, false);
        boolean any() { return ip == 0; }

        /** struct sockaddr_in (or _in6) of this address, in {@code size} bytes. */
        byte[] sockaddr(int size) {
            ByteBuffer b = ByteBuffer.allocate(size);
            if (v6) {
                b.order(ByteOrder.LITTLE_ENDIAN).putShort(0, (short) AF_INET6).order(ByteOrder.BIG_ENDIAN);
                b.putShort(2, (short) port);
                if (ip != 0) b.putShort(18, (short) 0xffff).putInt(20, ip);
            } else {
                b.order(ByteOrder.LITTLE_ENDIAN).putShort(0, (short) AF_INET).order(ByteOrder.BIG_ENDIAN);
                b.putShort(2, (short) port).putInt(4, ip);
            }
            return b.array();
        }

        @Override public String toString() {
            return (ip >>> 24) + "." + (ip >>> 16 & 0xff) + "." + (ip >>> 8 & 0xff) + "." + (ip & 0xff) + ":" + port;
        }
    }

    /**
     * The address in the sockaddr at {@code off} of {@code b} ({@code field} names it in errors): AF_INET,
     * or AF_INET6 when it is :: or an IPv4-mapped address; another family is EAFNOSUPPORT.
     */
    static Addr addr(byte[] b, int off, String field) {
        ByteBuffer l = le(b);
        int family = l.getShort(off) & 0xffff;
        ByteBuffer be = ByteBuffer.wrap(b);
        int port = be.getShort(off + 2) & 0xffff;
        if (family == AF_INET) return new Addr(be.getInt(off + 4), port, false);
        if (family == AF_INET6) {
            long hi = be.getLong(off + 8), lo = be.getLong(off + 16);
            if (hi == 0 && lo == 0) return new Addr(0, port, true);
            if (hi == 0 && lo >>> 32 == 0xffff) return new Addr((int) lo, port, true);
            throw new VerbsException(Errno.EADDRNOTAVAIL, field + ": an IPv6 address; nicsim's nodes have IPv4 ones");
        }
        throw new VerbsException(Errno.EAFNOSUPPORT, field + ": address family " + family
                + (family == AF_IB ? " (AF_IB)" : "") + "; nicsim's RDMA CM takes AF_INET and AF_INET6");
    }

    /** struct ib_user_path_rec: the path between two ports. */
    static void pathRecord(ByteBuffer b, int off, byte[] dgid, byte[] sgid, int dlid, int slid, int mtu, int rate,
                           int packetLife) {
        b.position(off);
        b.put(dgid, 0, 16).put(sgid, 0, 16);
        ByteBuffer be = b.duplicate().order(ByteOrder.BIG_ENDIAN);
        be.putShort(off + 32, (short) dlid).putShort(off + 34, (short) slid);
        b.putInt(off + 44, 1); // reversible
        b.putInt(off + 48, mtu);
        be.putShort(off + 52, (short) 0xffff);
        b.put(off + 56, (byte) 1); // numb_path
        b.put(off + 58, (byte) 2).put(off + 59, (byte) 2); // mtu_selector, rate_selector: exactly
        b.put(off + 60, (byte) rate).put(off + 61, (byte) 2).put(off + 62, (byte) packetLife);
    }

    /** struct ib_uverbs_ah_attr at {@code off}: no GRH, port 1. */
    static void ahAttr(ByteBuffer b, int off, int dlid) {
        b.putShort(off + 24, (short) dlid).put(off + 30, (byte) 1);
    }

    /** struct rdma_ucm_event_resp: uid, id, event, status; the parameters follow at offset 20. */
    static ByteBuffer event(long uid, int id, int event, int status) {
        ByteBuffer b = le(new byte[EVENT_SIZE]);
        b.putLong(0, uid).putInt(8, id).putInt(12, event).putInt(16, status);
        return b;
    }

    /** struct rdma_ucm_conn_param at {@code off}. */
    static void connParam(ByteBuffer b, int off, int qpn, byte[] priv, int respRes, int initDepth, int retry,
                          int rnrRetry, boolean srq) {
        b.putInt(off, qpn);
        b.position(off + 8);
        b.put(priv, 0, Math.min(priv.length, 256));
        b.put(off + 264, (byte) Math.min(priv.length, 255)).put(off + 265, (byte) (srq ? 1 : 0));
        b.put(off + 266, (byte) respRes).put(off + 267, (byte) initDepth).put(off + 269, (byte) retry);
        b.put(off + 270, (byte) rnrRetry);
    }

    /** struct rdma_ucm_ud_param at {@code off}. */
    static void udParam(ByteBuffer b, int off, int qpn, int qkey, int dlid, byte[] priv) {
        b.putInt(off, qpn).putInt(off + 4, qkey);
        if (dlid != 0) ahAttr(b, off + 8, dlid);
        b.position(off + 40);
        b.put(priv, 0, Math.min(priv.length, 256));
        b.put(off + 296, (byte) Math.min(priv.length, 255));
    }
}
