package nicsim.serve;

import static org.junit.jupiter.api.Assertions.*;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import nicsim.driver.World;
import nicsim.serve.Programs.Run;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A storm against one serve, seeded so a failure repeats: over {@link #ITERATIONS} rounds, Debian's
 * programs (ibv_rc_pingpong, ib_write_bw, rping) with either driver are killed with SIGKILL during
 * connection setup, mid-transfer or in teardown, malformed traffic ({@link ChaosWire}) reaches the
 * socket beside them, and now and then a fault is injected into a random node's CqeWriter. Afterwards
 * serve still answers (a checked pingpong across the nodes), and holds nothing of the storm: no
 * connections, contexts or programs, no adapter objects beyond a fresh adapter's, no host memory
 * beyond what it had, no sockets beyond what it had.
 */
class ChaosTest {
    static final long SEED = 57;
    static final int ITERATIONS = 60;
    private Served served;
    private Process dummy;

    @AfterEach
    void stopServing() throws Exception {
        if (dummy != null) dummy.destroyForcibly();
        if (served != null) assertTrue(served.stop(), "the simulator's loop ended");
    }

    @Test
    void serveOutlivesKilledProgramsGarbageAndFaultsAndHoldsNothingAfterwards() throws Exception {
        served = new Served("chaos-serve").start(Served.cluster());
        // the garbage's "program": a process of its own, so a stray DMA of a random verb lands in no one's memory
        dummy = new ProcessBuilder("sleep", "600").start();
        ChaosWire wire = new ChaosWire(served.socket, (int) dummy.pid());
        int port = Programs.port() + 100;
        pingpong(true, port++, 20); // warm-up: what a first program makes lazily is in the baseline
        pingpong(false, port++, 20);
        awaitNothingHeld("after the warm-up");
        List<String> fresh = states();
        rping(port++); // a node's RDMA CM agent (its QP1, say) starts on first use and stays: in the baseline too
        awaitNothingHeld("after the warm-up's rping");
        List<Map<String, Integer>> objects = objects();
        long[] memory = memory();
        List<String> start = states();
        long sockets = sockets();

        Random r = new Random(SEED);
        System.out.println("ChaosTest: seed " + SEED + ", " + ITERATIONS + " iterations");
        int faults = 0, garbage = 0;
        for (int i = 0; i < ITERATIONS; i++) {
            String what = "iteration " + i + " (seed " + SEED + ")";
            if (r.nextInt(5) == 0) {
                int node = r.nextInt(2), after = r.nextInt(200);
                served.world.host(node).adapter.cqeWriter().injectFault("ChaosTest " + what, after);
                faults++;
            }
            String how = storm(r, wire, port++, i);
            garbage += wire.sent();
            System.out.println("ChaosTest: " + what + ": " + how);
            awaitNothingHeld(what + ": " + how);
            // serve lets a context go before the adapter has run its destroys (simulated time): they end soon after
            Programs.waitUntil(() -> settled(states(), start, fresh), 30);
            List<String> now = states();
            for (int n = 0; n < now.size(); n++) { // a node reset by a fault is brought up again by its next program
                String ok = start.get(n) + ", " + fresh.get(n) + " (reset, up again, no RDMA CM yet) or " + DOWN
                        + " (reset, not up yet)";
                assertTrue(now.get(n).equals(start.get(n)) || now.get(n).equals(fresh.get(n))
                        || now.get(n).equals(DOWN), what + ": " + how + ": node " + n + "'s adapter and host memory "
                        + "hold " + now.get(n) + ", not " + ok + "\n" + served.log());
            }
        }
        for (int n = 0; n < 2; n++) served.world.host(n).adapter.cqeWriter().injectFault(null, 0); // none left armed
        System.out.println("ChaosTest: " + faults + " faults injected, " + garbage + " malformed messages");

        // serve still answers, across the fabric, with either driver
        pingpong(true, port++, 50);
        pingpong(false, port++, 50);
        rping(port++);
        awaitNothingHeld("after the storm");
        Programs.waitUntil(() -> states().equals(start), 30);
        assertEquals(objects, objects(), "each adapter holds what it held before the storm");
        assertArrayEquals(memory, memory(), "the host memory allocated for programs is all back");
        assertEquals(sockets, sockets(), "serve's sockets: none left of the storm");
        String log = served.log();
        assertFalse(log.contains("serving failed") || log.contains("the simulation failed")
                || log.contains("releasing "), "serve's own handling never failed:\n" + log);
    }

    /** One iteration: two programs, killed at a random point; garbage beside them. What was done. */
    private String storm(Random r, ChaosWire wire, int port, int i) throws Exception {
        boolean c = r.nextBoolean();
        int kind = r.nextInt(3), server = r.nextInt(2), client = r.nextInt(2), phase = r.nextInt(3);
        int victim = r.nextInt(3);
        String p = Integer.toString(port);
        List<String> srv, cli;
        switch (kind) {
            case 0 -> {
                srv = List.of("ibv_rc_pingpong", "-c", "-n", "300", "-p", p);
                cli = List.of("ibv_rc_pingpong", "-c", "-n", "300", "-p", p, "localhost");
            }
            case 1 -> {
                srv = List.of("ib_write_bw", "-n", "300", "-p", p);
                cli = List.of("ib_write_bw", "-n", "300", "-p", p, "localhost");
            }
            default -> {
                srv = List.of("rping", "-s", "-v", "-C", "40", "-a", "0.0.0.0", "-p", p);
                cli = List.of("rping", "-c", "-v", "-C", "40", "-a", "node" + server, "-p", p);
            }
        }
        Run s = start(c, server, srv);
        if (kind < 2) Programs.awaitListening(s, port);
        else Programs.waitUntil(() -> served.log().contains("port " + port), 30);
        wire.storm(r, 1 + r.nextInt(3));
        Run k = start(c, client, cli);
        long delay = switch (phase) {
            case 0 -> r.nextInt(200); // connection setup
            case 1 -> 200 + r.nextInt(2000); // mid-transfer (or setup, on a slow machine)
            default -> -1; // teardown: as soon as the client says it is done
        };
        boolean stuck = false;
        if (delay >= 0) Thread.sleep(delay);
        else stuck = !Programs.waitUntil(() -> k.output().matches("(?s).*(bytes in|BW average|\\d{2,} +\\d+ +[0-9.]+|"
                + "ping data: rdma-ping-39).*") || !k.process().isAlive(), 30);
        wire.storm(r, r.nextInt(3));
        List<Run> dead = victim == 0 ? List.of(s) : victim == 1 ? List.of(k) : List.of(s, k);
        for (Run d : dead) d.process().destroyForcibly(); // SIGKILL: the provider gets no chance to clean up
        for (Run o : List.of(s, k)) // the survivor may wait for ever on its dead peer, as on real hardware
            if (!o.process().waitFor(5, TimeUnit.SECONDS)) o.process().destroyForcibly();
        for (Run o : List.of(s, k)) o.await(30);
        return String.format("%s %s node %d -> node %d, killed %s %s", c ? "C" : "Java", srv.get(0), client, server,
                victim == 0 ? "the server" : victim == 1 ? "the client" : "both",
                phase == 0 ? "in setup" : phase == 1 ? "after " + delay + " ms" : stuck
                        ? "after 30 s without finishing (" + served.server.failure() + ")" : "in teardown");
    }

    /** A checked pingpong of {@code n} round trips from node 0 to node 1 that must complete. */
    private void pingpong(boolean c, int port, int n) throws Exception {
        String p = Integer.toString(port), iters = Integer.toString(n);
        Run s = start(c, 1, List.of("ibv_rc_pingpong", "-c", "-n", iters, "-p", p));
        Programs.awaitListening(s, port);
        Run k = start(c, 0, List.of("ibv_rc_pingpong", "-c", "-n", iters, "-p", p, "localhost"));
        assertEquals(0, k.await(), k.output() + served.log());
        assertEquals(0, s.await(), s.output());
        String bytes = (n * 4096L * 2) + " bytes in";
        assertTrue(k.output().contains(bytes) && s.output().contains(bytes), k.output());
    }

    /** rping from node 0 to node 1 over RDMA CM, 10 pings that must come back. */
    private void rping(int port) throws Exception {
        String p = Integer.toString(port);
        Run s = start(true, 1, List.of("rping", "-s", "-v", "-C", "10", "-a", "0.0.0.0", "-p", p));
        Programs.waitUntil(() -> served.log().contains("port " + port), 30);
        Run k = start(true, 0, List.of("rping", "-c", "-v", "-C", "10", "-a", "node1", "-p", p));
        assertEquals(0, k.await(), k.output() + served.log());
        assertEquals(0, s.await(), s.output());
        assertTrue(k.output().contains("ping data: rdma-ping-9"), k.output());
    }

    private Run start(boolean c, int node, List<String> program) throws Exception {
        return Programs.start(served, node, false, Programs.withDriver(c, program.toArray(String[]::new)));
    }

    /** Waits until serve holds nothing for programs (within 30 s), else fails naming what it holds. */
    private void awaitNothingHeld(String when) throws Exception {
        Programs.waitUntil(() -> served.server.holdings().values().stream().allMatch(n -> n == 0), 30);
        Map<String, Integer> held = served.server.holdings();
        assertTrue(held.values().stream().allMatch(n -> n == 0), when + ": serve still holds " + held + "\n"
                + served.log());
    }

    private List<Map<String, Integer>> objects() {
        List<Map<String, Integer>> out = new ArrayList<>();
        for (var h : served.world.hosts()) out.add(h.firmware.objects());
        return out;
    }

    /** Whether each node is as at the {@code start}, or {@code fresh} (reset and up again), or {@link #DOWN}. */
    private static boolean settled(List<String> now, List<String> start, List<String> fresh) {
        for (int n = 0; n < now.size(); n++)
            if (!now.get(n).equals(start.get(n)) && !now.get(n).equals(fresh.get(n)) && !now.get(n).equals(DOWN))
                return false;
        return true;
    }

    /** A node's adapter after a reset, before a program brings it up: as a cluster's that was never served. */
    private static final String DOWN = states(Served.cluster()).get(0);

    /** Each node's adapter objects and the bytes allocated in its host memory. */
    private List<String> states() { return states(served.world); }

    private static List<String> states(World w) {
        List<String> out = new ArrayList<>();
        for (var h : w.hosts()) out.add(h.firmware.objects() + ", " + h.memory.bytesAllocated() + " B allocated");
        return out;
    }

    private long[] memory() {
        return served.world.hosts().stream().mapToLong(h -> h.memory.bytesAllocated()).toArray();
    }

    /** Sockets this JVM holds open (serve's connections among them). */
    private static long sockets() throws Exception {
        try (var fds = Files.list(Path.of("/proc/self/fd"))) {
            return fds.filter(f -> {
                try {
                    return Files.readSymbolicLink(f).toString().startsWith("socket:");
                } catch (Exception gone) { // closed while listed
                    return false;
                }
            }).count();
        }
    }
}
