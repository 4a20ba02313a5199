package nicsim.serve;

import static org.junit.jupiter.api.Assertions.*;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import nicsim.serve.Programs.Run;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Debian's UCX 1.13, unchanged and with its default settings, between two nodes: ucx_info sees
 * the adapter's transports, ucx_perftest's tests run to the end five times each (no stall), over
 * the adapter (each node is a host of its own to UCX, so it does not take shared memory), and
 * UCX's RC completions take, in simulated time, what perftest's do.
 */
class UcxTest {
    private Served served;

    @BeforeEach
    void serve() throws Exception { served = new Served("nicsim-ucx").start(Served.cluster()); }

    @AfterEach
    void stop() throws Exception { served.stop(); }

    @Test
    void ucxInfoListsTheAdaptersTransports() throws Exception {
        Run r = Programs.start(served, 0, false, "ucx_info", "-d");
        assertEquals(0, r.await(), r.output());
        for (String tl : List.of("rc_verbs", "ud_verbs"))
            assertTrue(Pattern.compile("Transport: " + tl + "\\s*\\n#\\s+Device: nicsim0:1").matcher(r.output())
                    .find(), tl + ":\n"
                    + r.output());
    }

    @ParameterizedTest
    @ValueSource(strings = {"tag_lat", "tag_bw", "ucp_put_bw", "ucp_get"})
    void perftestRunsToTheEndFiveTimes(String test) throws Exception {
        for (int run = 0; run < 5; run++) {
            String out = pair(test, 100, 30 + run);
            assertTrue(out.contains("Final:"), test + " run " + run + ":\n" + out);
        }
        assertTrue(served.world.sim.counters().get("Fabric.packets") >= 500,
                "the traffic crossed the simulated fabric");
    }

    /**
     * UCX's signalled RC sends and perftest's ib_send_lat sends, post to completion in simulated time:
     * within 20 %. Both of 1 KiB, so neither is inline (perftest inlines nothing on a device it does not
     * know, UCX inlines small messages, and an inline send spares a DMA read of its payload).
     */
    @Test
    void rcCompletionsTakeWhatPerftestsTake() throws Exception {
        pair("tag_lat", 1000, 40, "-s", "1024");
        double ucx = rcAverage("ucx_perftest");
        int port = Programs.port() + 41;
        Run srv = Programs.start(served, 1, false, "ib_send_lat", "-n", "200", "-s", "1024", "-p",
                Integer.toString(port));
        Programs.awaitListening(srv, port);
        Run cli = Programs.start(served, 0, false, "ib_send_lat", "-n", "200", "-s", "1024", "-p",
                Integer.toString(port), "localhost");
        assertEquals(0, cli.await(), cli.output());
        assertEquals(0, srv.await(), srv.output());
        double perftest = rcAverage("ib_send_lat");
        assertTrue(ucx < 100, "UCX's sends complete in microseconds, not at an ACK timeout: " + ucx + " us\n"
                + served.log());
        assertEquals(perftest, ucx, perftest * 0.2, "UCX " + ucx + " us against perftest's " + perftest + " us:\n"
                + served.log());
    }

    /** Runs ucx_perftest {@code test} with node 1 serving and node 0 asking; node 0's output. */
    private String pair(String test, int iterations, int portOffset, String... more) throws Exception {
        String port = Integer.toString(Programs.port() + portOffset);
        List<String> args = new ArrayList<>(List.of("ucx_perftest", "-p", port, "-t", test, "-n",
                Integer.toString(iterations)));
        args.addAll(List.of(more));
        Run srv = Programs.start(served, 1, false, args.toArray(String[]::new));
        Programs.awaitListening(srv, Integer.parseInt(port));
        args.add(1, "127.0.0.1");
        Run cli = Programs.start(served, 0, false, args.toArray(String[]::new));
        assertEquals(0, cli.await(90), test + ":\n" + cli.output() + "\n--- server:\n" + srv.output()
                + "\n--- serve:\n" + served.log());
        assertEquals(0, srv.await(30), srv.output());
        return cli.output();
    }

    /** The average post-to-completion time (us) of node 0's RC QP rows in serve's tables for {@code program}. */
    private double rcAverage(String program) throws Exception {
        long t0 = System.nanoTime();
        List<Double> avgs = new ArrayList<>();
        while (avgs.isEmpty() && System.nanoTime() - t0 < 30_000_000_000L) {
            Matcher m = Pattern.compile("(?m)^nicsim serve: " + program
                    + " \\(pid \\d+\\) on node 0 exited.*\\n.*\\n.*\\n((?:\\s+0x.*\\n)+)")
                    .matcher(served.log());
            while (m.find())
                for (String row : m.group(1).split("\n")) {
                    String[] f = row.trim().split("\\s+");
                    if (f.length >= 9 && f[1].equals("RC") && !f[8].equals("-")) avgs.add(Double.parseDouble(f[8]));
                }
            if (avgs.isEmpty()) Thread.sleep(100);
        }
        assertFalse(avgs.isEmpty(), "no RC row for " + program + " in serve's log:\n" + served.log());
        return avgs.get(avgs.size() - 1);
    }
}
