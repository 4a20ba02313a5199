package nicsim.adapter;

import java.util.List;
import nicsim.adapter.CqePorts.CqCi;
import nicsim.adapter.CqePorts.CqConfig;
import nicsim.adapter.CqePorts.CqError;
import nicsim.adapter.CqePorts.CqEvent;
import nicsim.adapter.CqePorts.CqeIn;
import nicsim.adapter.CqePorts.Write64;
import nicsim.profile.Profile;
import nicsim.profile.Require;
import nicsim.sim.Block;
import nicsim.sim.ClockDomain;
import nicsim.sim.CounterOut;
import nicsim.sim.Flow;
import nicsim.sim.Port;
import nicsim.sim.Stream;

/**
 * Writes completions into host CQ rings (docs/architecture.md#data-path, step 8). Cycle-exact twin of
 * {@code hw/.../CqeWriter.scala}.
 *
 * <p>Per CQ (set up by firmware on {@code io_cqConfig}, with the counters it starts from) it keeps the
 * producer index, the consumer index software has reached (from arm doorbells and {@code io_ci}), and
 * the arming. A completion
 * on {@code io_cqe} goes to slot pi mod size as a 64-byte DMA write on {@code io_write}, with the
 * owner bit (op_own bit 0, byte 63) set to the ring lap: 0 on the first pass, 1 on the second, and
 * so on (docs/sources.md#mlx5-cq-ownership). If the CQ is armed, and the completion is solicited or the arm was not
 * solicited-only, {@code io_event} fires once with the CQ's MSI-X vector and the CQ disarms. A
 * completion that would overwrite an entry software has not consumed (pi - ci = size) is an
 * overflow: not written, reported on {@code io_error}, and the CQ stops taking completions until
 * reconfigured (firmware raises CQ_ERR). An arm for an unknown CQ is reported on {@code io_dropped}.
 *
 * <p>An arm whose consumer index is behind the producer raises the event at once if an entry was
 * written since the CQ's last event (ConnectX keeps that place as the CQ context's
 * last_notified_index): software may not have seen it, as when it polled, then armed, then slept.
 * Entries the last event already reported raise nothing: software that re-arms before it polls
 * them (libibverbs' own pattern) gets one event per completion, not a second one for the same
 * entries. A solicited-only arm never raises at once (which entries were solicited is not kept).
 * That event leaves on the next edge, from a one-entry register; while it is held, neither
 * completions nor arms are taken, so it never meets a completion's event on the port.
 *
 * <p>Edge order: write pop, held arm event out, completion (on the state before the edge), arm,
 * consumer index, configuration (which wins, and drops a held event of its slot).
 */
public final class CqeWriter implements Block {
    public static final String NAME = "CqeWriter";

    /** Parameters from the profile. */
    public record Config(int cqEntries) {
        public Config {
            Require.powerOfTwo("cqe.cq.entries", cqEntries, 2, 256, "");
        }

        public static Config from(Profile p) { return new Config(p.countInt("cqe.cq.entries")); }
    }

    private static final class Cq {
        boolean valid, error, armed, solicitedOnly;
        /** An entry was written since the CQ's last event: an arm behind the producer owes one. */
        boolean unreported;
        long cqn, base, vector;
        int logSize, pi, ci;
    }

    private final Config cfg;
    private final Flow<CqConfig> cqConfig;
    private final Stream<CqeIn> cqe;
    private final Stream<DoorbellMsg> arm;
    private final Flow<CqCi> ciUpdate;
    private final Stream<Write64> write;
    private final Flow<CqEvent> event;
    private final Flow<CqError> error;
    private final Flow<DoorbellMsg> dropped;
    private final CounterOut cqes, events, errors;
    private final Cq[] cqs;
    private Write64 outReg;
    private CqEvent eventReg;
    private CqError errorReg;
    private DoorbellMsg droppedReg;

    public CqeWriter(ClockDomain domain, Config cfg) {
        this.cfg = cfg;
        cqConfig = new Flow<>("io_cqConfig", domain, CqePorts.CQ_CONFIG);
        cqe = new Stream<>("io_cqe", domain, CqePorts.CQE_IN);
        arm = new Stream<>("io_arm", domain, DoorbellMsg.LAYOUT);
        ciUpdate = new Flow<>("io_ci", domain, CqePorts.CQ_CI);
        write = new Stream<>("io_write", domain, CqePorts.WRITE64);
        event = new Flow<>("io_event", domain, CqePorts.CQ_EVENT);
        error = new Flow<>("io_error", domain, CqePorts.CQ_ERROR);
        dropped = new Flow<>("io_dropped", domain, DoorbellMsg.LAYOUT);
        cqes = new CounterOut(NAME, "io_cqes", "cqes_written", domain);
        events = new CounterOut(NAME, "io_events", "events", domain);
        errors = new CounterOut(NAME, "io_errors", "errors", domain);
        cqs = new Cq[cfg.cqEntries()];
        for (int i = 0; i < cqs.length; i++) cqs[i] = new Cq();
        domain.add(this);
    }

    public Config config() { return cfg; }
    public Flow<CqConfig> cqConfig() { return cqConfig; }
    public Stream<CqeIn> cqe() { return cqe; }
    public Stream<DoorbellMsg> arm() { return arm; }
    public Flow<CqCi> ci() { return ciUpdate; }
    public Stream<Write64> write() { return write; }
    public Flow<CqEvent> event() { return event; }
    public Flow<CqError> error() { return error; }
    public Flow<DoorbellMsg> dropped() { return dropped; }
    public long cqesWritten() { return cqes.get(); }

    @Override public String name() { return NAME; }

    @Override public List<Port> ports() {
        return List.of(Port.in(cqConfig), Port.in(cqe), Port.in(arm), Port.in(ciUpdate), Port.out(write),
                Port.out(event), Port.out(error), Port.out(dropped), cqes.port(), events.port(), errors.port());
    }

    @Override public void drive() {
        cqe.ready(outReg == null && armEvent == null);
        arm.ready(armEvent == null);
        if (outReg == null) write.idle(); else write.push(outReg);
        if (eventReg == null) event.idle(); else event.push(eventReg);
        if (errorReg == null) error.idle(); else error.push(errorReg);
        if (droppedReg == null) dropped.idle(); else dropped.push(droppedReg);
        cqes.drive();
        events.drive();
        errors.drive();
    }

    /** The event an arm raised for entries already written, leaving on the next edge (null: none). */
    private CqEvent armEvent;

    private Cq lookup(long cqn) {
        Cq c = cqs[(int) (cqn & (cqs.length - 1))];
        return c.valid && c.cqn == cqn ? c : null;
    }

    @Override public void update() {
        eventReg = null;
        errorReg = null;
        droppedReg = null;
        if (write.fire()) outReg = null;
        if (armEvent != null) {
            eventReg = armEvent;
            armEvent = null;
            events.inc();
        }
        if (cqe.fire()) complete(cqe.payload());
        if (arm.fire()) {
            DoorbellMsg m = arm.payload();
            Cq c = lookup(m.qpn());
            if (c == null || m.kind() != DoorbellMsg.Kind.CQ_ARM.ordinal()) {
                droppedReg = m;
            } else {
                c.solicitedOnly = m.solicited() != 0;
                c.ci = (int) m.index() & 0xFFFFFF;
                // entries not polled yet, some written since the last event: the event goes at once
                c.armed = c.solicitedOnly || c.pi == c.ci || !c.unreported;
                if (!c.armed) {
                    armEvent = new CqEvent(c.cqn, c.vector);
                    c.unreported = false;
                }
            }
        }
        if (ciUpdate.valid()) {
            Cq c = lookup(ciUpdate.payload().cqn());
            if (c != null) c.ci = (int) ciUpdate.payload().ci() & 0xFFFFFF;
        }
        if (cqConfig.valid()) {
            CqConfig k = cqConfig.payload();
            Cq c = cqs[(int) (k.cqn() & (cqs.length - 1))];
            // an arm of this edge raised it (one held from the edge before has left already)
            if (armEvent != null && ((armEvent.cqn() ^ k.cqn()) & (cqs.length - 1)) == 0) armEvent = null;
            c.valid = k.valid() != 0;
            c.cqn = k.cqn();
            c.base = k.base();
            c.logSize = (int) k.logSize();
            c.vector = k.vector();
            c.pi = (int) k.pi() & 0xFFFFFF;
            c.ci = (int) k.ci() & 0xFFFFFF;
            c.armed = false;
            c.solicitedOnly = false;
            c.unreported = false;
            c.error = false;
        }
    }

    /** A fault to throw (null: none) once {@link #injectAfter} more completions are taken ({@link #injectFault}). */
    private volatile String injected; // volatile: a test may arm it from its own thread while the simulation runs
    private long injectAfter;

    /**
     * Test hook: after {@code after} more completions, the writer throws IllegalStateException (naming
     * {@code why}) on the clock edge it takes the next, as a bug of the block would, so a test sees what a
     * fault inside an adapter does to the programs on it and on the others (serve's fault handling). Once.
     * A null {@code why} disarms a fault not yet thrown.
     */
    public void injectFault(String why, long after) {
        if (after < 0) throw new IllegalArgumentException("injectFault after " + after + " completions: must be >= 0");
        injectAfter = after; // before the volatile write that publishes it
        injected = why;
    }

    private void complete(CqeIn in) {
        if (injected != null && injectAfter-- == 0) {
            String why = injected;
            injected = null;
            throw new IllegalStateException("fault injected into " + NAME + " (" + why + ") at CQ " + in.cqn());
        }
        Cq c = lookup(in.cqn());
        CqError.Code code = c == null ? CqError.Code.UNKNOWN_CQ : c.error ? CqError.Code.CQ_IN_ERROR
                : ((c.pi - c.ci) & 0xFFFFFF) >= (1L << c.logSize) ? CqError.Code.OVERFLOW : CqError.Code.NONE;
        if (code != CqError.Code.NONE) {
            if (code == CqError.Code.OVERFLOW) c.error = true;
            errorReg = new CqError(in.cqn(), code.ordinal());
            errors.inc();
            return;
        }
        long size = 1L << c.logSize; // the field is 5 bits: sizes are computed in 64 bits, as the RTL does in 33
        long owner = (c.pi & size) != 0 ? 1 : 0;
        long[] d = in.data().clone();
        d[7] = (d[7] & ~(1L << 56)) | (owner << 56);
        outReg = new Write64(c.base + (c.pi & (size - 1)) * CqePorts.CQE_BYTES, d);
        c.pi = (c.pi + 1) & 0xFFFFFF;
        cqes.inc();
        if (c.armed && (!c.solicitedOnly || in.solicited() != 0)) {
            eventReg = new CqEvent(c.cqn, c.vector);
            c.armed = false;
            c.unreported = false;
            events.inc();
        } else {
            c.unreported = true;
        }
    }

    /** Its inputs' valid make it active, and it changes nothing while inactive: its domain may leave it out then. */
    @Override public boolean mayRest() { return true; }

    @Override public boolean active() {
        return outReg != null || eventReg != null || armEvent != null || errorReg != null || droppedReg != null
                || cqe.valid() || arm.valid()
                || ciUpdate.valid() || cqConfig.valid();
    }
}
