package nicsim.serve;

import static org.junit.jupiter.api.Assertions.*;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;
import nicsim.fabric.Packet;
import nicsim.serve.Programs.Run;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * rdmacm-utils' mckey, unchanged, through attach: RDMA CM multicast. The receiver on node 1 and the sender on
 * node 0 each join 239.1.1.1 (the SA on the fabric makes the group and programs the switch), the sender's ten
 * UD messages to the group cross the switch once each to node 1's port, and node 1's adapter hands each to
 * the receiver's attached QP.
 */
class McKeyTest {
    private Served served;

    @BeforeEach
    void serve() throws Exception { served = new Served("nicsim-mckey").start(Served.cluster()); }

    @AfterEach
    void stop() throws Exception { served.stop(); }

    @Test
    void tenMessagesToTheGroupReachTheReceiverOnce() throws Exception { run(true); }

    /** The same through the provider's Java driver: the MCAST request, and a GRH address handle by CREATE_AH. */
    @Test
    void theJavaDriverJoinsAndSendsAlike() throws Exception { run(false); }

    /**
     * {@code -M}: an AF_IB MGID, joined as it is (JOIN_MCAST with a sockaddr_ib; librdmacm takes one since its
     * start-up AF_IB bind succeeds), each side bound to its node's address as {@code -M} requires.
     */
    @Test
    void anAfIbMgidIsJoinedAsItIs() throws Exception {
        run(true, new String[]{"-M", "ff12:401b:ffff::1", "-b", "node1"},
                new String[]{"-M", "ff12:401b:ffff::1", "-b", "node0"}, "ff12:401b:ffff::1");
    }

    /** An AF_IB address that is no multicast GID is refused at once, naming it: nothing joins or is attached. */
    @Test
    void anAfIbUnicastGidIsNoGroup() throws Exception {
        Run r = Programs.start(served, 1, false, "mckey", "-M", "fe80::2:1de5:0:2", "-b", "node1");
        assertNotEquals(0, r.await(60), r.output());
        assertTrue(r.output().contains("failure joining: Invalid argument"), r.output());
        assertEquals(0, served.world.host(1).firmware.multicastAttachments(), served.log());
        assertEquals(Packet.MULTICAST_LID_FIRST - 1, served.world.fabric.fabricSwitch().multicastTop(),
                "no group programmed in the switch:\n" + served.log());
    }

    private void run(boolean cDriver) throws Exception {
        run(cDriver, new String[]{"-m", "239.1.1.1", "-b", "node1"}, new String[]{"-m", "239.1.1.1"},
                "ff12:4001:ffff::f01:101");
    }

    /** The receiver on node 1 and the sender on node 0 join the group {@code rcvAddr} and {@code sndAddr} name. */
    private void run(boolean cDriver, String[] rcvAddr, String[] sndAddr, String dgid) throws Exception {
        Run rcv = Programs.start(served, 1, false, Programs.withDriver(cDriver, mckey(rcvAddr, "-S", "200")));
        // its output is buffered till it ends: the receiver is ready once librdmacm attached its QP to the group
        for (int i = 0; i < 1200 && served.world.host(1).firmware.multicastAttachments() == 0; i++) {
            assertTrue(rcv.process().isAlive(), rcv.output() + "\n--- serve:\n" + served.log());
            Thread.sleep(100);
        }
        assertEquals(1, served.world.host(1).firmware.multicastAttachments(), served.log());
        // -l: its QP made with IBV_QP_CREATE_BLOCK_SELF_MCAST_LB, which every nicsim QP behaves as
        Run snd = Programs.start(served, 0, false, Programs.withDriver(cDriver, mckey(sndAddr, "-s", "-S", "200",
                "-l")));
        int s = snd.await(300), r = rcv.await(300);
        assertEquals(0, s, "sender:\n" + snd.output() + "\n--- serve:\n" + served.log());
        assertEquals(0, r, "receiver:\n" + rcv.output() + "\n--- serve:\n" + served.log());
        assertTrue(snd.output().contains("joined dgid: " + dgid + " mlid 0xc001"), snd.output());
        assertTrue(rcv.output().contains("joined dgid: " + dgid + " mlid 0xc001"), rcv.output());
        assertTrue(rcv.output().contains("data transfers complete") && rcv.output().contains("return status 0"),
                rcv.output());
        assertEquals(0, served.world.host(1).firmware.multicastAttachments(), "rdma_leave_multicast detached it");
        var c = served.world.sim.counters();
        assertEquals(10, c.get("Fabric.multicast_packets"), "ten sends to the group");
        assertEquals(10, c.get("Fabric.multicast_copies"), "one copy each, to node 1's port only");
        assertEquals(10, c.get("Firmware.mcast_delivered"), "each to the receiver's QP; none to the sending QP");
        // serve's table of the programs' QPs: the sender's ten messages of 200 bytes, the receiver's ten receives
        // (serve writes each program's table once it saw the program go: it may come after the process ended)
        Pattern sent = Pattern.compile("UD\\s+200\\s+10\\s+0\\s"), got = Pattern.compile("UD\\s+0\\s+0\\s+10\\s");
        for (int i = 0; i < 300 && !(sent.matcher(served.log()).find() && got.matcher(served.log()).find()); i++)
            Thread.sleep(100);
        assertTrue(sent.matcher(served.log()).find(), served.log());
        assertTrue(got.matcher(served.log()).find(), served.log());
        for (int i = 0; i < 100 && !served.world.fabric.fabricSwitch().multicastPorts(0xC001).isEmpty(); i++)
            Thread.sleep(100); // the leaves' SA Deletes cross the fabric after the programs went
        assertEquals(List.of(), served.world.fabric.fabricSwitch().multicastPorts(0xC001),
                "both left: the SA dropped the group and its MFT entry");
    }

    private static String[] mckey(String[] addr, String... more) {
        List<String> a = new ArrayList<>(List.of("mckey"));
        a.addAll(List.of(addr));
        a.addAll(List.of(more));
        return a.toArray(String[]::new);
    }
}
