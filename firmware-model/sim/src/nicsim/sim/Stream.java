package nicsim.sim;

import java.util.Objects;
import nicsim.wave.VcdWriter;

/**
 * A valid/ready handshake with SpinalHDL's contract: a transfer happens on an edge where
 * {@code fire = valid && ready}; once valid is raised it holds, with the same payload, until it
 * fires. The master sets valid and payload, the slave sets ready, both in the drive phase of
 * their {@link ClockDomain}. Every edge the stream checks the contract and either throws or
 * counts a {@link StreamContractViolation}, as the simulator's policy says.
 *
 * <p>Payloads should be immutable values (records): the stability check compares them with equals.
 */
public final class Stream<T> extends ClockDomain.Sampled {
    private final String name;
    private final ClockDomain domain;
    private final Layout<T> layout;
    /** The wires; a connected sink shares its source's, whose slot is the one its domain visits. */
    private static final class Wires<T> {
        final int slot;
        boolean valid, ready;
        T payload;
        Wires(int slot) { this.slot = slot; }
    }

    private Wires<T> w;
    private boolean alias, hasSink;
    // what was sampled on the previous edge, for the hold checks
    private boolean pendingFromLastEdge;
    private T lastPayload;
    private long fires;
    private long stalls;
    private PortTrace<T> trace;

    public Stream(String name, ClockDomain domain, Layout<T> layout) {
        this.name = Objects.requireNonNull(name);
        this.domain = Objects.requireNonNull(domain);
        this.layout = layout;
        w = new Wires<>(domain.register(this));
    }

    public Stream(String name, ClockDomain domain) { this(name, domain, null); }

    public String name() { return name; }
    public ClockDomain domain() { return domain; }

    /**
     * Connects this stream's master to {@code sink}'s slave, as SpinalHDL's {@code a >> b} does
     * with no register between: from now on both are the same valid, ready and payload wires
     * (the contract is checked once, on this side). Connect before the simulation runs.
     */
    public void connect(Stream<T> sink) {
        if (sink.domain != domain)
            throw new IllegalArgumentException("cannot connect " + name + " to " + sink.name
                    + ": different clock domains");
        if (sink.alias || alias || hasSink || sink.hasSink)
            throw new IllegalArgumentException("stream " + (alias || hasSink ? name : sink.name)
                    + " is already connected");
        sink.w = w;
        hasSink = true;
        sink.alias = true; // its domain never visits it: this side checks and counts both
    }
    public Layout<T> layout() { return layout; }

    // ---- master side
    /** Raises valid with this payload. */
    public void push(T p) {
        checkPhase();
        w.valid = true;
        w.payload = Objects.requireNonNull(p, "payload");
        domain.streamLive(w.slot);
    }

    /** Lowers valid (legal only when nothing is pending, or the contract check will object). */
    public void idle() {
        checkPhase();
        w.valid = false;
        w.payload = null;
    }

    // ---- slave side
    public void ready(boolean r) {
        checkPhase();
        w.ready = r;
    }

    // ---- both sides
    public boolean valid() { return w.valid; }
    public boolean ready() { return w.ready; }
    public boolean fire() { return w.valid && w.ready; }
    public T payload() { return w.payload; }
    /** Transfers so far. */
    public long fires() { return fires; }
    /** Edges with valid high and ready low (back-pressure). */
    public long stalls() { return stalls; }

    /** Traces this stream's wires under {@code scope} (e.g. "top.WqeFetcher") in a VCD writer. */
    public void trace(VcdWriter writer, String scope) {
        if (trace == null) domain.traced(this);
        trace = new PortTrace<>(writer, scope, name, layout, true);
        if (!alias) domain.streamLive(w.slot);
    }

    /** Edges ran without the wires (the domain coasted): the next edge starts the hold checks afresh. */
    @Override void coasted() { pendingFromLastEdge = false; }

    /**
     * Checks and counts edge {@code cycle}; whether the coming edge has anything to do here (no, while valid is low and
     * nothing is traced).
     */
    @Override boolean edge(long cycle) {
        if (alias) return false; // the source side checks and counts
        boolean valid = w.valid, ready = w.ready;
        T payload = w.payload;
        if (pendingFromLastEdge) {
            if (!valid) violation(cycle, StreamContractViolation.Rule.VALID_DROPPED,
                    "valid fell before the transfer of " + lastPayload + " fired");
            else if (payload != lastPayload && !payload.equals(lastPayload))
                violation(cycle, StreamContractViolation.Rule.PAYLOAD_CHANGED,
                        "payload changed from " + lastPayload + " to " + payload + " while waiting for ready");
        }
        boolean f = fire();
        if (f) fires++;
        else if (valid) stalls++;
        pendingFromLastEdge = valid && !ready;
        lastPayload = payload;
        if (trace != null) trace.sample(domain, cycle, valid, ready, payload);
        return valid || trace != null;
    }

    private void checkPhase() {
        if (domain.phase() == ClockDomain.Phase.UPDATE)
            violation(domain.cycle(), StreamContractViolation.Rule.DRIVEN_IN_UPDATE_PHASE,
                    "outputs may only change in the drive phase (evaluation order would matter)");
    }

    private void violation(long cycle, StreamContractViolation.Rule rule, String detail) {
        domain.simulator().reportViolation(new StreamContractViolation(name, cycle, rule, detail));
    }

    @Override public String toString() {
        return name + "[valid=" + w.valid + " ready=" + w.ready + " payload=" + w.payload + "]";
    }
}
