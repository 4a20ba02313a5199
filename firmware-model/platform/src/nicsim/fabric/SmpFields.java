package nicsim.fabric;

import java.util.Arrays;

/**
 * The SMP attribute fields every subnet management agent of the fabric fills alike (IBA 14.2.5): the
 * adapters' (nicsim.firmware.SubnetAgent) and the switch's ({@link SwitchAgent}), so that NodeInfo names one
 * vendor and both ends of a link describe it the same way.
 */
public final class SmpFields {
    private SmpFields() {}

    /** NodeInfo's DeviceID, Revision and VendorID: nicsim's own (no real vendor's OUI). */
    public static final int DEVICE_ID = 0x1de5, VENDOR_ID = 0x021de5, REVISION = 1;

    /**
     * How an SMA refuses SMP {@code req}, or null: it takes it. It speaks class version 1 and answers Get; a Set is
     * refused ("unsupported method/attribute"), as LIDs and routes are the fabric's, not an SM's to change.
     */
    public static byte[] refusal(byte[] req) {
        if (Mad.classVersion(req) != 1) return Mad.response(req, Mad.STATUS_BAD_VERSION);
        int method = Mad.method(req);
        if (method != Mad.GET && method != Mad.SET) return Mad.response(req, Mad.STATUS_METHOD);
        return method == Mad.SET ? Mad.response(req, Mad.STATUS_METHOD_ATTR) : null;
    }

    /** The GetResp to SMP {@code req} with its attribute data zeroed, for the SMA to fill. */
    public static byte[] blankResponse(byte[] req) {
        byte[] rsp = Mad.response(req, 0);
        Arrays.fill(rsp, Mad.SMP_DATA, Mad.SMP_DATA + Mad.SMP_DATA_SIZE, (byte) 0);
        return rsp;
    }

    /**
     * PortInfo's fields of the link (at {@code at}, PortInfo's start): an active 4x link of {@code bitsPerSecond}
     * (its lane speed), {@code mtuBytes} its MTU and the neighbour's, VL0 only, the subnet's timeouts. The
     * adapter's SMA and the switch's describe their ports with it, so both ends of a link say the same.
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

    /**
     * PortInfo's state fields (at {@code at}) of a port whose link is down, over what {@link #link} wrote: PortState
     * Down and PortPhysicalState Polling (IBA 14.2.5.6: a port with no peer trains again and again), the rest of the
     * link's description kept as its enabled and supported values.
     */
    public static void linkDown(byte[] b, int at) {
        b[at + 32] = (byte) (b[at + 32] & 0xf0 | 1); // PortState DOWN
        b[at + 33] = (byte) (2 << 4 | b[at + 33] & 0x0f); // PortPhysicalState Polling
    }

    /** IBA's MTU codes: 256 B is 1 ... 4096 B is 5. */
    public static int mtuCode(int bytes) {
        return Math.max(1, Integer.numberOfTrailingZeros(Math.max(256, bytes)) - 7);
    }

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

    /**
     * SLtoVLMappingTable (IBA 14.2.5.8), 8 bytes at {@code at}, SL n's VL in nibble n: every SL to VL0, the only
     * data VL a port has here (VLCap VL0). A CA's SMA ignores the attribute modifier (it names switch ports).
     */
    public static int slToVl(byte[] b, int at) {
        Arrays.fill(b, at, at + 8, (byte) 0);
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
        Arrays.fill(b, at, at + 64, (byte) 0);
        if (block == 1) b[at + 1] = (byte) VL0_WEIGHT;
        return 0;
    }
}
