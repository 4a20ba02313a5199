package nicsim.sim;

import java.util.Objects;
import nicsim.wave.VcdWriter;

/**
 * A valid-only transfer (SpinalHDL's Flow): the receiver cannot push back, so a payload is taken
 * on every edge where valid is high. Set in the drive phase like a {@link Stream}.
 */
public final class Flow<T> extends ClockDomain.Sampled {
    private final String name;
    private final ClockDomain domain;
    private final Layout<T> layout;
    private static final class Wires<T> {
        final int slot; // the source's, whose slot its domain visits
        boolean valid;
        T payload;
        Wires(int slot) { this.slot = slot; }
    }

    private Wires<T> w;
    private boolean alias, hasSink;
    private long fires;
    private PortTrace<T> trace;

    public Flow(String name, ClockDomain domain, Layout<T> layout) {
        this.name = Objects.requireNonNull(name);
        this.domain = domain;
        this.layout = layout;
        w = new Wires<>(domain.registerFlow(this));
    }

    public String name() { return name; }
    public Layout<T> layout() { return layout; }

    /** Makes {@code sink} the same wires as this flow (SpinalHDL's {@code a >> b}); connect before running. */
    public void connect(Flow<T> sink) {
        if (sink.domain != domain)
            throw new IllegalArgumentException("cannot connect " + name + " to " + sink.name
                    + ": different clock domains");
        if (sink.alias || alias || hasSink || sink.hasSink)
            throw new IllegalArgumentException("flow " + (alias || hasSink ? name : sink.name)
                    + " is already connected");
        sink.w = w;
        hasSink = true;
        sink.alias = true; // its domain never visits it: this side counts both
    }

    public void push(T p) {
        if (domain.phase() == ClockDomain.Phase.UPDATE)
            domain.simulator().reportViolation(new StreamContractViolation(name, domain.cycle(),
                    StreamContractViolation.Rule.DRIVEN_IN_UPDATE_PHASE,
                    "flow outputs may only change in the drive phase"));
        w.valid = true;
        w.payload = Objects.requireNonNull(p, "payload");
        domain.flowLive(w.slot);
    }

    public void idle() { w.valid = false; w.payload = null; }

    public boolean valid() { return w.valid; }
    public T payload() { return w.payload; }
    public long fires() { return fires; }

    public void trace(VcdWriter writer, String scope) {
        if (trace == null) domain.traced(this);
        trace = new PortTrace<>(writer, scope, name, layout, false);
        if (!alias) domain.flowLive(w.slot);
    }

    /**
     * Counts edge {@code cycle}; whether the coming edge has anything to do here (no, while valid is low and nothing is
     * traced).
     */
    @Override boolean edge(long cycle) {
        if (alias) return false;
        if (w.valid) fires++;
        if (trace != null) trace.sample(domain, cycle, w.valid, true, w.payload);
        return w.valid || trace != null;
    }
}
