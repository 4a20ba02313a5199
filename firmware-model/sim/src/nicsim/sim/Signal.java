package nicsim.sim;

import java.util.Objects;
import nicsim.wave.VcdWriter;

/**
 * A plain output wire of a block (a counter, an occupancy), set in the drive phase from registered
 * state like any other output, so it can be traced and compared with the RTL port of the same name.
 */
public final class Signal {
    private final String name;
    private final int width;
    private final ClockDomain domain;
    private long value;
    private VcdWriter writer;
    private VcdWriter.Wire wire;

    public Signal(String name, int width, ClockDomain domain) {
        if (width < 1 || width > 64)
            throw new IllegalArgumentException("signal " + name + ": width " + width + " must be 1..64");
        this.name = Objects.requireNonNull(name);
        this.width = width;
        this.domain = domain;
        this.index = domain.signalIndex();
    }

    private final int index;

    /** Its place among its domain's signals, in the order they were made. */
    int index() { return index; }

    public String name() { return name; }
    public int width() { return width; }
    public long value() { return value; }

    public void set(long v) {
        if (domain.phase() == ClockDomain.Phase.UPDATE)
            domain.simulator().reportViolation(new StreamContractViolation(name, domain.cycle(),
                    StreamContractViolation.Rule.DRIVEN_IN_UPDATE_PHASE, "signals may only change in the drive phase"));
        value = width == 64 ? v : v & ((1L << width) - 1);
    }

    public void trace(VcdWriter w, String scope) {
        if (writer == null) domain.traced(this);
        writer = w;
        wire = w.wire(scope, name, width);
    }

    void edge(long cycle) { if (writer != null) writer.set(domain.picosOfCycle(cycle), wire, value); }
}
