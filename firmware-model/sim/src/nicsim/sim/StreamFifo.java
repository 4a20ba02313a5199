package nicsim.sim;

import java.util.ArrayDeque;
import java.util.List;

/**
 * A FIFO between two streams, cycle-equivalent to SpinalHDL's {@code StreamFifo} (without the
 * latency-0 option): an element pushed on edge n can pop on edge n+1; {@code push.ready} is
 * "not full" and {@code pop.valid} "not empty", both from registered state.
 *
 * <p>Keeps occupancy statistics: the peak, the cycles spent full, and the occupancy summed over
 * cycles (for a time-weighted mean).
 */
public final class StreamFifo<T> implements Block {
    private final String name;
    private final int depth;
    private final Stream<T> push;
    private final Stream<T> pop;
    private final Signal occupancyOut;
    private final ArrayDeque<T> items = new ArrayDeque<>();
    private long peak;
    private long fullCycles;
    private long occupancySum;
    private long cycles;

    public StreamFifo(String name, ClockDomain domain, int depth, Layout<T> layout) {
        if (depth < 1) throw new IllegalArgumentException("fifo " + name + ": depth " + depth + " must be >= 1");
        this.name = name;
        this.depth = depth;
        // port names are the RTL twin's (hw StreamFifo), so traces and lockstep line up by name
        this.push = new Stream<>("io_push", domain, layout);
        this.pop = new Stream<>("io_pop", domain, layout);
        this.occupancyOut = new Signal("io_occupancy", 32 - Integer.numberOfLeadingZeros(depth), domain);
        domain.add(this);
    }

    @Override public String name() { return name; }

    @Override public List<Port> ports() { return List.of(Port.in(push), Port.out(pop), Port.out(occupancyOut)); }
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
        occupancyOut.set(items.size());
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
