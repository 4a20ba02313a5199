package nicsim.serve;

import static org.junit.jupiter.api.Assertions.*;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.util.regex.Matcher;
import java.util.regex.Pattern;
import nicsim.firmware.Management;
import nicsim.serve.Programs.Run;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * infiniband-diags as Debian ships it, attached to a 2-node serve: its MADs go through libibumad's umad
 * file (interpose/nicsim-umad.c) to the node's adapter, leave from QP0/QP1, and are answered by the
 * other adapter's SMA and PMA, or the fabric's SM and SA on node 0 (docs/device.md#management-qp0-and-qp1).
 */
class UmadTest {
    private Served served;

    @BeforeEach
    void serve() throws Exception {
        assumeTrue(new ProcessBuilder("sh", "-c", "command -v perfquery").start().waitFor() == 0,
                "infiniband-diags is not installed (apt-get install -y infiniband-diags)");
        served = new Served("nicsim-umad").start(Served.cluster());
    }

    @AfterEach
    void stop() throws Exception { if (served != null) served.stop(); }

    private String run(int node, String... program) throws Exception { return Programs.runOk(served, node, program); }

    private static long field(String out, String name) {
        Matcher m = Pattern.compile(name + ":?\\.*(0x[0-9a-fA-F]+|\\d+)").matcher(out);
        assertTrue(m.find(), name + " in:\n" + out);
        return Long.decode(m.group(1));
    }

    @Test
    void perfqueryReadsThePeersCountersAsTheAdapterHasThem() throws Exception {
        String out = run(0, "perfquery", "-x", "2", "1");
        long[] c = served.world.host(1).firmware.management().portCounters();
        // the adapter counted the answer it sent after reading its counters for it
        assertEquals(c[2] - 1, field(out, "PortXmitPkts"), out);
        assertEquals(c[3], field(out, "PortRcvPkts"), out);
        assertEquals(c[1] / 4, field(out, "PortRcvData"), out);
        assertTrue(field(out, "PortRcvPkts") >= 1, out);
    }

    @Test
    void smpqueryNodeinfoAnswersThePeersGuid() throws Exception {
        String out = run(0, "smpquery", "nodeinfo", "2");
        assertEquals(Management.nodeGuid(1), field(out, "\nGuid"), out);
        assertTrue(out.matches("(?s).*NodeType:\\.+Channel Adapter.*"), out);
        String pi = run(1, "smpquery", "portinfo", "1");
        assertEquals(1, field(pi, "Lid"), pi);
        assertTrue(pi.contains("LinkUp"), pi);
    }

    @Test
    void sminfoAndSaqueryAskTheFabricsSubnetManager() throws Exception {
        String sm = run(1, "sminfo");
        assertTrue(sm.contains("sminfo: sm lid 1") && sm.contains("SMINFO_MASTER"), sm);
        String nodes = run(1, "saquery", "-N");
        assertTrue(nodes.contains("node0 nicsim0") && nodes.contains("node1 nicsim0"), nodes);
        String path = run(1, "saquery", "-p", "--src-to-dst", "2:1");
        assertEquals(1, field(path, "dlid"), path);
        assertEquals(2, field(path, "slid"), path);
        assertEquals(0xffff, field(path, "pkey"), path);
    }

    /**
     * srptools' discovery over the umad file ends as on a fabric without SRP targets: it walks every port the SA
     * names, their device management queries get "unsupported" (no agent takes the class), and it exits 0
     * printing no target. It once hung here, its MADs' timeouts never reached in simulated time.
     */
    @Test
    void ibsrpdmOnTheUmadFileEndsWithNoTarget() throws Exception {
        assumeTrue(new ProcessBuilder("sh", "-c", "command -v ibsrpdm").start().waitFor() == 0,
                "srptools is not installed (apt-get install -y srptools)");
        Run r = Programs.start(served, 1, false, "ibsrpdm", "-c", "-v", "-d", "/dev/infiniband/umad0");
        assertEquals(0, r.await(60), r.output() + "\n--- serve:\n" + served.log());
        String out = r.output();
        for (int lid = 1; lid <= 3; lid++) assertTrue(out.contains("enter handle_port for lid 0x" + lid), out);
        assertFalse(out.contains("id_ext="), "no SRP target is modelled:\n" + out);
    }
}
