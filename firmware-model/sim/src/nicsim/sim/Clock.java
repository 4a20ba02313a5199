package nicsim.sim;

/**
 * A clock: an integer period in picoseconds and a phase (the time of cycle 0's edge). Conversions
 * between cycles and picoseconds are exact integer arithmetic. Edge n happens at
 * {@code phase + n * period}. Its edges and the blocks they run are its {@link ClockDomain}'s.
 */
public abstract sealed class Clock permits ClockDomain {
    final Simulator sim;
    final String name;
    final long period;
    final long phase;
    final int rank; // made rank-th in its simulator: its place among edges of one instant
    final Simulator.Scope scope; // whose its edges are: its maker's

    Clock(Simulator sim, String name, long periodPicos, long phasePicos, int rank) {
        if (periodPicos <= 0)
            throw new IllegalArgumentException("clock '" + name + "': period " + periodPicos + " ps must be > 0");
        if (phasePicos < 0)
            throw new IllegalArgumentException("clock '" + name + "': phase " + phasePicos + " ps must be >= 0");
        this.sim = sim; this.name = name; this.period = periodPicos; this.phase = phasePicos; this.rank = rank;
        this.scope = sim.scope();
    }

    /** Whose clock it is (its edges' scope). */
    public Simulator.Scope scope() { return scope; }

    public String name() { return name; }

    private Counters counters;

    /**
     * The counters of the blocks on this clock: under the node it belongs to, the path before the
     * last dot of its name ({@code node0.core} and {@code node0.dma1} count in {@code node0}; a
     * clock with no dot counts at the top).
     */
    public Counters counters() {
        if (counters == null) {
            int dot = name.lastIndexOf('.');
            counters = sim.counters().scope(dot < 0 ? "" : name.substring(0, dot));
        }
        return counters;
    }
    public long periodPicos() { return period; }
    public long phasePicos() { return phase; }
    public Simulator simulator() { return sim; }

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
    public long nextEdgeCycleAtOrAfter(long picos) {
        return picos <= phase ? 0 : -Math.floorDiv(-(picos - phase), period);
    }

    @Override public String toString() { return name + "(" + period + " ps)"; }
}
