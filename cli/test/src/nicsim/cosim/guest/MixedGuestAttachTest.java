package nicsim.cosim.guest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import nicsim.serve.Attach;
import nicsim.serve.Programs;
import nicsim.serve.ProviderBuild;
import nicsim.serve.Served;
import nicsim.vm.Forwards;
import nicsim.vm.Vm;
import nicsim.vm.VmOptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 58's "guests and attached programs mixed on one fabric": a guest on node 1 of a 2-node serve (its kernel's
 * nicsim_ib, Debian's rdma-core with the provider's kern back end) and a program under attach on node 0 (the
 * provider on serve's socket) run ibv_rc_pingpong against each other by node name, both ways. Their out-of-band
 * TCP crosses the guest's forwards (--forward-in, --forward-out); their data crosses the simulated fabric.
 */
class MixedGuestAttachTest {
    private static final Path ROOT = Path.of(System.getProperty("nicsim.root", "."));

    /**
     * Each program: a name for its status lines, its command at both ends (the guest adds -d nicsim_0, the client
     * its peer's name), and a regular expression for the line its client prints when all of its work is done.
     */
    private record Program(String name, String command, String done) { }

    private static final List<Program> PROGRAMS = List.of(
            // 16 round trips of 4096 bytes, each received buffer checked (-c) at both ends
            new Program("PINGPONG", "ibv_rc_pingpong -g 0 -c -n 16 -s 4096", "131072 bytes in [0-9.]+ seconds"),
            // 50 RDMA WRITEs of 64 KiB: the client's result row
            new Program("WRITE_BW", "ib_write_bw -n 50 -s 65536", "\\s*65536\\s+50\\s+[0-9.]+\\s+[0-9.]+"));

    @TempDir Path share;

    /**
     * For each program the guest serves on its {@code in} port and says so once it listens; then, once the test
     * has put go-NAME in the shared folder (the attached server listens), runs its client against node0 on its
     * {@code out} port. Each end's status is a line NAME_SERVER= or NAME_CLIENT=. First it tries the host's
     * {@code probe} port through the forwarder's address, which user-mode networking without restrict=on would
     * take to the host's 127.0.0.1 (nc then waits for an answer until timeout ends it).
     */
    static String script(List<Integer> in, List<Integer> out, int probe) {
        StringBuilder s = new StringBuilder("ibv_devinfo -d nicsim_0 | grep -E 'hca_id|state'\n");
        s.append("echo out | timeout 10 nc 10.77.0.254 ").append(probe).append("; echo PROBE=$?\n");
        for (int i = 0; i < PROGRAMS.size(); i++) {
            Program p = PROGRAMS.get(i);
            s.append(String.join("\n",
                    p.command() + " -d nicsim_0 -p " + in.get(i) + " > /tmp/server.txt 2>&1 & srv=$!",
                    "n=0; until netstat -ltn | grep -q ':" + in.get(i) + " '; do",
                    "  n=$((n + 1)); [ $n -gt 60 ] && break; sleep 1; done",
                    "echo " + p.name() + "-LISTENING",
                    "wait $srv; st=$?; cat /tmp/server.txt; echo " + p.name() + "_SERVER=$st",
                    "n=0; until [ -e /host/go-" + p.name() + " ]; do",
                    "  n=$((n + 1)); [ $n -gt 300 ] && break; sleep 1; done",
                    p.command() + " -d nicsim_0 -p " + out.get(i) + " node0; echo " + p.name() + "_CLIENT=$?", ""));
        }
        return s.append("exit 0\n").toString();
    }

    @Test void aGuestAndAnAttachedProgramRunTheProgramsBothWays() throws Exception {
        Path provider = ProviderBuild.get().resolve(ProviderBuild.LIBRARY);
        List<Integer> in = new ArrayList<>(), out = new ArrayList<>();
        for (int i = 0; i < PROGRAMS.size(); i++) {
            in.add(Programs.port() + 51 + 2 * i);
            out.add(Programs.port() + 52 + 2 * i);
        }
        for (int p : in) assertFalse(Attach.listening(p), "port " + p + " is free on this machine");
        for (int p : out) assertFalse(Attach.listening(p), "port " + p + " is free on this machine");
        ServerSocket probe = new ServerSocket(0, 1, InetAddress.getLoopbackAddress()); // the host's 127.0.0.1
        Served served = new Served("mixed-guest-attach").start(Served.cluster());
        ByteArrayOutputStream console = new ByteArrayOutputStream(); // its methods are synchronized: read while written
        VmOptions o = new VmOptions(1, script(in, out, probe.getLocalPort()), false, served.socket, share, 384, ROOT,
                VmOptions.defaultCache(), VmOptions.defaultNetPort(served.socket), 600, "", null, provider,
                new Forwards(in, out.stream().map(p -> new Forwards.Target(0, p)).toList()));
        CompletableFuture<Integer> guest = CompletableFuture.supplyAsync(() -> {
            try {
                return new Vm(o, new PrintStream(console, true, StandardCharsets.UTF_8), System.err).run();
            } catch (Exception e) {
                throw new IllegalStateException("node1's guest: " + e.getMessage(), e);
            }
        });
        List<Programs.Run> attached = new ArrayList<>(); // each program's client, then its server, on node 0
        int status;
        try {
            for (int i = 0; i < PROGRAMS.size(); i++) {
                Program p = PROGRAMS.get(i);
                awaitConsole(console, guest, p.name() + "-LISTENING", 400);
                // node 0's client finds the guest's server by name: node1 is 127.77.0.2, the guest's forward-in
                Programs.Run client = Programs.start(served, 0, false, (p.command() + " -p " + in.get(i) + " node1")
                        .split(" "));
                attached.add(client);
                assertEquals(0, client.await(300), p.name() + "'s attached client: " + client.output() + served.log());
                Programs.Run server = Programs.start(served, 0, false, (p.command() + " -p " + out.get(i)).split(" "));
                attached.add(server);
                Programs.awaitListening(server, out.get(i));
                Files.writeString(share.resolve("go-" + p.name()), "");
                assertEquals(0, server.await(300), p.name() + "'s attached server: " + server.output() + served.log());
            }
            status = guest.get(300, TimeUnit.SECONDS);
            for (int i = 0; i < 100 && !served.log().contains("DMA maps left"); i++) Thread.sleep(100);
            served.awaitReleased();
        } finally {
            for (Programs.Run r : attached) r.process().destroy();
            served.stop();
            System.out.println("--- node1's console:\n" + console.toString(StandardCharsets.UTF_8)
                    + "\n--- serve's log:\n" + served.log());
        }
        String g = console.toString(StandardCharsets.UTF_8);
        assertEquals(0, status, "the guest's script ran: " + g);
        try (probe) { // a connection completes in the backlog even while nothing accepts: accept would take it
            probe.setSoTimeout(1);
            assertThrows(SocketTimeoutException.class, probe::accept, "nothing from the guest reached 127.0.0.1: " + g);
        }
        assertEquals("1", Guests.value(g, "PROBE"), "the guest's nc to the host's port was refused at once: " + g);
        assertTrue(g.contains("PORT_ACTIVE"), "the guest sees nicsim_0 up: " + g);
        for (int i = 0; i < PROGRAMS.size(); i++) {
            Program p = PROGRAMS.get(i);
            assertTrue(g.contains(p.name() + "_SERVER=0") && g.contains(p.name() + "_CLIENT=0"),
                    p.name() + " at both of the guest's ends: " + g);
            String client = attached.get(2 * i).output();
            assertEquals(1, rows(client, p.done()), p.name() + "'s attached client did all of its work: " + client);
            assertEquals(1, rows(g.substring(g.indexOf(p.name() + "_SERVER=0"), g.indexOf(p.name() + "_CLIENT=0")),
                    p.done()), p.name() + "'s guest client did all of its work: " + g);
        }
        // the pingpong's servers did their round trips too, each buffer checked
        assertEquals(2, rows(g, PROGRAMS.get(0).done()), "the guest's pingpong server and client: " + g);
        assertTrue(attached.get(1).output().contains("131072 bytes in "), "the attached pingpong server: "
                + attached.get(1).output());
        var counters = served.world.sim.counters();
        for (String node : List.of("node0", "node1")) {
            var c = counters.scope(node);
            assertTrue(c.get("Firmware.packets_out") > 0 && c.get("Firmware.packets_in") > 0,
                    node + "'s adapter sent and received: " + c.snapshot());
        }
        long least = 2L * 2 * 16 * 4096 + 2L * 50 * 65536;
        assertTrue(counters.get("Fabric.bytes") >= least, "the programs' data crossed the fabric: "
                + counters.get("Fabric.bytes") + " bytes, at least " + least);
        assertFalse(served.log().contains("the device reports") || served.log().contains("violations"),
                "neither driver broke the device's rules: " + served.log());
        assertTrue(served.log().contains(" 0 DMA maps left"), "the guest's driver left nothing mapped: "
                + served.log());
    }

    /** How many lines of {@code text} are a row starting with {@code row} (a regular expression). */
    private static int rows(String text, String row) {
        Matcher m = Pattern.compile("(?m)^\\s*" + row).matcher(text);
        int n = 0;
        while (m.find()) n++;
        return n;
    }

    /** Waits until the guest's console shows {@code line}; fails if the guest ended first or after the seconds. */
    private static void awaitConsole(ByteArrayOutputStream console, CompletableFuture<Integer> guest, String line,
                                     int seconds) throws Exception {
        for (int i = 0; i < seconds * 10; i++) {
            if (console.toString(StandardCharsets.UTF_8).contains(line)) return;
            if (guest.isDone()) fail("the guest ended before '" + line + "': " + guest.join());
            Thread.sleep(100);
        }
        fail("no '" + line + "' on the guest's console within " + seconds + " s");
    }
}
