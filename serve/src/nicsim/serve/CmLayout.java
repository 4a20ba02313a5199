package nicsim.serve;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;

/**
 * The kernel's RDMA CM file's structures field by field (linux/include/uapi/rdma/rdma_user_cm.h, and
 * what they hold of ib_user_verbs.h, ib_user_sa.h and the socket addresses), and the other kernel structs
 * serve writes as the kernel's files give them (a umad file's header, uverbs events, the SA's path record):
 * each field's offset and width written once, here, and checked against the uapi headers by CmLayoutTest
 * (gcc's offsetof and sizeof of every field and struct). Little-endian, as the kernel's own on x86-64 and
 * aarch64, but for the fields in network order ({@link Field#be}).
 */
final class CmLayout {
    private CmLayout() {}

    /** A kernel struct: its C name (struct rdma_ucm_connect: "rdma_ucm_connect") and size. */
    static final class Struct {
        final String name;
        final int size;
        final List<Field> fields = new ArrayList<>();

        private Struct(String name, int size) {
            this.name = name;
            this.size = size;
        }

        private Field f(String path, int offset, int bytes) { return add(new Field(this, path, offset, bytes, false)); }

        /** A field in network order. */
        private Field be(String path, int offset, int bytes) { return add(new Field(this, path, offset, bytes, true)); }

        private Field add(Field f) {
            fields.add(f);
            return f;
        }
    }

    /**
     * Field {@code path} of {@code struct} (as C names it: conn_param.qp_num), {@code bytes} at
     * {@code offset}. Read and written at a base: the offset of its struct within what holds it (0
     * for a command's own struct). A read or write of the wrong width is an IllegalStateException.
     */
    record Field(Struct struct, String path, int offset, int bytes, boolean be) {
        int u8(ByteBuffer b, int base) { return b.get(at(b, base, 1)) & 0xff; }
        int u8(ByteBuffer b) { return u8(b, 0); }
        int u16(ByteBuffer b, int base) { return order(b).getShort(at(b, base, 2)) & 0xffff; }
        int u16(ByteBuffer b) { return u16(b, 0); }
        int u32(ByteBuffer b, int base) { return order(b).getInt(at(b, base, 4)); }
        int u32(ByteBuffer b) { return u32(b, 0); }
        long u64(ByteBuffer b, int base) { return order(b).getLong(at(b, base, 8)); }
        long u64(ByteBuffer b) { return u64(b, 0); }

        void put8(ByteBuffer b, int base, int v) { b.put(at(b, base, 1), (byte) v); }
        void put8(ByteBuffer b, int v) { put8(b, 0, v); }
        void put16(ByteBuffer b, int base, int v) { order(b).putShort(at(b, base, 2), (short) v); }
        void put16(ByteBuffer b, int v) { put16(b, 0, v); }
        void put32(ByteBuffer b, int base, int v) { order(b).putInt(at(b, base, 4), v); }
        void put32(ByteBuffer b, int v) { put32(b, 0, v); }
        void put64(ByteBuffer b, int base, long v) { order(b).putLong(at(b, base, 8), v); }
        void put64(ByteBuffer b, long v) { put64(b, 0, v); }

        /** {@code data} into this byte array field (at most its bytes). */
        void putBytes(ByteBuffer b, int base, byte[] data, int n) {
            if (n > bytes) throw new IllegalStateException(this + ": " + n + " bytes");
            b.put(base + offset, data, 0, n);
        }

        /** Where the field is at {@code base}. */
        int at(int base) { return base + offset; }

        /** The offset just past it: the input a command takes up to it. */
        int end() { return offset + bytes; }

        private int at(ByteBuffer b, int base, int width) {
            if (width != bytes) throw new IllegalStateException(this + " is " + bytes + " bytes, used as " + width);
            return base + offset;
        }

        private ByteBuffer order(ByteBuffer b) {
            return be ? b.duplicate().order(ByteOrder.BIG_ENDIAN) : b.duplicate().order(ByteOrder.LITTLE_ENDIAN);
        }

        @Override public String toString() { return "struct " + struct.name + "." + path; }
    }

    private static Struct struct(String name, int size) { return new Struct(name, size); }

    static final class CreateId {
        static final Struct S = struct("rdma_ucm_create_id", 24);
        static final Field UID = S.f("uid", 0, 8), PS = S.f("ps", 16, 2), QP_TYPE = S.f("qp_type", 18, 1);
    }

    static final class DestroyId {
        static final Struct S = struct("rdma_ucm_destroy_id", 16);
        static final Field ID = S.f("id", 8, 4);
    }

    static final class BindIp {
        static final Struct S = struct("rdma_ucm_bind_ip", 40);
        static final Field ADDR = S.f("addr", 8, 28), ID = S.f("id", 36, 4);
    }

    static final class Bind {
        static final Struct S = struct("rdma_ucm_bind", 136);
        static final Field ID = S.f("id", 0, 4), ADDR_SIZE = S.f("addr_size", 4, 2), ADDR = S.f("addr", 8, 128);
    }

    static final class ResolveIp {
        static final Struct S = struct("rdma_ucm_resolve_ip", 64);
        static final Field SRC_ADDR = S.f("src_addr", 0, 28), DST_ADDR = S.f("dst_addr", 28, 28),
                ID = S.f("id", 56, 4), TIMEOUT_MS = S.f("timeout_ms", 60, 4);
    }

    static final class ResolveAddr {
        static final Struct S = struct("rdma_ucm_resolve_addr", 272);
        static final Field ID = S.f("id", 0, 4), TIMEOUT_MS = S.f("timeout_ms", 4, 4), SRC_SIZE = S.f("src_size", 8, 2),
                DST_SIZE = S.f("dst_size", 10, 2), SRC_ADDR = S.f("src_addr", 16, 128),
                DST_ADDR = S.f("dst_addr", 144, 128);
    }

    /** struct rdma_ucm_resolve_route, and rdma_ucm_listen and rdma_ucm_notify, which begin the same. */
    static final class ResolveRoute {
        static final Struct S = struct("rdma_ucm_resolve_route", 8);
        static final Field ID = S.f("id", 0, 4);
    }

    static final class Listen {
        static final Struct S = struct("rdma_ucm_listen", 8);
        static final Field ID = S.f("id", 0, 4), BACKLOG = S.f("backlog", 4, 4);
    }

    static final class Notify {
        static final Struct S = struct("rdma_ucm_notify", 8);
        static final Field ID = S.f("id", 0, 4);
    }

    /** struct rdma_ucm_query, which QUERY_ROUTE and QUERY take (QUERY: the option, RDMA_USER_CM_QUERY_*). */
    static final class Query {
        static final Struct S = struct("rdma_ucm_query", 16);
        static final Field ID = S.f("id", 8, 4), OPTION = S.f("option", 12, 4);
    }

    /** struct rdma_ucm_query_addr_resp: what QUERY answers for ADDR and GID; the addresses of any family. */
    static final class QueryAddrResp {
        static final Struct S = struct("rdma_ucm_query_addr_resp", 280);
        static final Field NODE_GUID = S.f("node_guid", 0, 8), PORT_NUM = S.f("port_num", 8, 1),
                PKEY = S.f("pkey", 10, 2), SRC_SIZE = S.f("src_size", 12, 2), DST_SIZE = S.f("dst_size", 14, 2),
                SRC_ADDR = S.f("src_addr", 16, 128), DST_ADDR = S.f("dst_addr", 144, 128),
                IBDEV_INDEX = S.f("ibdev_index", 272, 4);
    }

    /** struct rdma_ucm_query_path_resp: QUERY's PATH answer, its paths ({@link PathRecData}) after it. */
    static final class QueryPathResp {
        static final Struct S = struct("rdma_ucm_query_path_resp", 8);
        static final Field NUM_PATHS = S.f("num_paths", 0, 4);
    }

    /** struct ib_path_rec_data: a path's flags (IB_PATH_*) and its PathRecord as the SA sends it (network order). */
    static final class PathRecData {
        static final Struct S = struct("ib_path_rec_data", 72);
        static final Field FLAGS = S.f("flags", 0, 4), PATH_REC = S.f("path_rec", 8, 64);
    }

    /** struct ib_user_path_rec: the path between two ports, as SA gives it. */
    static final class PathRec {
        static final Struct S = struct("ib_user_path_rec", 64);
        static final Field DGID = S.f("dgid", 0, 16), SGID = S.f("sgid", 16, 16), DLID = S.be("dlid", 32, 2),
                SLID = S.be("slid", 34, 2), REVERSIBLE = S.f("reversible", 44, 4), MTU = S.f("mtu", 48, 4),
                PKEY = S.be("pkey", 52, 2), NUMB_PATH = S.f("numb_path", 56, 1),
                MTU_SELECTOR = S.f("mtu_selector", 58, 1), RATE_SELECTOR = S.f("rate_selector", 59, 1),
                RATE = S.f("rate", 60, 1), PACKET_LIFE_TIME_SELECTOR = S.f("packet_life_time_selector", 61, 1),
                PACKET_LIFE_TIME = S.f("packet_life_time", 62, 1);
    }

    static final class QueryRouteResp {
        static final Struct S = struct("rdma_ucm_query_route_resp", 208);
        static final Field NODE_GUID = S.f("node_guid", 0, 8), IB_ROUTE = S.f("ib_route[0]", 8, 64),
                SRC_ADDR = S.f("src_addr", 136, 28), DST_ADDR = S.f("dst_addr", 164, 28),
                NUM_PATHS = S.f("num_paths", 192, 4), PORT_NUM = S.f("port_num", 196, 1),
                IBDEV_INDEX = S.f("ibdev_index", 200, 4);
    }

    static final class ConnParam {
        static final Struct S = struct("rdma_ucm_conn_param", 272);
        static final Field QP_NUM = S.f("qp_num", 0, 4), QKEY = S.f("qkey", 4, 4),
                PRIVATE_DATA = S.f("private_data", 8, 256), PRIVATE_DATA_LEN = S.f("private_data_len", 264, 1),
                SRQ = S.f("srq", 265, 1), RESPONDER_RESOURCES = S.f("responder_resources", 266, 1),
                INITIATOR_DEPTH = S.f("initiator_depth", 267, 1), RETRY_COUNT = S.f("retry_count", 269, 1),
                RNR_RETRY_COUNT = S.f("rnr_retry_count", 270, 1);
    }

    /** struct ib_uverbs_ah_attr: an address vector, in a UD event's parameters and a QP's attributes. */
    static final class AhAttr {
        static final Struct S = struct("ib_uverbs_ah_attr", 32);
        static final Field DGID = S.f("grh.dgid", 0, 16), FLOW_LABEL = S.f("grh.flow_label", 16, 4),
                HOP_LIMIT = S.f("grh.hop_limit", 21, 1), TRAFFIC_CLASS = S.f("grh.traffic_class", 22, 1),
                DLID = S.f("dlid", 24, 2), SL = S.f("sl", 26, 1), IS_GLOBAL = S.f("is_global", 29, 1),
                PORT_NUM = S.f("port_num", 30, 1);
    }

    static final class UdParam {
        static final Struct S = struct("rdma_ucm_ud_param", 304);
        static final Field QP_NUM = S.f("qp_num", 0, 4), QKEY = S.f("qkey", 4, 4), AH_ATTR = S.f("ah_attr", 8, 32),
                PRIVATE_DATA = S.f("private_data", 40, 256), PRIVATE_DATA_LEN = S.f("private_data_len", 296, 1);
    }

    /** struct rdma_ucm_connect; the kernel takes it without its trailing ECE (up to reserved). */
    static final class Connect {
        static final Struct S = struct("rdma_ucm_connect", 288);
        static final Field CONN_PARAM = S.f("conn_param", 0, 272), ID = S.f("id", 272, 4),
                RESERVED = S.f("reserved", 276, 4);
    }

    /** struct rdma_ucm_accept; the kernel takes it without its trailing ECE (up to reserved). */
    static final class Accept {
        static final Struct S = struct("rdma_ucm_accept", 296);
        static final Field UID = S.f("uid", 0, 8), CONN_PARAM = S.f("conn_param", 8, 272), ID = S.f("id", 280, 4),
                RESERVED = S.f("reserved", 284, 4);
    }

    static final class Reject {
        static final Struct S = struct("rdma_ucm_reject", 264);
        static final Field ID = S.f("id", 0, 4), PRIVATE_DATA_LEN = S.f("private_data_len", 4, 1),
                REASON = S.f("reason", 5, 1), PRIVATE_DATA = S.f("private_data", 8, 256);
    }

    static final class Disconnect {
        static final Struct S = struct("rdma_ucm_disconnect", 4);
        static final Field ID = S.f("id", 0, 4);
    }

    static final class InitQpAttr {
        static final Struct S = struct("rdma_ucm_init_qp_attr", 16);
        static final Field ID = S.f("id", 8, 4), QP_STATE = S.f("qp_state", 12, 4);
    }

    static final class GetEvent {
        static final Struct S = struct("rdma_ucm_get_event", 8);
    }

    /** struct rdma_ucm_event_resp: its parameters are a {@link ConnParam} or a {@link UdParam} at PARAM. */
    static final class EventResp {
        static final Struct S = struct("rdma_ucm_event_resp", 336);
        static final Field UID = S.f("uid", 0, 8), ID = S.f("id", 8, 4), EVENT = S.f("event", 12, 4),
                STATUS = S.f("status", 16, 4), PARAM = S.f("param", 20, 304);
    }

    static final class SetOption {
        static final Struct S = struct("rdma_ucm_set_option", 24);
        static final Field OPTVAL = S.f("optval", 0, 8), ID = S.f("id", 8, 4), LEVEL = S.f("level", 12, 4),
                OPTNAME = S.f("optname", 16, 4), OPTLEN = S.f("optlen", 20, 4);
    }

    static final class MigrateId {
        static final Struct S = struct("rdma_ucm_migrate_id", 16);
        static final Field ID = S.f("id", 8, 4), FD = S.f("fd", 12, 4);
    }

    /** struct rdma_ucm_join_ip_mcast: JOIN_IP_MCAST, an IPv4 or IPv6 group at ADDR (a sockaddr_in6's room). */
    static final class JoinIpMcast {
        static final Struct S = struct("rdma_ucm_join_ip_mcast", 48);
        static final Field UID = S.f("uid", 8, 8), ADDR = S.f("addr", 16, 28), ID = S.f("id", 44, 4);
    }

    /** struct rdma_ucm_join_mcast: JOIN_MCAST, with join_flags and any address family's group at ADDR. */
    static final class JoinMcast {
        static final Struct S = struct("rdma_ucm_join_mcast", 152);
        static final Field UID = S.f("uid", 8, 8), ID = S.f("id", 16, 4), ADDR_SIZE = S.f("addr_size", 20, 2),
                JOIN_FLAGS = S.f("join_flags", 22, 2), ADDR = S.f("addr", 24, 128);
    }

    /** struct ib_uverbs_qp_attr: what INIT_QP_ATTR answers. */
    static final class QpAttr {
        static final Struct S = struct("ib_uverbs_qp_attr", 144);
        static final Field QP_ATTR_MASK = S.f("qp_attr_mask", 0, 4), QP_STATE = S.f("qp_state", 4, 4),
                PATH_MTU = S.f("path_mtu", 12, 4), QKEY = S.f("qkey", 20, 4), RQ_PSN = S.f("rq_psn", 24, 4),
                SQ_PSN = S.f("sq_psn", 28, 4), DEST_QP_NUM = S.f("dest_qp_num", 32, 4),
                QP_ACCESS_FLAGS = S.f("qp_access_flags", 36, 4), AH_ATTR = S.f("ah_attr", 40, 32),
                MAX_RD_ATOMIC = S.f("max_rd_atomic", 130, 1), MAX_DEST_RD_ATOMIC = S.f("max_dest_rd_atomic", 131, 1),
                MIN_RNR_TIMER = S.f("min_rnr_timer", 132, 1), PORT_NUM = S.f("port_num", 133, 1),
                TIMEOUT = S.f("timeout", 134, 1), RETRY_CNT = S.f("retry_cnt", 135, 1),
                RNR_RETRY = S.f("rnr_retry", 136, 1);
    }

    /** struct sockaddr_in: family, port (network order) and address. */
    static final class SockaddrIn {
        static final Struct S = struct("sockaddr_in", 16);
        static final Field FAMILY = S.f("sin_family", 0, 2), PORT = S.be("sin_port", 2, 2),
                ADDR = S.be("sin_addr", 4, 4);
    }

    /**
     * struct sockaddr_in6: an IPv4-mapped address ({@link CmAbi#V4_MAPPED}) has its IPv4 part in the last 4 bytes
     * (ADDR_IP4).
     */
    static final class SockaddrIn6 {
        static final Struct S = struct("sockaddr_in6", 28);
        static final Field FAMILY = S.f("sin6_family", 0, 2), PORT = S.be("sin6_port", 2, 2),
                ADDR = S.f("sin6_addr", 8, 16), ADDR_IP4 = S.be("sin6_addr.s6_addr32[3]", 20, 4);
    }

    /**
     * struct sockaddr_ib: an AF_IB address, a GID (its subnet prefix and interface ID) and a service ID (network
     * order but for the family).
     */
    static final class SockaddrIb {
        static final Struct S = struct("sockaddr_ib", 48);
        static final Field FAMILY = S.f("sib_family", 0, 2), PKEY = S.be("sib_pkey", 2, 2),
                FLOWINFO = S.be("sib_flowinfo", 4, 4), ADDR = S.f("sib_addr", 8, 16), SID = S.be("sib_sid", 24, 8),
                SID_MASK = S.be("sib_sid_mask", 32, 8), SCOPE_ID = S.f("sib_scope_id", 40, 8),
                SUBNET_PREFIX = S.be("sib_addr.sib_subnet_prefix", 8, 8),
                INTERFACE_ID = S.be("sib_addr.sib_interface_id", 16, 8);
    }

    /**
     * struct cma_hdr (IBA annex A11; Linux's drivers/infiniband/core/cma.c, in no uapi header): the RDMA CM's header,
     * first in the private data of a REQ or SIDR_REQ to an IP port space, all in network order. The IP version is
     * the high nibble of its byte; each address is a union cma_ip_addr of 16 bytes, an IPv6 address whole or an IPv4
     * one in its last 4 (ip4.addr).
     */
    static final class CmaHdr {
        /** The kernel's CMA_VERSION: the only version a REQ's header has. */
        static final int VERSION = 0;
        static final Struct S = struct("cma_hdr", 36);
        static final Field CMA_VERSION = S.f("cma_version", 0, 1), IP_VERSION = S.f("ip_version", 1, 1),
                PORT = S.be("port", 2, 2), SRC_ADDR = S.f("src_addr", 4, 16),
                SRC_IP4 = S.be("src_addr.ip4.addr", 16, 4), DST_ADDR = S.f("dst_addr", 20, 16),
                DST_IP4 = S.be("dst_addr.ip4.addr", 32, 4);
    }

    /**
     * struct ibv_path_record (rdma-core's infiniband/sa.h): a PathRecord as the SA packs it (IBA 15.2.5.16), all in
     * network order; the selectors are each byte's top two bits.
     */
    static final class SaPathRecord {
        static final Struct S = struct("ibv_path_record", 64);
        static final Field SERVICE_ID = S.be("service_id", 0, 8), DGID = S.f("dgid", 8, 16), SGID = S.f("sgid", 24, 16),
                DLID = S.be("dlid", 40, 2), SLID = S.be("slid", 42, 2),
                REVERSIBLE_NUMPATH = S.f("reversible_numpath", 49, 1), PKEY = S.be("pkey", 50, 2),
                MTU = S.f("mtu", 54, 1), RATE = S.f("rate", 55, 1), PACKETLIFETIME = S.f("packetlifetime", 56, 1);
    }

    /** struct ib_user_mad_hdr (rdma/ib_user_mad.h): what a umad file's read gives before a MAD, with P_Keys on. */
    static final class UserMadHdr {
        static final Struct S = struct("ib_user_mad_hdr", 64);
        static final Field ID = S.f("id", 0, 4), STATUS = S.f("status", 4, 4), LENGTH = S.f("length", 16, 4),
                QPN = S.be("qpn", 20, 4), QKEY = S.be("qkey", 24, 4), LID = S.be("lid", 28, 2);
    }

    /** struct ib_user_mad_hdr_old: the header without P_Keys (the file's default), UserMadHdr's first bytes. */
    static final class UserMadHdrOld {
        static final Struct S = struct("ib_user_mad_hdr_old", 56);
        static final Field ID = S.f("id", 0, 4), STATUS = S.f("status", 4, 4), LENGTH = S.f("length", 16, 4),
                QPN = S.be("qpn", 20, 4), QKEY = S.be("qkey", 24, 4), LID = S.be("lid", 28, 2);
    }

    /** struct ib_uverbs_comp_event_desc: a completion event, as a completion channel's read gives it. */
    static final class CompEventDesc {
        static final Struct S = struct("ib_uverbs_comp_event_desc", 8);
        static final Field CQ_HANDLE = S.f("cq_handle", 0, 8);
    }

    /** struct ib_uverbs_async_event_desc: an async event, as the async file's read gives it. */
    static final class AsyncEventDesc {
        static final Struct S = struct("ib_uverbs_async_event_desc", 16);
        static final Field ELEMENT = S.f("element", 0, 8), EVENT_TYPE = S.f("event_type", 8, 4);
    }

    /** Every struct declared here (a method: each holder class is initialized on its own first use). */
    static List<Struct> all() {
        return List.of(CreateId.S, DestroyId.S, BindIp.S, Bind.S, ResolveIp.S, ResolveAddr.S, ResolveRoute.S,
                Listen.S, Notify.S, Query.S, QueryAddrResp.S, QueryPathResp.S, PathRecData.S, PathRec.S,
                QueryRouteResp.S, ConnParam.S, AhAttr.S, UdParam.S,
                Connect.S, Accept.S, Reject.S, Disconnect.S, InitQpAttr.S, GetEvent.S, EventResp.S, SetOption.S,
                MigrateId.S, JoinIpMcast.S, JoinMcast.S, QpAttr.S, SockaddrIn.S, SockaddrIn6.S, SockaddrIb.S,
                CmaHdr.S, SaPathRecord.S, UserMadHdr.S, UserMadHdrOld.S, CompEventDesc.S, AsyncEventDesc.S);
    }
}
