package nicsim.serve;

import static org.junit.jupiter.api.Assertions.*;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The provider rebuilt on libnicsim (NICSIM_DRIVER=c): unmodified programs whose PDs, MRs, CQs and
 * QPs the C driver makes by the device's commands, whose WQEs it writes into rings in the
 * program's own memory and whose CQEs it polls there. The same traffic through it and through the
 * Java driver gives the device the same work.
 */
class CDriverTest {
    private Served served;

    @BeforeEach
    void serve() throws Exception { served = new Served("nicsim-cdriver").start(Served.cluster()); }

    @AfterEach
    void stopServing() throws Exception { served.stop(); }

    /** Runs a server on node 1 and a client on node 0 of {@code program}; both outputs, after checking both exit 0. */
    private List<String> pair(boolean c, String... program) throws Exception { return pair(c, true, program); }

    /** As above; with {@code simulatedTime} the programs' clocks read simulated time (perftest's do not work so). */
    private List<String> pair(boolean c, boolean simulatedTime, String... program) throws Exception {
        int port = Programs.port();
        String[] withPort = Arrays.copyOf(program, program.length + 2);
        withPort[program.length] = "-p";
        withPort[program.length + 1] = Integer.toString(port);
        Programs.Run srv = Programs.start(served, 1, simulatedTime, Programs.withDriver(c, withPort));
        Programs.awaitListening(srv, port);
        String[] client = Arrays.copyOf(withPort, withPort.length + 1);
        client[withPort.length] = "localhost";
        Programs.Run cli = Programs.start(served, 0, simulatedTime, Programs.withDriver(c, client));
        assertEquals(0, cli.await(), cli.output() + "\n--- server:\n" + srv.output() + "\n--- serve:\n" + served.log());
        assertEquals(0, srv.await(), srv.output() + "\n--- serve:\n" + served.log());
        return List.of(srv.output(), cli.output());
    }

    private Map<String, Long> counters() {
        Map<String, Long> all = new TreeMap<>(served.world.sim.counters().snapshot());
        all.keySet().removeIf(k -> k.startsWith("host."));
        return all;
    }

    private static Map<String, Long> delta(Map<String, Long> before, Map<String, Long> after) {
        Map<String, Long> d = new TreeMap<>();
        for (var e : after.entrySet()) {
            long v = e.getValue() - before.getOrDefault(e.getKey(), 0L);
            if (v != 0) d.put(e.getKey(), v);
        }
        return d;
    }

    @Test
    void rcPingpongRunsThroughTheCDriverWithItsDataChecked() throws Exception {
        for (String out : pair(true, "ibv_rc_pingpong", "-n", "50", "-s", "4096", "--chk")) {
            assertTrue(out.contains("409600 bytes in"), out); // 4 KiB x 50, each way
            assertTrue(out.contains("50 iters in"), out);
        }
        String log = served.log();
        assertTrue(log.contains("opened node 0's adapter as a user context"), log);
        assertTrue(log.contains("opened node 1's adapter as a user context"), log);
    }

    /**
     * AttachTest's list of Debian's programs, and completion events (-e: a completion channel, CQs
     * armed, interrupts), through the C driver.
     */
    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "ibv_uc_pingpong -n 50 | 50 iters in", "ibv_ud_pingpong -n 50 | 50 iters in",
            "ibv_srq_pingpong -n 50 | 50 iters in", "ib_send_bw -n 100 | 65536      100",
            "ib_read_bw -n 100 | 65536      100", "ib_send_lat -n 100 | 2       100",
            "ib_atomic_bw -n 100 | 8          100",
            "ibv_rc_pingpong -n 50 -m 2048 | 50 iters in", "ib_write_bw -q 4 -n 100 | 65536      400",
            "ib_read_lat -n 100 | 2       100", "ib_write_lat -n 50 | 2       50", "ib_write_bw -a -n 5 | 8388608    5",
            "ibv_rc_pingpong -n 50 -e | 50 iters in", "ib_send_lat -n 50 -e | 2       50",
            "ibv_xsrq_pingpong -n 20 | success"})
    void debiansProgramsRunThroughTheCDriver(String command, String result) throws Exception {
        List<String> out = pair(true, false, command.split(" "));
        assertTrue(out.get(1).contains(result), out.get(1));
        assertFalse(String.join("", out).contains("not built in the C driver"), String.join("\n", out));
        assertTrue(served.log().contains("opened node 0's adapter as a user context"), served.log());
    }

    /**
     * An 8 MiB buffer aligned to 2 MiB (as a huge page is) is registered in 2 MiB pages through either driver, as
     * mlx5's kernel picks the largest page the mapping allows: a 4 MiB WRITE within it takes a handful of
     * translation misses (4 KiB pages would take over a thousand), the same through both.
     */
    @Test
    void aBufferAlignedToHugePagesIsRegisteredInThemThroughEitherDriver() throws Exception {
        Path dir = Programs.compile("serve", "big-pages", List.of("meet.h"), "-libverbs");
        long[] misses = new long[2];
        for (int c = 0; c < 2; c++) {
            long before = served.world.sim.counters().get("MttWalker.cache_misses");
            Programs.Run r = Programs.start(served, 0, false, Programs.withDriver(c == 1,
                    dir.resolve("big-pages").toString()));
            assertEquals(0, r.await(), r.output() + "\n--- serve:\n" + served.log());
            assertTrue(r.output().contains("4194304 bytes written through one region and checked"), r.output());
            misses[c] = served.world.sim.counters().get("MttWalker.cache_misses") - before;
        }
        assertEquals(misses[0], misses[1], "translation misses through the Java driver, then the C driver");
        assertTrue(misses[1] < 64, "translation misses: " + misses[1]);
    }

    /**
     * The C driver is attach's default (no NICSIM_DRIVER at all); a NICSIM_DRIVER that names no driver
     * opens no device, and says why.
     */
    @Test
    void theCDriverIsTheDefaultAndABadChoiceIsNamed() throws Exception {
        int at = served.log().length();
        assertEquals(0, Programs.start(served, 0, false, "ibv_devinfo").await());
        assertTrue(served.log().substring(at).contains("opened node 0's adapter as a user context"), served.log());
        Programs.Run bad = Programs.start(served, 0, false, "env", "NICSIM_DRIVER=rust", "ibv_devinfo");
        assertNotEquals(0, bad.await(), bad.output());
        assertTrue(bad.output().contains("NICSIM_DRIVER 'rust' is neither 'c' (the default) nor 'java'"),
                bad.output());
    }

    /**
     * The conformance families (man-page checks, error cases included) of what the C driver builds, run
     * through it: every check passes, as through the Java driver (ConformanceTest).
     */
    @ParameterizedTest
    @ValueSource(strings = {"device", "pd", "cq", "cq-events", "qp", "qp-ex",
            "atomic", "domain", "srq", "rdmacm", "xrc", "mr", "mw", "dm", "odp", "import"})
    void conformanceFamiliesPassThroughTheCDriver(String family) throws Exception {
        Path dir = Programs.compile("conformance", family, List.of("conf.h"), "-libverbs", "-lrdmacm",
                "-lpthread");
        Programs.Run r = Programs.start(served, 0, false, Programs.withDriver(true, dir.resolve(family).toString()));
        int status = r.await(300);
        String out = r.output();
        assertTrue(out.lines().noneMatch(l -> l.startsWith("not ok")), family + ":\n" + out);
        assertEquals(0, status, out);
        assertTrue(out.lines().anyMatch(l -> l.matches("# \\d+ checks, 0 failed")), out);
        assertTrue(served.log().contains("as a user context"), served.log());
    }

    /**
     * AttachTest's XRC domain shared through a file, through the C driver: two programs on node 1 open
     * the same file's domain (one makes the target QP and an XRC SRQ, the other only an XRC SRQ), and one
     * XRC connection from node 0 reaches both; each receive completes to its own program's CQ, naming the
     * other program's target QP.
     */
    @Test
    void twoCDriverProgramsShareAnXrcDomainThroughAFile() throws Exception {
        Path dir = Programs.compile("serve", "xrc-share", List.of("meet.h"), "-libverbs");
        String prog = dir.resolve("xrc-share").toString(), file = dir.resolve("domain").toString();
        Programs.Run target =
                Programs.start(served, 1, false, Programs.withDriver(true, prog, "target", dir.toString(), file));
        Programs.Run other =
                Programs.start(served, 1, false, Programs.withDriver(true, prog, "srq", dir.toString(), file));
        Programs.Run sender = Programs.start(served, 0, false, Programs.withDriver(true, prog, "send", dir.toString()));
        assertEquals(0, sender.await(), sender.output() + "\n--- serve:\n" + served.log());
        assertEquals(0, target.await(), target.output() + served.log());
        assertEquals(0, other.await(), other.output() + served.log());
        assertTrue(sender.output().contains("sent 2 messages through one XRC connection"), sender.output());
        assertTrue(target.output().contains("target got \"to the target process\""), target.output());
        assertTrue(other.output().contains("srq got \"to the srq process\""), other.output());
        String all = sender.output() + target.output() + other.output();
        assertFalse(all.contains("not built in the C driver"), all);
        assertTrue(served.log().contains("opened node 1's adapter as a user context"), served.log());
    }

    /** AttachTest's async-events program: a CQ overrun's CQ_ERR and QP_FATAL name the C driver's CQ and QP. */
    @Test
    void asyncEventsNameTheCDriversObjects() throws Exception {
        Path dir = Programs.compile("serve", "async-events", List.of("meet.h"), "-libverbs");
        Programs.Run r =
                Programs.start(served, 0, false, Programs.withDriver(true, dir.resolve("async-events").toString()));
        assertEquals(0, r.await(), r.output() + served.log());
        assertTrue(r.output().contains("event CQ error cq"), r.output());
        assertTrue(r.output().contains("event local work queue catastrophic error qp"), r.output());
        assertTrue(served.log().contains("opened node 0's adapter as a user context"), served.log());
    }

    /** librdmacm's rping (RDMA CM connection setup, completion events) and UCX's perftest through the C driver. */
    @Test
    void rpingAndUcxPerftestRunThroughTheCDriver() throws Exception {
        int port = Programs.port() + 7;
        String rpingPort = Integer.toString(port);
        Programs.Run srv = Programs.start(served, 1, false,
                Programs.withDriver(true, "rping", "-s", "-v", "-C", "10", "-a", "0.0.0.0", "-p", rpingPort));
        long t0 = System.nanoTime();
        while (!served.log().contains("listens on any address, port " + port) && System.nanoTime() - t0 < 30e9)
            Thread.sleep(20);
        Programs.Run cli = Programs.start(served, 0, false,
                Programs.withDriver(true, "rping", "-c", "-v", "-C", "10", "-a", "node1", "-p", rpingPort));
        assertEquals(0, cli.await(), cli.output() + "\n--- server:\n" + srv.output() + "\n--- serve:\n" + served.log());
        assertEquals(0, srv.await(), srv.output());
        for (int i = 0; i < 10; i++)
            assertTrue(cli.output().contains("ping data: rdma-ping-" + i + ": "), cli.output());
        port += 1;
        List<String> ucx = new ArrayList<>(List.of("ucx_perftest", "-p", Integer.toString(port), "-t",
                "tag_bw", "-n", "100"));
        srv = Programs.start(served, 1, false, Programs.withDriver(true, ucx.toArray(String[]::new)));
        Programs.awaitListening(srv, port);
        ucx.add(1, "127.0.0.1");
        cli = Programs.start(served, 0, false, Programs.withDriver(true, ucx.toArray(String[]::new)));
        assertEquals(0, cli.await(90), cli.output() + "\n--- server:\n" + srv.output());
        assertEquals(0, srv.await(30), srv.output());
        assertTrue(cli.output().contains("Final:"), cli.output());
        assertFalse((cli.output() + srv.output()).contains("not built in the C driver"), cli.output() + srv.output());
    }

    /**
     * Every device counter moves alike (doorbells, BlueFlame writes, WQE fetches, DMA and its bytes,
     * translations, packets, CQEs, commands), with the kernel up before either run. The host's CPU
     * model (host.*) is left out: the Java driver charges its posts and polls in simulated time, while
     * the C driver's cost is its own CPU's, outside simulated time.
     */
    @Test
    void theSameTrafficGivesTheDeviceTheSameWorkThroughEitherDriver() throws Exception {
        for (int node = 0; node < 2; node++) // the kernel's driver is up on both nodes, as on a booted host
            assertEquals(0, Programs.start(served, node, true, "ibv_devinfo").await());
        var before = counters();
        int logAt = served.log().length();
        pair(false, "ibv_rc_pingpong", "-n", "50", "-s", "4096");
        served.awaitReleased(); // what the programs left is destroyed once serve sees them go: theirs too
        var java = delta(before, counters());
        List<String> javaRows = tableRows(logAt);
        before = counters();
        logAt = served.log().length();
        pair(true, "ibv_rc_pingpong", "-n", "50", "-s", "4096");
        served.awaitReleased();
        var c = delta(before, counters());
        assertEquals(java, c, "java:\n" + java + "\nc:\n" + c);
        // and serve's tables of the two programs' QPs, kept by the adapter: the same messages, bytes and
        // latencies (doorbell to CQE); the bandwidth's span also holds the host's time between posts
        List<String> cRows = tableRows(logAt);
        assertEquals(2, javaRows.size(), served.log());
        assertEquals(javaRows, cRows, served.log());
    }

    /**
     * The rows of serve's QP tables in its log from {@code from} on, without the QP's number and the bandwidth,
     * once both programs' are there (a program's table is printed as serve sees it go).
     */
    private List<String> tableRows(int from) throws InterruptedException {
        List<String> rows = new ArrayList<>();
        for (long t0 = System.nanoTime(); rows.size() < 2 && System.nanoTime() - t0 < 10_000_000_000L; ) {
            Thread.sleep(20);
            rows.clear();
            var m = Pattern.compile("(?m)^ +0x\\p{XDigit}+ +(RC.*)$")
                    .matcher(served.log().substring(from));
            while (m.find()) {
                String[] f = m.group(1).trim().split("\\s+");
                f[4] = "";
                rows.add(String.join(" ", f));
            }
        }
        Collections.sort(rows); // the two programs end in either order
        return rows;
    }
}
