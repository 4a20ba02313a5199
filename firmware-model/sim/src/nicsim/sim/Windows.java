package nicsim.sim;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import java.util.stream.IntStream;

/**
 * Runs the simulators of separate partitions (nodes) side by side, in windows of simulated time no
 * longer than the least time in which one partition can affect another (the lookahead): conservative
 * parallel simulation, as SST, dist-gem5 and SimBricks do it. Within a window each partition runs
 * alone, on any of the worker threads; between windows every partition has stopped and the
 * {@link Exchange} moves what crossed between them, in an order of its own that no thread decides.
 * So the same inputs give the same events in every partition, whatever the number of threads.
 *
 * <p>Time skips ahead over stretches in which no partition has anything to do.
 *
 * <p>Across processes ({@link Peers}), each process runs its own share of the partitions: the ranks
 * agree on every window's start (the least next event time of any rank's partitions and of the
 * exchange) and on whether a condition holds, so every rank runs the same windows.
 */
public final class Windows implements AutoCloseable {
    /** What crosses between partitions. */
    public interface Exchange {
        /**
         * Every partition stopped at {@code windowStart}: acts on what crossed, scheduling in the partitions
         * whatever must happen from {@code windowStart} to one lookahead later.
         */
        void exchange(long windowStart);

        /** The earliest window start at which {@link #exchange} has something to act on; Long.MAX_VALUE if none. */
        long nextStart();
    }

    private final List<Simulator> parts;
    private final Exchange exchange;
    private final Peers peers; // null: every partition in this process
    private final long lookahead;
    private final int threads;
    private final List<Thread> helpers = new ArrayList<>();
    private final AtomicInteger nextPart = new AtomicInteger(), finished = new AtomicInteger();
    private volatile long generation;
    private volatile boolean closed;
    private volatile Throwable failure;
    private long windowEnd; // written before generation, read after it
    private final int[] order; // partitions in the order threads take them
    private final long[] cost; // each partition's wall time (ns) in its last window, written by the thread that ran it
    private long now;
    private long windows;

    /**
     * Partitions {@code parts}, joined through {@code exchange}, none affecting another sooner than
     * {@code lookahead} ps, run on {@code threads} threads (the caller's among them).
     */
    public Windows(List<Simulator> parts, Exchange exchange, long lookahead, int threads) {
        this(parts, exchange, lookahead, threads, null);
    }

    /**
     * As above, {@code parts} being this process's share of the partitions, the others' run by {@code peers}
     * (null: none), the exchange joining them all.
     */
    public Windows(List<Simulator> parts, Exchange exchange, long lookahead, int threads, Peers peers) {
        this.peers = peers;
        if (lookahead <= 0) throw new IllegalArgumentException("lookahead " + lookahead + " ps must be positive");
        if (threads < 1) throw new IllegalArgumentException("threads " + threads + " must be >= 1");
        this.parts = List.copyOf(parts);
        this.exchange = exchange;
        this.lookahead = lookahead;
        this.threads = Math.min(threads, Math.max(1, parts.size()));
        this.order = IntStream.range(0, this.parts.size()).toArray();
        this.cost = new long[this.parts.size()];
        for (int i = 1; i < this.threads; i++) {
            Thread t = new Thread(this::helper, "nicsim-partitions-" + i);
            t.setDaemon(true);
            helpers.add(t);
            t.start();
        }
    }

    /** The time every partition has reached. */
    public long now() { return now; }
    /** Windows run so far: each one a barrier between the threads. */
    public long windows() { return windows; }
    public int threads() { return threads; }

    /** Runs every partition to time {@code t}: each event at or before it has run. */
    public void runUntil(long t) {
        if (t < now) throw new IllegalArgumentException("time " + t + " ps is in the past (now " + now + " ps)");
        while (true) {
            long next = nextWork();
            if (next > t) break;
            window(Math.max(now, next), t);
        }
        for (Simulator s : parts) if (s.now() < t) s.runUntil(t);
        now = t;
    }

    /** Runs until no partition has anything left to do and nothing is crossing; returns the time then. */
    public long runUntilIdle(long limitPicos) {
        long deadline = Math.addExact(now, limitPicos);
        while (true) {
            long next = nextWork();
            if (next == Long.MAX_VALUE) break;
            if (next > deadline) throw new IllegalStateException("still busy after " + limitPicos
                    + " ps (next event at " + next + " ps)");
            window(Math.max(now, next), Long.MAX_VALUE - 1);
        }
        long end = now;
        for (Simulator s : parts) end = Math.max(end, s.now());
        return peers == null ? end : peers.max(end);
    }

    /**
     * Runs windows until {@code done} holds between two of them (every partition stopped); it is looked at
     * once per window, so it should read what partitions recorded of their own times, not the window's.
     */
    public void runUntil(BooleanSupplier done, long limitPicos) {
        long deadline = Math.addExact(now, limitPicos);
        while (!holds(done)) {
            long next = nextWork();
            if (next == Long.MAX_VALUE) throw new IllegalStateException("simulation went idle at " + now
                    + " ps before the condition held");
            if (next > deadline) throw new IllegalStateException("condition did not hold within " + limitPicos
                    + " ps (now " + now + " ps)");
            window(Math.max(now, next), Long.MAX_VALUE - 1);
        }
    }

    private long nextWork() {
        long next = exchange.nextStart();
        for (Simulator s : parts) next = Math.min(next, s.nextEventTime());
        return peers == null ? next : peers.min(next);
    }

    /** Whether {@code done} holds (across processes: on every rank, each looking at its own partitions). */
    private boolean holds(BooleanSupplier done) {
        boolean d = done.getAsBoolean();
        return peers == null ? d : peers.all(d);
    }

    /** One window from {@code start}: events before start + lookahead (and not after {@code last}) run. */
    private void window(long start, long last) {
        exchange.exchange(start);
        long end = Math.min(Math.addExact(start, lookahead) - 1, last);
        windows++;
        if (threads == 1) {
            for (Simulator s : parts) run(s, end);
        } else {
            windowEnd = end;
            sortByCost();
            nextPart.set(0);
            finished.set(0);
            generation++; // publishes windowEnd and the reset counters
            for (Thread h : helpers) LockSupport.unpark(h);
            try {
                work(end);
            } catch (Throwable t) {
                failure = t; // the helpers stop taking partitions; the window ends when they are done
            }
            while (finished.get() < helpers.size()) Thread.onSpinWait();
            Throwable f = failure;
            if (f != null) {
                failure = null;
                if (f instanceof RuntimeException r) throw r;
                if (f instanceof Error e) throw e;
                throw new IllegalStateException(f);
            }
        }
        now = end + 1;
    }

    private static void run(Simulator s, long end) { if (end >= s.now()) s.runUntil(end); }

    /**
     * Runs partitions until none is left in this window, taking the next one each time, the costliest
     * of the last window first (so the threads finish together); which thread runs which changes nothing
     * in them.
     */
    private void work(long end) {
        for (int i = nextPart.getAndIncrement(); i < order.length && failure == null; i = nextPart.getAndIncrement()) {
            int p = order[i];
            long t0 = System.nanoTime();
            run(parts.get(p), end);
            cost[p] = System.nanoTime() - t0;
        }
    }

    /** Costliest partitions first (insertion sort: the order changes little from one window to the next). */
    private void sortByCost() {
        for (int i = 1; i < order.length; i++) {
            int p = order[i], j = i - 1;
            while (j >= 0 && cost[order[j]] < cost[p]) {
                order[j + 1] = order[j];
                j--;
            }
            order[j + 1] = p;
        }
    }

    private void helper() {
        long seen = 0;
        while (!closed) {
            int spins = 0;
            while (generation == seen && !closed) {
                if (++spins < 20_000) Thread.onSpinWait();
                else LockSupport.parkNanos(1_000_000);
            }
            if (closed) return;
            seen = generation;
            try {
                work(windowEnd);
            } catch (Throwable t) {
                failure = t;
            } finally {
                finished.incrementAndGet();
            }
        }
    }

    /** Stops the worker threads. */
    @Override public void close() {
        closed = true;
        for (Thread h : helpers) LockSupport.unpark(h);
    }
}
