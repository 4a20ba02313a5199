package nicsim.cosim.bench;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import nicsim.driver.World;
import nicsim.fabric.Faults;
import nicsim.profile.Profiles;
import nicsim.workloads.Options;
import nicsim.workloads.Result;
import nicsim.workloads.Workloads;

/**
 * Hosts running apart on threads (issue 36): pairs_write_bw timed with 1 and more threads side by side
 * in one run, the outputs compared, and the machine's own ceiling: what two independent one-thread runs
 * side by side give against one alone (no partitioning can beat the cores it is given).
 */
public final class ThreadBench {
    private ThreadBench() {}

    /** One run: its wall time, windows, heap, and what it printed with every counter (to compare). */
    public record Run(int nodes, int threads, double wallSeconds, long windows, String fingerprint) {}

    /** pairs_write_bw on {@code nodes} hosts apart on {@code threads} threads, {@code iters} 64 KiB writes a pair. */
    public static Run run(int nodes, int threads, int iters) {
        try (World w = World.apart(nodes, Profiles.load("cx-gen3x16"), 1, Faults.NONE, threads)) {
            ByteArrayOutputStream text = new ByteArrayOutputStream();
            long t0 = System.nanoTime();
            Options o = Options.defaults().with(set -> set.iters(iters));
            Result r = Workloads.run("pairs_write_bw", w, o, new PrintStream(text));
            double wall = (System.nanoTime() - t0) / 1e9;
            if (!r.ok()) throw new IllegalStateException("pairs_write_bw on " + nodes + " nodes, " + threads
                    + " threads: " + r.errors());
            String fingerprint = text + r.rows().toString() + w.sim.counters().snapshot() + w.now();
            return new Run(nodes, threads, wall, w.windows(), fingerprint);
        }
    }

    /** The fastest of {@code runs} runs (the least disturbed by whatever else the machine does). */
    public static Run best(int nodes, int threads, int iters, int runs) {
        return sideBySide(nodes, new int[]{threads}, iters, runs).get(0);
    }

    /**
     * The fastest run on each of {@code threads} thread counts, in {@code rounds} rounds that each run every count
     * once: the counts are compared side by side while this shared machine's speed drifts (a count's runs all
     * together would each meet a different machine). Runs on one count must give the same output; the caller
     * compares the counts' outputs.
     */
    public static List<Run> sideBySide(int nodes, int[] threads, int iters, int rounds) {
        return rounds(nodes, threads, iters, rounds).best();
    }

    /** Each thread count's fastest run, and every round's wall time by count ({@code walls[count][round]}). */
    public record Rounds(List<Run> best, double[][] walls) {
        /** The most threads' speedup over one thread: the fastest run of each against the other's. */
        public double speedup() { return best.get(0).wallSeconds() / best.get(best.size() - 1).wallSeconds(); }

        /** The most threads' speedup over one thread in each round: the machine's drift over the comparison. */
        public double[] roundSpeedups() {
            double[] one = walls[0], most = walls[walls.length - 1], x = new double[one.length];
            for (int i = 0; i < x.length; i++) x[i] = one[i] / most[i];
            return x;
        }
    }

    /**
     * As {@link #sideBySide}, keeping every round's wall time: the machine's drift over the comparison. A shorter run
     * of each count comes first, untimed: the JIT compiles what a count's runs alone take (the threads' hand-off, the
     * switch's exchange), and while it compiles it takes a core, from the runs on more threads more than from one.
     */
    public static Rounds rounds(int nodes, int[] threads, int iters, int rounds) {
        for (int t : threads) run(nodes, t, Math.max(1, iters / 3));
        Run[] best = new Run[threads.length];
        double[][] walls = new double[threads.length][rounds];
        for (int round = 0; round < rounds; round++)
            for (int i = 0; i < threads.length; i++) {
                Run r = run(nodes, threads[i], iters);
                walls[i][round] = r.wallSeconds();
                if (best[i] != null && !best[i].fingerprint().equals(r.fingerprint()))
                    throw new IllegalStateException("pairs_write_bw on " + nodes
                            + " nodes differs between two runs on " + threads[i] + " threads");
                if (best[i] == null || r.wallSeconds() < best[i].wallSeconds()) best[i] = r;
            }
        return new Rounds(List.of(best), walls);
    }

    /**
     * The machine's ceiling for {@code threads} threads: the throughput of that many independent
     * one-thread runs side by side against one run alone (1.0 to {@code threads}).
     */
    public static double ceiling(int nodes, int iters, int threads) {
        double alone = best(nodes, 1, iters, 2).wallSeconds();
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            double worst = 0;
            for (int round = 0; round < 2; round++) {
                List<Future<Run>> runs = new ArrayList<>();
                for (int i = 0; i < threads; i++) runs.add(pool.submit(() -> run(nodes, 1, iters)));
                double slowest = 0;
                for (Future<Run> f : runs) slowest = Math.max(slowest, f.get().wallSeconds());
                worst = round == 0 ? slowest : Math.min(worst, slowest);
            }
            return threads * alone / worst;
        } catch (Exception e) {
            throw new IllegalStateException("independent runs side by side: " + e.getMessage(), e);
        } finally {
            pool.shutdownNow();
        }
    }
}
