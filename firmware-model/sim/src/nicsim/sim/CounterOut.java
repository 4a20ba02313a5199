package nicsim.sim;

/**
 * A block's event counter exposed as an output wire, as the RTL twins do: a register that wraps at
 * the port's width, driven every edge from its value before the edge. Counted in the simulator's
 * {@link Counters} too, under "<block>.<counter>" (the name users read, e.g. DoorbellDecoder.doorbells_seen).
 */
public final class CounterOut {
    private final Signal wire;
    private final Counters.Counter total;
    private long value;

    public CounterOut(String block, String wireName, String counter, ClockDomain domain) {
        this.wire = new Signal(wireName, 32, domain);
        this.total = domain.counters().counter(block + "." + counter);
    }

    public void inc() { value++; total.inc(); }

    /** {@code n} counts at once (edges a block ran in one step). */
    public void add(long n) { value += n; total.add(n); }

    /** The register's value (wrapped at 32 bits, like the wire). */
    public long get() { return value & 0xFFFF_FFFFL; }

    /** Drive the wire from the register; call from the block's drive phase. */
    public void drive() { wire.set(value); }

    public Port port() { return Port.out(wire); }
}
