package nicsim.cosim.bench;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import nicsim.driver.World;
import nicsim.fabric.Faults;
import nicsim.profile.Profiles;
import nicsim.serve.Attach;
import nicsim.workloads.Options;
import nicsim.workloads.Result;
import nicsim.workloads.Workloads;

/**
 * Debian's ib_write_bw -s 64 through attach against nicsim's own write_bw --size 64 from Java: the
 * wall time each message costs. Each figure is the difference of two runs (fewer and more
 * messages) over the messages between them, so program start, setup and connection drop out.
 */
public final class AttachWriteBw {
    private AttachWriteBw() {}

    /** Wall time per message (ns) through attach and from Java, with the message counts they came from. */
    public record Figures(int fewer, int more, double attachNs, double javaNs) {
        public double ratio() { return attachNs / javaNs; }
    }

    public static Figures measure(int fewer, int more) throws Exception {
        javaWall(fewer); // warms the JIT for the timed runs
        double java = (javaWall(more) - javaWall(fewer)) / (more - fewer) * 1e9;
        double attach = BenchServe.with((socket, w) -> {
            double a = attachWall(socket, fewer), b = attachWall(socket, more);
            return (b - a) / (more - fewer) * 1e9;
        });
        return new Figures(fewer, more, attach, java);
    }

    private static double javaWall(int messages) {
        long t0 = System.nanoTime();
        Result r = Workloads.run("write_bw", new World(2, Profiles.load("cx-gen3x16"), 1, Faults.NONE),
                Options.defaults().withSize(64).withIters(messages), new PrintStream(new ByteArrayOutputStream()));
        if (!r.ok()) throw new IllegalStateException("write_bw 64 B: " + r.errors());
        return (System.nanoTime() - t0) / 1e9;
    }

    /** ib_write_bw's server and client on the serve's one node, looped back: the client's wall time, start to exit. */
    private static double attachWall(Path socket, int messages) throws Exception {
        int port;
        try (java.net.ServerSocket s = new java.net.ServerSocket(0)) { port = s.getLocalPort(); }
        List<String> args = List.of("ib_write_bw", "-s", "64", "-n", Integer.toString(messages), "-p",
                Integer.toString(port));
        Process server = new ProcessBuilder(Attach.command(socket, 0, args)).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        try {
            awaitListening(server, port);
            List<String> client = new java.util.ArrayList<>(args);
            client.add("localhost");
            long t0 = System.nanoTime();
            BenchServe.runToEnd(Attach.command(socket, 0, client), 10, "ib_write_bw (client)");
            double t = (System.nanoTime() - t0) / 1e9;
            if (!server.waitFor(60, TimeUnit.SECONDS) || server.exitValue() != 0)
                throw new IOException("ib_write_bw (server) did not end well");
            return t;
        } finally {
            server.destroyForcibly();
        }
    }

    /** Waits until the server listens on {@code port}. */
    private static void awaitListening(Process server, int port) throws Exception {
        for (long t0 = System.nanoTime(); System.nanoTime() - t0 < 30_000_000_000L; Thread.sleep(20)) {
            if (Attach.listening(port)) return;
            if (!server.isAlive()) throw new IOException("ib_write_bw (server) ended before listening");
        }
        throw new IOException("nothing listens on TCP port " + port);
    }
}
