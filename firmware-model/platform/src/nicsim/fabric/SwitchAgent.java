package nicsim.fabric;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.stream.IntStream;
import nicsim.abi.BigEndian;

/**
 * The switch's management port (port 0) as its firmware keeps it: its SMI passes directed-route SMPs on, hop
 * by hop (IBA 14.2.2), and its SMA answers SubnGet of NodeInfo, NodeDescription, SwitchInfo, PortInfo (port 0,
 * the management port, with the switch's LID; ports 1..N, one a link to each adapter), GUIDInfo, P_KeyTable,
 * SLtoVLMappingTable and VLArbitrationTable (VL0 only, as the adapters'), and the Linear and
 * MulticastForwardingTable, from the fabric as it is (IBA 14.2.5). A subnet tool sees a base switch
 * (no enhanced port 0) of N ports. Numbering: switch port n is the link to the adapter of LID n; the switch's
 * own LID is the one after the last adapter's. Its routing is the fabric's: LID n leaves by port n, its own
 * LID goes to port 0. SubnSet is refused ("unsupported method/attribute"): LIDs and routes are the fabric's,
 * not an SM's to change. Its PMA ({@link PerfAgent}) answers PortCounters and PortCountersExtended of each
 * port from the switch's own count of what the port sent and received; other classes get "unsupported".
 */
public final class SwitchAgent {
    /** The switch's node, system image and port-0 GUID: nicsim's OUI, as the adapters' (node + 1), bit 31 set. */
    public static final long GUID = 0x0002_1de5_8000_0000L;
    public static final String DESCRIPTION = "nicsim switch";
    /**
     * SwitchInfo's LinearFDBCap (the LFT covers every unicast LID) and MulticastFDBCap (the MFT shows MLIDs
     * 0xC000..0xC3FF, the lowest the SA gives out first).
     */
    public static final int LINEAR_FDB_CAP = 0xC000, MULTICAST_FDB_CAP = 1024;
    /** SMP attributes only a switch has (IBA table 145). */
    public static final int ATTR_SWITCH_INFO = 0x0012, ATTR_LINEAR_FORWARDING_TABLE = 0x0019,
            ATTR_MULTICAST_FORWARDING_TABLE = 0x001B;
    /** An LFT entry for a LID with no route (opensm writes the same). */
    public static final int NO_PATH = 0xff;

    /** What the management port sends: {@code p} out of switch port {@code port}. */
    record Out(Packet p, int port) {}

    private final Fabric f;
    /** The switch's PMA: each port's traffic as the switch counted it. */
    private final PerfAgent pma;
    /** LID of the subnet manager, as port 0's PortInfo.MasterSMLID says (serve's SM is on LID 1). */
    private int smLid = 1;

    SwitchAgent(Fabric f) {
        this.f = f;
        this.pma = new PerfAgent(new PerfAgent.Ports() {
            @Override public int[] numbers() { return IntStream.rangeClosed(1, ports()).toArray(); }
            @Override public long[] raw(int port) { return f.sw.portTraffic(port); }
        });
    }

    /** The switch's LID: the one after the last adapter's (adapters take LIDs 1.. in the order they join). */
    public int lid() { return f.ports.size() + 1; }

    /** Ports with a link: one per adapter. */
    public int ports() { return f.ports.size(); }

    public void smLid(int lid) { this.smLid = lid; }

    /** Whether {@code p} is for the management port: to the permissive LID (a directed-route SMP's) or the switch's. */
    boolean takes(Packet p) { return p.dlid() == Mad.PERMISSIVE_LID || p.dlid() == lid(); }

    /** The port LID {@code lid} leaves by (0: the switch itself), or {@link #NO_PATH}. */
    public int route(int lid) {
        if (lid == lid()) return 0;
        return lid >= 1 && lid <= ports() ? lid : NO_PATH;
    }

    /** A MAD in by port {@code in} for the management port: what leaves (an answer, the SMP passed on), or null. */
    Out take(Packet p, int in) {
        byte[] m = Arrays.copyOf(p.payload(), Math.max(p.payload().length, Mad.SIZE));
        if (p.payload().length != Mad.SIZE || p.destQp() > 1) return null;
        if (DirectedRoute.is(m)) {
            if (p.destQp() != 0 || !DirectedRoute.endsDirected(m)) return null;
            if (p.dlid() == lid() && !DirectedRoute.returning(m) && DirectedRoute.hopPointer(m) == 0)
                return start(m, in); // LID-routed here, the directed part starts here
            int step = DirectedRoute.arrive(m, in, true);
            if (step == DirectedRoute.TO_DR_SLID) return toDrSlid(m);
            if (step == DirectedRoute.DROP) return null;
            if (step != DirectedRoute.LOCAL) return out(m); // a hop on the way: passed on
            if (Mad.isResponse(m)) return null;
            return out(answer(m, in));
        }
        if (p.dlid() != lid() || Mad.isResponse(m)) return null;
        int method = Mad.method(m);
        int cls = Mad.mgmtClass(m);
        byte[] rsp = p.destQp() == 0 && cls == Mad.CLASS_SUBN_LID ? answer(m, in)
                : p.destQp() == 1 && cls == Mad.CLASS_PERF && p.qkey() == Mad.GSI_QKEY ? pma.answer(m)
                : method == Mad.SEND || method == Mad.TRAP ? null : Mad.response(m, Mad.STATUS_METHOD_ATTR);
        if (rsp == null || route(p.slid()) == NO_PATH || route(p.slid()) == 0) return null;
        return new Out(packet(lid(), p.slid(), p.srcQp(), (int) p.destQp(), rsp), route(p.slid()));
    }

    /**
     * A directed-route SMP whose directed part starts at the switch (the requester's DrSLID, LID-routed to the
     * switch): of no hops the SMA answers it, back to DrSLID; else it leaves by its path's first port.
     */
    private Out start(byte[] m, int in) {
        if (DirectedRoute.hopCount(m) > 0) return out(m);
        byte[] rsp = answer(m, in);
        return Mad.isResponse(rsp) ? toDrSlid(rsp) : null;
    }

    /** The way back's LID-routed part: from the switch to DrSLID, where the requester is. */
    private Out toDrSlid(byte[] m) {
        int slid = Mad.get16(m, Mad.DR_SLID), port = route(slid);
        if (port == NO_PATH || port == 0) return null;
        return new Out(packet(lid(), slid, 0, 0, m), port);
    }

    /** A directed-route SMP leaving by the port its path names (the hop pointer moved), or null: no such port. */
    private Out out(byte[] m) {
        int port = DirectedRoute.leave(m, true);
        if (port < 1 || port > ports()) return null;
        return new Out(packet(Mad.PERMISSIVE_LID, Mad.PERMISSIVE_LID, 0, 0, m), port);
    }

    private static Packet packet(int slid, int dlid, long dqp, int sqp, byte[] mad) {
        return new Packet(slid, dlid, Packet.Op.SEND_ONLY, dqp, sqp, 0, false, false, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                dqp == 0 ? 0 : Mad.GSI_QKEY, mad, Packet.UD);
    }

    /** The SMA's answer to SMP {@code req}, come in on port {@code in}. */
    byte[] answer(byte[] req, int in) {
        byte[] refused = SmpFields.refusal(req);
        if (refused != null) return refused;
        byte[] rsp = SmpFields.blankResponse(req);
        long mod = Mad.attrMod(req);
        int at = Mad.SMP_DATA;
        int status = switch (Mad.attr(req)) {
            case Mad.ATTR_NODE_INFO -> nodeInfo(rsp, at, in);
            case Mad.ATTR_NODE_DESC -> nodeDescription(rsp, at);
            case ATTR_SWITCH_INFO -> switchInfo(rsp, at);
            case Mad.ATTR_PORT_INFO -> mod > ports() ? Mad.STATUS_INVALID_FIELD : portInfo(rsp, at, (int) mod, in);
            case Mad.ATTR_GUID_INFO -> mod != 0 ? Mad.STATUS_INVALID_FIELD : guidInfo(rsp, at);
            case Mad.ATTR_PKEY_TABLE -> (mod & 0xffff) != 0 || mod >>> 16 > ports() ? Mad.STATUS_INVALID_FIELD
                    : pkeyTable(rsp, at);
            // modifier: input port (15..8) and output port (7..0); the block (31..16) and output port (15..0)
            case Mad.ATTR_SL_TO_VL -> (mod >>> 8 & 0xff) > ports() || (mod & 0xff) > ports() || mod >>> 16 != 0
                    ? Mad.STATUS_INVALID_FIELD : SmpFields.slToVl(rsp, at);
            case Mad.ATTR_VL_ARBITRATION -> (mod & 0xffff) > ports() ? Mad.STATUS_INVALID_FIELD
                    : SmpFields.vlArbitration(rsp, at, (int) (mod >>> 16));
            case ATTR_LINEAR_FORWARDING_TABLE -> mod * 64 >= LINEAR_FDB_CAP ? Mad.STATUS_INVALID_FIELD
                    : linearForwardingTable(rsp, at, (int) mod);
            case ATTR_MULTICAST_FORWARDING_TABLE -> (mod & 0x1ff) * 32 >= MULTICAST_FDB_CAP
                    || (mod >>> 28) > ports() / 16 || (mod & 0x0fff_fe00L) != 0 ? Mad.STATUS_INVALID_FIELD
                    : multicastForwardingTable(rsp, at, (int) (mod & 0x1ff), (int) (mod >>> 28));
            default -> Mad.STATUS_METHOD_ATTR;
        };
        return status == 0 ? rsp : Mad.response(req, status);
    }

    /** NodeInfo (IBA 14.2.5.3): a switch of {@link #ports()} ports; LocalPortNum is the port the SMP came in on. */
    public int nodeInfo(byte[] b, int at, int in) {
        b[at] = 1; // base version
        b[at + 1] = 1; // SMP class version
        b[at + 2] = 2; // node type: switch
        b[at + 3] = (byte) ports();
        BigEndian.put64(b, at + 4, GUID); // system image GUID
        BigEndian.put64(b, at + 12, GUID); // node GUID
        BigEndian.put64(b, at + 20, GUID); // port GUID: port 0's, the switch's only
        Mad.put16(b, at + 28, 1); // partition capacity: one P_Key
        Mad.put16(b, at + 30, SmpFields.DEVICE_ID);
        BigEndian.put32(b, at + 32, SmpFields.REVISION);
        b[at + 36] = (byte) in;
        b[at + 37] = (byte) (SmpFields.VENDOR_ID >>> 16);
        b[at + 38] = (byte) (SmpFields.VENDOR_ID >>> 8);
        b[at + 39] = (byte) SmpFields.VENDOR_ID;
        return 0;
    }

    public int nodeDescription(byte[] b, int at) {
        byte[] d = DESCRIPTION.getBytes(StandardCharsets.US_ASCII);
        System.arraycopy(d, 0, b, at, d.length);
        return 0;
    }

    /** SwitchInfo (IBA 14.2.5.4), 20 bytes: the LFT's and MFT's capacity and top, base port 0. */
    public int switchInfo(byte[] b, int at) {
        Mad.put16(b, at, LINEAR_FDB_CAP);
        Mad.put16(b, at + 6, lid()); // LinearFDBTop: the highest LID routed
        b[at + 8] = (byte) NO_PATH; // DefaultPort: none
        b[at + 9] = (byte) NO_PATH;
        b[at + 10] = (byte) NO_PATH;
        b[at + 11] = (byte) (18 << 3); // LifeTimeValue: 4.096 us x 2^18, as PortInfo's SubnetTimeOut
        Mad.put16(b, at + 4, MULTICAST_FDB_CAP);
        Mad.put16(b, at + 12, 1); // LIDsPerPort (LMC 0)
        Mad.put16(b, at + 14, 1); // PartitionEnforcementCap
        Mad.put16(b, at + 18, f.sw.multicastTop()); // MulticastFDBTop
        return 0;
    }

    /**
     * PortInfo of port {@code port}: port 0 carries the switch's LID, the SM's LID and capabilities; ports 1..N
     * are links to the adapters, at the link's rate and MTU (the same fields the adapter's SMA gives).
     */
    public int portInfo(byte[] b, int at, int port, int in) {
        if (port == 0) {
            BigEndian.put64(b, at + 8, 0xfe80_0000_0000_0000L); // GID prefix: link-local
            Mad.put16(b, at + 16, lid());
            Mad.put16(b, at + 18, smLid);
            BigEndian.put32(b, at + 20, 0x0000_4008); // CapabilityMask: IsTrapSupported, IsExtendedSpeedsSupported
        }
        b[at + 28] = (byte) in; // LocalPortNum: the port the SMP came in on
        SmpFields.link(b, at, f.bitsPerSecond, f.maxMtu());
        if (port > 0 && !f.linkUp(port)) SmpFields.linkDown(b, at); // port N is the link to LID N's adapter
        b[at + 50] = (byte) (port == 0 ? 1 : 0); // GUIDCap: port 0 only
        return 0;
    }

    public int guidInfo(byte[] b, int at) {
        BigEndian.put64(b, at, GUID);
        return 0;
    }

    public int pkeyTable(byte[] b, int at) {
        Mad.put16(b, at, 0xffff); // the default partition, full member
        return 0;
    }

    /** LinearForwardingTable block {@code block} (IBA 14.2.5.10): the out port of LIDs 64 x block .. +63. */
    public int linearForwardingTable(byte[] b, int at, int block) {
        for (int i = 0; i < 64; i++) b[at + i] = (byte) route(block * 64 + i);
        return 0;
    }

    /**
     * MulticastForwardingTable block {@code block}, port group {@code position} (IBA 14.2.5.12): for each of
     * MLIDs 0xC000 + 32 x block .. +31, a 16-bit mask of ports 16 x position .. +15 the switch sends it out of,
     * as the SA programmed the switch (the ports with a member that receives).
     */
    public int multicastForwardingTable(byte[] b, int at, int block, int position) {
        for (int i = 0; i < 32; i++) {
            int mask = 0;
            for (int port : f.sw.multicastPorts(Packet.MULTICAST_LID_FIRST + block * 32 + i))
                if (port / 16 == position) mask |= 1 << (port % 16);
            Mad.put16(b, at + 2 * i, mask);
        }
        return 0;
    }
}
