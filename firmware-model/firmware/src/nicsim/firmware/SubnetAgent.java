package nicsim.firmware;

import java.nio.charset.StandardCharsets;
import nicsim.abi.BigEndian;
import nicsim.fabric.Mad;
import nicsim.fabric.SmpFields;

/**
 * The port's subnet management agent (IBA 14.2.5): answers SubnGet of NodeInfo, NodeDescription, PortInfo,
 * GUIDInfo, P_KeyTable, SLtoVLMappingTable and VLArbitrationTable with what the adapter is (one port, a CA, the
 * port's LID, the link's width, speed and MTU from the profile). LIDs are the fabric's to give (a port has its
 * LID from the moment it joins), so a SubnSet, which would change them, is answered "unsupported
 * method/attribute". SMInfo is the subnet manager's, not the SMA's: it is not answered here.
 */
public final class SubnetAgent {
    private final Management m;

    SubnetAgent(Management m) { this.m = m; }

    /** The response to SMP {@code req} (class version, method, attribute checked), or null: not the SMA's. */
    byte[] answer(byte[] req) {
        int attr = Mad.attr(req);
        if (attr == Mad.ATTR_SM_INFO) return null;
        byte[] refused = SmpFields.refusal(req);
        if (refused != null) return refused;
        byte[] rsp = SmpFields.blankResponse(req);
        long mod = Mad.attrMod(req);
        int status = switch (attr) {
            case Mad.ATTR_NODE_INFO -> nodeInfo(rsp, Mad.SMP_DATA);
            case Mad.ATTR_NODE_DESC -> nodeDescription(rsp, Mad.SMP_DATA);
            case Mad.ATTR_PORT_INFO -> mod > 1 ? Mad.STATUS_INVALID_FIELD : portInfo(rsp, Mad.SMP_DATA);
            case Mad.ATTR_GUID_INFO -> mod != 0 ? Mad.STATUS_INVALID_FIELD : guidInfo(rsp, Mad.SMP_DATA);
            case Mad.ATTR_PKEY_TABLE -> (mod & 0xffff) != 0 ? Mad.STATUS_INVALID_FIELD : pkeyTable(rsp, Mad.SMP_DATA);
            case Mad.ATTR_SL_TO_VL -> SmpFields.slToVl(rsp, Mad.SMP_DATA);
            case Mad.ATTR_VL_ARBITRATION -> SmpFields.vlArbitration(rsp, Mad.SMP_DATA, (int) (mod >>> 16));
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
        Mad.put16(b, at + 30, SmpFields.DEVICE_ID);
        BigEndian.put32(b, at + 32, SmpFields.REVISION);
        b[at + 36] = 1; // the port the SMP came in on
        b[at + 37] = (byte) (SmpFields.VENDOR_ID >>> 16);
        b[at + 38] = (byte) (SmpFields.VENDOR_ID >>> 8);
        b[at + 39] = (byte) SmpFields.VENDOR_ID;
        return 0;
    }

    /** NodeDescription: 64 bytes of text, NUL-padded. */
    int nodeDescription(byte[] b, int at) {
        byte[] d = m.description.getBytes(StandardCharsets.US_ASCII);
        System.arraycopy(d, 0, b, at, Math.min(d.length, 64));
        return 0;
    }

    /** CapabilityMask bits (PortInfo, IBA 14.2.5.6; Linux's IB_PORT_*): IsSM, IsExtendedSpeedsSupported, IsCM,
     * IsDeviceManagementSupported. */
    public static final int CAP_IS_SM = 1 << 1, CAP_EXTENDED_SPEEDS = 1 << 14, CAP_CM = 1 << 16,
            CAP_DEVICE_MGMT = 1 << 19;
    /** What the port is whatever the host says: its link has the extended speeds (LinkSpeedExt*). */
    public static final int CAP_FIXED = CAP_EXTENDED_SPEEDS;
    /**
     * The host's bits after a reset: CM, so a port with no kernel of its own (attached programs, whose CM serve
     * runs) says CM as it always has; a guest's ib_cm sets it again, and clears it when it goes.
     */
    public static final int CAP_RESET = CAP_CM;

    /**
     * A port's CapabilityMask (PortInfo, IBA 14.2.5.6) after a reset, as sysfs shows it to attached programs: CM
     * supported, extended link speeds (LinkSpeedExt*), IsSM on the SM's port. What a driver changes with
     * MODIFY_PORT is {@link Management#capabilityMask()}.
     */
    public static int capabilityMask(boolean isSm) {
        return CAP_FIXED | CAP_RESET | (isSm ? CAP_IS_SM : 0);
    }

    /** PortInfo (IBA 14.2.5.6), 64 bytes: a 4x port at the profile's lane speed and MTU, active while its link is. */
    int portInfo(byte[] b, int at) {
        Firmware fw = m.fw;
        BigEndian.put64(b, at + 8, 0xfe80_0000_0000_0000L); // GID prefix: link-local
        Mad.put16(b, at + 16, fw.lid());
        Mad.put16(b, at + 18, m.smLid);
        BigEndian.put32(b, at + 20, m.capabilityMask());
        b[at + 28] = 1; // local port number
        SmpFields.link(b, at, fw.cfg.linkBitsPerSecond(), fw.cfg.linkMtuBytes());
        if (!fw.linkUp()) SmpFields.linkDown(b, at);
        Mad.put16(b, at + 48, Math.min(m.qkeyViolations, 0xffff));
        b[at + 50] = 1; // GUIDCap
        return 0;
    }

    int guidInfo(byte[] b, int at) {
        BigEndian.put64(b, at, m.guid);
        return 0;
    }

    int pkeyTable(byte[] b, int at) {
        Mad.put16(b, at, 0xffff); // the default partition, full member
        return 0;
    }
}
