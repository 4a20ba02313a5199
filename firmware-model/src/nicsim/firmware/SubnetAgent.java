package nicsim.firmware;

import java.nio.charset.StandardCharsets;
import nicsim.abi.BigEndian;

/**
 * The port's subnet management agent (IBA 14.2.5): answers SubnGet of NodeInfo, NodeDescription, PortInfo,
 * GUIDInfo, P_KeyTable, SLtoVLMappingTable and VLArbitrationTable with what the adapter is (one port, a CA, the
 * port's LID, the link's width, speed and MTU from the profile). LIDs are the fabric's to give (a port has its
 * LID from the moment it joins), so a SubnSet, which would change them, is answered "unsupported
 * method/attribute". SMInfo is the subnet manager's, not the SMA's: it is not answered here.
 */
public final class SubnetAgent {
    /** NodeInfo's DeviceID, Revision and VendorID: nicsim's own (no real vendor's OUI). */
    public static final int DEVICE_ID = 0x1de5, VENDOR_ID = 0x021de5, REVISION = 1;
    private final Management m;

    SubnetAgent(Management m) { this.m = m; }

    /** The response to SMP {@code req} (class version, method, attribute checked), or null: not the SMA's. */
    byte[] answer(byte[] req) {
        int attr = Mad.attr(req);
        if (attr == Mad.ATTR_SM_INFO) return null;
        if (Mad.classVersion(req) != 1) return Mad.response(req, Mad.STATUS_BAD_VERSION);
        int method = Mad.method(req);
        if (method != Mad.GET && method != Mad.SET) return Mad.response(req, Mad.STATUS_METHOD);
        if (method == Mad.SET) return Mad.response(req, Mad.STATUS_METHOD_ATTR);
        byte[] rsp = Mad.response(req, 0);
        java.util.Arrays.fill(rsp, Mad.SMP_DATA, Mad.SMP_DATA + Mad.SMP_DATA_SIZE, (byte) 0);
        long mod = Mad.attrMod(req);
        int status = switch (attr) {
            case Mad.ATTR_NODE_INFO -> nodeInfo(rsp, Mad.SMP_DATA);
            case Mad.ATTR_NODE_DESC -> nodeDescription(rsp, Mad.SMP_DATA);
            case Mad.ATTR_PORT_INFO -> mod > 1 ? Mad.STATUS_INVALID_FIELD : portInfo(rsp, Mad.SMP_DATA);
            case Mad.ATTR_GUID_INFO -> mod != 0 ? Mad.STATUS_INVALID_FIELD : guidInfo(rsp, Mad.SMP_DATA);
            case Mad.ATTR_PKEY_TABLE -> (mod & 0xffff) != 0 ? Mad.STATUS_INVALID_FIELD : pkeyTable(rsp, Mad.SMP_DATA);
            case Mad.ATTR_SL_TO_VL -> slToVl(rsp, Mad.SMP_DATA);
            case Mad.ATTR_VL_ARBITRATION -> vlArbitration(rsp, Mad.SMP_DATA, (int) (mod >>> 16));
            default -> Mad.STATUS_METHOD_ATTR;
        };
        if (status != 0) return Mad.response(req, status);
        if (Mad.mgmtClass(req) == Mad.CLASS_SUBN_DR) rsp[Mad.DR_HOP_PTR] = req[Mad.DR_HOP_PTR]; // hop 0: stays 0
        return rsp;
    }

    /** NodeInfo (IBA 14.2.5.3), 40 bytes at {@code at}. */
    int nodeInfo(byte[] b, int at) {
        b[at] = 1; // base version
        b[at + 1] = 1; // SMP class version
        b[at + 2] = 1; // node type: channel adapter
        b[at + 3] = 1; // ports
        BigEndian.put64(b, at + 4, m.guid); // system image GUID
        BigEndian.put64(b, at + 12, m.guid); // node GUID
        BigEndian.put64(b, at + 20, m.guid); // port GUID
        Mad.put16(b, at + 28, 1); // partition capacity: one P_Key
        Mad.put16(b, at + 30, DEVICE_ID);
        BigEndian.put32(b, at + 32, REVISION);
        b[at + 36] = 1; // the port the SMP came in on
        b[at + 37] = (byte) (VENDOR_ID >>> 16);
        b[at + 38] = (byte) (VENDOR_ID >>> 8);
        b[at + 39] = (byte) VENDOR_ID;
        return 0;
    }

    /** NodeDescription: 64 bytes of text, NUL-padded. */
    int nodeDescription(byte[] b, int at) {
        byte[] d = m.description.getBytes(StandardCharsets.US_ASCII);
        System.arraycopy(d, 0, b, at, Math.min(d.length, 64));
        return 0;
    }

    /**
     * A port's CapabilityMask (PortInfo, IBA 14.2.5.6), as the SMA reports it and sysfs shows it: CM supported,
     * extended link speeds (LinkSpeedExt*), IsSM on the SM's port.
     */
    public static int capabilityMask(boolean isSm) {
        return isSm ? 0x0001_4002 : 0x0001_4000;
    }

    /** PortInfo (IBA 14.2.5.6), 64 bytes: an active 4x port at the profile's lane speed and MTU. */
    int portInfo(byte[] b, int at) {
        Firmware fw = m.fw;
        BigEndian.put64(b, at + 8, 0xfe80_0000_0000_0000L); // GID prefix: link-local
        Mad.put16(b, at + 16, fw.lid());
        Mad.put16(b, at + 18, m.smLid);
        BigEndian.put32(b, at + 20, capabilityMask(m.smLid == fw.lid()));
        b[at + 28] = 1; // local port number
        link(b, at, fw.profile.bitsPerSecond("link.rate"), fw.profile.bytesInt("link.mtu"));
        Mad.put16(b, at + 48, Math.min(m.qkeyViolations, 0xffff));
        b[at + 50] = 1; // GUIDCap
        return 0;
    }

    /**
     * PortInfo's fields of the link (at {@code at}, PortInfo's start): an active 4x link of {@code bitsPerSecond}
     * (its lane speed), {@code mtuBytes} its MTU and the neighbour's, VL0 only, the subnet's timeouts. The
     * fabric's switch describes its ports with it too, so both ends of a link say the same.
     */
    public static void link(byte[] b, int at, long bitsPerSecond, int mtuBytes) {
        b[at + 29] = 2; // link width enabled: 4x
        b[at + 30] = 3; // supported: 1x, 4x
        b[at + 31] = 2; // active: 4x
        LaneSpeed s = LaneSpeed.of(bitsPerSecond / 4);
        b[at + 32] = (byte) (s.speed << 4 | 4); // LinkSpeedSupported | PortState ACTIVE
        b[at + 33] = (byte) (5 << 4 | 2); // PortPhysicalState LinkUp | LinkDownDefaultState Polling
        b[at + 35] = (byte) (s.speed << 4 | s.speed); // LinkSpeedActive | LinkSpeedEnabled
        int mtu = mtuCode(mtuBytes);
        b[at + 36] = (byte) (mtu << 4); // NeighborMTU | MasterSMSL 0
        b[at + 37] = (byte) (1 << 4); // VLCap: VL0
        b[at + 39] = (byte) VL_ARB_CAP; // VLArbitrationHighCap
        b[at + 40] = (byte) VL_ARB_CAP; // VLArbitrationLowCap
        b[at + 41] = (byte) mtu; // MTUCap
        b[at + 43] = (byte) (1 << 4); // OperationalVLs: VL0
        b[at + 51] = 18; // SubnetTimeOut: 4.096 us x 2^18
        b[at + 52] = 18; // RespTimeValue
        b[at + 62] = (byte) (s.ext << 4 | s.ext); // LinkSpeedExtActive | Supported
        b[at + 63] = (byte) s.ext; // LinkSpeedExtEnabled
    }

    int guidInfo(byte[] b, int at) {
        BigEndian.put64(b, at, m.guid);
        return 0;
    }

    int pkeyTable(byte[] b, int at) {
        Mad.put16(b, at, 0xffff); // the default partition, full member
        return 0;
    }

    /**
     * SLtoVLMappingTable (IBA 14.2.5.8), 8 bytes at {@code at}, SL n's VL in nibble n: every SL to VL0, the only
     * data VL a port has here (VLCap VL0). A CA's SMA ignores the attribute modifier (it names switch ports).
     */
    public static int slToVl(byte[] b, int at) {
        java.util.Arrays.fill(b, at, at + 8, (byte) 0);
        return 0;
    }

    /** VLArbitrationHighCap and LowCap in PortInfo: the entries each arbitration table has (a ConnectX port's 8). */
    public static final int VL_ARB_CAP = 8;
    /** The weight of VL0's entry in the low-priority table: arbitrating one VL, any weight gives it the link. */
    public static final int VL0_WEIGHT = 0xff;

    /**
     * VLArbitrationTable (IBA 14.2.5.9) block {@code block} of the attribute modifier (1 and 3: low priority
     * entries 0..31 and 32..63; 2 and 4: high priority), 32 entries of (VL, weight) at {@code at}. With VL0 the
     * only data VL, the low-priority table's first entry is VL0 and every other entry, high priority's all, has
     * weight 0 (skipped); VLHighLimit 0. Another block is an invalid field.
     */
    public static int vlArbitration(byte[] b, int at, int block) {
        if (block < 1 || block > 4) return Mad.STATUS_INVALID_FIELD;
        java.util.Arrays.fill(b, at, at + 64, (byte) 0);
        if (block == 1) b[at + 1] = (byte) VL0_WEIGHT;
        return 0;
    }

    /** IBA's MTU codes: 256 B is 1 ... 4096 B is 5. */
    public static int mtuCode(int bytes) { return Math.max(1, Integer.numberOfTrailingZeros(Math.max(256, bytes)) - 7); }

    /** A lane's speed as PortInfo codes it: LinkSpeed (1 SDR, 2 DDR, 4 QDR) and LinkSpeedExt (1 FDR, 2 EDR, 4 HDR). */
    record LaneSpeed(int speed, int ext) {
        static LaneSpeed of(long bitsPerLane) {
            long g = bitsPerLane / 1_000_000_000L;
            if (g <= 2) return new LaneSpeed(1, 0);
            if (g <= 5) return new LaneSpeed(2, 0);
            if (g <= 10) return new LaneSpeed(4, 0);
            if (g <= 14) return new LaneSpeed(4, 1);
            if (g <= 25) return new LaneSpeed(4, 2);
            return new LaneSpeed(4, 4);
        }
    }
}
