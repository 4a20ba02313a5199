package nicsim.serve;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import nicsim.abi.BigEndian;
import nicsim.driver.Host;
import nicsim.driver.World;
import nicsim.fabric.SwitchAgent;
import nicsim.fabric.Mad;
import nicsim.firmware.Management;

/**
 * The fabric's subnet manager and subnet administrator, as opensm would be on the host of node 0: it listens on
 * node 0's special QPs, so its LID (1, the SM LID every port reports in PortInfo and sysfs) is the SM's. LIDs
 * are the fabric's (each port has its LID from the moment it joins, in node order), so there is no sweep that
 * assigns them; the SM answers SubnGet(SMInfo) as the master, and the SA answers Get and GetTable of
 * ClassPortInfo, NodeRecord, PortInfoRecord and PathRecord about every port, taking each node's NodeInfo,
 * NodeDescription and PortInfo from its SMA (the switch's from the switch's), and of SMInfoRecord,
 * SwitchInfoRecord, Linear and MulticastForwardingTableRecord, LinkRecord, GUIDInfoRecord, P_KeyTableRecord,
 * SLtoVLMappingTableRecord and VLArbitrationTableRecord ({@link FabricRecords}); ServiceRecord and
 * InformInfoRecord tables are empty (no service registers, no one subscribes to events). A table longer than one
 * MAD goes out in RMPP segments, all at once (the window covers the table). It keeps the multicast groups
 * ({@link McGroups}: MCMemberRecord Set, Delete, Get, GetTable) and programs the fabric's switch with their
 * members, as opensm programs MFTs. Everything it sends crosses the fabric as MADs from node 0's QP0/QP1 and
 * takes the fabric's time.
 */
final class SubnetManager {
    static final int SM_NODE = 0;
    /** SA class version, its header (RMPP 24..35, SM_Key, AttributeOffset, ComponentMask) and data. */
    static final int SA_VERSION = 2, RMPP = 24, SA_ATTR_OFFSET = 44, SA_COMP_MASK = 48, SA_DATA = 56,
            SA_DATA_SIZE = Mad.SIZE - SA_DATA, SA_HEADER = SA_DATA - RMPP - 12;
    static final int ATTR_NODE_RECORD = 0x0011, ATTR_PORT_INFO_RECORD = 0x0012, ATTR_PATH_RECORD = 0x0035;
    /** SA status (IBA 15.2.1.2, bits 14..8): no record matched; the request was invalid. */
    static final int SA_NO_RECORDS = 3 << 8, SA_REQ_INVALID = 2 << 8;
    /** SMInfo.SMState: master. */
    static final int SM_MASTER = 3;

    private final World world;
    /** The records of the switch and the links. */
    private final FabricRecords fabric;
    /** The multicast groups, as the SA keeps them (MCMemberRecord). */
    final McGroups groups;
    private long answered;

    SubnetManager(World world) {
        this.world = world;
        this.groups = new McGroups(world);
        this.fabric = new FabricRecords(world);
        world.fabric.switchAgent().smLid(world.host(SM_NODE).firmware.lid());
        attach();
    }

    /**
     * Listens on the SM node's adapter (again after it was reset: the new one has no listener), as one of the
     * fabric's agents: before a kernel driver's QP1 there, which gets what the SM declines.
     */
    void attach() { world.host(SM_NODE).firmware.management().agent(this::mad); }

    long answered() { return answered; }

    private boolean mad(int qp, int slid, int srcQp, byte[] m) {
        if (Mad.isResponse(m)) return false;
        byte[] rsp;
        if (qp == 0 && Mad.attr(m) == Mad.ATTR_SM_INFO) rsp = smInfo(m);
        else if (qp == 1 && Mad.mgmtClass(m) == Mad.CLASS_SUBN_ADM) rsp = null;
        else return false;
        Management mg = world.host(SM_NODE).firmware.management();
        answered++;
        if (rsp != null) {
            mg.send(qp, slid, srcQp, rsp);
            return true;
        }
        for (byte[] seg : sa(m)) mg.send(qp, slid, srcQp, seg);
        return true;
    }

    private byte[] smInfo(byte[] req) {
        if (Mad.method(req) != Mad.GET) return Mad.response(req, Mad.STATUS_METHOD_ATTR);
        byte[] r = Mad.response(req, 0);
        Arrays.fill(r, Mad.SMP_DATA, Mad.SMP_DATA + Mad.SMP_DATA_SIZE, (byte) 0);
        BigEndian.put64(r, Mad.SMP_DATA, Management.nodeGuid(SM_NODE));
        r[Mad.SMP_DATA + 20] = (byte) SM_MASTER; // priority 0, state MASTER
        return r;
    }

    /** An SA request's answer: one MAD, or a GetTable's RMPP segments. */
    private List<byte[]> sa(byte[] req) {
        if (Mad.classVersion(req) != SA_VERSION) return List.of(Mad.response(req, Mad.STATUS_BAD_VERSION));
        int method = Mad.method(req), attr = Mad.attr(req);
        boolean mc = attr == McGroups.ATTR;
        if (method != Mad.GET && method != Mad.GET_TABLE && !(mc && (method == Mad.SET || method == McGroups.DELETE)))
            return List.of(Mad.response(req, Mad.STATUS_METHOD));
        long mask = BigEndian.get64(req, SA_COMP_MASK);
        int size;
        List<byte[]> records = new ArrayList<>();
        switch (attr) {
            case McGroups.ATTR -> {
                McGroups.Answer a = groups.answer(req, mask);
                if (a.status() != 0) return List.of(Mad.response(req, a.status()));
                if (method == Mad.SET || method == McGroups.DELETE) {
                    byte[] r = header(req, McGroups.SIZE);
                    System.arraycopy(a.records().get(0), 0, r, SA_DATA, McGroups.SIZE);
                    return List.of(r);
                }
                size = McGroups.SIZE;
                records.addAll(a.records());
            }
            case Mad.ATTR_CLASS_PORT_INFO -> {
                byte[] r = Mad.response(req, 0);
                Arrays.fill(r, RMPP, Mad.SIZE, (byte) 0);
                r[SA_DATA] = 1;
                r[SA_DATA + 1] = SA_VERSION;
                BigEndian.put32(r, SA_DATA + 4, 18); // RespTimeValue
                return List.of(r);
            }
            case ATTR_NODE_RECORD -> { size = 108; nodeRecords(req, mask, records); }
            case ATTR_PORT_INFO_RECORD -> { size = 68; portInfoRecords(req, mask, records); }
            case ATTR_PATH_RECORD -> { size = 64; pathRecords(req, mask, records); }
            case FabricRecords.SM_INFO -> { size = FabricRecords.SM_INFO_SIZE; fabric.smInfo(req, mask, records); }
            case FabricRecords.SWITCH_INFO -> {
                size = FabricRecords.SWITCH_INFO_SIZE;
                fabric.switchInfo(req, mask, records);
            }
            case FabricRecords.LFT -> { size = FabricRecords.LFT_SIZE; fabric.lft(req, mask, records); }
            case FabricRecords.MFT -> { size = FabricRecords.MFT_SIZE; fabric.mft(req, mask, records); }
            case FabricRecords.LINK -> { size = FabricRecords.LINK_SIZE; fabric.links(req, mask, records); }
            case FabricRecords.GUID_INFO -> {
                size = FabricRecords.GUID_INFO_SIZE;
                fabric.guidInfo(req, mask, records);
            }
            case FabricRecords.PKEY_TABLE -> {
                size = FabricRecords.PKEY_TABLE_SIZE;
                fabric.pkeyTable(req, mask, records);
            }
            case FabricRecords.SL_TO_VL -> { size = FabricRecords.SL_TO_VL_SIZE; fabric.slToVl(req, mask, records); }
            case FabricRecords.VL_ARBITRATION -> {
                size = FabricRecords.VL_ARBITRATION_SIZE;
                fabric.vlArbitration(req, mask, records);
            }
            // no service is registered, no event subscribed to: empty tables, as an SA with none answers
            case FabricRecords.SERVICE -> size = FabricRecords.SERVICE_SIZE;
            case FabricRecords.INFORM_INFO -> size = FabricRecords.INFORM_INFO_SIZE;
            default -> { return List.of(Mad.response(req, Mad.STATUS_METHOD_ATTR)); }
        }
        if (method == Mad.GET) {
            if (records.size() != 1) return List.of(Mad.response(req, records.isEmpty() ? SA_NO_RECORDS : 4 << 8));
            byte[] r = header(req, size);
            System.arraycopy(records.get(0), 0, r, SA_DATA, size);
            return List.of(r);
        }
        return table(req, size, records);
    }

    private static byte[] header(byte[] req, int size) {
        byte[] r = Mad.response(req, 0);
        Arrays.fill(r, RMPP, Mad.SIZE, (byte) 0);
        Mad.put16(r, SA_ATTR_OFFSET, (size + 7) / 8);
        System.arraycopy(req, SA_COMP_MASK, r, SA_COMP_MASK, 8);
        return r;
    }

    /**
     * A GetTable's answer: the records at AttributeOffset strides, cut into RMPP DATA segments of 200
     * bytes (IBA 13.6.2): ACTIVE on each, FIRST on the first, whose PayloadLength is the whole transfer's
     * (SA header included), LAST on the last, whose PayloadLength is what it carries.
     */
    private static List<byte[]> table(byte[] req, int size, List<byte[]> records) {
        int stride = (size + 7) / 8 * 8;
        byte[] all = new byte[records.size() * stride];
        for (int i = 0; i < records.size(); i++) System.arraycopy(records.get(i), 0, all, i * stride, size);
        int segs = Math.max(1, (all.length + SA_DATA_SIZE - 1) / SA_DATA_SIZE);
        List<byte[]> out = new ArrayList<>();
        for (int s = 0; s < segs; s++) {
            byte[] r = header(req, size);
            int from = s * SA_DATA_SIZE, n = Math.min(SA_DATA_SIZE, all.length - from);
            System.arraycopy(all, from, r, SA_DATA, Math.max(0, n));
            r[RMPP] = 1; // RMPP version
            r[RMPP + 1] = 1; // DATA
            r[RMPP + 2] = (byte) (18 << 3 | 1 | (s == 0 ? 2 : 0) | (s == segs - 1 ? 4 : 0));
            BigEndian.put32(r, RMPP + 4, s + 1);
            // PayloadLength as ib_mad's RMPP counts it: the whole transfer on the first, what it carries on the last
            int payload = s == 0 ? all.length + SA_HEADER * segs : s == segs - 1 ? n + SA_HEADER : 0;
            BigEndian.put32(r, RMPP + 8, payload);
            out.add(r);
        }
        return out;
    }

    private static boolean want(long mask, int bit) { return (mask >>> bit & 1) != 0; }

    /** NodeRecords of every adapter and the switch. */
    private void nodeRecords(byte[] req, long mask, List<byte[]> out) {
        for (Host h : world.hosts()) {
            byte[] r = new byte[108];
            h.firmware.management().describe(Mad.ATTR_NODE_INFO, r, 4);
            h.firmware.management().describe(Mad.ATTR_NODE_DESC, r, 44);
            nodeRecord(r, h.firmware.lid(), req, mask, out);
        }
        SwitchAgent sw = world.fabric.switchAgent();
        byte[] r = new byte[108];
        sw.nodeInfo(r, 4, 0);
        sw.nodeDescription(r, 44);
        nodeRecord(r, sw.lid(), req, mask, out);
    }

    /** NodeRecord: LID, NodeInfo at 4, NodeDescription at 44; matched on LID (bit 0), NodeGUID (7), PortGUID (8). */
    private static void nodeRecord(byte[] r, int lid, byte[] req, long mask, List<byte[]> out) {
        Mad.put16(r, 0, lid);
        if (matches(r, req, mask, new int[][]{{0, 0, 2}, {7, 16, 8}, {8, 24, 8}})) out.add(r);
    }

    /** PortInfoRecords of every adapter's port and the switch's ports 0..N. */
    private void portInfoRecords(byte[] req, long mask, List<byte[]> out) {
        for (Host h : world.hosts()) {
            byte[] r = new byte[68];
            h.firmware.management().describe(Mad.ATTR_PORT_INFO, r, 4);
            portInfoRecord(r, h.firmware.lid(), 1, req, mask, out);
        }
        SwitchAgent sw = world.fabric.switchAgent();
        for (int port = 0; port <= sw.ports(); port++) {
            byte[] r = new byte[68];
            sw.portInfo(r, 4, port, 0);
            portInfoRecord(r, sw.lid(), port, req, mask, out);
        }
    }

    /**
     * PortInfoRecord: EndportLID, PortNum, then PortInfo at 4; matched on LID (bit 0), port (1), and CapabilityMask
     * (7) as opensm matches it: the port has every capability the request names (saquery -s asks for IsSM).
     */
    private static void portInfoRecord(byte[] r, int lid, int port, byte[] req, long mask, List<byte[]> out) {
        Mad.put16(r, 0, lid);
        r[2] = (byte) port;
        long caps = BigEndian.get32(req, SA_DATA + 4 + 20);
        if (want(mask, 7) && (BigEndian.get32(r, 4 + 20) & caps) != caps) return;
        if (matches(r, req, mask, new int[][]{{0, 0, 2}, {1, 2, 1}})) out.add(r);
    }

    /** Whether every {bit, offset, length} the component mask selects equals the request's. */
    static boolean matches(byte[] rec, byte[] req, long mask, int[][] fields) {
        for (int[] f : fields)
            if (want(mask, f[0])
                    && !Arrays.equals(rec, f[1], f[1] + f[2], req, SA_DATA + f[1], SA_DATA + f[1] + f[2]))
                return false;
        return true;
    }

    /**
     * PathRecords between every pair of ports (one path each; the switch is one hop), matched on DGID, SGID, DLID,
     * SLID. A port's GID is its IBA name, the subnet prefix and its port GUID (srp_daemon builds the dgid it hands
     * ib_srp so, from the NodeRecord), the one in the ports' GID tables.
     */
    private void pathRecords(byte[] req, long mask, List<byte[]> out) {
        for (Host s : world.hosts())
            for (Host d : world.hosts()) {
                byte[] r = pathRecord(s.firmware.lid(), d.firmware.lid(), s);
                if (matches(r, req, mask, new int[][]{{2, 8, 16}, {3, 24, 16}, {4, 40, 2}, {5, 42, 2}})) out.add(r);
            }
    }

    /**
     * The GID of the port with LID {@code lid} (node lid - 1's): the link-local prefix and the port's GUID, which is
     * its adapter's node GUID (NodeInfo's PortGUID, GUIDInfo), as a ConnectX port 1's GID[0] is (IBA 4.1.1).
     */
    static byte[] gid(int lid) {
        byte[] g = new byte[16];
        BigEndian.put64(g, 0, 0xfe80_0000_0000_0000L);
        BigEndian.put64(g, 8, Management.nodeGuid(lid - 1));
        return g;
    }

    private static byte[] pathRecord(int slid, int dlid, Host s) {
        byte[] r = new byte[64];
        System.arraycopy(gid(dlid), 0, r, 8, 16);
        System.arraycopy(gid(slid), 0, r, 24, 16);
        Mad.put16(r, 40, dlid);
        Mad.put16(r, 42, slid);
        r[49] = (byte) 0x81; // reversible, one path
        Mad.put16(r, 50, 0xffff); // P_Key
        r[54] = (byte) (2 << 6 | mtuCode(s)); // exactly
        r[55] = (byte) (2 << 6 | rateCode(s));
        r[56] = (byte) (2 << 6 | 18); // packet lifetime 4.096 us x 2^18, as opensm's default
        return r;
    }

    /** The IBA MTU code (256 B: 1 ... 4096 B: 5) of {@code h}'s link. */
    static int mtuCode(Host h) {
        return Math.max(1, Integer.numberOfTrailingZeros(h.config.firmware().linkMtuBytes()) - 7);
    }

    /** The IBA rate code of {@code h}'s link. */
    static int rateCode(Host h) { return rateCode(h.config.firmware().linkBitsPerSecond()); }

    /** The IBA rate code (table 224) of the fastest rate at or below {@code bps}. */
    static int rateCode(long bps) {
        long g = bps / 1_000_000_000L;
        int[][] codes = {{600, 22}, {400, 21}, {300, 18}, {200, 17}, {168, 14}, {120, 10}, {112, 13}, {100, 16},
                {80, 9}, {60, 8}, {56, 12}, {40, 7}, {30, 4}, {25, 15}, {20, 6}, {14, 11}, {10, 3}, {5, 5}};
        for (int[] c : codes) if (g >= c[0]) return c[1];
        return 2;
    }
}
