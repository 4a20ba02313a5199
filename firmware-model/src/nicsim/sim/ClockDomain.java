package nicsim.sim;

import java.util.ArrayList;
import java.util.List;

/**
 * A clock: an integer period in picoseconds and a phase (the time of cycle 0's edge). Conversions
 * between cycles and picoseconds are exact integer arithmetic. Edge n happens at
 * {@code phase + n * period}.
 *
 * <p>On each edge every block in the domain drives, every stream checks its handshake contract,
 * then every block updates. The clock runs only while some block is {@link Clocked#active()}; a
 * block that gets work from outside (an MMIO write, a DMA completion) calls {@link #wake()}.
 * Stopping an idle clock changes no result: an inactive block does nothing on an edge.
 */
public final class ClockDomain {
    /** The phase the domain is in, so streams can refuse writes at the wrong time. */
    public enum Phase { IDLE, DRIVE, UPDATE }

    private final Simulator sim;
    private final String name;
    private final long period;
    private final long phase;
    private final int rank; // made rank-th in its simulator: its place among edges of one instant
    private final List<Clocked> blocks = new ArrayList<>();
    private final List<Stream<?>> streams = new ArrayList<>();
    private final List<Flow<?>> flows = new ArrayList<>();
    private final List<Signal> signals = new ArrayList<>();
    private Simulator.Event nextEdge;
    private long lastEdgeCycle = -1;
    private long edges;
    private Phase current = Phase.IDLE;

    ClockDomain(Simulator sim, String name, long periodPicos, long phasePicos, int rank) {
        if (periodPicos <= 0) throw new IllegalArgumentException("clock '" + name + "': period " + periodPicos + " ps must be > 0");
        if (phasePicos < 0) throw new IllegalArgumentException("clock '" + name + "': phase " + phasePicos + " ps must be >= 0");
        this.sim = sim; this.name = name; this.period = periodPicos; this.phase = phasePicos; this.rank = rank;
    }

    public String name() { return name; }
    public long periodPicos() { return period; }
    public long phasePicos() { return phase; }
    public Simulator simulator() { return sim; }
    public Phase phase() { return current; }

    /** The time of edge {@code cycle}. */
    public long picosOfCycle(long cycle) { return Math.addExact(phase, Math.multiplyExact(cycle, period)); }

    /** A duration of {@code cycles} cycles, in picoseconds. */
    public long cyclesToPicos(long cycles) { return Math.multiplyExact(cycles, period); }

    /** Whole cycles in a duration (rounded down). */
    public long picosToCyclesFloor(long picos) { return Math.floorDiv(picos, period); }

    /** Cycles needed to cover a duration (rounded up). */
    public long picosToCyclesCeil(long picos) { return -Math.floorDiv(-picos, period); }

    /** The number of the last edge at or before {@code picos} (-1 before the first edge). */
    public long cycleAt(long picos) { return picos < phase ? -1 : (picos - phase) / period; }

    /** The first edge at or after {@code picos}. */
    public long nextEdgeCycleAtOrAfter(long picos) { return picos <= phase ? 0 : -Math.floorDiv(-(picos - phase), period); }

    /** The current cycle: the last edge that has run (-1 before any). */
    public long cycle() { return lastEdgeCycle; }

    /** How many edges have run: idle stretches with the clock stopped are not counted. */
    public long edgesRun() { return edges; }

    public void add(Clocked block) {
        blocks.add(block);
        wake();
    }

    void register(Stream<?> s) { streams.add(s); }

    void registerFlow(Flow<?> f) { flows.add(f); }

    void registerSignal(Signal s) { signals.add(s); }

    /** Starts the clock at the next edge not yet run, if it is stopped. */
    public void wake() {
        if (nextEdge != null && !nextEdge.cancelled()) return;
        long c = Math.max(lastEdgeCycle + 1, nextEdgeCycleAtOrAfter(sim.now()));
        // this instant's edge is behind the run (it ran, or the clock was stopped when it came): the next one
        long cycle = picosOfCycle(c) == sim.now() && sim.edgePassed(rank) ? c + 1 : c;
        nextEdge = sim.scheduleEdge(picosOfCycle(cycle), rank, () -> edge(cycle));
    }

    private void edge(long cycle) {
        nextEdge = null;
        lastEdgeCycle = cycle;
        edges++;
        current = Phase.DRIVE;
        for (Clocked b : blocks) b.drive();
        current = Phase.IDLE;
        for (Stream<?> s : streams) s.edge(cycle);
        for (Flow<?> f : flows) f.edge(cycle);
        for (Signal s : signals) s.edge(cycle);
        current = Phase.UPDATE;
        for (Clocked b : blocks) b.update();
        current = Phase.IDLE;
        boolean any = false;
        for (Clocked b : blocks) if (b.active()) { any = true; break; }
        if (any) wake();
    }

    @Override public String toString() { return name + "(" + period + " ps)"; }
}
