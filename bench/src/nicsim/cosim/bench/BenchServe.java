package nicsim.cosim.bench;

import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import nicsim.serve.Server;
import nicsim.driver.World;
import nicsim.fabric.Faults;
import nicsim.profile.Profiles;

/** What the serve benches share: a one-node serve of their own, and C programs run to their end. */
final class BenchServe {
    private BenchServe() {}

    /** What a bench does while its serve runs, given the serve's socket and world. */
    interface Body<T> { T run(Path socket, World world) throws Exception; }

    /**
     * Runs {@code body} against a fresh one-node serve (cx-gen3x16) on a socket of its own, its log
     * going nowhere (kept in memory, it would be growth the memory benches measure), then stops it.
     */
    static <T> T with(Body<T> body) throws Exception {
        Path socket = Files.createTempDirectory("nicsim-bench").resolve("serve.sock");
        World w = new World(1, Profiles.load("cx-gen3x16"), 1, Faults.parse("none"));
        boolean[] stop = {false};
        PrintStream log = new PrintStream(OutputStream.nullOutputStream());
        try (Server server = new Server(w, socket, Server.DEFAULT_GRACE_MILLIS, log)) {
            Thread loop = new Thread(() -> server.run(() -> stop[0]), "bench-serve");
            loop.start();
            try {
                return body.run(socket, w);
            } finally {
                stop[0] = true;
                loop.join(10_000);
            }
        }
    }

    /** Runs {@code command} to its end (at most {@code minutes}): its output, or IOException naming {@code what}. */
    static String runToEnd(List<String> command, long minutes, String what) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(minutes, TimeUnit.MINUTES) || p.exitValue() != 0)
            throw new IOException(what + " failed:\n" + out);
        return out;
    }
}
