package nicsim.fabric;

import java.util.Arrays;
import nicsim.abi.BigEndian;

/**
 * A management datagram (InfiniBand volume 1, chapter 13): 256 bytes, big-endian, its common header
 * in the first 24 (base version, class, class version, method, status, TID, attribute and modifier).
 * The field offsets and numbers here are the specification's; the agents and the fabric's subnet
 * manager read and write MADs only through them, so no offset is written twice.
 */
public final class Mad {
    private Mad() {}

    public static final int SIZE = 256, HEADER = 24;
    /** Where an SMP's (LID-routed and directed-route) and a PMA MAD's attribute data starts, and its size. */
    public static final int SMP_DATA = 64, SMP_DATA_SIZE = 64, PMA_DATA = 64;
    /** Directed route: hop pointer, hop count, DrSLID, DrDLID, initial path, return path. */
    public static final int DR_HOP_PTR = 6, DR_HOP_CNT = 7, DR_SLID = 32, DR_DLID = 34, DR_INITIAL_PATH = 128,
            DR_RETURN_PATH = 192;
    /** The D bit of a directed-route SMP's status word: set on the way back. */
    public static final int DR_DIRECTION = 0x8000;
    public static final int PERMISSIVE_LID = 0xFFFF;

    /** Management classes (IBA table 138). */
    public static final int CLASS_SUBN_LID = 0x01, CLASS_SUBN_ADM = 0x03, CLASS_PERF = 0x04, CLASS_CM = 0x07,
            CLASS_SUBN_DR = 0x81;
    /** Methods; a response is its request's method with bit 7 set. */
    public static final int GET = 0x01, SET = 0x02, SEND = 0x03, TRAP = 0x05, REPORT = 0x06, TRAP_REPRESS = 0x07,
            GET_TABLE = 0x12, RESPONSE = 0x80, GET_RESP = 0x81, GET_TABLE_RESP = 0x92;
    /** Status codes in bits 4..2 (IBA table 139) and the busy bit. */
    public static final int STATUS_BAD_VERSION = 1 << 2, STATUS_METHOD = 2 << 2, STATUS_METHOD_ATTR = 3 << 2,
            STATUS_INVALID_FIELD = 7 << 2;
    /** The Q_Key every GSI MAD carries (QP0's SMPs need none). */
    public static final int GSI_QKEY = 0x80010000;

    /** Attributes of the subnet management class. */
    public static final int ATTR_CLASS_PORT_INFO = 0x0001, ATTR_NODE_DESC = 0x0010, ATTR_NODE_INFO = 0x0011,
            ATTR_GUID_INFO = 0x0014, ATTR_PORT_INFO = 0x0015, ATTR_PKEY_TABLE = 0x0016, ATTR_SM_INFO = 0x0020,
            ATTR_SL_TO_VL = 0x0017, ATTR_VL_ARBITRATION = 0x0018;
    /** Attributes of the performance management class. */
    public static final int ATTR_PORT_COUNTERS = 0x0012, ATTR_PORT_COUNTERS_EXT = 0x001D;

    public static int get16(byte[] m, int at) { return (m[at] & 0xff) << 8 | m[at + 1] & 0xff; }
    public static void put16(byte[] m, int at, int v) { m[at] = (byte) (v >>> 8); m[at + 1] = (byte) v; }

    public static int baseVersion(byte[] m) { return m[0] & 0xff; }
    public static int mgmtClass(byte[] m) { return m[1] & 0xff; }
    public static int classVersion(byte[] m) { return m[2] & 0xff; }
    public static int method(byte[] m) { return m[3] & 0xff; }
    public static int status(byte[] m) { return get16(m, 4); }
    public static long tid(byte[] m) { return BigEndian.get64(m, 8); }
    public static int attr(byte[] m) { return get16(m, 16); }
    public static long attrMod(byte[] m) { return BigEndian.get32(m, 20); }
    public static boolean isResponse(byte[] m) { return (method(m) & RESPONSE) != 0 || method(m) == TRAP_REPRESS; }

    /** A request's header: base version 1, {@code cls} at {@code version}, the method, attribute and modifier. */
    public static byte[] request(int cls, int version, int method, long tid, int attr, long attrMod) {
        byte[] m = new byte[SIZE];
        m[0] = 1;
        m[1] = (byte) cls;
        m[2] = (byte) version;
        m[3] = (byte) method;
        BigEndian.put64(m, 8, tid);
        put16(m, 16, attr);
        BigEndian.put32(m, 20, attrMod);
        return m;
    }

    /** The response to {@code req} (a copy: method with the response bit, the status), data left as the request's. */
    public static byte[] response(byte[] req, int status) {
        byte[] m = Arrays.copyOf(req, SIZE);
        m[0] = 1; // the version the agent speaks, whatever the request's
        m[3] = (byte) (method(req) == SET || method(req) == GET ? GET_RESP : method(req) | RESPONSE);
        int keep = mgmtClass(req) == CLASS_SUBN_DR ? DR_DIRECTION : 0; // a DR response turns back
        put16(m, 4, keep | status);
        return m;
    }
}
