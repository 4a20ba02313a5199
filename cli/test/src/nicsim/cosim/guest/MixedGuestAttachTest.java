package nicsim.cosim.guest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
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
    private static final String PINGPONG = "ibv_rc_pingpong -g 0 -c -n 16 -s 4096";
    /** 16 round trips of 4096 bytes, each received buffer checked (-c) at both ends. */
    private static final String DONE = "131072 bytes in ";

    @TempDir Path share;

    /**
     * The guest serves on {@code in} and says so once it listens; then, once the test has put {@code go} in the
     * shared folder (the attached server listens), runs its client against node0 on {@code out}.
     */
    static String script(int in, int out) {
        return String.join("\n",
                "ibv_devinfo -d nicsim_0 | grep -E 'hca_id|state'",
                PINGPONG + " -d nicsim_0 -p " + in + " > /tmp/server.txt 2>&1 & srv=$!",
                "n=0; until netstat -ltn | grep -q ':" + in + " '; do",
                "  n=$((n + 1)); [ $n -gt 60 ] && break; sleep 1; done",
                "echo GUEST-SERVER-LISTENING",
                "wait $srv; echo GUEST_SERVER=$?; cat /tmp/server.txt",
                "n=0; until [ -e /host/go ]; do n=$((n + 1)); [ $n -gt 300 ] && break; sleep 1; done",
                PINGPONG + " -d nicsim_0 -p " + out + " node0; echo GUEST_CLIENT=$?",
                "exit 0", "");
    }

    @Test void aGuestAndAnAttachedProgramRunThePingpongBothWays() throws Exception {
        Path provider = ProviderBuild.get().resolve(ProviderBuild.LIBRARY);
        int in = Programs.port() + 51, out = Programs.port() + 52;
        for (int p : List.of(in, out)) assertFalse(Attach.listening(p), "port " + p + " is free on this machine");
        Served served = new Served("mixed-guest-attach").start(Served.cluster());
        ByteArrayOutputStream console = new ByteArrayOutputStream(); // its methods are synchronized: read while written
        VmOptions o = new VmOptions(1, script(in, out), false, served.socket, share, 384, ROOT,
                VmOptions.defaultCache(), VmOptions.defaultNetPort(served.socket), 420, "", null, provider,
                new Forwards(List.of(in), List.of(new Forwards.Target(0, out))));
        CompletableFuture<Integer> guest = CompletableFuture.supplyAsync(() -> {
            try {
                return new Vm(o, new PrintStream(console, true, StandardCharsets.UTF_8), System.err).run();
            } catch (Exception e) {
                throw new IllegalStateException("node1's guest: " + e.getMessage(), e);
            }
        });
        Programs.Run toGuest = null, fromGuest = null;
        int status;
        try {
            awaitConsole(console, guest, "GUEST-SERVER-LISTENING", 400);
            // node 0's client finds the guest's server by name: node1 is 127.77.0.2, the guest's forward-in
            toGuest = Programs.start(served, 0, false, (PINGPONG + " -p " + in + " node1").split(" "));
            assertEquals(0, toGuest.await(180), "the attached client: " + toGuest.output() + served.log());
            fromGuest = Programs.start(served, 0, false, (PINGPONG + " -p " + out).split(" "));
            Programs.awaitListening(fromGuest, out);
            Files.writeString(share.resolve("go"), "");
            assertEquals(0, fromGuest.await(300), "the attached server: " + fromGuest.output() + served.log());
            status = guest.get(300, TimeUnit.SECONDS);
            for (int i = 0; i < 100 && !served.log().contains("DMA maps left"); i++) Thread.sleep(100);
            served.awaitReleased();
        } finally {
            if (toGuest != null) toGuest.process().destroy();
            if (fromGuest != null) fromGuest.process().destroy();
            served.stop();
            System.out.println("--- node1's console:\n" + console.toString(StandardCharsets.UTF_8)
                    + "\n--- serve's log:\n" + served.log());
        }
        String g = console.toString(StandardCharsets.UTF_8);
        assertEquals(0, status, "the guest's script ran: " + g);
        assertTrue(g.contains("PORT_ACTIVE"), "the guest sees nicsim_0 up: " + g);
        assertTrue(g.contains("GUEST_SERVER=0") && g.contains("GUEST_CLIENT=0"), "both of the guest's ends: " + g);
        assertEquals(2, g.split(DONE, -1).length - 1, "the guest's server and client each did 16 round trips: " + g);
        assertTrue(toGuest.output().contains(DONE), "the attached client's round trips: " + toGuest.output());
        assertTrue(fromGuest.output().contains(DONE), "the attached server's round trips: " + fromGuest.output());
        var counters = served.world.sim.counters();
        for (String node : List.of("node0", "node1")) {
            var c = counters.scope(node);
            assertTrue(c.get("Firmware.packets_out") > 0 && c.get("Firmware.packets_in") > 0,
                    node + "'s adapter sent and received: " + c.snapshot());
        }
        long least = 2L * 2 * 16 * 4096;
        assertTrue(counters.get("Fabric.bytes") >= least, "both pingpongs' data crossed the fabric: "
                + counters.get("Fabric.bytes") + " bytes, at least " + least);
        assertFalse(served.log().contains("the device reports") || served.log().contains("violations"),
                "neither driver broke the device's rules: " + served.log());
        assertTrue(served.log().contains(" 0 DMA maps left"), "the guest's driver left nothing mapped: "
                + served.log());
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
