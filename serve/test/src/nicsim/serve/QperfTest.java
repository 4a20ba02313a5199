package nicsim.serve;

import static org.junit.jupiter.api.Assertions.*;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import nicsim.serve.Programs.Run;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Debian's qperf, unchanged, between two nodes: every RC, UC and UD test in its list, in its
 * default mode (it waits for completions through a completion channel), the two that check atomic
 * results included. qperf's server answers one client after another; the client runs the tests in
 * turn, one second each, and prints each one's figures, or why it failed.
 */
class QperfTest {
    static final List<String> TESTS = List.of("rc_bi_bw", "rc_bw", "rc_compare_swap_mr", "rc_fetch_add_mr", "rc_lat",
            "rc_rdma_read_bw", "rc_rdma_read_lat", "rc_rdma_write_bw", "rc_rdma_write_lat", "rc_rdma_write_poll_lat",
            "uc_bi_bw", "uc_bw", "uc_lat", "uc_rdma_write_bw", "uc_rdma_write_lat", "uc_rdma_write_poll_lat",
            "ud_bi_bw", "ud_bw", "ud_lat", "ver_rc_compare_swap", "ver_rc_fetch_add");

    private Served served;

    @BeforeEach
    void serve() throws Exception { served = new Served("nicsim-qperf").start(Served.cluster()); }

    @AfterEach
    void stop() throws Exception { served.stop(); }

    /**
     * Through either of the provider's drivers: through the C driver, its bandwidth tests fill the ring of
     * posted doorbells between two waits, which once let a later doorbell overtake one that went on the
     * socket (the device then took stale BlueFlame lines); the device must report nothing.
     */
    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void everyRcUcUdTestRunsInEventMode(boolean cDriver) throws Exception {
        int port = Programs.port() + 20;
        Run srv =
                Programs.start(served, 1, false, Programs.withDriver(cDriver, "qperf", "-lp", Integer.toString(port)));
        Programs.awaitListening(srv, port);
        List<String> cmd = new ArrayList<>(List.of("qperf", "localhost", "-lp", Integer.toString(port), "-t", "1"));
        cmd.addAll(TESTS);
        Run cli = Programs.start(served, 0, false, Programs.withDriver(cDriver, cmd.toArray(String[]::new)));
        int status = cli.await(600);
        String out = cli.output();
        srv.process().destroy();
        assertEquals(0, status, out + "\n--- serve:\n" + served.log());
        // each test's name, then its figures: "latency  =  1.19 ms", "bw  =  35.7 MB/sec", "msg_rate  =  1.74 K/sec"
        for (String t : TESTS) {
            Matcher m = Pattern.compile("(?m)^" + t + ":\\n\\s+(latency|bw|send_bw|msg_rate)\\s+=\\s+([0-9.]+) ")
                    .matcher(out);
            assertTrue(m.find(), t + " printed no figure:\n" + out);
            assertTrue(Double.parseDouble(m.group(2)) > 0, t + ": " + m.group());
        }
        assertFalse(out.contains("failed") || out.contains("error"), out);
        assertTrue(served.world.sim.counters().get("Fabric.packets") >= 1000,
                "the traffic crossed the simulated fabric");
        assertFalse(served.log().contains("the device reports"), served.log());
        assertEquals(cDriver, served.log().contains("as a user context"), served.log());
    }
}
