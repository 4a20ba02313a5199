package nicsim.cosim.cli;

import static org.junit.jupiter.api.Assertions.*;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import java.util.regex.Pattern;
import nicsim.cosim.Cluster;
import nicsim.serve.Attach;
import nicsim.serve.Programs;
import nicsim.serve.Served;
import org.junit.jupiter.api.Test;

/**
 * serve as the command line runs it, with what only this module has: node 0's blocks as RTL in
 * lockstep under an attached program, and `nicsim serve` stopped by SIGTERM while a QP retries.
 */
class ServeCliTest {
    @Test
    void aProgramRunsWithNode0sBlocksFromRtlInLockstep() throws Exception {
        Served served = new Served("nicsim-serve-rtl");
        try (Cluster cluster = Cluster.builder().nodes(2).profile("cx-gen3x16").seed(1)
                .rtl(Set.of("doorbell", "wqe", "cqe")).build()) {
            served.start(cluster.world());
            String port = Integer.toString(Programs.port() + 7);
            Programs.Run srv = Programs.start(served, 1, false, "ibv_rc_pingpong", "-n", "30", "-p", port);
            Programs.awaitListening(srv, Programs.port() + 7);
            Programs.Run cli = Programs.start(served, 0, false, "ibv_rc_pingpong", "-n", "30", "-p", port, "localhost");
            assertEquals(0, cli.await(), cli.output() + served.log());
            assertEquals(0, srv.await(), srv.output());
            served.stop();
            assertNull(served.server.failure(), "no divergence: " + served.log());
            assertTrue(cluster.rtlEdges().get("doorbell") > 100, "the RTL ran beside its twins: " + cluster.rtlEdges());
        }
    }

    @Test
    void sigtermStopsServeWithinSecondsWhileAQpRetries() throws Exception {
        Path dir = Files.createTempDirectory("wedge-term"), socket = dir.resolve("serve.sock");
        Path log = dir.resolve("serve.log");
        String java = ProcessHandle.current().info().command().orElse("java");
        Process serve = new ProcessBuilder(java, "-cp", System.getProperty("java.class.path"), "nicsim.cosim.cli.Main",
                "serve", "--nodes", "1", "--socket", socket.toString()).redirectErrorStream(true)
                .redirectOutput(log.toFile()).start();
        Supplier<String> text = () -> {
            try { return Files.readString(log); } catch (IOException e) { return ""; }
        };
        Process stuck = null;
        try {
            Programs.waitFor(text, Pattern.compile("(listening)"), 60);
            Path spin = Programs.compile("serve", "livelock", List.of(), "-libverbs");
            stuck = new ProcessBuilder(Attach.command(socket, 0, List.of(spin.resolve("livelock").toString())))
                    .redirectErrorStream(true).start();
            Process s = stuck;
            StringBuilder progOut = new StringBuilder();
            Thread r2 = new Thread(() -> {
                try (var in = s.getInputStream()) {
                    byte[] b = new byte[256];
                    for (int n; (n = in.read(b)) > 0; )
                        synchronized (progOut) { progOut.append(new String(b, 0, n, StandardCharsets.UTF_8)); }
                } catch (Exception ignored) { // ended
                }
            });
            r2.setDaemon(true);
            r2.start();
            Programs.waitFor(() -> { synchronized (progOut) { return progOut.toString(); } }, Programs.SPINNING,
                    60);
            long t0 = System.nanoTime();
            serve.destroy(); // SIGTERM
            assertTrue(serve.waitFor(15, TimeUnit.SECONDS), "serve still running 15 s after SIGTERM:\n" + text.get());
            double seconds = (System.nanoTime() - t0) / 1e9;
            assertTrue(text.get().contains("nicsim serve: simulated"),
                    "it printed what ran (exit " + serve.exitValue() + "):\n" + text.get());
            assertTrue(text.get().contains("livelock (pid " + stuck.pid() + ")"), "naming the program:\n" + text.get());
            assertTrue(seconds < 15, "stopped in " + seconds + " s");
        } finally {
            if (stuck != null) stuck.destroyForcibly();
            serve.destroyForcibly();
        }
    }
}
