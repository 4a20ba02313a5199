package nicsim.sim;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.BooleanSupplier;

/**
 * The discrete-event kernel. Time is a {@code long} count of picoseconds. Events run in the order
 * (time, priority, insertion sequence): two events at the same time and priority run in the order
 * they were scheduled, so identical runs give identical results, whatever the host machine.
 *
 * <p>Not thread-safe: one simulation runs on one thread.
 */
public final class Simulator {
    /** Event priorities at one instant: lower runs first. */
    public static final class Priority {
        private Priority() {}
        /** Deliveries that arrive at an instant (DMA completions, MMIO arrivals) run before clocks sample. */
        public static final int DELIVERY = 10;
        /** Clock edges: every block in a domain drives, then updates. */
        public static final int CLOCK_EDGE = 50;
        public static final int DEFAULT = 100;
        /** Observers that must see the settled state of an instant. */
        public static final int OBSERVE = 1000;
    }

    /**
     * Whose events these are: one node's adapter and host, say. An event belongs to the scope current
     * when it was scheduled (a clock edge to its domain's, a lane's event to its lane's), so a fault
     * thrown by an event is charged to its scope ({@link #takeFault}), and once a scope is
     * {@link #retire retired} none of its events runs again: a reset adapter's stale events touch nothing.
     */
    public static final class Scope {
        private final String name;
        private boolean retired;

        public Scope(String name) { this.name = name; }
        public String name() { return name; }
        public boolean retired() { return retired; }
        @Override public String toString() { return name; }
    }

    /** An exception an event threw: the scope it belonged to (null: no one's), when, and the exception. */
    public record Fault(Scope scope, long time, RuntimeException cause) {}

    /** A scheduled action; {@link #cancel()} keeps it from running. */
    public static final class Event {
        /** Ties and priorities fit the packed order: a tie below 2^52, a priority below 2^11. */
        static final int TIE_BITS = 52;
        // set when the event is queued; an event that has run may be queued again (see Simulator#reuse)
        long time;
        // the priority, then the tie (which orders events of one time and priority: the insertion sequence, or a
        // clock domain's rank), packed into one key: (priority << TIE_BITS) | tie; kept packed only, so that an
        // event is small (with many nodes each node's events are cold at every window)
        long order;
        Runnable action;
        Lane owner; // the lane it came through, if any
        Event laneNext; // the lane's event after this one, while both wait in the lane
        Scope scope; // whose it is (null: no one's, never retired)
        boolean cancelled;
        boolean ran; // out of the queue for good: it has run, or was dropped unrun (cancelled, or its scope retired)
        boolean pooled; // posted: no one holds it, so once run it goes back to the kernel's spare events

        Event(long time, int priority, long tie, Runnable action) { set(time, priority, tie, action); }

        private Event set(long time, int priority, long tie, Runnable action) {
            if (priority < 0 || priority >= 1 << (63 - TIE_BITS))
                throw new IllegalArgumentException(
                        "event priority " + priority + " must be 0 to " + ((1 << (63 - TIE_BITS)) - 1));
            if (tie < 0 || tie >= 1L << TIE_BITS)
                throw new IllegalStateException("event tie " + tie + " outside the packed order");
            this.time = time; this.action = action;
            this.order = (long) priority << TIE_BITS | tie;
            return this;
        }
        public long time() { return time; }
        int priority() { return (int) (order >>> TIE_BITS); }
        long tie() { return order & (1L << TIE_BITS) - 1; }
        public void cancel() { cancelled = true; }
        public boolean cancelled() { return cancelled; }
    }

    private final EventHeap queue = new EventHeap();
    private final List<ClockDomain> domains = new ArrayList<>();
    private final List<Lane> lanes = new ArrayList<>();
    private final Counters counters;
    private final Trace trace = new Trace(this);
    private final List<StreamContractViolation> violations = new ArrayList<>();
    private boolean throwOnViolation = true;
    private boolean coasting = true;
    private long now;
    // where the run stands within the instant {@code now}: the order key of the event running or last run
    private long atOrder = Long.MIN_VALUE; // packed as Event#order: before every event's, or after (MAX_VALUE)
    private long seq;
    private long executed;
    private Event following; // an event posted for this instant: taken before the queue while it sorts first
    private boolean tookNext; // the event taken is that step
    private long ranNext; // of the events executed, those posted for their instant run from the slot
    private int ranks; // clock domains made so far: each one's place among the edges of one instant
    private Scope scope; // whose code runs now: what an event scheduled now belongs to
    // exceptions events threw, oldest first, till taken: more than one when a wait went on past other scopes' faults
    private final ArrayDeque<Fault> faults = new ArrayDeque<>();
    // events that were posted and have run, for the next post: a TLP or a delivery then allocates none
    private final ArrayDeque<Event> spare = new ArrayDeque<>();
    private static final int MAX_SPARE = 4096;

    /** A simulator with counters of its own. */
    public Simulator() { this(new Counters()); }

    /**
     * A simulator counting in {@code counters}, which simulators of other partitions may share: each
     * counts under its own scopes (its node's), read together at the top.
     */
    public Simulator(Counters counters) { this.counters = counters; }

    public long now() { return now; }
    public Counters counters() { return counters; }
    public Trace trace() { return trace; }
    /** How many events have run: a measure of simulation work, for benchmarks. */
    public long eventsExecuted() { return executed; }

    /** Of {@link #eventsExecuted}, those posted for their own instant that ran from the slot beside the queue. */
    public long stepsRunNext() { return ranNext; }
    public int pendingEvents() {
        int n = (int) Arrays.stream(queue.toArray()).filter(e -> !gone(e) && e.owner == null).count();
        if (following != null && !gone(following)) n++;
        for (Lane l : lanes)
            for (Event e = l.head; e != null; e = e.laneNext) if (!gone(e)) n++;
        return n;
    }

    /** Whether {@code e} will never run: cancelled, or its scope retired. */
    private static boolean gone(Event e) { return e.cancelled || e.scope != null && e.scope.retired; }

    /** Whose code runs now (null: no one's). */
    public Scope scope() { return scope; }

    /**
     * Makes {@code s} the current scope (what is scheduled from here on is its) and returns the one it
     * replaces, to be given back to {@link #leave}: a host being built, or a program's request to a node.
     */
    public Scope enter(Scope s) {
        Scope before = scope;
        scope = s;
        return before;
    }

    public void leave(Scope before) { scope = before; }

    /**
     * Retires {@code s}: none of its events runs from now on, and its clock domains are gone (their
     * names free for the ones of whatever replaces it).
     */
    public void retire(Scope s) {
        s.retired = true;
        domains.removeIf(d -> d.scope() == s);
        lanes.removeIf(l -> l.scope == s);
    }

    /**
     * The oldest exception an event threw and no one has taken yet, with whose event it was and when; null if
     * none. Take until null: a {@link #runUntil(BooleanSupplier, long, Scope) scoped wait} may leave several.
     */
    public Fault takeFault() { return faults.pollFirst(); }

    /**
     * What to do when a handshake contract is broken: throw at once (the default, so a test fails
     * at the cycle of the bug) or record and carry on (to collect every violation of a run).
     */
    public void throwOnContractViolation(boolean t) { throwOnViolation = t; }

    /**
     * Whether clock domains may coast (see {@link ClockDomain.Coaster}): on by default. Off, every
     * edge runs one by one through the blocks' wires; the simulated result is the same either way.
     */
    public void coasting(boolean on) { coasting = on; }

    public boolean coasting() { return coasting; }

    public List<StreamContractViolation> contractViolations() { return List.copyOf(violations); }

    void reportViolation(StreamContractViolation v) {
        violations.add(v);
        counters.counter("kernel.contract_violations").inc();
        if (throwOnViolation) throw v;
    }

    /**
     * A source of events that come in the order they run, such as the TLPs of one link direction
     * arriving one after another. Only the lane's first event waits in the kernel's queue; the
     * rest wait in the lane, so a thousand TLPs in flight cost the queue one entry. Each event
     * keeps its place in the global order: a lane changes the kernel's cost, never the run.
     * The waiting events are chained through themselves (head to tail), so moving the lane on
     * reads the event just taken and no container: with many nodes, each node's lanes are cold.
     */
    public final class Lane {
        private Event head, tail; // the waiting events, head first (head in the kernel's queue); null: none
        private long lastTime = Long.MIN_VALUE;
        private int lastPriority = Integer.MIN_VALUE;
        private final Scope scope = Simulator.this.scope; // its events are its maker's

        /** Schedules like {@link Simulator#schedule(long, int, Runnable)}. */
        public Event schedule(long atPicos, int priority, Runnable action) {
            if (atPicos < lastTime || atPicos == lastTime && priority < lastPriority)
                return scheduleFor(scope, atPicos, priority, action); // out of the lane's order: queued on its own
            if (atPicos < now)
                throw new IllegalArgumentException("cannot schedule at " + atPicos + " ps: now is " + now + " ps");
            lastTime = atPicos;
            lastPriority = priority;
            Event e = new Event(atPicos, priority, seq++, action);
            e.owner = this;
            e.scope = scope;
            append(e);
            return e;
        }

        /**
         * As {@link #schedule}, for a caller that keeps no handle on the event (it can never be
         * cancelled): once run, the event is used again for a later post. Same order, same run.
         */
        public void post(long atPicos, int priority, Runnable action) {
            if (atPicos < lastTime || atPicos == lastTime && priority < lastPriority) { // out of the lane's order
                Scope before = enter(scope);
                try {
                    Simulator.this.post(atPicos, priority, action);
                } finally {
                    leave(before);
                }
                return;
            }
            if (atPicos < now)
                throw new IllegalArgumentException("cannot schedule at " + atPicos + " ps: now is " + now + " ps");
            lastTime = atPicos;
            lastPriority = priority;
            Event e = spareEvent(atPicos, priority, action);
            e.owner = this;
            e.scope = scope;
            append(e);
        }

        private void append(Event e) {
            if (head == null) {
                head = tail = e;
                queue.add(e);
            } else {
                tail.laneNext = e;
                tail = e;
            }
        }

        /** The lane's head left the queue: the next one takes its place there. */
        private void advance() {
            Event next = head.laneNext;
            head.laneNext = null;
            head = next;
            if (next != null) queue.add(next);
            else tail = null;
        }
    }

    public Lane lane() {
        Lane l = new Lane();
        lanes.add(l);
        return l;
    }

    public Event schedule(long atPicos, int priority, Runnable action) {
        return schedule(null, atPicos, priority, action);
    }

    /** As {@link #schedule(long, int, Runnable)}, as an event of scope {@code s} (null: no one's, as the fabric's). */
    public Event scheduleFor(Scope s, long atPicos, int priority, Runnable action) {
        Scope before = enter(s);
        try {
            return schedule(null, atPicos, priority, action);
        } finally {
            leave(before);
        }
    }

    /**
     * As {@link #schedule(long, int, Runnable)}, for a caller that keeps no handle on the event (it
     * can never be cancelled): once run, the event is used again for a later post, so a source of
     * many short-lived events (TLPs, deliveries) allocates none. The order and the run are the same.
     *
     * <p>An event posted for this very instant (a DMA job's completion, a CPU release, a packet's "in SRAM") most
     * often runs next: it waits in a slot of its own beside the queue, not in it, and the next {@link #step()} (or
     * run) takes it from there if it still sorts before every queued event (by time, priority and tie, as the queue
     * orders them); else it joins the queue in its place. Its tie is taken now, as for any post. So it runs exactly
     * where it would from the queue: after the whole posting event, in a step of its own (a program's wait looks
     * between the two), its own posts taking the ties they would. One waits in the slot at a time; the next posted
     * for this instant meanwhile goes to the queue. The only difference is the work: no heap insert and removal (an
     * event all the same in {@link #eventsExecuted}; {@link #stepsRunNext} counts those taken from the slot).
     */
    public void post(long atPicos, int priority, Runnable action) {
        if (atPicos < now)
            throw new IllegalArgumentException("cannot schedule at " + atPicos + " ps: now is " + now + " ps");
        Event e = spareEvent(atPicos, priority, action);
        e.scope = scope;
        if (atPicos == now && following == null) following = e;
        else queue.add(e);
    }

    /** As {@link #post(long, int, Runnable)}, {@code delayPicos} from now. */
    public void postIn(long delayPicos, int priority, Runnable action) {
        if (delayPicos < 0) throw new IllegalArgumentException("delay " + delayPicos + " ps is negative");
        post(Math.addExact(now, delayPicos), priority, action);
    }

    /**
     * The tie an event posted now would take, kept for an event that may never be needed: posted later in that place
     * ({@link #post(long, int, long, Runnable)}), it runs where it would have; never posted, it leaves the run as it
     * was (a credit no packet waits for).
     */
    public long reserveTie() { return seq++; }

    /** As {@link #post(long, int, Runnable)}, in the place of tie {@code tie} ({@link #reserveTie}), not yet passed. */
    public void post(long atPicos, int priority, long tie, Runnable action) {
        if (passed(atPicos, priority, tie))
            throw new IllegalArgumentException("cannot post at " + atPicos + " ps behind the run (now " + now + " ps)");
        Event e = spareEvent(atPicos, priority, tie, action);
        e.scope = scope;
        queue.add(e);
    }

    /** Whether an event at {@code atPicos}, {@code priority} and {@code tie} would have run by now. */
    public boolean passed(long atPicos, int priority, long tie) {
        return atPicos < now || atPicos == now && ((long) priority << Event.TIE_BITS | tie) < atOrder;
    }

    /** A posted event: a spare one made (time, priority, next tie, action), or a new one. */
    private Event spareEvent(long time, int priority, Runnable action) {
        return spareEvent(time, priority, seq++, action);
    }

    private Event spareEvent(long time, int priority, long tie, Runnable action) {
        Event e = spare.poll();
        if (e == null) e = new Event(time, priority, tie, action);
        else {
            e.set(time, priority, tie, action);
            e.owner = null;
            e.cancelled = false;
            e.ran = false;
        }
        e.pooled = true;
        return e;
    }

    /**
     * As {@link #schedule(long, int, Runnable)}, in event {@code spent} if it has run (and is not
     * anyone else's): a source that schedules one event after another, such as an alarm, then
     * allocates none. The run is the same either way.
     */
    Event schedule(Event spent, long atPicos, int priority, Runnable action) {
        if (atPicos < now)
            throw new IllegalArgumentException("cannot schedule at " + atPicos + " ps: now is " + now + " ps");
        Event e = reuse(spent, atPicos, priority, seq++, action);
        e.scope = scope;
        queue.add(e);
        return e;
    }

    /** {@code spent} made event (time, priority, tie, action) if it has run and belongs to no lane, else a new one. */
    private static Event reuse(Event spent, long time, int priority, long tie, Runnable action) {
        if (spent == null || !spent.ran || spent.owner != null || spent.pooled)
            return new Event(time, priority, tie, action);
        spent.ran = false;
        spent.cancelled = false;
        return spent.set(time, priority, tie, action);
    }

    /**
     * A clock edge: at one instant, edges run in the order their domains were made, however
     * long ago each was scheduled (a clock stopped and woken ticks in the same place as one that
     * never stopped).
     */
    Event scheduleEdge(Event spent, long atPicos, int domainRank, Scope owner, Runnable action) {
        if (atPicos < now)
            throw new IllegalArgumentException("cannot schedule at " + atPicos + " ps: now is " + now + " ps");
        Event e = reuse(spent, atPicos, Priority.CLOCK_EDGE, domainRank, action);
        e.scope = owner;
        queue.add(e);
        return e;
    }

    public Event schedule(long atPicos, Runnable action) { return schedule(atPicos, Priority.DEFAULT, action); }

    public Event scheduleIn(long delayPicos, int priority, Runnable action) {
        if (delayPicos < 0) throw new IllegalArgumentException("delay " + delayPicos + " ps is negative");
        return schedule(Math.addExact(now, delayPicos), priority, action);
    }

    public Event scheduleIn(long delayPicos, Runnable action) {
        return scheduleIn(delayPicos, Priority.DEFAULT, action);
    }

    /** A clock domain with an integer period in picoseconds; its first edge is at {@code phasePicos}. */
    public ClockDomain clockDomain(String name, long periodPicos, long phasePicos) {
        for (ClockDomain d : domains)
            if (d.name().equals(name)) throw new IllegalArgumentException("clock domain '" + name + "' already exists");
        ClockDomain d = new ClockDomain(this, name, periodPicos, phasePicos, ranks++);
        domains.add(d);
        return d;
    }

    public ClockDomain clockDomain(String name, long periodPicos) { return clockDomain(name, periodPicos, 0); }

    public List<ClockDomain> clockDomains() { return List.copyOf(domains); }

    /** Runs the next event. Returns false when nothing is left to run. */
    public boolean step() {
        Event e = takeBy(Long.MAX_VALUE);
        if (e == null) return false;
        run(e);
        return true;
    }

    /**
     * Takes the next event to run if it comes at or before {@code deadline} (null if none does), dropping the ones
     * that will never run on the way: one look at the queue's head an event, where a peek then a step took two.
     */
    private Event takeBy(long deadline) {
        Event n = following;
        if (n != null) { // posted for its instant: it runs now if it still comes first, else it joins the queue
            following = null;
            if (gone(n)) n.ran = true;
            else if (n.time <= deadline && (queue.before(n.time, n.order) || sortsBefore(n, heapHead()))) {
                tookNext = true;
                return n;
            } else queue.add(n);
        }
        while (true) {
            Event e = queue.peek();
            if (e == null || e.time > deadline) return null;
            queue.take(); // out of the queue for good at its next use: an event this one schedules takes its place
            if (e.owner != null) e.owner.advance();
            if (!gone(e)) return e;
            e.ran = true; // out of the queue for good, never to run: its holder may use it again
        }
    }

    private void run(Event e) {
        now = e.time;
        atOrder = e.order;
        executed++;
        if (tookNext) {
            tookNext = false;
            ranNext++;
        }
        e.ran = true;
        Scope before = enter(e.scope);
        try {
            e.action.run();
        } catch (RuntimeException x) { // charged to the innermost event it came out of
            if (faults.isEmpty() || faults.peekLast().cause() != x) faults.addLast(new Fault(e.scope, now, x));
            throw x;
        } finally {
            leave(before);
            if (e.pooled && spare.size() < MAX_SPARE) { // no one holds it: spare for the next post
                e.action = null;
                e.scope = null;
                spare.push(e);
            }
        }
    }

    /** Runs every event up to and including {@code timePicos}, then sets the time to it. */
    public void runUntil(long timePicos) {
        if (timePicos < now)
            throw new IllegalArgumentException("time " + timePicos + " ps is in the past (now " + now + " ps)");
        for (Event e; (e = takeBy(timePicos)) != null; ) run(e);
        passInstant(timePicos);
    }

    /**
     * The time is {@code t} and every event at it has run: whatever is scheduled at {@code t} from here runs after
     * them.
     */
    private void passInstant(long t) {
        now = t;
        atOrder = Long.MAX_VALUE;
    }

    /**
     * Moves the time on to {@code t}, no event coming at or before it: as {@link #runUntil(long)} would, reading no
     * more than this object (a partition with nothing to do in a window, see {@link Windows}).
     */
    void idleUntil(long t) {
        if (t >= now) passInstant(t);
    }

    /**
     * Whether the edge of the domain of rank {@code domainRank} at the current instant is behind
     * the run: the event running (or last run) comes after that edge's place. A stopped clock woken
     * now ticks next on the edge after, as a running clock would have ticked at this instant already.
     */
    boolean edgePassed(int domainRank) {
        return atOrder >= ((long) Priority.CLOCK_EDGE << Event.TIE_BITS | domainRank);
    }

    public void runFor(long picos) { runUntil(Math.addExact(now, picos)); }

    /**
     * Runs until {@code condition} holds (checked before the first event and after each event).
     * Throws IllegalStateException if {@code limitPicos} of simulated time pass, or the simulation
     * goes idle, first.
     */
    public void runUntil(BooleanSupplier condition, long limitPicos) { runUntil(condition, limitPicos, null); }

    /**
     * As {@link #runUntil(BooleanSupplier, long)}, for a wait that is {@code own}'s (a driver's command on its
     * node): an event of another scope that throws does not end it. That scope is {@link #retire retired} at once,
     * its fault left for {@link #takeFault}, and the wait goes on, as one node's failing adapter does not stop
     * another's command. A fault of {@code own}'s, or of no scope's (the fabric's), ends the wait as before.
     */
    public void runUntil(BooleanSupplier condition, long limitPicos, Scope own) {
        long deadline = Math.addExact(now, limitPicos);
        while (!condition.getAsBoolean()) {
            Event e = takeBy(deadline);
            if (e == null && peek() == null)
                throw new IllegalStateException("simulation went idle at " + now + " ps before the condition held");
            if (e == null) {
                passInstant(deadline);
                throw new IllegalStateException(
                        "condition did not hold within " + limitPicos + " ps (now " + now + " ps)");
            }
            try {
                run(e);
            } catch (RuntimeException x) {
                Fault f = faults.peekLast();
                if (own == null || f == null || f.cause() != x || f.scope() == null || f.scope() == own) throw x;
                retire(f.scope());
            }
        }
    }

    /** Runs until no event is left. Returns the time of the last event. */
    public long runUntilIdle() {
        while (step()) { /* keep going */ }
        return now;
    }

    /** Runs until idle, but stops with an exception if {@code limitPicos} pass first (a clock that never stops). */
    public long runUntilIdle(long limitPicos) {
        long deadline = Math.addExact(now, limitPicos);
        for (Event e; (e = takeBy(deadline)) != null; ) run(e);
        Event head = peek();
        if (head == null) return now;
        throw new IllegalStateException("still busy after " + limitPicos + " ps (next event at " + head.time + " ps)");
    }

    public boolean idle() { return peek() == null; }

    /** When the next event runs, or Long.MAX_VALUE when none is left. */
    public long nextEventTime() {
        Event e = peek();
        return e == null ? Long.MAX_VALUE : e.time;
    }

    /** The next event to run (null: none), the one in the slot beside the queue included. */
    private Event peek() {
        Event e = heapHead(), n = following;
        if (n == null) return e;
        if (!gone(n)) return sortsBefore(n, e) ? n : e;
        following = null;
        n.ran = true;
        return e;
    }

    /** The queue's first event (null: none), dropping the ones that will never run, as {@link #step()} does. */
    private Event heapHead() {
        Event e;
        while ((e = queue.peek()) != null && gone(e)) poll().ran = true;
        return e;
    }

    /** Whether {@code e} runs before {@code head} (null: nothing), as the queue orders them. */
    private static boolean sortsBefore(Event e, Event head) {
        return head == null || e.time < head.time || e.time == head.time && e.order < head.order;
    }

    private Event poll() {
        Event e = queue.poll();
        if (e != null && e.owner != null) e.owner.advance();
        return e;
    }
}
