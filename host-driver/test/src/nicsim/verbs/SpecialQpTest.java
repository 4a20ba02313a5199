package nicsim.verbs;

import static org.junit.jupiter.api.Assertions.*;

import java.util.ArrayList;
import java.util.List;
import nicsim.abi.BigEndian;
import nicsim.driver.World;
import nicsim.fabric.Faults;
import nicsim.fabric.Mad;
import nicsim.fabric.SwitchAgent;
import nicsim.firmware.Management;
import nicsim.profile.Profiles;
import org.junit.jupiter.api.Test;

/**
 * A driver's QP0 and QP1 (CREATE_QP of type 0 and 1, as a kernel's MAD layer makes them): their sends leave
 * from QP0/QP1, QP1's with the GSI Q_Key; what the adapter passes up lands in their receive queues with the
 * GRH space and the sender in the completion, instead of reaching serve's listeners; the adapter's own SMA and
 * PMA still answer first (docs/device.md, "Management: QP0 and QP1").
 */
class SpecialQpTest {
    /** 40 bytes of GRH space, then the MAD. */
    private static final int RECV = 40 + Mad.SIZE;

    /** A kernel-like driver on one node: its special QP on a CQ of its own, a receive posted, a buffer for MADs. */
    static final class Driver {
        final World w;
        final Context ctx;
        final ProtectionDomain pd;
        final CompletionQueue cq;
        final QueuePair qp;
        final HostBuffer buf;
        final MemoryRegion mr;
        private int posted;

        Driver(World w, int node, int special) {
            this.w = w;
            ctx = new Device(w.host(node)).open();
            pd = ctx.allocPd();
            cq = ctx.createCq(64);
            qp = pd.createQp(new QpInitAttr().qpType(QpType.UD).specialQp(special).sendCq(cq).recvCq(cq)
                    .maxSendWr(8).maxRecvWr(8).maxSendSge(1).maxRecvSge(1).sqSigAll(true));
            buf = new ProcessMemory(w.host(node)).alloc(1 << 16);
            mr = pd.regMr(buf, AccessFlags.LOCAL_WRITE);
            Connect.toInit(qp, 0);
            Connect.toRtr(qp, null, Mtu.MTU_2048);
            Connect.toRts(qp, 0);
            for (int i = 0; i < 4; i++) postRecv();
        }

        void postRecv() {
            int slot = posted++ % 8;
            qp.postRecv(new RecvWr().wrId(100 + slot)
                    .sgList(new Sge(buf.addr() + 4096 + slot * 512L, RECV, mr.lkey())));
        }

        /** Sends {@code mad} to QP {@code dqp} behind {@code dlid} with Q_Key {@code qkey}, as ib_mad posts it. */
        void send(int dlid, int dqp, int qkey, byte[] mad) {
            buf.write(0, mad);
            AddressHandle ah = pd.createAh(new AhAttr().dlid(dlid));
            qp.postSend(Wrs.signaled(1, WrOpcode.SEND).ah(ah).remoteQpn(dqp)
                    .remoteQkey(qkey).sgList(new Sge(buf.addr(), Mad.SIZE, mr.lkey())));
        }

        /** The next {@code n} completions. */
        List<WorkCompletion> await(int n) { return Completions.await(w, cq, n); }

        /** The MAD a receive completion's WQE holds (past its GRH space). */
        byte[] mad(WorkCompletion wc) { return buf.read(4096 + (wc.wrId() - 100) * 512 + 40, Mad.SIZE); }
    }

    private static World world() { return new World(2, Profiles.load("cx-gen3x16"), 1, Faults.NONE); }

    private static int lid(World w, int node) { return w.host(node).firmware.lid(); }

    private static long counter(World w, String name) { return w.sim.counters().get("Firmware." + name); }

    private static WorkCompletion receive(List<WorkCompletion> wcs) {
        return wcs.stream().filter(c -> c.opcode() == WcOpcode.RECV).findFirst()
                .orElseThrow(() -> new AssertionError(wcs));
    }

    @Test
    void aGsiQpsRequestLeavesFromQp1WithTheGsiQkeyAndItsAnswerComesBackIntoItsReceiveQueue() {
        World w = world();
        Driver d = new Driver(w, 1, 1);
        byte[] get = Mad.request(Mad.CLASS_PERF, 1, Mad.GET, 0x51, Mad.ATTR_PORT_COUNTERS, 0);
        get[Mad.PMA_DATA + 1] = 1;
        // a Q_Key the WQE gets wrong: QP1 sends with the GSI's all the same, or node 0 would drop it and count it
        d.send(lid(w, 0), 1, 0x1234, get);
        List<WorkCompletion> wcs = d.await(2);
        WorkCompletion r = receive(wcs);
        assertEquals(WcStatus.SUCCESS, r.status(), r.toString());
        assertEquals(RECV, r.byteLen(), "the GRH space and the MAD");
        assertEquals(1, r.srcQp(), "from node 0's QP1");
        assertEquals(lid(w, 0), r.slid());
        byte[] answer = d.mad(r);
        assertEquals(Mad.GET_RESP, Mad.method(answer));
        assertEquals(0x51, Mad.tid(answer));
        assertEquals(0, Mad.status(answer));
        assertEquals(0, counter(w, "qkey_mismatch"));
        assertEquals(1, counter(w, "mads_from_driver"));
        assertEquals(1, counter(w, "mads_answered"), "node 0's PMA answered");
        assertEquals(1, counter(w, "mads_to_driver"));
        assertEquals(1, counter(w, "mads_passed_up"));
    }

    @Test
    void oneSmiAndOneGsiQpPerPortASecondIsRefusedUntilTheFirstIsDestroyed() {
        World w = world();
        Driver gsi = new Driver(w, 0, 1);
        Driver smi = new Driver(w, 0, 0);
        assertTrue(w.host(0).firmware.management().driverOwns(0) && w.host(0).firmware.management().driverOwns(1));
        QpInitAttr again = new QpInitAttr().qpType(QpType.UD).specialQp(1).sendCq(gsi.cq).recvCq(gsi.cq);
        VerbsException e = assertThrows(VerbsException.class, () -> gsi.pd.createQp(again));
        assertEquals(Errno.EBUSY, e.errno(), e.getMessage());
        VerbsException rc = assertThrows(VerbsException.class, () -> gsi.pd.createQp(new QpInitAttr().qpType(QpType.RC)
                .specialQp(1).sendCq(gsi.cq).recvCq(gsi.cq)));
        assertEquals(Errno.EINVAL, rc.errno(), "a special QP is UD");
        gsi.qp.close();
        assertFalse(w.host(0).firmware.management().driverOwns(1));
        gsi.pd.createQp(again).close();
        smi.qp.close();
        assertFalse(w.host(0).firmware.management().driverOwns(0));
    }

    @Test
    void passedUpMadsGoToTheDriversQpInsteadOfTheListenersAndBackOnceItIsGone() {
        World w = world();
        List<byte[]> heard = new ArrayList<>();
        Management m1 = w.host(1).firmware.management();
        m1.listen((qp, slid, src, mad) -> heard.add(mad));
        Driver d = new Driver(w, 1, 1);
        // a CM REQ: no agent of the adapter's takes it
        byte[] cm = Mad.request(Mad.CLASS_CM, 2, Mad.SEND, 0x77, 0x0010, 0);
        w.host(0).within(() -> { w.host(0).firmware.management().send(1, lid(w, 1), 1, cm); return null; });
        WorkCompletion r = receive(d.await(1));
        assertEquals(0x77, Mad.tid(d.mad(r)));
        assertEquals(Mad.CLASS_CM, Mad.mgmtClass(d.mad(r)));
        assertEquals(1, r.srcQp());
        assertEquals(List.of(), heard, "the listener hears nothing while a driver owns QP1");
        d.qp.close();
        w.host(0).within(() -> { w.host(0).firmware.management().send(1, lid(w, 1), 1, cm); return null; });
        w.runFor(200_000_000L);
        assertEquals(1, heard.size(), "with the driver's QP gone, the listener hears it");
        assertEquals(2, counter(w, "mads_passed_up"));
        assertEquals(1, counter(w, "mads_to_driver"));
    }

    @Test
    void theFabricsAgentsTakeTheirMadsBeforeADriversQp() {
        World w = world();
        Management m0 = w.host(0).firmware.management();
        List<Integer> agentTook = new ArrayList<>();
        m0.agent((qp, slid, src, mad) -> {
            if (Mad.mgmtClass(mad) != Mad.CLASS_SUBN_ADM || Mad.isResponse(mad)) return false;
            agentTook.add(qp);
            return true;
        });
        Driver d = new Driver(w, 0, 1);
        Management m1 = w.host(1).firmware.management();
        w.host(1).within(() -> {
            m1.send(1, lid(w, 0), 1, Mad.request(Mad.CLASS_SUBN_ADM, 2, Mad.GET, 1, 0x35, 0));
            m1.send(1, lid(w, 0), 1, Mad.request(Mad.CLASS_CM, 2, Mad.SEND, 2, 0x0010, 0));
            return null;
        });
        WorkCompletion r = receive(d.await(1));
        assertEquals(Mad.CLASS_CM, Mad.mgmtClass(d.mad(r)), "the driver's QP1 gets what the agent declines");
        assertEquals(List.of(1), agentTook, "the SA request went to the agent");
        w.runFor(200_000_000L);
        assertTrue(d.cq.poll(4).isEmpty(), "and only that");
    }

    @Test
    void anSmiQpsDirectedRouteSmpOfHopCountZeroIsAnsweredByTheLocalSmaWithoutTheWire() {
        World w = world();
        Driver d = new Driver(w, 1, 0);
        long out = counter(w, "packets_out");
        byte[] dr = Mad.request(Mad.CLASS_SUBN_DR, 1, Mad.GET, 9, Mad.ATTR_NODE_INFO, 0);
        dr[Mad.DR_HOP_PTR] = 1; // ib_mad has moved the hop pointer past the end of a path of no hops
        Mad.put16(dr, Mad.DR_SLID, Mad.PERMISSIVE_LID);
        Mad.put16(dr, Mad.DR_DLID, Mad.PERMISSIVE_LID);
        // ib_mad's AH says the permissive LID, which this library's createAh refuses: the SMI goes by the class
        d.send(lid(w, 0), 0, 0, dr);
        List<WorkCompletion> wcs = d.await(2);
        byte[] answer = d.mad(receive(wcs));
        assertEquals(Mad.DR_DIRECTION, Mad.status(answer), "the D bit, status 0");
        assertEquals(Management.nodeGuid(1), BigEndian.get64(answer, Mad.SMP_DATA + 12), "node 1's own NodeInfo");
        assertEquals(0, receive(wcs).srcQp());
        assertEquals(1, counter(w, "mads_looped_back"));
        assertEquals(out, counter(w, "packets_out"), "nothing went on the wire");
        // a LID-routed SMP across the fabric: node 0's SMA answers into the SMI QP
        d.postRecv();
        d.send(lid(w, 0), 0, 0, Mad.request(Mad.CLASS_SUBN_LID, 1, Mad.GET, 10, Mad.ATTR_NODE_INFO, 0));
        byte[] peer = d.mad(receive(d.await(2)));
        assertEquals(Management.nodeGuid(0), BigEndian.get64(peer, Mad.SMP_DATA + 12));
    }

    @Test
    void anSmiQpsDirectedRouteSmpOfOneHopReachesTheSwitchsSma() {
        World w = world();
        Driver d = new Driver(w, 1, 0);
        byte[] dr = Mad.request(Mad.CLASS_SUBN_DR, 1, Mad.GET, 11, Mad.ATTR_NODE_INFO, 0);
        dr[Mad.DR_HOP_CNT] = 1;
        dr[Mad.DR_HOP_PTR] = 1; // ib_mad took the first step: out by port 1
        dr[Mad.DR_INITIAL_PATH + 1] = 1;
        Mad.put16(dr, Mad.DR_SLID, Mad.PERMISSIVE_LID);
        Mad.put16(dr, Mad.DR_DLID, Mad.PERMISSIVE_LID);
        d.send(lid(w, 0), 0, 0, dr);
        byte[] answer = d.mad(receive(d.await(2)));
        assertEquals(Mad.DR_DIRECTION, Mad.status(answer), "the D bit, status 0");
        assertEquals(2, answer[Mad.SMP_DATA + 2], "node type: the switch");
        assertEquals(SwitchAgent.GUID, BigEndian.get64(answer, Mad.SMP_DATA + 12));
        assertEquals(0, answer[Mad.DR_HOP_PTR], "back at the requester");
    }
}
