package nicsim.sim;

import java.util.ArrayDeque;

/**
 * A FIFO between two streams, cycle-equivalent to SpinalHDL's {@code StreamFifo} (without the
 * latency-0 option): an element pushed on edge n can pop on edge n+1; {@code push.ready} is
 * "not full" and {@code pop.valid} "not empty", both from registered state.
 *
 * <p>Keeps occupancy statistics: the peak, the cycles spent full, and the occupancy summed over
 * cycles (for a time-weighted mean).
 */
public final class StreamFifo<T> implements Clocked {
    private final String name;
    private final int depth;
    private final Stream<T> push;
    private final Stream<T> pop;
    private final ArrayDeque<T> items = new ArrayDeque<>();
    private long peak;
    private long fullCycles;
    private long occupancySum;
    private long cycles;

    public StreamFifo(String name, ClockDomain domain, int depth, Layout<T> layout) {
        if (depth < 1) throw new IllegalArgumentException("fifo " + name + ": depth " + depth + " must be >= 1");
        this.name = name;
        this.depth = depth;
        this.push = new Stream<>(name + "_push", domain, layout);
        this.pop = new Stream<>(name + "_pop", domain, layout);
        domain.add(this);
    }

    public String name() { return name; }
    public int depth() { return depth; }
    /** The input: drive it from the producer's drive phase. */
    public Stream<T> push() { return push; }
    /** The output: set its ready from the consumer's drive phase. */
    public Stream<T> pop() { return pop; }
    public int occupancy() { return items.size(); }
    public long peakOccupancy() { return peak; }
    public long fullCycles() { return fullCycles; }
    public long cycles() { return cycles; }
    /** Mean occupancy over the edges the clock ran. */
    public double meanOccupancy() { return cycles == 0 ? 0 : (double) occupancySum / cycles; }

    @Override public void drive() {
        push.ready(items.size() < depth);
        if (items.isEmpty()) pop.idle(); else pop.push(items.peekFirst());
    }

    @Override public void update() {
        cycles++;
        occupancySum += items.size();
        if (items.size() == depth) fullCycles++;
        if (pop.fire()) items.pollFirst();
        if (push.fire()) items.addLast(push.payload());
        peak = Math.max(peak, items.size());
    }

    @Override public boolean active() { return !items.isEmpty() || push.valid(); }
}
