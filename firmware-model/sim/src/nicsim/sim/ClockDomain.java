package nicsim.sim;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The blocks on a {@link Clock} and its edges. On each edge every block in the domain drives, every
 * stream checks its handshake contract, then every block updates. The clock runs only while some
 * block is {@link Clocked#active()}; a block that gets work from outside (an MMIO write, a DMA
 * completion) calls {@link #wake()}. Stopping an idle clock changes no result: an inactive block
 * does nothing on an edge.
 *
 * <p>A domain can also coast: when its blocks can tell that their coming edges change nothing
 * outside them ({@link Coaster}), those edges are not run one by one; the domain schedules the
 * first edge that matters and has the blocks catch up in one step when it comes, or sooner if
 * something from outside wakes the domain first. The result is the same as running every edge.
 *
 * <p>While the clock runs for some blocks, a block that may rest ({@link Clocked#mayRest()}) and is
 * inactive is left out of the edges: its wires hold what it last drove, and it runs again on the
 * edge an input of its turns valid.
 */
public final class ClockDomain extends Clock {
    /** The phase the domain is in, so streams can refuse writes at the wrong time. */
    public enum Phase { IDLE, DRIVE, UPDATE }

    // the blocks, in the order added, and per block: whether it may rest (Clocked#mayRest); whether it
    // is resting (inactive after the last edge); whether its update ran on the last edge (so its drive
    // must run on the next, its state may have changed)
    private Clocked[] blocks = new Clocked[8];
    private int blockCount;
    private boolean[] mayRest = new boolean[8], resting = new boolean[8], updated = new boolean[8];
    private final LiveSet streams = new LiveSet(), flows = new LiveSet();
    private final List<Signal> tracedSignals = new ArrayList<>(); // an untraced signal has nothing to do on an edge
    private int tracedPorts;
    private Simulator.Event nextEdge;
    private long lastEdgeCycle = -1;
    private long edges, coasted;
    private Phase current = Phase.IDLE;
    private Coaster coaster;
    private int coasterBlocks;
    private long coastTo = -1; // while coasting: the last edge the coaster will run in one step
    // while coasting: the gaps its cycles hold (Coaster#gaps), each the edge after which the clock stops and the one
    // it wakes at, in order; gapAt: the first not yet behind the time
    private long[] gapStop = new long[4], gapWake = new long[4];
    private int gaps, gapAt;

    ClockDomain(Simulator sim, String name, long periodPicos, long phasePicos, int rank) {
        super(sim, name, periodPicos, phasePicos, rank);
    }

    public Phase phase() { return current; }

    /**
     * Whether the domain is coasting: edges are behind the run that its blocks will catch up in one step (see {@link
     * Coaster}). Not in a gap of the coast: the clock is stopped then, as it would be without the coast.
     */
    public boolean coasting() { return coastTo >= 0 && !ahead() && !inGap(); }

    /**
     * Whether the clock runs: an edge of it is to come (through the wires, or closing a coast), not one it sleeps till
     * ({@link #wakeAt}), and it is not in a gap of a coast.
     */
    public boolean running() { return nextEdge != null && !nextEdge.cancelled() && !sleeping && !inGap(); }

    /** The last edge at or before now that has passed (-1 before the first). */
    private long behindNow() {
        long behind = cycleAt(sim.now());
        if (behind >= 0 && picosOfCycle(behind) == sim.now() && !sim.edgePassed(rank)) behind--;
        return behind;
    }

    /** Whether the domain coasts and the time is in one of the coast's gaps: the clock is stopped now. */
    private boolean inGap() {
        if (coastTo < 0 || gapAt == gaps) return false;
        long behind = behindNow();
        while (gapAt < gaps && gapWake[gapAt] <= behind) gapAt++;
        return gapAt < gaps && gapStop[gapAt] <= behind;
    }

    /**
     * The coast is in a gap: it ends at the gap's stop edge, and the clock sleeps till the gap's wake edge, as it
     * would have since it stopped there.
     */
    private void sleepInGap() {
        long wakeEdge = gapWake[gapAt];
        coastUpTo(gapStop[gapAt]);
        nextEdge.cancel();
        sleeping = true;
        nextEdge = scheduleEdge(wakeEdge, runScheduled);
    }

    /**
     * The current cycle: the last edge that has run (-1 before any); while the domain coasts, the last before the
     * coast.
     */
    public long cycle() { return ahead() ? foundFrom : lastEdgeCycle; }

    /** How many edges have run, coasted ones included: idle stretches with the clock stopped are not counted. */
    public long edgesRun() { return edges; }

    /** How many of {@link #edgesRun()} coasted: the blocks ran them in one step, not through the wires. */
    public long edgesCoasted() { return coasted; }

    /**
     * Blocks whose coming edges can run in one step, later: a look-ahead that changes nothing, and
     * the step. Both see the blocks' registered state and their inputs as they were after the edge
     * just run; whatever changes an input from outside the domain must call {@link #wake()} first.
     */
    public interface Coaster {
        /**
         * How many of the coming edges can coast: each changes nothing outside the domain's blocks,
         * and leaves the domain active. 0 when the next edge must run through the wires.
         */
        long coastable();

        /**
         * After {@link #coastable} returned n: whether the edge after those n needs no wires either,
         * though it has effects outside the domain (a PCI write, a packet's first beat). Then it runs
         * as the last edge of the coast, {@code coast(first, n + 1)}, at its own time.
         */
        default boolean coastsEdgeAfter() { return false; }

        /**
         * Runs the edges of cycles {@code first} to {@code first + n - 1} as the blocks would, at their times: the
         * cycles inside the {@link #gaps} of the look-ahead that made the coast are idle (the last is never one).
         */
        void coast(long first, long n);

        /**
         * After {@link #coastable}: how many gaps its cycles hold, in which the clock would stop (no block active)
         * and sleep till a time it knows of ({@link #wakeAt}, or one a block would ask for as the clock stops): the
         * cycles between the edge it stops after and the one it wakes at are idle, not edges. The coast runs over
         * them as the clock would, without stopping.
         */
        default int gaps() { return 0; }

        /** The edge after which the clock stops in the {@code i}-th gap. */
        default long gapStop(int i) { throw new IndexOutOfBoundsException(i); }

        /** The edge the clock wakes at in the {@code i}-th gap. */
        default long gapWake(int i) { throw new IndexOutOfBoundsException(i); }

        /**
         * Whether the edge a stopped clock is woken for ({@link #wake()}) may start a coast too: the look-ahead then
         * accounts for what the wake's caller gave the blocks, and the coast marks each resting block it changes
         * ({@link #stirred}); the others rest on. Off, that edge runs through the wires.
         */
        default boolean coastsFromStop() { return false; }

        /**
         * Whether the coast from a stop ({@link #coastsFromStop}) may be found at the {@link #wake()} call itself, not
         * on the edge the clock wakes for: the blocks take every input from outside before the wake that tells of it,
         * and nothing the look-ahead reads changes but through a wake. The edge that only found the coast then does
         * not run: an event fewer each wake. Another wake before the coast's first edge gives that edge back.
         */
        default boolean coastsAtWake() { return false; }
    }

    /**
     * The earliest time the clock is to wake at ({@link #wakeAt}) after {@code picos} (Long.MAX_VALUE: none): a
     * coaster looking ahead over a stop of the clock finds the edge it would wake at.
     */
    public long wakeTimeAfter(long picos) {
        // the times passed go, as the clock stopping would drop them: a clock that coasts over its stops seldom does
        while (!wakeTimes.isEmpty() && wakeTimes.first() <= sim.now()) wakeTimes.takeFirst();
        return wakeTimes.firstAfter(picos);
    }

    /** The coaster's gaps over the coast just found. */
    private void takeGaps() {
        int g = coaster.gaps();
        if (g > gapStop.length) {
            gapStop = new long[Math.max(g, 2 * gapStop.length)];
            gapWake = new long[gapStop.length];
        }
        for (int i = 0; i < g; i++) { gapStop[i] = coaster.gapStop(i); gapWake[i] = coaster.gapWake(i); }
        gaps = g;
        gapAt = 0;
    }

    /**
     * Lets {@code c} coast this domain while its blocks are the {@code blocks} it accounts for (a
     * block added beside them, such as an RTL twin in lockstep, must see every edge) and none of its
     * wires is traced.
     */
    public void coastWith(Coaster c, int blocks) {
        coaster = c;
        coasterBlocks = blocks;
    }

    /**
     * Whether anything beside the coaster's blocks sees this domain's edges: a block added beside them (an RTL
     * twin in lockstep) or a traced wire. Then what its wires carry must be what the blocks would carry.
     */
    public boolean watched() { return blockCount != coasterBlocks || tracedPorts != 0; }

    /** How many blocks it clocks: a coaster accounts for those there when it is set ({@link #coastWith}). */
    public int blocks() { return blockCount; }

    private boolean mayCoast() {
        return coaster != null && sim.coasting() && blockCount == coasterBlocks && tracedPorts == 0;
    }

    public void add(Clocked block) {
        int i = blockCount++;
        if (i == blocks.length) {
            blocks = Arrays.copyOf(blocks, 2 * i);
            mayRest = Arrays.copyOf(mayRest, 2 * i);
            resting = Arrays.copyOf(resting, 2 * i);
            updated = Arrays.copyOf(updated, 2 * i);
        }
        blocks[i] = block;
        mayRest[i] = block.mayRest();
        wake();
    }

    /**
     * Block {@code block}, resting, took an input in a coast (its coaster ran the edge on which the input came in): it
     * runs on the next edge through the wires, as it would have since that input turned valid.
     */
    public void stirred(Clocked block) {
        for (int i = 0; i < blockCount; i++)
            if (blocks[i] == block) {
                resting[i] = false;
                updated[i] = true;
                return;
            }
        throw new IllegalArgumentException("clock '" + name + "': " + block + " is not one of its blocks");
    }

    /**
     * What a domain's edge asks of a stream or flow: check and count the edge; whether the next one has anything to do.
     */
    abstract static class Sampled {
        abstract boolean edge(long cycle);

        /** Edges ran without the wires (the domain coasted). */
        void coasted() {}
    }

    /** A new stream's slot. */
    int register(Stream<?> s) { return streams.add(s); }

    /** A new flow's slot. */
    int registerFlow(Flow<?> f) { return flows.add(f); }

    /** The stream in {@code slot} has something to do on the coming edges: until its {@code edge} says it has not. */
    void streamLive(int slot) { streams.live(slot); }

    /** As {@link #streamLive} for a flow. */
    void flowLive(int slot) { flows.live(slot); }

    /**
     * A port of this domain is traced from now on (its domain no longer coasts); a traced signal is sampled on each
     * edge.
     */
    void traced(Object port) {
        tracedPorts++;
        if (!(port instanceof Signal s)) return;
        // sampled in the order the signals were made, as a waveform has always listed them
        int at = 0;
        while (at < tracedSignals.size() && tracedSignals.get(at).index() < s.index()) at++;
        tracedSignals.add(at, s);
    }

    private int signalsMade;

    /** The next signal's place among this domain's signals, in the order they are made. */
    int signalIndex() { return signalsMade++; }

    /**
     * Starts the clock at the next edge not yet run, if it is stopped. If it is coasting, the blocks
     * first catch up with the edges already behind the run, and the next edge runs through the wires:
     * call this before changing a block's inputs from outside the domain.
     */
    public void wake() {
        if (sleeping) { // the edge it sleeps till, or a sooner one: the one a stopped clock would take now
            sleeping = false;
            stopWake = !inEdge;
            if (scheduledCycle == wakeCycle()) return;
            nextEdge.cancel();
            nextEdge = null;
        }
        if (coastTo >= 0 && ahead()) { // a coast found at a wake, not begun: its first edge runs as it would have
            giveBack();
            return;
        }
        boolean coasting = coastTo >= 0;
        if (coasting) { // up to the edge behind now (in a gap: the one the clock stopped after)
            coastUpTo(Math.min(behindNow(), coastTo));
            nextEdge.cancel();
            nextEdge = null;
        }
        if (nextEdge != null && !nextEdge.cancelled()) {
            lookedAtWake = false; // the edge woken for looks ahead afresh
            return;
        }
        long c = wakeCycle();
        stopWake = !coasting && !inEdge;
        if (stopWake && mayCoast() && coaster.coastsFromStop() && coaster.coastsAtWake() && coastAtWake(c)) return;
        nextEdge = scheduleEdge(c, runScheduled);
    }

    // a coast found at a wake (Coaster#coastsAtWake) whose first edge is still ahead: the last edge run before it
    // (what cycle() shows till then, -1 if none); NOT_FOUND: no such coast
    private long foundFrom = NOT_FOUND;
    private static final long NOT_FOUND = -2;
    // the look-ahead at the wake found no coast: the edge woken for needs not look again (nothing came in since)
    private boolean lookedAtWake;

    /** Whether a coast found at a wake has yet to reach its first edge. */
    private boolean ahead() {
        if (foundFrom == NOT_FOUND) return false;
        if (behindNow() <= lastEdgeCycle) return true;
        foundFrom = NOT_FOUND;
        return false;
    }

    /**
     * The clock is woken from a stop for edge {@code cycle}: the coaster looks ahead now, as it would on that edge
     * (nothing changes before it but through another wake). A coast found starts there, and no event runs the edge
     * only to find it. Whether one was.
     */
    private boolean coastAtWake(long cycle) {
        long last = lastEdgeCycle;
        lastEdgeCycle = cycle - 1;
        long n = coaster.coastable();
        boolean after = coaster.coastsEdgeAfter();
        if (n == 0) { // none, or the woken edge alone at its own time: the edge runs (and looks again only for that)
            lastEdgeCycle = last;
            lookedAtWake = !after;
            return false;
        }
        foundFrom = last;
        stopWake = false;
        startCoast(cycle - 1 + n, after);
        return true;
    }

    /**
     * Another wake came before the first edge of the coast found at a wake: that edge runs as the one woken for, and
     * looks ahead with what has come in since.
     */
    private void giveBack() {
        long cycle = lastEdgeCycle + 1;
        lastEdgeCycle = foundFrom;
        foundFrom = NOT_FOUND;
        coastTo = -1;
        gaps = gapAt = 0;
        nextEdge.cancel();
        nextEdge = scheduleEdge(cycle, runScheduled);
        stopWake = true;
    }

    private boolean stopWake; // the next edge is the one wake() started a stopped clock for (not within an edge)

    /** The edge a stopped clock woken now runs next. */
    private long wakeCycle() {
        // the edge after the last one run, or the first at or after now if that is later (only then is a division
        // needed)
        long c = lastEdgeCycle + 1;
        if (picosOfCycle(c) < sim.now()) c = nextEdgeCycleAtOrAfter(sim.now());
        // this instant's edge is behind the run (it ran, or the clock was stopped when it came): the next one
        return picosOfCycle(c) == sim.now() && sim.edgePassed(rank) ? c + 1 : c;
    }

    private final TimeQueue wakeTimes = new TimeQueue(); // times to come that start the clock if stopped then
    private boolean sleeping; // the clock stopped, and nextEdge is the one the earliest of those times starts
    private boolean inEdge; // an edge is running (or closing a coast): whether the clock stops is known at its end

    /**
     * Starts the clock at {@code picos}, later than now, if it is stopped then: its next edge is the first at or after
     * that time (or the one after the last run, if later), as {@link #wake()} called then would make it. A stopped
     * clock sleeps till that edge, scheduled as it stops, rather than waking at the time to schedule it: one event
     * where a wake-up call would take two. While the clock runs, the time only waits (if the clock stops before it).
     */
    public void wakeAt(long picos) {
        if (picos <= sim.now())
            throw new IllegalArgumentException(
                    "clock '" + name + "': wake at " + picos + " ps, not after now (" + sim.now() + " ps)");
        if (inGap()) sleepInGap(); // stopped now: as it would be, sleeping till the gap's wake edge
        wakeTimes.add(picos);
        if (running() || coastTo >= 0 || inEdge) return; // the end of an edge sees to it, if the clock stops there
        long c = cycleWokenAt(picos);
        if (sleeping) {
            if (c >= scheduledCycle) return;
            nextEdge.cancel();
        }
        sleeping = true;
        nextEdge = scheduleEdge(c, runScheduled);
    }

    /** The edge a stopped clock woken at {@code picos}, later than now, runs next (its edge then has not passed). */
    private long cycleWokenAt(long picos) { return Math.max(lastEdgeCycle + 1, nextEdgeCycleAtOrAfter(picos)); }

    /** The clock stops: it sleeps till the edge the earliest time to come of {@link #wakeAt} starts, if any. */
    private void sleep() {
        long now = sim.now();
        while (!wakeTimes.isEmpty() && wakeTimes.first() <= now) wakeTimes.takeFirst(); // passed while it ran
        if (wakeTimes.isEmpty()) return;
        sleeping = true;
        nextEdge = scheduleEdge(cycleWokenAt(wakeTimes.first()), runScheduled);
    }

    private long scheduledCycle; // the edge the live edge event runs (there is at most one; a cancelled one never runs)
    private final Runnable runScheduled = () -> edge(scheduledCycle);
    private final Runnable runCoasted = () -> coastedEdge(scheduledCycle);

    /** Edge {@code cycle}, run by {@code action} (through the wires, or closing a coast) when it comes. */
    private Simulator.Event scheduleEdge(long cycle, Runnable action) {
        scheduledCycle = cycle;
        Simulator.Event e = sim.scheduleEdge(ranEdge, picosOfCycle(cycle), rank, scope, action);
        ranEdge = null;
        return e;
    }

    private Simulator.Event ranEdge; // the edge event that ran last, queued again for the next (if it ran)

    /**
     * The coaster runs the edges after the last one run up to {@code cycle} (in a gap: up to the edge the clock
     * stopped after); the coast ends.
     */
    private void coastUpTo(long cycle) {
        long idle = 0;
        for (int i = 0; i < gaps && gapStop[i] < cycle; i++) {
            if (cycle < gapWake[i]) { cycle = gapStop[i]; break; }
            idle += gapWake[i] - gapStop[i] - 1;
        }
        gaps = gapAt = 0;
        foundFrom = NOT_FOUND;
        long n = cycle - lastEdgeCycle;
        coastTo = -1;
        if (n <= 0) return;
        coaster.coast(lastEdgeCycle + 1, n);
        lastEdgeCycle = cycle;
        edges += n - idle;
        coasted += n - idle;
        streams.coasted();
    }

    private void edge(long cycle) {
        inEdge = true;
        try {
            runEdge(cycle);
        } finally {
            inEdge = false;
        }
    }

    private void runEdge(long cycle) {
        ranEdge = nextEdge;
        nextEdge = null;
        boolean woke = sleeping, fromStop = stopWake && !lookedAtWake;
        sleeping = false;
        stopWake = false;
        lookedAtWake = false;
        if (coastTo >= 0) coastUpTo(cycle - 1);
        if (woke && mayCoast() && coastFromWake(cycle, true)) return;
        if (fromStop && mayCoast() && coaster.coastsFromStop() && coastFromWake(cycle, false)) return;
        lastEdgeCycle = cycle;
        edges++;
        int n = blockCount;
        current = Phase.DRIVE;
        // a resting block drives what it drove after its last update: again only if that update was on the last edge
        for (int i = 0; i < n; i++) if (!resting[i] || updated[i]) blocks[i].drive();
        current = Phase.IDLE;
        streams.edge(cycle);
        flows.edge(cycle);
        for (int i = 0; i < tracedSignals.size(); i++) tracedSignals.get(i).edge(cycle); // no iterator an edge
        current = Phase.UPDATE;
        for (int i = 0; i < n; i++) {
            // a resting block an input has made active takes it; one still inactive would change nothing
            if (updated[i] = !resting[i] || blocks[i].active()) blocks[i].update();
        }
        current = Phase.IDLE;
        next(cycle);
    }

    /**
     * The clock stopped and woke at edge {@code cycle}: the coaster runs it and the edges after it in one step,
     * if it can (the idle edges between are not run). Whether it does. {@code unrest}: every block runs on the
     * edge after the coast (else only those not resting, and those the coast {@link #stirred}).
     */
    private boolean coastFromWake(long cycle, boolean unrest) {
        long last = lastEdgeCycle;
        lastEdgeCycle = cycle - 1;
        long n = coaster.coastable();
        boolean after = coaster.coastsEdgeAfter();
        if (n == 0 && !after) {
            lastEdgeCycle = last;
            return false;
        }
        if (unrest) for (int i = 0; i < blockCount; i++) { resting[i] = false; updated[i] = true; }
        if (n == 0) { // the wake edge alone, at its own time: now
            coastUpTo(cycle);
            next(cycle);
            return true;
        }
        startCoast(cycle - 1 + n, after);
        return true;
    }

    /**
     * Edge {@code cycle} closes a coast and is run by the coaster with it, at its own time (see {@link
     * Coaster#coastsEdgeAfter}).
     */
    private void coastedEdge(long cycle) {
        inEdge = true;
        try {
            ranEdge = nextEdge;
            nextEdge = null;
            coastUpTo(cycle);
            next(cycle);
        } finally {
            inEdge = false;
        }
    }

    /** After edge {@code cycle}: the clock stops, runs the next edge, or coasts. */
    private void next(long cycle) {
        boolean any = false;
        for (int i = 0; i < blockCount; i++) {
            if (!mayRest[i]) {
                if (!any && blocks[i].active()) any = true;
            } else if (!resting[i] || updated[i]) { // a resting block left out of this edge is still inactive
                resting[i] = !blocks[i].active();
                any |= !resting[i];
            }
        }
        if (!any) { // stopped (unless woken during the edge)
            if (nextEdge == null) sleep();
            return;
        }
        if (nextEdge != null) return; // woken during the edge: its next edge runs through the wires
        boolean may = mayCoast();
        long n = may ? coaster.coastable() : 0;
        boolean after = may && coaster.coastsEdgeAfter();
        if (n == 0 && !after) { // the next edge runs through the wires (what wake() would schedule, without its search)
            nextEdge = scheduleEdge(cycle + 1, runScheduled);
            return;
        }
        startCoast(cycle + n, after);
    }

    /**
     * A coast starts after the last edge run: the coaster runs the edges up to {@code last} in one step (none if it is
     * that edge), and the edge after them runs through the wires, or as the coast's last edge if {@code after} (see
     * {@link Coaster#coastsEdgeAfter}).
     */
    private void startCoast(long last, boolean after) {
        if (last > lastEdgeCycle) takeGaps(); // the look-ahead just made found gaps only over the edges it coasts
        coastTo = last;
        nextEdge = scheduleEdge(last + 1, after ? runCoasted : runScheduled);
    }

    /**
     * An event that runs {@code action} at edge {@code cycle}'s instant and place among that instant's events (this
     * domain's rank), as the edge would run then, in {@code spent} if it has run: a coaster hands on an effect of an
     * edge inside its coast (a PCI write it issues) at the edge's own time, without ending the coast there.
     */
    public Simulator.Event atEdge(Simulator.Event spent, long cycle, Runnable action) {
        return sim.scheduleEdge(spent, picosOfCycle(cycle), rank, scope, action);
    }
}
