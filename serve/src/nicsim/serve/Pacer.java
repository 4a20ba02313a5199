package nicsim.serve;

import java.time.LocalTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import nicsim.driver.World;
import nicsim.serve.Activities.Activity;

/**
 * When simulated time moves: only while every attached program waits on it. A program waits when
 * each of its threads is asleep in the kernel (in a verb left open, such as a poll that found
 * nothing; reading or polling one of its event files; or outside verbs altogether, on its peer
 * over TCP, say), as /proc shows ({@link ProcThreads}); a thread running, stopped by a debugger, or
 * asleep on a request the simulator has not answered yet holds time still. So where a program's
 * next verb lands in simulated time does not depend on how the OS scheduled it, and the same
 * programs, arguments and seed give the same simulated run.
 *
 * <p>Then the simulation runs until a program can go on: a verb left open is satisfied, an event
 * is written to one of a program's files, the adapter writes into the memory of a program
 * spinning on it (at the end of a burst of such writes: {@link #SPIN_BURST_PICOS}), or nothing is
 * left to happen. While no program waits in a verb (all asleep elsewhere), time moves at most
 * {@link #AWAY_STEP_PICOS} before the programs are looked at again.
 * A run stops after {@link #SLICE_NANOS} of wall time, or when a request or stop comes, so no
 * program's livelock keeps the simulator from the others.
 *
 * <p>Where /proc cannot show a program's system calls, a program that made no request for the
 * grace time counts as waiting; each time that lets time move is counted ({@link #graceAdvances}).
 */
final class Pacer {
    /** Simulated time a run moves by while no program waits in a verb. */
    static final long AWAY_STEP_PICOS = 1_000_000_000L;
    /** Wall time one run may take before requests are looked at again. */
    static final long SLICE_NANOS = 20_000_000;
    /**
     * Simulated time a spinner's memory must go unwritten before it is told of the writes: a DMA into its memory
     * reaches it whole rather than one PCIe write at a time (on cx-gen3x16 they come 4.6 to 17.8 ns apart), as a
     * program polling for the flag written last acts only once the burst has landed. Short enough that what follows a
     * lone write mostly stays after the spinner is told: ib_write_lat's round trip grows by about 10 ns (40 ns here
     * made it 75 ns; docs/attach.md R4).
     */
    static final long SPIN_BURST_PICOS = 20_000;

    /** NICSIM_PACE_DEBUG set: each look that moves time, and each run of more than 1 ms, go to the log. */
    static final boolean DEBUG = System.getenv("NICSIM_PACE_DEBUG") != null;
    private final World world;
    private final Activities activities;
    private final RdmaCm cm;
    long advances, graceAdvances, awayAdvances;
    /** NICSIM_PACE_DEBUG: looks that held time since it last moved, and the last program (and why) that held it. */
    private long heldLooks;
    private String heldBy;

    Pacer(World world, long graceMillis, RdmaCm cm) {
        this.world = world;
        this.cm = cm;
        this.activities = new Activities(graceMillis, cm);
    }

    /**
     * Moves simulated time if every program waits; {@code answer} hands out what the open verbs got
     * (with true: polls still empty are answered empty, the simulation having nothing left to do).
     * {@code interrupted} says a request or stop has come and the run must yield. Whether the run woke a program
     * other than by answering its request: an event written to one of its files, or a write into a spinner's memory.
     */
    boolean advance(Collection<Program> programs, boolean quiet, Consumer<Boolean> answer,
            BooleanSupplier interrupted) {
        Step step = new Step();
        step.quiet = quiet;
        if (recorder != null) recorder.stepBegins();
        try {
            look(programs, step, answer, interrupted);
        } catch (RuntimeException e) {
            step.threw = true;
            throw e;
        } finally {
            if (recorder != null) recorder.stepEnds(step);
        }
        return step.woke;
    }

    private void look(Collection<Program> programs, Step step, Consumer<Boolean> answer, BooleanSupplier interrupted) {
        answer.accept(false);
        if (programs.isEmpty()) return;
        long now = System.nanoTime();
        boolean inVerb = false;
        Map<Program, Long> spinners = new HashMap<>();
        Map<Program, Activity> seen = DEBUG ? new HashMap<>() : null;
        for (Program p : programs) {
            Activity a = activities.of(p, now);
            if (DEBUG) seen.put(p, a);
            switch (a) {
                case RUNS -> { // a program is busy: time holds
                    if (DEBUG) held(p, a);
                    return;
                }
                case IN_VERB -> inVerb = true;
                case ASLEEP -> step.away = true;
                case GRACED -> { step.graced = true; step.away = true; }
                case SPINS -> spinners.put(p, p.memoryWrites());
                case CUT -> { // every wait is answered as it stands (a poll: empty, a clock reading: now), time holding
                    if (DEBUG) held(p, a);
                    step.kind = Step.CUT;
                    cut(programs, answer);
                    return;
                }
            }
        }
        // readings first, at this moment, before anything moves: a program whose one thread reads the clock while
        // another spins waiting for it (cmtime's main thread yields until its event thread has timed an event) waits
        // too, and time must not run on under its reading
        if (clockReadings(programs)) {
            if (DEBUG) held("clock readings", "answered");
            step.kind = Step.CLOCK;
            return;
        }
        if (DEBUG) trace(programs, seen);
        step.kind = Step.RUN;
        step.until = inVerb || !spinners.isEmpty() ? Long.MAX_VALUE : world.now() + AWAY_STEP_PICOS;
        // a connection request's answer owed: time moves for the programs' verbs, but not on to the REQ's timeout
        long horizon = cm.answerHorizon(now, Activities.ANSWER_NANOS);
        if (horizon <= step.until) {
            step.until = horizon - 1;
            step.owed = true;
        }
        go(programs, step, spinners, answer, interrupted, null);
        if (DEBUG) cm.log.println("PACE " + wallClock() + " ran " + (step.to - step.from) + " ps in " + step.steps
                + " events, " + (System.nanoTime() - now) / 1000 + " us of wall time");
    }

    /**
     * Time moves (a RUN): as far as {@link #run} lets it, or, replaying, as recorded look {@code recorded} moved it
     * (null: not replaying); then the open verbs are answered.
     */
    private void go(Collection<Program> programs, Step step, Map<Program, Long> spinners, Consumer<Boolean> answer,
            BooleanSupplier interrupted, Step recorded) {
        // writes the drivers posted in shared memory land now, as their sockets' would have before time moves
        for (Program p : programs) for (PciDevice d : p.devices.values()) d.drainPosted();
        if (recorded == null ? run(programs, spinners, step, interrupted) : rerun(programs, step, recorded)) {
            advances++;
            if (step.graced) graceAdvances++;
            if (step.away) awayAdvances++;
        }
        // nothing left to do short of a REQ timeout whose answer is owed: as idle, so that open polls come back empty
        // and their threads go on to the answer (replaying, as recorded)
        if (recorded == null) step.held = step.owed && world.sim.nextEventTime() > step.until;
        answer.accept(step.quiet && (world.sim.idle() || step.held));
    }

    /**
     * One look at the programs, as serve --record keeps it and a replay does it again: time held (HELD), clock
     * readings answered (CLOCK), the simulation stepped {@code steps} events from {@code from} to {@code to} ps
     * (RUN), or every open wait answered as it stands, time held (CUT, {@link Activity#CUT}); what the look found
     * ({@code graced}, {@code away}: for the counters); whether it threw (a fault while time moved); whether it stopped
     * short of a REQ timeout whose answer a program owes ({@code owed}), with nothing left to do before it ({@code
     * held}: open polls are answered empty, as when the simulation is idle).
     *
     * <p>A RUN's end, for a replay that moves time as far without counting events (a model that coasts where
     * another steps through an edge runs the same events at other counts): why it stopped ({@code stop}) and how many
     * of the events at {@code to} it had run ({@code atTo}). WOKE: a program could go on (checked before each event),
     * so the replay runs the events at {@code to} until one can; TIME: the next event lay beyond where the look
     * could go, or none was left, so every event up to {@code to} had run; YIELD: wall time ran out, or a request
     * came, after {@code atTo} events at {@code to}; THREW: an event at {@code to} threw.
     */
    static final class Step {
        static final int HELD = 0, CLOCK = 1, RUN = 2, CUT = 3;
        static final int WOKE = 0, TIME = 1, YIELD = 2, THREW = 3;
        int kind = HELD, stop = THREW;
        boolean quiet, graced, away, threw, owed, held;
        /** Not recorded: the run wrote an event to a program's file or into a spinner's memory ({@link #advance}). */
        boolean woke;
        long until, steps, from, to, atTo;
        /**
         * Not recorded: the events a replay of this look stepped, {@code steps} again on the model it was recorded on
         * (a model that coasts where another steps through its edges takes fewer).
         */
        long replayed;

        /** What {@code stop} says, for a replay's message. */
        static String stopped(int stop) {
            return switch (stop) {
                case WOKE -> "where a program could go on";
                case TIME -> "once every event up to then had run";
                case YIELD -> "as a request came or its wall time ran out";
                case THREW -> "at a fault";
                default -> "for reason " + stop;
            };
        }
    }

    /** serve --record: told of each look at the programs (null: not recording). */
    Recorder recorder;

    /**
     * Does recorded look {@code step} again: the same answers, time moved to the same point (not by the same number
     * of events: {@link Step}), the same counters.
     */
    void replay(Step step, Collection<Program> programs, Consumer<Boolean> answer) {
        answer.accept(false);
        if (step.kind == Step.HELD) return;
        if (step.kind == Step.CLOCK) {
            clockReadings(programs);
            return;
        }
        if (step.kind == Step.CUT) {
            cut(programs, answer);
            return;
        }
        Step again = new Step();
        again.quiet = step.quiet;
        again.graced = step.graced;
        again.away = step.away;
        again.held = step.held;
        go(programs, again, Map.of(), answer, () -> false, step);
    }

    /**
     * Steps the simulation until a program can go on, {@code step.until} (simulated), or the run must yield; whether
     * it moved. Counts the steps and the time in {@code step}, and says where and why it stopped ({@link Step}).
     */
    private boolean run(Collection<Program> programs, Map<Program, Long> spinners, Step step,
            BooleanSupplier interrupted) {
        long wall0 = System.nanoTime(), cmEvents = cm.written;
        Watch watch = new Watch(programs, spinners);
        long events = watch.eventsWritten();
        step.from = world.now();
        watch.holdMemory(true);
        try {
            // an event written to a program's file (a C driver's CQ event) lets it go on at once; a write into a
            // spinner's memory, once no other follows within SPIN_BURST_PICOS
            long written = watch.spinnerWritesAtLook(), burstEnds = Long.MAX_VALUE, at = step.from;
            for (int n = 1; ; n++) {
                long w = watch.spinnerWrites();
                if (w != written) {
                    written = w;
                    burstEnds = world.now() + SPIN_BURST_PICOS;
                }
                if (wakes(watch, cmEvents, events)) {
                    step.stop = Step.WOKE;
                    break;
                }
                if (world.sim.idle() || world.sim.nextEventTime() > Math.min(step.until, burstEnds)) {
                    step.stop = Step.TIME;
                    break;
                }
                step.steps++;
                world.sim.step();
                if (world.now() != at) {
                    at = world.now();
                    step.atTo = 0;
                }
                step.atTo++;
                cm.service();
                if ((n & 1023) == 0 && (interrupted.getAsBoolean() || System.nanoTime() - wall0 > SLICE_NANOS)) {
                    step.stop = Step.YIELD;
                    break;
                }
            }
            step.woke = cm.written != cmEvents || watch.eventsWritten() != events
                    || watch.spinnerWrites() != watch.spinnerWritesAtLook();
            return step.steps > 0;
        } finally {
            step.to = world.now();
            if (DEBUG && step.to - step.from > 1_000_000_000L)
                cm.log.println("PACE ran " + step.from + " -> " + step.to + " ps in " + step.steps + " events");
            watch.holdMemory(false); // what the adapter wrote is in the programs' memory before any goes on
        }
    }

    /** Whether a program can go on: an RDMA CM event or one in its files written since the run began, or its wait. */
    private boolean wakes(Watch watch, long cmEvents, long events) {
        return cm.written != cmEvents || watch.eventsWritten() != events || watch.canGoOn();
    }

    /**
     * Replaying, moves time as recorded look {@code recorded} did: every event before its {@code to}, then those at
     * {@code to} as far as its end ({@link Step}), a program able to go on stopping it as it stopped the run; whether
     * the recorded look moved. A model that behaves otherwise stops elsewhere (short of {@code to}, a program able to
     * go on sooner or not at all): the replay leaves the recording there, saying how.
     */
    private boolean rerun(Collection<Program> programs, Step step, Step recorded) {
        long cmEvents = cm.written, to = recorded.to, atTo = 0;
        Watch watch = new Watch(programs, Map.of());
        long events = watch.eventsWritten();
        step.from = world.now();
        watch.holdMemory(true);
        String elsewhere;
        try {
            boolean woke;
            while (!(woke = wakes(watch, cmEvents, events))) {
                long next = world.sim.nextEventTime();
                if (next > to || next == to && recorded.stop == Step.YIELD && atTo == recorded.atTo) break;
                if (next == to) atTo++;
                step.steps++;
                world.sim.step(); // THREW: an event at to throws, as it did
                cm.service();
            }
            // (a yield's count of events at to is its model's: another may take more or fewer there)
            if (world.now() != to)
                elsewhere = (woke ? "a program could go on at " : "time stopped at ") + world.now() + " ps";
            else if (recorded.stop != Step.YIELD && woke != (recorded.stop == Step.WOKE))
                elsewhere = woke ? "a program could go on before every event at " + to + " ps had run"
                        : "no program could go on";
            else elsewhere = null;
        } finally {
            step.to = world.now();
            recorded.replayed = step.steps;
            watch.holdMemory(false);
        }
        if (elsewhere != null) throw new Replay.Diverged("time moved from " + recorded.from + " ps to " + to
                + " ps in the recording, stopping " + Step.stopped(recorded.stop) + "; in the replay " + elsewhere);
        return recorded.steps > 0;
    }

    /**
     * What a run watches, gathered once at its start (no request is served while it runs, so no program
     * gains or loses a context meanwhile): its checks between events then walk arrays, not maps.
     */
    private static final class Watch {
        private final Session[] sessions;
        private final PciDevice[] devices;
        private final Program[] spinners;
        private final long[] spun;

        Watch(Collection<Program> programs, Map<Program, Long> spinning) {
            List<Session> ss = new ArrayList<>();
            List<PciDevice> ds = new ArrayList<>();
            for (Program p : programs) {
                ss.addAll(p.sessions);
                ds.addAll(p.devices.values());
            }
            sessions = ss.toArray(new Session[0]);
            devices = ds.toArray(new PciDevice[0]);
            spinners = spinning.keySet().toArray(new Program[0]);
            spun = new long[spinners.length];
            for (int i = 0; i < spinners.length; i++) spun[i] = spinning.get(spinners[i]);
        }

        /**
         * Holds the programs' memory while time moves (they wait: only the adapter changes it), and the events
         * written to their files meanwhile; or settles it, then writes those events (EventFiles#hold).
         */
        void holdMemory(boolean hold) {
            for (Session s : sessions) s.holdMemory(hold);
            for (PciDevice d : devices) d.holdMemory(hold);
            for (Session s : sessions) if (hold) s.events.hold(); else s.events.release();
        }

        /** Events written to the programs' files so far. */
        long eventsWritten() {
            long n = 0;
            for (Session s : sessions) n += s.events.written();
            return n;
        }

        /** Whether a program can go on: a verb it left open is satisfied, or an event waits for one of its files. */
        boolean canGoOn() {
            for (Session s : sessions) {
                if (s.waits.satisfied() || s.events.pending()) return true;
                if (s.anyMemoryGone()) return true; // the run stops: the process exits, let go at the look
            }
            for (PciDevice d : devices) if (d.waitSatisfied()) return true;
            return false;
        }

        /** Writes into the spinners' memory so far ({@link #run} tells them once a burst of them ends). */
        long spinnerWrites() {
            long n = 0;
            for (Program p : spinners) n += p.memoryWrites();
            return n;
        }

        /** Writes into the spinners' memory when they were found spinning. */
        long spinnerWritesAtLook() {
            long n = 0;
            for (long w : spun) n += w;
            return n;
        }
    }

    /** NICSIM_PACE_DEBUG: what each program was found doing before time moves, and its threads as /proc shows them. */
    private void trace(Collection<Program> programs, Map<Program, Activity> seen) {
        StringBuilder b = new StringBuilder("PACE " + wallClock() + " at " + world.now() + " ps, after "
                + heldLooks + " looks held (last by " + heldBy + "):");
        heldLooks = 0;
        heldBy = null;
        for (Program p : programs) {
            b.append(' ').append(p).append('=').append(seen.get(p)).append(" open=").append(p.openWaits())
                    .append(" cm=").append(p.cmEventPending()).append(" threads(tid:state/fd)=");
            var th = ProcThreads.of(p.pid);
            if (th != null) for (var t : th) b.append(t.tid()).append(':').append(t.state()).append('/')
                    .append(t.readingFd()).append(',');
        }
        cm.log.println(b);
    }

    /**
     * A CUT: every open wait is answered as it stands, time holding. A clock reading too: a program whose thread reads
     * the clock while another of its threads has an RDMA CM event to read (cmtime's event thread times each event it
     * takes) would otherwise hold time for ever, the reading waiting for time to move, time for the event to be read.
     */
    private static void cut(Collection<Program> programs, Consumer<Boolean> answer) {
        clockReadings(programs);
        answer.accept(true);
    }

    /** NICSIM_PACE_DEBUG: a look held time, {@code p} (or null: all) doing {@code a}. */
    private void held(Object p, Object a) {
        heldLooks++;
        heldBy = p + " " + a;
    }

    /** The wall clock's time of day to the microsecond, as strace -tt prints it, to line serve's log up with it. */
    private static String wallClock() {
        return LocalTime.now(ZoneOffset.UTC).format(DateTimeFormatter.ofPattern("HH:mm:ss.SSSSSS"));
    }

    /** Answers every reading of the simulated clock at this moment; whether there was one. */
    private static boolean clockReadings(Collection<Program> programs) {
        boolean any = false;
        for (Program p : programs)
            for (Session s : p.sessions)
                if (s.waits.readingClock()) {
                    s.waits.answerClock();
                    any = true;
                }
        return any;
    }


}
