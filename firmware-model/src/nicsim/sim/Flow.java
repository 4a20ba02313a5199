package nicsim.sim;

import java.util.Objects;
import nicsim.wave.VcdWriter;

/**
 * A valid-only transfer (SpinalHDL's Flow): the receiver cannot push back, so a payload is taken
 * on every edge where valid is high. Set in the drive phase like a {@link Stream}.
 */
public final class Flow<T> {
    private final String name;
    private final ClockDomain domain;
    private final Layout<T> layout;
    private boolean valid;
    private T payload;
    private long fires;
    private PortTrace<T> trace;

    public Flow(String name, ClockDomain domain, Layout<T> layout) {
        this.name = Objects.requireNonNull(name);
        this.domain = domain;
        this.layout = layout;
        domain.registerFlow(this);
    }

    public String name() { return name; }
    public Layout<T> layout() { return layout; }

    public void push(T p) {
        if (domain.phase() == ClockDomain.Phase.UPDATE)
            domain.simulator().reportViolation(new StreamContractViolation(name, domain.cycle(),
                    StreamContractViolation.Rule.DRIVEN_IN_UPDATE_PHASE, "flow outputs may only change in the drive phase"));
        valid = true;
        payload = Objects.requireNonNull(p, "payload");
    }

    public void idle() { valid = false; payload = null; }

    public boolean valid() { return valid; }
    public T payload() { return payload; }
    public long fires() { return fires; }

    public void trace(VcdWriter writer, String scope) { trace = new PortTrace<>(writer, scope, name, layout, false); }

    void edge(long cycle) {
        if (valid) fires++;
        if (trace != null) trace.sample(domain, cycle, valid, true, payload);
    }
}
