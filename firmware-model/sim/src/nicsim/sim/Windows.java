package nicsim.sim;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

/**
 * Runs the simulators of separate partitions (nodes) side by side, in windows of simulated time no
 * longer than the least time in which one partition can affect another (the lookahead): conservative
 * parallel simulation, as SST, dist-gem5 and SimBricks do it. Within a window each partition runs
 * alone, on one of the worker threads (each thread keeps a block of neighbours, taking others' only where it
 * finishes first); between windows every partition has stopped and the
 * {@link Exchange} moves what crossed between them, in an order of its own that no thread decides. The thread that
 * ends a window (runs its last partition) looks between windows and hands the next one over, the caller's or not.
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

        /**
         * What {@link #exchange} leaves for partition {@code part} rather than scheduling it there itself: run on the
         * thread that runs the partition in each window, before it runs (so the exchange writes no line of another
         * core's event queue). Null (the default): the exchange schedules in the partition itself. Asked once, as the
         * windows are set up.
         */
        default Runnable inbox(Simulator part) { return null; }
    }

    /**
     * An {@link Exchange#inbox} that tells when the first event it would schedule falls: a partition whose inbox and
     * queue hold nothing before a window's end sits the window out, its clock alone moved to the window's end (with
     * many partitions much of a window's cost was reading the state of partitions that had nothing to do in it).
     * What its inbox holds is scheduled as it next runs, or at the end of the run of windows: the same events in the
     * same order as if it had run (so a look between windows must not schedule in it: it only looks).
     */
    public interface Inbox extends Runnable {
        /** The least time of what it holds; Long.MAX_VALUE when it is empty. */
        long firstAt();
    }

    private final List<Simulator> parts;
    private final Simulator[] sims; // parts, read in each turn
    private final Runnable[] inboxes; // by partition: the exchange's inbox for it (null: none)
    private final Inbox[] timed; // by partition: its inbox if it tells its first time (null: it runs every window)
    private final Exchange exchange;
    private final Peers peers; // null: every partition in this process
    private final long lookahead;
    private final int threads;
    private final List<Thread> helpers = new ArrayList<>();
    /**
     * What the threads write to hand a window over, each word in a cache line of its own (16 longs apart) so that one
     * thread's write does not take from another's core a line it reads: {@link #GENERATION}, {@link #DONE},
     * {@link #STOPPED} (the last run of windows to have ended), and from {@link #SHARE} thread t's share of the
     * partitions left in the window at SHARE + t * PAD, the first left in the high half, the end in the low half.
     */
    private final AtomicLongArray sync;
    private static final int PAD = 16, GENERATION = 0, DONE = PAD, STOPPED = 2 * PAD, SHARE = 3 * PAD;
    /** A plan's answer: no window more. */
    private static final long STOP = Long.MIN_VALUE;

    /** What a run of windows does between two of them (every partition stopped): the next window's start, or STOP. */
    private interface Plan {
        long start();
    }

    /**
     * A waiting thread's spins on the core before it parks (about a millisecond). Yielding the core after a shorter
     * spin was tried: on a loaded machine it saved CPU time but lost wall time, the core going to another process.
     */
    private static final int SPINS = 20_000;
    /** Thread t's share of the partitions is first[t] to first[t + 1]: a block of neighbours (a pair of nodes). */
    private final int[] first;
    private final AtomicIntegerArray parked; // by thread: 1 while it sleeps, to be woken
    private volatile boolean closed;
    private volatile Throwable failure;
    private volatile Thread caller; // the thread of the run of windows under way, thread 0
    /**
     * The run of windows under way: its plan, its last time, its number (to tell its end from an earlier run's), and
     * whether a window handed over has not been ended yet. Written by whichever thread ends a window, before the
     * generation that hands the next one over.
     */
    private Plan plan;
    private long until, drives;
    private boolean open;
    private long windowStart, windowEnd; // written before the shares, read after taking a partition from one
    /**
     * By partition: the time of its next event as the thread that ran it in the window left it, so that the look
     * between windows reads one array rather than each partition's event queue in the core that ran it; for one that
     * sat the window out, the least of that and of what its inbox holds (what it would have left had it run). Read
     * only where {@link #published} says every partition had its turn since the window was handed over.
     */
    private final long[] nextAt;
    private boolean published, startPublished; // startPublished: the window's start was found from nextAt
    /**
     * Whether threads run their own partitions last to first in this window: every other window, so the partitions
     * a thread ran last, whose state its cache still holds, are the first it runs next.
     */
    private boolean backward;
    private long now;
    private long windows;
    /** By thread, at t * PAD: the partitions it ran (not sat out) in windows, a line of its own. */
    private final long[] turns;

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
        this.sims = this.parts.toArray(new Simulator[0]);
        this.exchange = exchange;
        this.inboxes = new Runnable[this.parts.size()];
        this.nextAt = new long[this.parts.size()];
        this.timed = new Inbox[this.parts.size()];
        for (int i = 0; i < inboxes.length; i++) {
            inboxes[i] = exchange.inbox(this.parts.get(i));
            if (inboxes[i] instanceof Inbox in) timed[i] = in;
        }
        this.lookahead = lookahead;
        this.threads = Math.min(threads, Math.max(1, parts.size()));
        this.sync = new AtomicLongArray(SHARE + this.threads * PAD);
        this.turns = new long[this.threads * PAD];
        this.first = new int[this.threads + 1];
        this.parked = new AtomicIntegerArray(this.threads);
        for (int t = 0; t <= this.threads; t++) first[t] = (int) ((long) t * this.parts.size() / this.threads);
        for (int i = 1; i < this.threads; i++) {
            int own = i;
            Thread t = new Thread(() -> helper(own), "nicsim-partitions-" + i);
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

    /**
     * Turns partitions took in windows so far: of {@link #windows()} times the partitions, those that ran; the others
     * sat out a window with nothing before its end (see {@link Inbox}).
     */
    public long turns() {
        long n = 0;
        for (int t = 0; t < threads; t++) n += turns[t * PAD];
        return n;
    }

    /** Runs every partition to time {@code t}: each event at or before it has run. */
    public void runUntil(long t) {
        if (t < now) throw new IllegalArgumentException("time " + t + " ps is in the past (now " + now + " ps)");
        drive(() -> {
            long next = nextWork();
            return next > t ? STOP : Math.max(now, next);
        }, t);
        for (Simulator s : parts) if (s.now() < t) s.runUntil(t);
        now = t;
    }

    /** Runs until no partition has anything left to do and nothing is crossing; returns the time then. */
    public long runUntilIdle(long limitPicos) {
        long deadline = Math.addExact(now, limitPicos);
        drive(() -> {
            long next = nextWork();
            if (next == Long.MAX_VALUE) return STOP;
            if (next > deadline) throw new IllegalStateException("still busy after " + limitPicos
                    + " ps (next event at " + next + " ps)");
            return Math.max(now, next);
        }, Long.MAX_VALUE - 1);
        long end = now;
        for (Simulator s : parts) end = Math.max(end, s.now());
        return peers == null ? end : peers.max(end);
    }

    /**
     * Runs windows until {@code done} holds between two of them (every partition stopped); it is looked at
     * once per window, so it should read what partitions recorded of their own times, not the window's. It may be
     * looked at on any of the threads (the one that ends a window), never while a partition runs. It only looks:
     * the next window's start is found from what the partitions left as they stopped, so an event it scheduled in
     * a partition before that start would run out of order (an IllegalStateException as the partition runs).
     */
    public void runUntil(BooleanSupplier done, long limitPicos) {
        long deadline = Math.addExact(now, limitPicos);
        drive(() -> {
            if (holds(done)) return STOP;
            long next = nextWork();
            if (next == Long.MAX_VALUE) throw new IllegalStateException("simulation went idle at " + now
                    + " ps before the condition held");
            if (next > deadline) throw new IllegalStateException("condition did not hold within " + limitPicos
                    + " ps (now " + now + " ps)");
            return Math.max(now, next);
        }, Long.MAX_VALUE - 1);
    }

    private long nextWork() {
        long next = exchange.nextStart();
        for (int i = 0; i < nextAt.length; i++)
            next = Math.min(next, published ? nextAt[i] : parts.get(i).nextEventTime());
        return peers == null ? next : peers.min(next);
    }

    /** Whether {@code done} holds (across processes: on every rank, each looking at its own partitions). */
    private boolean holds(BooleanSupplier done) {
        boolean d = done.getAsBoolean();
        return peers == null ? d : peers.all(d);
    }

    /**
     * Runs windows while {@code plan} gives their starts, none running past {@code last}. On several threads the one
     * that ends a window (its last partition counted) asks the plan for the next and hands it over, whichever thread
     * it is: no thread waits for another to wake up and look between windows. Across processes the caller's thread
     * alone does, as it alone talks to the other ranks.
     */
    private void drive(Plan plan, long last) {
        this.plan = plan;
        this.until = last;
        open = false;
        if (threads == 1) {
            while (advance())
                for (int i = 0; i < parts.size(); i++) run(backward ? parts.size() - 1 - i : i, windowEnd, 0);
        } else {
            caller = Thread.currentThread();
            long stop = ++drives;
            boolean more = advance();
            while (more) {
                long seen = sync.get(GENERATION);
                boolean ended = work(0);
                if (!ended && peers != null) {
                    awaitCounted(); // across processes the caller alone looks between windows
                    ended = true;
                }
                more = ended ? advance() : awaitWindow(seen, stop);
            }
        }
        Throwable f = failure;
        if (f == null) // what partitions that sat out the last windows have in their inboxes, as if they had run
            for (Inbox box : timed) if (box != null && box.firstAt() != Long.MAX_VALUE) box.run();
        if (f != null) {
            failure = null;
            if (f instanceof RuntimeException r) throw r;
            if (f instanceof Error e) throw e;
            throw new IllegalStateException(f);
        }
    }

    /** Across processes: the caller waits for the window's last partition to be counted, on whichever thread. */
    private void awaitCounted() {
        while (sync.get(DONE) < parts.size()) Thread.onSpinWait();
    }

    /**
     * Between windows, every partition stopped: ends the window that ran, asks the plan for the next and hands it to
     * the threads; false (every thread told) once the plan says stop, it throws, or a partition failed.
     */
    private boolean advance() {
        boolean go = false;
        try {
            if (open && failure == null) now = windowEnd + 1;
            published = open && failure == null; // every partition ran in the window and left its next event's time
            open = false;
            long start = failure == null ? plan.start() : STOP;
            if (start != STOP) {
                window(start);
                go = true;
            }
        } catch (Throwable x) {
            failure = x;
        }
        if (!go && threads > 1) {
            sync.set(STOPPED, drives);
            wake(0);
        }
        return go;
    }

    /** Hands over the window from {@code start}: events before start + lookahead (and not after the last) run. */
    private void window(long start) {
        exchange.exchange(start);
        windowStart = start;
        startPublished = published;
        windowEnd = Math.min(Math.addExact(start, lookahead) - 1, until);
        open = true;
        windows++;
        backward = !backward;
        if (threads == 1) return;
        sync.set(DONE, 0);
        for (int t = 0; t < threads; t++) sync.set(SHARE + t * PAD, (long) first[t] << 32 | first[t + 1]);
        sync.set(GENERATION, windows); // the shares' claims publish the end, the generation the window
        for (int t = 0; t < threads; t++) wake(t);
    }

    /** Wakes thread {@code t} (0: the caller's) if it sleeps, unless it is this one. */
    private void wake(int t) {
        Thread th = t == 0 ? caller : helpers.get(t - 1);
        if (parked.get(t) == 1 && th != Thread.currentThread()) LockSupport.unpark(th);
    }

    /**
     * The caller's thread, its part of window {@code seen} done and another thread to end it: waits on the core, then
     * asleep, for the next window (true) or the end of the run {@code stop} (false).
     */
    private boolean awaitWindow(long seen, long stop) {
        for (int spins = 0; ; spins++) {
            if (sync.get(GENERATION) != seen) return true;
            if (sync.get(STOPPED) == stop) return false;
            if (spins < SPINS) {
                Thread.onSpinWait();
                continue;
            }
            parked.set(0, 1);
            if (sync.get(GENERATION) == seen && sync.get(STOPPED) != stop) LockSupport.parkNanos(1_000_000);
            parked.set(0, 0);
        }
    }

    /**
     * Partition {@code p}'s part of a window to {@code end}: what the exchange left it, then its events; then the time
     * of its next event, left for the look between windows.
     */
    private void run(int p, long end, int t) {
        Inbox box = timed[p];
        // nextAt[p] is what the partition left as it stopped, or as it last ran if it sat out since
        if (box != null && startPublished && nextAt[p] > end) {
            long first = box.firstAt();
            if (first > end) { // nothing to do: its clock alone moves on, its queue and inbox untouched
                sims[p].idleUntil(end);
                nextAt[p] = Math.min(nextAt[p], first); // as if the inbox were emptied: the same next window
                return;
            }
        }
        turns[t * PAD]++;
        Simulator s = sims[p];
        // the queue itself, not nextAt[p]: that is what the partition left before the look, so an event the look
        // scheduled in it would not show there (the window's start is the least of nextAt: never after nextAt[p])
        long early = startPublished ? s.nextEventTime() : Long.MAX_VALUE;
        if (early < windowStart) throw new IllegalStateException("partition " + p + " has an event at " + early
                + " ps, before the window from " + windowStart + " ps: scheduled between windows by a look");
        Runnable in = inboxes[p];
        if (in != null) in.run();
        if (end >= s.now()) s.runUntil(end);
        nextAt[p] = s.nextEventTime();
    }

    /**
     * Thread {@code t}'s part of a window: the partitions of its own share in turn (from either end, as
     * {@link #backward} says), then those others have not taken yet from their shares' other ends (so a partition
     * changes thread only where the threads meet, and its state mostly stays in one core's cache). Which thread runs
     * which, and in what order, changes nothing in them. Returns whether it counted the window's last partition.
     */
    private boolean work(int t) {
        int ran = 0; // counted once at the end: one write a window to the line that says the window is over
        while (true) {
            int p = take(SHARE + t * PAD, backward);
            for (int k = 1; p < 0 && k < threads; k++) p = take(SHARE + (t + k) % threads * PAD, !backward);
            if (p < 0) break;
            try {
                if (failure == null) run(p, windowEnd, t); // the window's: it cannot end while p is out
            } catch (Throwable x) {
                failure = x; // the others are taken but not run; the window ends when every one is counted
            }
            ran++;
        }
        return ran > 0 && sync.addAndGet(DONE, ran) == parts.size();
    }

    /**
     * The last partition left in the share at {@code at} ([first, end) in a long), or the first, taken; -1 if none is
     * left.
     */
    private int take(int at, boolean last) {
        while (true) {
            long w = sync.get(at);
            int lo = (int) (w >>> 32), hi = (int) w;
            if (lo >= hi) return -1;
            if (sync.compareAndSet(at, w, last ? w - 1 : w + (1L << 32))) return last ? hi - 1 : lo;
        }
    }

    private void helper(int t) {
        long seen = 0;
        while (!closed) {
            // the generation's line alone: the writes to this object's fields between windows move no line
            for (int spins = 0; sync.get(GENERATION) == seen; spins++) {
                if (spins < SPINS) {
                    Thread.onSpinWait();
                    continue;
                }
                parked.set(t, 1); // the caller wakes it for the next window
                if (sync.get(GENERATION) == seen) LockSupport.parkNanos(1_000_000);
                parked.set(t, 0);
            }
            if (closed) return;
            seen = sync.get(GENERATION);
            if (work(t) && peers == null) advance();
        }
    }

    /** Stops the worker threads. */
    @Override public void close() {
        closed = true;
        sync.set(GENERATION, -1); // no window's: every helper stops waiting, finds closed and ends
        for (Thread h : helpers) LockSupport.unpark(h);
    }
}
