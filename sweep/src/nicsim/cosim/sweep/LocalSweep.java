package nicsim.cosim.sweep;

import java.io.IOException;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Runs a sweep's points on this machine: {@code jobs} worker threads, each point a world of its
 * own (a simulation shares nothing with another), each result recorded as it ends.
 */
public final class LocalSweep {
    private LocalSweep() {}

    /** How a run of the sweep went: points run now, skipped as already done, failed now. */
    public record Summary(int total, int skipped, int ran, int failed, double wallSeconds) {}

    public static Summary run(SweepSpec spec, SweepResults results, int jobs, PrintStream progress)
            throws IOException, InterruptedException {
        List<Point> all = spec.points();
        List<Point> todo = new ArrayList<>();
        for (Point p : all) if (!results.has(p)) todo.add(p);
        int skipped = all.size() - todo.size();
        if (skipped > 0)
            progress.printf("sweep: %d of %d points already in %s: not run again%n", skipped, all.size(),
                    results.dir());
        long t0 = System.nanoTime();
        AtomicInteger finished = new AtomicInteger(), failed = new AtomicInteger();
        ExecutorService pool = Executors.newFixedThreadPool(jobs, r -> {
            Thread t = new Thread(r, "sweep-worker");
            t.setDaemon(true);
            return t;
        });
        try {
            List<Future<?>> futures = new ArrayList<>();
            for (Point p : todo)
                futures.add(pool.submit(() -> {
                    PointRun.Outcome o = PointRun.run(spec, p);
                    results.add(o);
                    int n = finished.incrementAndGet();
                    if (!o.ok()) {
                        failed.incrementAndGet();
                        synchronized (progress) {
                            progress.printf("%ssweep: point %s failed: %s%n", INTERACTIVE ? "\n" : "", p, o.error());
                        }
                    }
                    report(progress, n, todo.size(), failed.get(), t0);
                    return null;
                }));
            for (Future<?> f : futures) {
                try {
                    f.get();
                } catch (ExecutionException e) {
                    if (e.getCause() instanceof IOException io) throw io;
                    throw new IllegalStateException(e.getCause());
                }
            }
        } finally {
            pool.shutdownNow();
        }
        if (!todo.isEmpty() && INTERACTIVE) progress.println();
        return new Summary(all.size(), skipped, todo.size(), failed.get(), (System.nanoTime() - t0) / 1e9);
    }

    private static final boolean INTERACTIVE = System.console() != null;
    private static long lastLine;

    /** A bar redrawn in place on a terminal; into a log, a line at most every ten seconds and at the end. */
    private static void report(PrintStream out, int n, int total, int failed, long t0) {
        long now = System.nanoTime();
        double elapsed = (now - t0) / 1e9;
        double eta = elapsed / n * (total - n);
        int bar = (int) Math.round(30.0 * n / total);
        synchronized (out) {
            if (!INTERACTIVE && n < total && now - lastLine < 10_000_000_000L) return;
            lastLine = now;
            out.printf("%ssweep [%s%s] %d/%d points%s  %s elapsed, ETA %s   %s", INTERACTIVE ? "\r" : "",
                    "#".repeat(bar), " ".repeat(30 - bar), n, total, failed > 0 ? " (" + failed + " failed)" : "",
                    time(elapsed), time(eta), INTERACTIVE ? "" : "\n");
            out.flush();
        }
    }

    static String time(double s) {
        if (s < 60) return String.format("%.0f s", s);
        if (s < 3600) return String.format("%dm%02ds", (int) s / 60, (int) s % 60);
        return String.format("%dh%02dm", (int) s / 3600, (int) s % 3600 / 60);
    }
}
