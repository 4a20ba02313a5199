package nicsim.cosim.bench;

import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import nicsim.cosim.sweep.LocalSweep;
import nicsim.cosim.sweep.SweepResults;
import nicsim.cosim.sweep.SweepSpec;

/** A sweep's throughput: the same sweep on one worker and on every core, side by side. */
public final class SweepBench {
    private SweepBench() {}

    /** The bench's sweep: DMA channels against message size, as docs/examples/dma-channels.toml. */
    static String spec(boolean quick) {
        return """
                workload = "write_bw"
                [options]
                iters = %d
                [vary]
                "dma.channels" = [1, 2, 4, 8, 16]
                size = { from = 1024, to = 65536, times = 4 }
                """.formatted(quick ? 50 : 200);
    }

    /** Points per minute with {@code jobs} workers; whether both runs' tables are identical. */
    public record Throughput(int points, int cores, double oneWorkerSeconds, double allCoresSeconds,
                             boolean identical) {
        public double oneWorkerPerMinute() { return points / oneWorkerSeconds * 60; }
        public double allCoresPerMinute() { return points / allCoresSeconds * 60; }
    }

    public static Throughput measure(boolean quick) throws IOException, InterruptedException {
        SweepSpec spec = SweepSpec.parse(spec(quick), "bench sweep");
        int cores = Runtime.getRuntime().availableProcessors();
        PrintStream quiet = new PrintStream(OutputStream.nullOutputStream());
        Path tmp = Files.createTempDirectory("nicsim-sweep-bench");
        try {
            // JIT warm-up
            LocalSweep.run(spec, new SweepResults(tmp.resolve("warm"), SweepSpec.parse(spec(true), "warm-up")), cores,
                    quiet);
            SweepResults one = new SweepResults(tmp.resolve("one"), spec);
            SweepResults all = new SweepResults(tmp.resolve("all"), spec);
            double a = LocalSweep.run(spec, one, 1, quiet).wallSeconds();
            double b = LocalSweep.run(spec, all, cores, quiet).wallSeconds();
            boolean same = Files.readString(one.writeCsv(spec)).equals(Files.readString(all.writeCsv(spec)));
            return new Throughput(spec.points().size(), cores, a, b, same);
        } finally {
            try (var walk = Files.walk(tmp)) {
                walk.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
    }
}
