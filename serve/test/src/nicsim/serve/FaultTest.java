package nicsim.serve;

import static org.junit.jupiter.api.Assertions.*;

import java.util.Arrays;
import nicsim.serve.Programs.Run;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A fault inside one adapter is that adapter's fatal error, not the simulator's: with a fault
 * injected into node 0's CqeWriter mid-run ({@link nicsim.adapter.CqeWriter#injectFault}), node 0's
 * programs get IBV_EVENT_DEVICE_FATAL and errors (with either of the
 * provider's drivers), node 1's pingpong finishes with its data checked,
 * and after node 0's reset new programs run on it, to node 1 too.
 */
class FaultTest {
    private Served served;

    @AfterEach
    void stopServing() throws Exception { if (served != null) served.stop(); }

    /** With the provider's C driver (user contexts on the PCI face) and with its Java one (every verb a request). */
    @ParameterizedTest
    @ValueSource(booleans = {true, false})
    void aFaultInNode0sAdapterIsNode0sAloneAndNode0RunsAgainAfterItsReset(boolean c) throws Exception {
        var world = Served.cluster();
        world.host(0).adapter.cqeWriter().injectFault("FaultTest", 300); // mid-run of node 0's pingpong below
        served = new Served("nicsim-fault").start(world);
        int port = Programs.port() + 40;
        Run watch = start(c, 0, "ibv_asyncwatch", "-d", "nicsim0");
        Run srv1 = start(c, 1, "ibv_rc_pingpong", "-c", "-n", "400", "-p", Integer.toString(port));
        Run srv0 = start(c, 0, "ibv_rc_pingpong", "-c", "-n", "400", "-p",
                Integer.toString(port + 1));
        Programs.awaitListening(srv1, port);
        Programs.awaitListening(srv0, port + 1);
        Run cli1 = start(c, 1, "ibv_rc_pingpong", "-c", "-n", "400", "-p", Integer.toString(port),
                "localhost");
        Run cli0 = start(c, 0, "ibv_rc_pingpong", "-c", "-n", "400", "-p",
                Integer.toString(port + 1), "localhost");

        int c0 = cli0.await(), s0 = srv0.await();
        assertTrue(c0 != 0 || s0 != 0, "node 0's pingpong saw its adapter die:\n" + cli0.output() + srv0.output());
        assertEquals(0, cli1.await(), "node 1 carried on: " + cli1.output() + served.log());
        assertEquals(0, srv1.await(), srv1.output());
        assertTrue(cli1.output().contains("3276800 bytes in") && srv1.output().contains("3276800 bytes in"),
                "node 1's 400 round trips of 4 KiB each way, each checked (-c): " + cli1.output());

        String log = served.log();
        assertTrue(log.contains("nicsim serve: node 0's adapter faulted at ") && log.contains(
                "fault injected into CqeWriter (FaultTest)") && log.contains("CqeWriter.complete"),
                "the log names the fault, its node, its time and where: " + log);
        assertFalse(log.contains("node 1's adapter faulted"), log);
        Programs.waitUntil(() -> watch.output().contains("IBV_EVENT_DEVICE_FATAL"), 30);
        assertTrue(watch.output().contains("event_type IBV_EVENT_DEVICE_FATAL (8), port 1"), watch.output());
        watch.process().destroy();
        watch.await();

        // the fresh adapter: a pingpong on node 0 alone, and one from node 0 to node 1 across the fabric
        Run again0 = start(c, 0, "ibv_rc_pingpong", "-c", "-n", "50", "-p",
                Integer.toString(port + 2));
        Programs.awaitListening(again0, port + 2);
        Run againCli = start(c, 0, "ibv_rc_pingpong", "-c", "-n", "50", "-p",
                Integer.toString(port + 2), "localhost");
        assertEquals(0, againCli.await(), againCli.output() + served.log());
        assertEquals(0, again0.await(), again0.output());
        Run across = start(c, 1, "ibv_rc_pingpong", "-c", "-n", "50", "-p",
                Integer.toString(port + 3));
        Programs.awaitListening(across, port + 3);
        Run from0 = start(c, 0, "ibv_rc_pingpong", "-c", "-n", "50", "-p",
                Integer.toString(port + 3), "localhost");
        assertEquals(0, from0.await(), from0.output() + served.log());
        assertEquals(0, across.await(), across.output());
        served.awaitReleased();
        assertNotNull(served.server.failure(), "the fault is on record for serve's exit status");
    }

    /**
     * Programs blocked waiting when their adapter dies are woken, as uverbs and the RDMA CM wake them when a
     * device is disassociated: an rping pair on node 0 (blocked in rdma_get_cm_event and ibv_get_cq_event)
     * gets RDMA_CM_EVENT_DEVICE_REMOVAL and ends, an ibv_rc_pingpong -e pair (blocked in ibv_get_cq_event)
     * gets EIO and ends, within bounded wall time; serve stays up and the next rping on node 0 runs.
     */
    @ParameterizedTest
    @ValueSource(booleans = {true, false})
    void programsBlockedWaitingOnADeadAdapterWakeWithItsErrors(boolean c) throws Exception {
        served = new Served("nicsim-fatal").start(Served.cluster());
        int port = Programs.port() + 44;
        Run pingSrv = start(c, 0, "ibv_rc_pingpong", "-e", "-n", "1000000", "-p", Integer.toString(port));
        Programs.awaitListening(pingSrv, port);
        Run pingCli = start(c, 0, "ibv_rc_pingpong", "-e", "-n", "1000000", "-p", Integer.toString(port),
                "localhost");
        Run rpingSrv = start(c, 0, "rping", "-s", "-C", "1000000", "-a", "0.0.0.0", "-p", "7190");
        Programs.waitUntil(() -> served.log().contains("listens on any address, port 7190"), 30);
        Run rpingCli = start(c, 0, "rping", "-c", "-v", "-C", "1000000", "-a", "node0", "-p", "7190");
        // rping's output is a pipe's, so it comes at its exit: the pair is connecting once both attached
        Programs.waitUntil(() -> served.log().split("rping \\(pid [0-9]+\\) attached to node 0", -1).length == 3, 60);
        Thread.sleep(2000);
        assertTrue(rpingCli.process().isAlive() && rpingSrv.process().isAlive(), rpingCli.output() + served.log());
        assertTrue(pingSrv.process().isAlive() && pingCli.process().isAlive(), pingSrv.output() + pingCli.output());

        served.world.host(0).adapter.cqeWriter().injectFault("FaultTest", 0); // its next completion
        long t0 = System.nanoTime();
        Run[] runs = {rpingCli, rpingSrv, pingCli, pingSrv};
        int[] status = new int[runs.length];
        long[] ms = new long[runs.length];
        for (int i = 0; i < runs.length; i++) {
            status[i] = runs[i].await(60);
            ms[i] = (System.nanoTime() - t0) / 1_000_000L;
        }
        String out = rpingCli.output() + rpingSrv.output() + pingCli.output() + pingSrv.output();
        for (int st : status) assertNotEquals(0, st, out);
        assertTrue(rpingCli.output().contains("cma detected device removal")
                || rpingSrv.output().contains("cma detected device removal"), "RDMA_CM_EVENT_DEVICE_REMOVAL: " + out);
        for (Run r : new Run[] {pingCli, pingSrv}) // woken in ibv_get_cq_event, or in the poll after it: EIO
            assertTrue(r.output().matches("(?s).*(Failed to get cq_event|poll CQ failed -5).*"), out);
        System.out.println("FaultTest: rping client, server, pingpong client, server ended " + Arrays.toString(ms)
                + " ms after the fault, exit " + Arrays.toString(status));
        assertTrue(served.log().contains("nicsim serve: node 0's adapter faulted at "), served.log());

        Run again = start(c, 0, "rping", "-s", "-C", "10", "-a", "0.0.0.0", "-p", "7191");
        Programs.waitUntil(() -> served.log().contains("listens on any address, port 7191"), 30);
        Run againCli = start(c, 0, "rping", "-c", "-v", "-C", "10", "-a", "node0", "-p", "7191");
        assertEquals(0, againCli.await(), againCli.output() + served.log());
        assertEquals(0, again.await(), again.output());
        assertTrue(againCli.output().contains("ping data: rdma-ping-9"), againCli.output());
        served.awaitReleased();
    }

    private Run start(boolean c, int node, String... program) throws Exception {
        return Programs.start(served, node, false, Programs.withDriver(c, program));
    }
}
