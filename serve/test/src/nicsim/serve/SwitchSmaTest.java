package nicsim.serve;

import static org.junit.jupiter.api.Assertions.*;

import java.util.ArrayList;
import java.util.List;
import nicsim.abi.BigEndian;
import nicsim.driver.World;
import nicsim.fabric.Faults;
import nicsim.fabric.SwitchAgent;
import nicsim.fabric.DirectedRoute;
import nicsim.firmware.Management;
import nicsim.fabric.Mad;
import nicsim.profile.Profile;
import nicsim.profile.Profiles;
import org.junit.jupiter.api.Test;

/**
 * The switch's SMA and SMI as a subnet tool reaches them: directed-route SMPs from node 1's QP0, hop by hop
 * through the switch (IBA 14.2.2), and LID-routed ones to the switch's LID, laid out as libibmad sends them.
 */
class SwitchSmaTest {
    private static final int HOSTS = 3;

    /** The answers node 1's QP0 got, and when. */
    private record Answer(byte[] mad, long at) {}

    private static final class Fabric3 {
        final World w;
        final List<Answer> got = new ArrayList<>();

        final SubnetManager sm;

        Fabric3(Profile p) {
            w = new World(HOSTS, p, 1, Faults.NONE);
            sm = new SubnetManager(w);
            w.host(1).firmware.management().listen((qp, slid, src, mad) -> Mad.isResponse(mad)
                    && got.add(new Answer(mad, w.now())));
        }

        Answer ask(byte[] mad, int dlid) { return ask(0, mad, dlid); }

        /** Sends {@code mad} from node 1's special QP {@code qp} to that QP behind {@code dlid}; its one answer. */
        Answer ask(int qp, byte[] mad, int dlid) {
            got.clear();
            long sent = w.now();
            w.host(1).within(() -> { w.host(1).firmware.management().send(qp, dlid, qp, mad); return null; });
            w.runFor(500_000_000L);
            assertEquals(1, got.size(), "one answer");
            return new Answer(got.get(0).mad(), got.get(0).at() - sent);
        }
    }

    /** A directed-route SubnGet of {@code attr} along {@code path} (the ports to leave by, hop by hop). */
    static byte[] directed(int attr, long mod, int... path) {
        byte[] m = Mad.request(Mad.CLASS_SUBN_DR, 1, Mad.GET, 0x77, attr, mod);
        m[Mad.DR_HOP_CNT] = (byte) path.length;
        Mad.put16(m, Mad.DR_SLID, Mad.PERMISSIVE_LID);
        Mad.put16(m, Mad.DR_DLID, Mad.PERMISSIVE_LID);
        for (int i = 0; i < path.length; i++) m[Mad.DR_INITIAL_PATH + 1 + i] = (byte) path[i];
        return m;
    }

    private static int data(byte[] m, int at) { return m[Mad.SMP_DATA + at] & 0xff; }

    @Test
    void oneHopReachesTheSwitchWhichSaysWhatItIsAndWhichPortTheSmpCameIn() {
        Fabric3 f = new Fabric3(Profiles.load("cx-gen3x16"));
        byte[] r = f.ask(directed(Mad.ATTR_NODE_INFO, 0, 1), Mad.PERMISSIVE_LID).mad();
        assertEquals(0, Mad.status(r) & ~Mad.DR_DIRECTION, "status");
        assertEquals(0, DirectedRoute.hopPointer(r), "back at the requester, the hop pointer is 0");
        assertEquals(2, data(r, 2), "node type: switch");
        assertEquals(HOSTS, data(r, 3), "a port per adapter");
        assertEquals(SwitchAgent.GUID, BigEndian.get64(r, Mad.SMP_DATA + 12));
        assertEquals(2, data(r, 36), "node 1 (LID 2) is on switch port 2");
        assertEquals(2, r[Mad.DR_RETURN_PATH + 1], "the switch wrote the port it came in by");
    }

    @Test
    void twoHopsCrossTheSwitchToAnotherAdapterAndBack() {
        Fabric3 f = new Fabric3(Profiles.load("cx-gen3x16"));
        byte[] r = f.ask(directed(Mad.ATTR_NODE_INFO, 0, 1, 3), Mad.PERMISSIVE_LID).mad();
        assertEquals(0, Mad.status(r) & ~Mad.DR_DIRECTION, "status");
        assertEquals(Management.nodeGuid(2), BigEndian.get64(r, Mad.SMP_DATA + 12), "node 2's adapter answered");
        assertEquals(1, data(r, 2), "a channel adapter");
        assertEquals(0, DirectedRoute.hopPointer(r));
        // a path that leaves the switch by a port with no link, or an adapter by a port it has not, is dropped
        f.got.clear();
        byte[] bad = directed(Mad.ATTR_NODE_INFO, 0, 1, 9);
        f.w.host(1).within(() -> { f.w.host(1).firmware.management().send(0, 0xffff, 0, bad); return null; });
        f.w.runFor(500_000_000L);
        assertTrue(f.got.isEmpty(), "no answer through switch port 9");
        assertEquals(1, f.w.fabric.fabricSwitch().sim().counters().counter("Fabric.switch_mads_dropped").get());
    }

    @Test
    void eachPassThroughTheManagementPortTakesTheProfilesLatency() {
        Profile p = Profiles.load("cx-gen3x16");
        long base = p.picos("switch.sma.latency"), more = base + 3_000_000; // 3 us more
        long t1 = new Fabric3(p).ask(directed(Mad.ATTR_NODE_INFO, 0, 1, 3), Mad.PERMISSIVE_LID).at();
        long t2 = new Fabric3(p.with("switch.sma.latency", (more / 1000) + " ns"))
                .ask(directed(Mad.ATTR_NODE_INFO, 0, 1, 3), Mad.PERMISSIVE_LID).at();
        assertEquals(2 * (more - base), t2 - t1, "through the switch's SMI out and back: two passes");
    }

    @Test
    void theSwitchAnswersAtItsLidWithItsPortsAndForwardingTable() {
        Fabric3 f = new Fabric3(Profiles.load("cx-gen3x16"));
        int lid = f.w.fabric.switchAgent().lid();
        assertEquals(HOSTS + 1, lid, "the LID after the adapters'");
        byte[] lmad = Mad.request(Mad.CLASS_SUBN_LID, 1, Mad.GET, 0x78, SwitchAgent.ATTR_LINEAR_FORWARDING_TABLE, 0);
        byte[] lft = f.ask(lmad, lid).mad();
        assertEquals(0, Mad.status(lft));
        assertEquals(0xff, data(lft, 0), "LID 0: no route");
        for (int l = 1; l <= HOSTS; l++) assertEquals(l, data(lft, l), "LID " + l + " leaves by port " + l);
        assertEquals(0, data(lft, lid), "its own LID: the management port");
        byte[] si = f.ask(Mad.request(Mad.CLASS_SUBN_LID, 1, Mad.GET, 0x79, SwitchAgent.ATTR_SWITCH_INFO, 0), lid)
                .mad();
        assertEquals(lid, Mad.get16(si, Mad.SMP_DATA + 6), "LinearFDBTop");
        byte[] p0 = f.ask(directed(Mad.ATTR_PORT_INFO, 0, 1), Mad.PERMISSIVE_LID).mad();
        assertEquals(lid, Mad.get16(p0, Mad.SMP_DATA + 16), "port 0 has the switch's LID");
        assertEquals(1, Mad.get16(p0, Mad.SMP_DATA + 18), "the SM's LID");
        byte[] p3 = f.ask(directed(Mad.ATTR_PORT_INFO, 3, 1), Mad.PERMISSIVE_LID).mad();
        assertEquals(4, data(p3, 32) & 0xf, "port 3's link is ACTIVE");
        byte[] out = f.ask(directed(Mad.ATTR_PORT_INFO, HOSTS + 1, 1), Mad.PERMISSIVE_LID).mad();
        assertEquals(Mad.STATUS_INVALID_FIELD, Mad.status(out) & ~Mad.DR_DIRECTION, "no port " + (HOSTS + 1));
    }

    @Test
    void aRouteLidRoutedToTheSwitchFirstStartsItsDirectedPartThereAndComesBackByLid() {
        // libibmad's "DR path slid 2; dlid 65535; 0,1" (ibportstate's peer port): DrSLID is the requester's LID
        Fabric3 f = new Fabric3(Profiles.load("cx-gen3x16"));
        int lid = f.w.fabric.switchAgent().lid();
        byte[] m = directed(Mad.ATTR_NODE_INFO, 0, 1);
        Mad.put16(m, Mad.DR_SLID, 2);
        byte[] r = f.ask(m, lid).mad();
        assertEquals(0, Mad.status(r) & ~Mad.DR_DIRECTION, "status");
        assertEquals(Management.nodeGuid(0), BigEndian.get64(r, Mad.SMP_DATA + 12), "switch port 1: node 0's adapter");
        byte[] none = directed(Mad.ATTR_NODE_INFO, 0);
        Mad.put16(none, Mad.DR_SLID, 2);
        assertEquals(2, data(f.ask(none, lid).mad(), 2), "no hops from the switch: the switch answers");
    }

    @Test
    void theMulticastTableShowsThePortsTheSaProgrammedForAGroup() {
        Fabric3 f = new Fabric3(Profiles.load("cx-gen3x16"));
        int lid = f.w.fabric.switchAgent().lid();
        byte[] si = f.ask(directed(SwitchAgent.ATTR_SWITCH_INFO, 0, 1), Mad.PERMISSIVE_LID).mad();
        assertEquals(0xBFFF, Mad.get16(si, Mad.SMP_DATA + 18), "MulticastFDBTop: no group has a receiver yet");
        // nodes 0 and 2 (switch ports 1 and 3) join IPoIB's broadcast group, MLID 0xC000, through the SA
        for (int node : new int[]{0, 2}) {
            byte[] join = SaMulticastTest.member(Mad.SET, McGroups.BROADCAST_HI, McGroups.BROADCAST_LO, node, 1,
                    SaMulticastTest.IPOIB_BROADCAST);
            f.w.host(node).within(() -> { f.w.host(node).firmware.management().send(1, 1, 1, join); return null; });
            f.w.runFor(500_000_000L);
        }
        si = f.ask(directed(SwitchAgent.ATTR_SWITCH_INFO, 0, 1), Mad.PERMISSIVE_LID).mad();
        assertEquals(0xC000, Mad.get16(si, Mad.SMP_DATA + 18), "MulticastFDBTop");
        byte[] mft = f.ask(Mad.request(Mad.CLASS_SUBN_LID, 1, Mad.GET, 0x7a,
                SwitchAgent.ATTR_MULTICAST_FORWARDING_TABLE, 0), lid).mad();
        assertEquals(0, Mad.status(mft));
        assertEquals(1 << 1 | 1 << 3, Mad.get16(mft, Mad.SMP_DATA), "MLID 0xC000 leaves by ports 1 and 3");
        assertEquals(0, Mad.get16(mft, Mad.SMP_DATA + 2), "MLID 0xC001: no group");
        // the SA's MulticastForwardingTableRecord says the same
        byte[] q = Mad.request(Mad.CLASS_SUBN_ADM, SubnetManager.SA_VERSION, Mad.GET, 0x7b, FabricRecords.MFT, 0);
        BigEndian.put64(q, SubnetManager.SA_COMP_MASK, 1); // LID
        Mad.put16(q, SubnetManager.SA_DATA, lid);
        f.got.clear();
        f.w.host(1).within(() -> { f.w.host(1).firmware.management().send(1, 1, 1, q); return null; });
        f.w.runFor(500_000_000L);
        assertEquals(1, f.got.size());
        byte[] rec = f.got.get(0).mad();
        assertEquals(0, Mad.status(rec));
        assertEquals(lid, Mad.get16(rec, SubnetManager.SA_DATA));
        assertEquals(1 << 1 | 1 << 3, Mad.get16(rec, SubnetManager.SA_DATA + 8));
    }

    @Test
    void theSwitchsPmaCountsWhatEachPortSentAndReceived() {
        Fabric3 f = new Fabric3(Profiles.load("cx-gen3x16"));
        int lid = f.w.fabric.switchAgent().lid();
        f.ask(directed(Mad.ATTR_NODE_INFO, 0, 1, 3), Mad.PERMISSIVE_LID); // node 1 -> switch -> node 2 and back
        byte[] q = Mad.request(Mad.CLASS_PERF, 1, Mad.GET, 0x7c, Mad.ATTR_PORT_COUNTERS_EXT, 0);
        q[Mad.PMA_DATA + 1] = 3; // PortSelect: the switch's port to node 2
        long[] before = f.w.fabric.fabricSwitch().portTraffic(3);
        byte[] r = f.ask(1, q, lid).mad();
        assertEquals(0, Mad.status(r));
        assertEquals(1, before[2], "port 3 sent node 2 the SMP");
        assertEquals(1, before[3], "and took its answer");
        assertEquals(before[0] / 4, BigEndian.get64(r, Mad.PMA_DATA + 8), "PortXmitData in words");
        assertEquals(1, BigEndian.get64(r, Mad.PMA_DATA + 24), "PortXmitPkts");
        assertEquals(1, BigEndian.get64(r, Mad.PMA_DATA + 32), "PortRcvPkts");
        q[Mad.PMA_DATA + 1] = (byte) (HOSTS + 1);
        assertEquals(Mad.STATUS_INVALID_FIELD, Mad.status(f.ask(1, q, lid).mad()), "no port " + (HOSTS + 1));
    }
}
