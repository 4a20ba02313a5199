package nicsim.serve;

import java.util.List;
import nicsim.abi.BigEndian;
import nicsim.driver.Host;
import nicsim.driver.World;
import nicsim.fabric.Packet;
import nicsim.fabric.SwitchAgent;
import nicsim.firmware.Management;
import nicsim.fabric.Mad;
import nicsim.fabric.SmpFields;

/**
 * The SA's records of the fabric's topology and the switch (IBA 15.2.5): SMInfoRecord, SwitchInfoRecord,
 * LinearForwardingTableRecord, MulticastForwardingTableRecord, LinkRecord, GUIDInfoRecord, P_KeyTableRecord,
 * SLtoVLMappingTableRecord and VLArbitrationTableRecord, each from the state the switch's SMA and the adapters'
 * SMAs answer from, so an SA query and the SMPs it stands for agree. Each builder adds the records the request's
 * component mask selects (IBA 15.2.4: a selected field must equal the request's). The offsets are the records'
 * in the specification (no padding but the 8-byte stride of a table).
 */
final class FabricRecords {
    /** SA attribute IDs (IBA table 187). */
    static final int SM_INFO = 0x0018, SWITCH_INFO = 0x0014, LFT = 0x0015, MFT = 0x0017, LINK = 0x0020,
            GUID_INFO = 0x0030, SERVICE = 0x0031, PKEY_TABLE = 0x0033, INFORM_INFO = 0x00F3, SL_TO_VL = 0x0013,
            VL_ARBITRATION = 0x0036;
    /** Record sizes in bytes. */
    static final int SM_INFO_SIZE = 28, SWITCH_INFO_SIZE = 24, LFT_SIZE = 72, MFT_SIZE = 72, LINK_SIZE = 6,
            GUID_INFO_SIZE = 72, SERVICE_SIZE = 176, PKEY_TABLE_SIZE = 72, INFORM_INFO_SIZE = 60, SL_TO_VL_SIZE = 16,
            VL_ARBITRATION_SIZE = 72;

    private final World world;

    FabricRecords(World world) { this.world = world; }

    private SwitchAgent sw() { return world.fabric.switchAgent(); }

    /** SMInfoRecord: LID, then SMInfo (GUID, SM_Key 0, ActCount, priority 0, MASTER) of the SM on node 0. */
    void smInfo(byte[] req, long mask, List<byte[]> out) {
        byte[] r = new byte[SM_INFO_SIZE];
        Mad.put16(r, 0, world.host(SubnetManager.SM_NODE).firmware.lid());
        BigEndian.put64(r, 4, Management.nodeGuid(SubnetManager.SM_NODE));
        r[4 + 20] = (byte) SubnetManager.SM_MASTER;
        if (SubnetManager.matches(r, req, mask, new int[][]{{0, 0, 2}})) out.add(r);
    }

    /** SwitchInfoRecord: LID, then SwitchInfo at 4. */
    void switchInfo(byte[] req, long mask, List<byte[]> out) {
        byte[] r = new byte[SWITCH_INFO_SIZE];
        Mad.put16(r, 0, sw().lid());
        sw().switchInfo(r, 4);
        if (SubnetManager.matches(r, req, mask, new int[][]{{0, 0, 2}})) out.add(r);
    }

    /** LinearForwardingTableRecord: LID, BlockNum, then 64 entries at 8; blocks up to LinearFDBTop's. */
    void lft(byte[] req, long mask, List<byte[]> out) {
        for (int block = 0; block <= sw().lid() / 64; block++) {
            byte[] r = new byte[LFT_SIZE];
            Mad.put16(r, 0, sw().lid());
            Mad.put16(r, 2, block);
            sw().linearForwardingTable(r, 8, block);
            if (SubnetManager.matches(r, req, mask, new int[][]{{0, 0, 2}, {1, 2, 2}})) out.add(r);
        }
    }

    /**
     * MulticastForwardingTableRecord: LID, Position (bits 15..12) and BlockNum (8..0), then 32 port masks at 8;
     * blocks up to MulticastFDBTop's (none while no group has a port that receives).
     */
    void mft(byte[] req, long mask, List<byte[]> out) {
        int top = world.fabric.fabricSwitch().multicastTop() - Packet.MULTICAST_LID_FIRST;
        for (int block = 0; top >= 0 && block <= top / 32; block++)
            for (int position = 0; position <= sw().ports() / 16; position++) {
                byte[] r = new byte[MFT_SIZE];
                Mad.put16(r, 0, sw().lid());
                Mad.put16(r, 2, position << 12 | block);
                sw().multicastForwardingTable(r, 8, block, position);
                int[][] fields = {{0, 0, 2}};
                if (!SubnetManager.matches(r, req, mask, fields)) continue;
                int asked = Mad.get16(req, SubnetManager.SA_DATA + 2);
                if (want(mask, 1) && asked >>> 12 != position || want(mask, 3) && (asked & 0x1ff) != block) continue;
                out.add(r);
            }
    }

    private static boolean want(long mask, int bit) { return (mask >>> bit & 1) != 0; }

    /** LinkRecord: FromLID, FromPort, ToPort, ToLID; each link both ways (adapter port 1, switch port n). */
    void links(byte[] req, long mask, List<byte[]> out) {
        for (Host h : world.hosts()) {
            int lid = h.firmware.lid(), port = sw().route(lid);
            link(lid, 1, sw().lid(), port, req, mask, out);
            link(sw().lid(), port, lid, 1, req, mask, out);
        }
    }

    private static void link(int from, int fromPort, int to, int toPort, byte[] req, long mask, List<byte[]> out) {
        byte[] r = new byte[LINK_SIZE];
        Mad.put16(r, 0, from);
        r[2] = (byte) fromPort;
        r[3] = (byte) toPort;
        Mad.put16(r, 4, to);
        if (SubnetManager.matches(r, req, mask, new int[][]{{0, 0, 2}, {1, 2, 1}, {2, 3, 1}, {3, 4, 2}})) out.add(r);
    }

    /** GUIDInfoRecord: LID, BlockNum, then GUIDInfo at 8: one GUID per port (the adapters' and port 0's). */
    void guidInfo(byte[] req, long mask, List<byte[]> out) {
        for (Host h : world.hosts()) {
            byte[] r = new byte[GUID_INFO_SIZE];
            Mad.put16(r, 0, h.firmware.lid());
            BigEndian.put64(r, 8, h.firmware.management().guid());
            if (SubnetManager.matches(r, req, mask, new int[][]{{0, 0, 2}, {1, 2, 1}})) out.add(r);
        }
        byte[] r = new byte[GUID_INFO_SIZE];
        Mad.put16(r, 0, sw().lid());
        sw().guidInfo(r, 8);
        if (SubnetManager.matches(r, req, mask, new int[][]{{0, 0, 2}, {1, 2, 1}})) out.add(r);
    }

    /** P_KeyTableRecord: LID, BlockNum, PortNum, then the table at 8: the default partition on every port. */
    void pkeyTable(byte[] req, long mask, List<byte[]> out) {
        for (Host h : world.hosts()) pkeys(h.firmware.lid(), 1, req, mask, out);
        for (int port = 0; port <= sw().ports(); port++) pkeys(sw().lid(), port, req, mask, out);
    }

    private void pkeys(int lid, int port, byte[] req, long mask, List<byte[]> out) {
        byte[] r = new byte[PKEY_TABLE_SIZE];
        Mad.put16(r, 0, lid);
        r[4] = (byte) port;
        sw().pkeyTable(r, 8);
        if (SubnetManager.matches(r, req, mask, new int[][]{{0, 0, 2}, {1, 2, 2}, {2, 4, 1}})) out.add(r);
    }

    /**
     * SLtoVLMappingTableRecords (IBA 15.2.5.4): LID, InputPortNum, OutputPortNum, then the table at 8. As opensm
     * keeps them: an adapter's port as output port 1 from input 0; the switch's every input port 0..N to every
     * output port 1..N. Matched on LID (bit 0), input (1) and output port (2).
     */
    void slToVl(byte[] req, long mask, List<byte[]> out) {
        for (Host h : world.hosts()) slToVl(h.firmware.lid(), 0, 1, req, mask, out);
        for (int in = 0; in <= sw().ports(); in++)
            for (int port = 1; port <= sw().ports(); port++) slToVl(sw().lid(), in, port, req, mask, out);
    }

    private static void slToVl(int lid, int in, int port, byte[] req, long mask, List<byte[]> out) {
        byte[] r = new byte[SL_TO_VL_SIZE];
        Mad.put16(r, 0, lid);
        r[2] = (byte) in;
        r[3] = (byte) port;
        SmpFields.slToVl(r, 8);
        if (SubnetManager.matches(r, req, mask, new int[][]{{0, 0, 2}, {1, 2, 1}, {2, 3, 1}})) out.add(r);
    }

    /**
     * VLArbitrationTableRecords (IBA 15.2.5.9): LID, OutputPortNum, BlockNum (1..4), then the block at 8, for
     * each adapter's port 1 and the switch's ports 1..N (a base switch's port 0 arbitrates nothing). Matched on
     * LID (bit 0), port (1) and block (2).
     */
    void vlArbitration(byte[] req, long mask, List<byte[]> out) {
        for (Host h : world.hosts()) vlArbitration(h.firmware.lid(), 1, req, mask, out);
        for (int port = 1; port <= sw().ports(); port++) vlArbitration(sw().lid(), port, req, mask, out);
    }

    private static void vlArbitration(int lid, int port, byte[] req, long mask, List<byte[]> out) {
        for (int block = 1; block <= 4; block++) {
            byte[] r = new byte[VL_ARBITRATION_SIZE];
            Mad.put16(r, 0, lid);
            r[2] = (byte) port;
            r[3] = (byte) block;
            SmpFields.vlArbitration(r, 8, block);
            if (SubnetManager.matches(r, req, mask, new int[][]{{0, 0, 2}, {1, 2, 1}, {2, 3, 1}})) out.add(r);
        }
    }
}
