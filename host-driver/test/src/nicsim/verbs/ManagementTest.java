package nicsim.verbs;

import static org.junit.jupiter.api.Assertions.*;

import java.util.ArrayList;
import java.util.List;
import nicsim.abi.BigEndian;
import nicsim.abi.Cmd;
import nicsim.driver.ErrnoException;
import nicsim.driver.World;
import nicsim.fabric.Faults;
import nicsim.fabric.Mad;
import nicsim.firmware.Management;
import nicsim.profile.Profiles;
import org.junit.jupiter.api.Test;

/** QP0 and QP1 of the adapter: its SMA and PMA answer across the fabric, as ConnectX firmware does. */
class ManagementTest {
    /** A MAD that came up to node 0's special QPs, and when. */
    record Got(int qp, int slid, byte[] mad, long at) {}

    private static List<Got> listen(World w, int node) {
        List<Got> got = new ArrayList<>();
        w.host(node).firmware.management().listen((qp, slid, src, mad) ->
                got.add(new Got(qp, slid, mad, w.now())) && Mad.isResponse(mad)); // answers only: no request is taken
        return got;
    }

    private static int lid(World w, int node) { return w.host(node).firmware.lid(); }

    /**
     * Sends {@code mad} from node 0's special QP {@code qp} to the same QP behind {@code dlid}; returns the one answer.
     */
    private static Got ask(World w, List<Got> got, int qp, int dlid, byte[] mad) {
        int before = got.size();
        w.host(0).within(() -> { w.host(0).firmware.management().send(qp, dlid, qp, mad); return null; });
        w.runFor(200_000_000L);
        assertEquals(before + 1, got.size(), "one answer to " + String.format("0x%x", Mad.attr(mad)));
        return got.get(before);
    }

    @Test
    void subnGetNodeInfoAcrossTheFabricAnswersThePeersGuid() {
        World w = new World(2, Profiles.load("cx-gen3x16"), 1, Faults.NONE);
        List<Got> got = listen(w, 0);
        long sent = w.now();
        Got r = ask(w, got, 0, lid(w, 1), Mad.request(Mad.CLASS_SUBN_LID, 1, Mad.GET, 7, Mad.ATTR_NODE_INFO, 0));
        assertEquals(Mad.GET_RESP, Mad.method(r.mad()));
        assertEquals(0, Mad.status(r.mad()));
        assertEquals(7, Mad.tid(r.mad()));
        assertEquals(lid(w, 1), r.slid());
        assertEquals(1, r.mad()[Mad.SMP_DATA + 2], "node type CA");
        assertEquals(Management.nodeGuid(1), BigEndian.get64(r.mad(), Mad.SMP_DATA + 12), "node GUID");
        assertNotEquals(Management.nodeGuid(0), Management.nodeGuid(1));
        assertTrue(r.at() - sent > 2 * w.fabric.lookahead(), "it crossed the fabric both ways: " + (r.at() - sent)
                + " ps");

        Got p = ask(w, got, 0, lid(w, 1), Mad.request(Mad.CLASS_SUBN_LID, 1, Mad.GET, 8, Mad.ATTR_PORT_INFO, 1));
        assertEquals(lid(w, 1), Mad.get16(p.mad(), Mad.SMP_DATA + 16), "PortInfo.LID");
        assertEquals(4, p.mad()[Mad.SMP_DATA + 32] & 0xf, "PortState ACTIVE");
        Got d = ask(w, got, 0, lid(w, 1), Mad.request(Mad.CLASS_SUBN_LID, 1, Mad.GET, 9, Mad.ATTR_NODE_DESC, 0));
        assertEquals("node1 nicsim0", new String(d.mad(), Mad.SMP_DATA, 13));
    }

    @Test
    void directedRouteOfHopCountZeroIsAnsweredByTheLocalSma() {
        World w = new World(2, Profiles.load("cx-gen3x16"), 1, Faults.NONE);
        List<Got> got = listen(w, 0);
        byte[] dr = Mad.request(Mad.CLASS_SUBN_DR, 1, Mad.GET, 3, Mad.ATTR_NODE_INFO, 0);
        Mad.put16(dr, Mad.DR_SLID, Mad.PERMISSIVE_LID);
        Mad.put16(dr, Mad.DR_DLID, Mad.PERMISSIVE_LID);
        Got r = ask(w, got, 0, Mad.PERMISSIVE_LID, dr);
        assertEquals(Mad.DR_DIRECTION, Mad.status(r.mad()), "D bit set, status 0");
        assertEquals(Management.nodeGuid(0), BigEndian.get64(r.mad(), Mad.SMP_DATA + 12));
    }

    @Test
    void portCountersMoveWithTraffic() {
        Pair p = new Pair("cx-gen3x16", QpType.UD, 1 << 16).upUd(Mtu.MTU_2048);
        World w = p.world;
        List<Got> got = listen(w, 0);
        int lidB = lid(w, 1);
        byte[] q = Mad.request(Mad.CLASS_PERF, 1, Mad.GET, 1, Mad.ATTR_PORT_COUNTERS_EXT, 0);
        q[Mad.PMA_DATA + 1] = 1;
        byte[] before = ask(w, got, 1, lidB, q).mad();
        int n = 20, size = 1000;
        AddressHandle ah = p.a.pd.createAh(new AhAttr().dlid(lidB));
        for (int i = 0; i < n; i++) {
            p.b.qp.postRecv(new RecvWr().wrId(i).sgList(new Sge(p.b.buf.addr(), 40 + size, p.b.mr.lkey())));
            p.a.qp.postSend(Wrs.signaled(i, WrOpcode.SEND).ah(ah)
                    .remoteQpn(p.b.qp.qpNum()).remoteQkey(Connect.QKEY)
                    .sgList(new Sge(p.a.buf.addr(), size, p.a.mr.lkey())));
        }
        assertEquals(n, p.await(p.b.cq, n).size());
        byte[] after = ask(w, got, 1, lidB, q).mad();
        assertEquals(0, Mad.status(after));
        long rcvData = BigEndian.get64(after, Mad.PMA_DATA + 16) - BigEndian.get64(before, Mad.PMA_DATA + 16);
        long rcvPkts = BigEndian.get64(after, Mad.PMA_DATA + 32) - BigEndian.get64(before, Mad.PMA_DATA + 32);
        assertEquals(n + 1, rcvPkts, "the sends and the second query");
        assertTrue(rcvData * 4 >= (long) n * size + 256, "PortRcvData counts 4-octet words: " + rcvData);
        assertTrue(rcvData * 4 < (long) n * (size + 64) + 2 * 300, "headers only on top: " + rcvData);
        assertEquals(BigEndian.get64(after, Mad.PMA_DATA + 32), BigEndian.get64(after, Mad.PMA_DATA + 48),
                "all unicast");

        byte[] clear = Mad.request(Mad.CLASS_PERF, 1, Mad.SET, 2, Mad.ATTR_PORT_COUNTERS, 0);
        clear[Mad.PMA_DATA + 1] = 1;
        Mad.put16(clear, Mad.PMA_DATA + 2, 0xf000);
        ask(w, got, 1, lidB, clear);
        byte[] pc = Mad.request(Mad.CLASS_PERF, 1, Mad.GET, 3, Mad.ATTR_PORT_COUNTERS, 0);
        pc[Mad.PMA_DATA + 1] = 1;
        assertEquals(1, BigEndian.get32(ask(w, got, 1, lidB, pc).mad(), Mad.PMA_DATA + 36), "cleared, then this query");
    }

    @Test
    void malformedMadsAreCountedAndAnsweredWithTheirStatus() {
        World w = new World(2, Profiles.load("cx-gen3x16"), 1, Faults.NONE);
        List<Got> got = listen(w, 0);
        int lidB = lid(w, 1);
        Management b = w.host(1).firmware.management();
        Got v = ask(w, got, 1, lidB, Mad.request(Mad.CLASS_PERF, 9, Mad.GET, 1, Mad.ATTR_PORT_COUNTERS, 0));
        assertEquals(Mad.STATUS_BAD_VERSION, Mad.status(v.mad()), "unsupported class version");
        Got a = ask(w, got, 0, lidB, Mad.request(Mad.CLASS_SUBN_LID, 1, Mad.GET, 2, 0x7777, 0));
        assertEquals(Mad.STATUS_METHOD_ATTR, Mad.status(a.mad()), "unknown attribute");
        Got m = ask(w, got, 0, lidB, Mad.request(Mad.CLASS_SUBN_LID, 1, 0x04, 3, Mad.ATTR_NODE_INFO, 0));
        assertEquals(Mad.STATUS_METHOD, Mad.status(m.mad()), "unknown method");
        Got f = ask(w, got, 0, lidB, Mad.request(Mad.CLASS_SUBN_LID, 1, Mad.GET, 4, Mad.ATTR_GUID_INFO, 5));
        assertEquals(Mad.STATUS_INVALID_FIELD, Mad.status(f.mad()), "GUIDInfo block 5 of a port with one GUID");
        byte[] badBase = Mad.request(Mad.CLASS_PERF, 1, Mad.GET, 7, Mad.ATTR_PORT_COUNTERS, 0);
        badBase[0] = 2;
        assertEquals(Mad.STATUS_BAD_VERSION, Mad.status(ask(w, got, 1, lidB, badBase).mad()), "base version 2");
        int answers = got.size();
        w.host(0).within(() -> {
            w.host(0).firmware.management()
                    .send(1, lidB, 1, Mad.request(Mad.CLASS_SUBN_LID, 1, Mad.GET, 5, Mad.ATTR_NODE_INFO, 0));
            return null;
        });
        w.runFor(200_000_000L);
        assertEquals(answers, got.size(), "an SMP on QP1 is not answered (its answer would be as misplaced)");
        Got u = ask(w, got, 1, lidB, Mad.request(Mad.CLASS_SUBN_ADM, 2, Mad.GET, 6, 0x35, 0));
        assertEquals(Mad.STATUS_METHOD_ATTR, Mad.status(u.mad()), "SA class on a node with no SA: unclaimed");
        assertEquals(6, b.malformed(), "each refused request counted");
        assertTrue(w.host(1).firmware.log().stream().anyMatch(l -> l.contains("class 0x01 from LID 1 on QP1")),
                String.join("\n", w.host(1).firmware.log()));
        assertEquals(1, w.sim.counters().get("Firmware.mads_unclaimed"));
    }
    /** PortInfo.CapabilityMask of the node behind {@code lid}, as its SMA answers node 0 across the fabric. */
    private static long capabilityMask(World w, List<Got> got, int lid, int tid) {
        Got p = ask(w, got, 0, lid, Mad.request(Mad.CLASS_SUBN_LID, 1, Mad.GET, tid, Mad.ATTR_PORT_INFO, 1));
        assertEquals(0, Mad.status(p.mad()));
        return BigEndian.get32(p.mad(), Mad.SMP_DATA + 20);
    }

    private static long modifyPort(World w, int node, long port, long set, long clear) {
        return w.host(node).driver().command(Cmd.MODIFY_PORT, Cmd.MODIFY_PORT_IN, new Cmd.ModifyPort(port, set, clear),
                Cmd.PORT_CAPS).capabilityMask();
    }

    @Test
    void modifyPortReachesThePortInfoTheSmaAnswersUntilAReset() {
        World w = new World(2, Profiles.load("cx-gen3x16"), 1, Faults.NONE);
        List<Got> got = listen(w, 0);
        int lidB = lid(w, 1);
        long cm = 1 << 16, dm = 1 << 19, extSpeeds = 1 << 14;
        assertEquals(cm | extSpeeds, capabilityMask(w, got, lidB, 1), "after a reset: CM and the link's speeds");
        // ib_srpt's IsDeviceManagementSupported, as srp_daemon looks for it; the answer is the mask now
        assertEquals(cm | dm | extSpeeds, modifyPort(w, 1, 1, dm, 0));
        assertEquals(cm | dm | extSpeeds, capabilityMask(w, got, lidB, 2), "node 1's SMA reports the driver's bit");
        assertEquals(cm | dm | extSpeeds, w.host(1).firmware.management().capabilityMask());
        // ib_cm going clears CM; a bit both set and cleared ends clear; what the hardware is stays
        assertEquals(dm | extSpeeds, modifyPort(w, 1, 1, 0, cm | extSpeeds));
        assertEquals(dm | extSpeeds, modifyPort(w, 1, 1, cm, cm), "set then cleared: clear");
        assertEquals(dm | extSpeeds, capabilityMask(w, got, lidB, 3));
        assertEquals(cm | extSpeeds | 2, modifyPort(w, 0, 1, 0, 0), "node 0's own mask untouched; IsSM: the SM's port");

        ErrnoException bad = assertThrows(ErrnoException.class, () -> modifyPort(w, 1, 2, dm, 0));
        assertEquals(Errno.EINVAL, bad.errno());
        assertTrue(bad.getMessage().contains("no such port") && bad.getMessage().contains("value 0x2"),
                bad.getMessage());
        assertEquals(dm | extSpeeds, capabilityMask(w, got, lidB, 4), "a refused MODIFY_PORT changes nothing");

        w.reset(1);
        assertEquals(cm | extSpeeds, capabilityMask(w, got, lidB, 5), "a reset gives back the reset value");
        assertEquals(cm | extSpeeds, modifyPort(w, 1, 1, 0, 0), "reading it with no bits");
    }
}
