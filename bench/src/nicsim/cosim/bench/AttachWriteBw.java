package nicsim.cosim.bench;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
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
 * Debian's ib_write_bw -s 64 through attach, with the provider's Java driver and its C driver
 * (NICSIM_DRIVER=c), against nicsim's own write_bw --size 64 from Java: the wall time each message
 * costs. Each figure is the difference of two runs (fewer and more messages) over the messages
 * between them, so program start, setup and connection drop out.
 */
public final class AttachWriteBw {
    private AttachWriteBw() {}

    /**
     * Wall time per message (ns) through attach (either driver) and from Java, each the best of the rounds (each round
     * measuring all three side by side); the C driver's ratios to Java round by round, and the message counts used.
     */
    public record Figures(int fewer, int more, double attachNs, double cDriverNs, double javaNs, double[] cRatios) {
        public double ratio() { return attachNs / javaNs; }
        /** The ratio of the best rounds. */
        public double cDriverRatio() { return cDriverNs / javaNs; }
        /** The median of the rounds' ratios (each of one round's figures, measured within seconds of each other). */
        public double medianRatio() { return WorkloadBench.median(cRatios); }
        public double minRatio() { return Arrays.stream(cRatios).min().orElse(Double.NaN); }
        public double maxRatio() { return Arrays.stream(cRatios).max().orElse(Double.NaN); }
    }

    /** {@code rounds} rounds of the three measurements (a noisy shared machine moves any one of them). */
    public static Figures measure(int fewer, int more, int rounds) throws Exception {
        javaWall(fewer); // warms the JIT for the timed runs
        double[][] java = new double[2][rounds], viaJava = new double[2][rounds], viaC = new double[2][rounds];
        double[] ratios = new double[rounds];
        for (int r = 0; r < rounds; r++) {
            java[1][r] = javaWall(more);
            java[0][r] = javaWall(fewer);
            for (int c = 0; c < 2; c++) {
                boolean cDriver = c == 1;
                double[][] walls = cDriver ? viaC : viaJava;
                int round = r;
                BenchServe.with((socket, w) -> {
                    walls[0][round] = attachWall(socket, fewer, cDriver);
                    walls[1][round] = attachWall(socket, more, cDriver);
                    return 0.0;
                });
            }
            ratios[r] = (viaC[1][r] - viaC[0][r]) / (java[1][r] - java[0][r]);
        }
        return new Figures(fewer, more, perMessage(viaJava, more - fewer), perMessage(viaC, more - fewer),
                perMessage(java, more - fewer), ratios);
    }

    /** ns per message from the best (least) wall time of the rounds' runs of each length. */
    private static double perMessage(double[][] walls, int messages) {
        return (min(walls[1]) - min(walls[0])) / messages * 1e9;
    }

    /** The best of the rounds: what the machine gives when nothing else takes it (noise only adds time). */
    private static double min(double[] xs) { return Arrays.stream(xs).min().orElse(Double.NaN); }

    private static double javaWall(int messages) {
        long t0 = System.nanoTime();
        Result r = Workloads.run("write_bw", new World(2, Profiles.load("cx-gen3x16"), 1, Faults.NONE),
                Options.defaults().with(set -> set.size(64).iters(messages)),
                new PrintStream(new ByteArrayOutputStream()));
        if (!r.ok()) throw new IllegalStateException("write_bw 64 B: " + r.errors());
        return (System.nanoTime() - t0) / 1e9;
    }

    /** ib_write_bw's server and client on the serve's one node, looped back: the client's wall time, start to exit. */
    private static double attachWall(Path socket, int messages, boolean cDriver) throws Exception {
        int port;
        try (ServerSocket s = new ServerSocket(0)) { port = s.getLocalPort(); }
        List<String> args = new ArrayList<>(List.of("ib_write_bw", "-s", "64", "-n",
                Integer.toString(messages), "-p", Integer.toString(port)));
        args = Attach.withDriver(cDriver ? "c" : "java", args);
        Process server = new ProcessBuilder(Attach.command(socket, 0, args)).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        try {
            awaitListening(server, port);
            List<String> client = new ArrayList<>(args);
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
