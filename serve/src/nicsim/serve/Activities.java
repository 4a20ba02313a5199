package nicsim.serve;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * What each program is doing, as far as the simulated time is concerned ({@link Pacer} moves time only while every
 * program waits on the simulation): read from its threads in /proc ({@link ProcThreads}), from the requests serve
 * has seen of it and, where /proc cannot say, from the grace time since its last request.
 */
final class Activities {
    /** Wall time a program must spin, out of verbs, before it counts as waiting on memory. */
    static final long SPIN_NANOS = 2_000_000;
    /** Wall time time holds for a program waiting in a verb beside an RDMA CM event it has not read. */
    static final long CM_HOLD_NANOS = 200_000_000;
    /**
     * Wall time a program that owes its peer the answer to a connection request has to give it: time holds while the
     * program runs, and moves short of the peer's REQ timeout while it sleeps ({@link RdmaCm#answerHorizon}); after
     * this, a program that has not answered lets the peer's REQ time out.
     */
    static final long ANSWER_NANOS = 10_000_000_000L;
    /**
     * What a program is doing, as far as the simulated time is concerned. CUT: it waits in a verb while another of
     * its threads acts ({@link #ranBeside}), so its waits end as they stand before time moves.
     */
    enum Activity { RUNS, IN_VERB, ASLEEP, SPINS, GRACED, CUT }

    private final long graceNanos;
    private final RdmaCm cm;

    Activities(long graceMillis, RdmaCm cm) {
        this.graceNanos = graceMillis * 1_000_000L;
        this.cm = cm;
    }

    /** What program {@code p} is doing now ({@code now}: wall nanoseconds). */
    Activity of(Program p, long now) {
        if (p.answered) return Activity.RUNS; // its last request was just answered: it runs on
        List<ProcThreads.Thread> threads = ProcThreads.of(p.pid);
        if (threads == null) return byGrace(p, now);
        int running = 0, inWait = 0;
        boolean cmTimer = false;
        List<ProcThreads.Thread> elsewhere = null; // asleep outside the verbs they wait in
        for (ProcThreads.Thread t : threads) {
            if (t.asleep()) {
                PciDevice d = p.devices.get(t.readingFd());
                if (d != null) { // a driver asleep on its device: in a WAIT or an MMIO read, or about to be answered
                    if (!d.waiting()) return Activity.RUNS;
                    inWait++;
                    continue;
                }
                // a CM command on its way: serve answers every one at once (GET_EVENT waits on the event file first)
                if (p.cmCommands.containsKey(t.readingFd())) return Activity.RUNS;
                Session s = p.sessionOnSocket(t.readingFd());
                // waiting for an RDMA CM event, as for an event file: away from verbs, unless one is there to read
                var cmFile = s == null ? p.cmFiles.get(t.readingFd()) : null;
                if (cmFile != null && cmFile.getAsBoolean()) return Activity.RUNS;
                if (s == null) { // asleep outside verbs
                    // on an rdma_cm file whose next event a CM timer gives (an address no node answers, a REQ or REP
                    // unanswered): it waits on the simulation, as in a verb, and time runs on to the timer (away from
                    // verbs, time moves only through events less than AWAY_STEP_PICOS ahead: it would never get there)
                    if (cmFile != null && cm.awaitsTimer(p, t.readingFd())) cmTimer = true;
                    if (elsewhere == null) elsewhere = new ArrayList<>(4);
                    elsewhere.add(t);
                    continue;
                }
                if (s.waits.waiting() == null) return Activity.RUNS; // a request on its way, or its answer not yet read
                inWait++;
            } else if (t.state() != 'Z' && t.state() != 'X') {
                running++; // running, stopped by a debugger (time holds at a breakpoint), or in uninterruptible sleep
            }
        }
        int open = p.openWaits();
        if (ranBeside(p, open, elsewhere)) return Activity.CUT;
        // an RDMA CM event waits unread while the program waits in a verb: one that polls its CQ and its rdma_cm file
        // in turn from one thread reads it once its poll comes back, as a real poll does at once, but maybe only after
        // some wall time (libfabric's rxm looks at its CM events every 10 ms of it, FI_OFI_RXM_CM_PROGRESS_INTERVAL);
        // so its waits end as they stand, time holding, until it reads the event or CM_HOLD_NANOS pass, or time ran
        // on under it to its peer's REQ timeout (68.7 s)
        if (open > 0 && p.cmEventPending()) {
            if (p.cmCutAt != cm.written) {
                p.cmCutAt = cm.written;
                p.cmCutSince = now;
            }
            if (now - p.cmCutSince < CM_HOLD_NANOS) return Activity.CUT;
        }
        // a thread runs beside a wait while an event waits to be read: woken by it (on a busy machine it may not have
        // had a CPU yet), not spinning; the wait is answered so that no lock its poller holds keeps the reader off
        if (running > 0 && open > 0 && p.eventsPending()) return Activity.CUT;
        if (running > Math.max(0, open - inWait)) {
            // a C driver on the PCI face lets time move only through its WAITs (docs/device.md): while it
            // computes, time holds, however long, so its runs repeat whatever CPU it gets
            if (p.drivesFunction()) return Activity.RUNS;
            // a program that owes its peer an answer to a connection request computes its way to it (libfabric's rxm
            // makes its endpoint, buffers and QP, milliseconds of CPU): taken for a spinner, time ran on under it to
            // the peer's REQ timeout (68.7 s); it runs, up to ANSWER_NANOS of wall time, as a real server is not
            // overtaken by its client's timeout (a server that never answers lets time move after that)
            if (cm.answerOwed(p, now, ANSWER_NANOS)) return Activity.RUNS;
            // a thread runs beside one waiting in a verb, and no request came for a while: it waits for
            // that verb (UCX's threads spin for a lock the waiting one holds), whatever CPU it gets
            if (inWait > 0 && now - p.lastRequestNanos >= SPIN_NANOS) return Activity.SPINS;
            return spinning(p, now) ? Activity.SPINS : Activity.RUNS;
        }
        // a driver of a whole function asleep outside its requests (writing its output, say) still holds time: it
        // moves only through the driver's WAITs and MMIO reads, so its run repeats to the picosecond
        if (open == 0 && p.drivesFunction()) return Activity.RUNS;
        return open > 0 || cmTimer ? Activity.IN_VERB : Activity.ASLEEP;
    }

    /**
     * Whether, while {@code p} waits in a verb ({@code open} waits), another of its threads, asleep now
     * ({@code elsewhere}, or null), ran since the last look: it was not asleep then, or has had a CPU since. A wait
     * lets simulated time move as though its thread polled without pause, which is true only while the rest of the
     * program holds still. A real poll comes back at once, empty, and the poller then sees what the other threads
     * did (an event they queued in the program's memory, dapl's connection request for its main thread) and lets go
     * of the locks it held (the provider's context lock, which dapl's CM thread wants to answer a DISCONNECTED
     * event): so the program's waits are answered as they stand (CUT) before time moves, and a server about to act
     * is not overtaken by its peer's timeout. Once per time the others run and the program made a request that
     * was not left open: then time moves as before.
     */
    private static boolean ranBeside(Program p, int open, List<ProcThreads.Thread> elsewhere) {
        boolean acted = p.acts != p.actsSeen;
        p.actsSeen = p.acts;
        if (open == 0 || elsewhere == null) {
            p.asleepRuns.clear(); // nothing waits in a verb to be told: what the others did is seen anyway
            return false;
        }
        Map<Integer, Long> before = new HashMap<>(p.asleepRuns);
        p.asleepRuns.clear();
        boolean ran = false;
        for (ProcThreads.Thread t : elsewhere) {
            long runs = ProcThreads.timesRun(p.pid, t.tid());
            p.asleepRuns.put(t.tid(), runs);
            Long then = before.get(t.tid());
            if (then == null || then != runs) ran = true;
        }
        // and it did something serve saw (a CM command, a verb answered): threads that only take turns polling one
        // context (Open MPI's openib, each waiting for the lock the other holds in its poll) let time move
        return ran && acted;
    }

    /** Where /proc cannot say: a verb left open waits; otherwise the grace time tells. */
    private Activity byGrace(Program p, long now) {
        if (p.openWaits() > 0) return Activity.IN_VERB;
        if (spinning(p, now)) return Activity.SPINS;
        return now - p.lastRequestNanos < graceNanos ? Activity.RUNS : Activity.GRACED;
    }

    /**
     * Whether a program away from verbs is spinning: its threads were runnable (on a CPU, or waiting for one:
     * /proc/&lt;pid&gt;/task/*&#47;schedstat) for at least 3/4 of the last {@link #SPIN_NANOS} of wall time
     * without a request. A program that polls its memory for the peer's RDMA WRITE (ib_write_lat) does that, and
     * can go on only once the simulation moves; so does one that polls an rsocket with a zero timeout (riostream's
     * rpoll), which on a loaded machine got well under 3/4 of a CPU, was taken for running, and held time for
     * ever. (A thread running beside one waiting in a verb is taken for a spinner without this: see
     * {@link #of}.)
     */
    private static boolean spinning(Program p, long now) {
        if (now - p.lastRequestNanos < SPIN_NANOS) return false;
        long runnable = p.runnableNanos();
        if (runnable < 0) return false;
        if (p.watchWall < 0) {
            p.watchWall = now;
            p.watchRunnable = runnable;
            return false;
        }
        long wall = now - p.watchWall;
        if (wall < SPIN_NANOS) return false;
        boolean spins = (runnable - p.watchRunnable) * 4 >= wall * 3;
        p.watchWall = now;
        p.watchRunnable = runnable;
        return spins;
    }
}
