package nicsim.adapter;

import java.util.ArrayDeque;
import java.util.List;
import nicsim.abi.WqeLayout;
import nicsim.adapter.WqePorts.DmaReadReq;
import nicsim.adapter.WqePorts.SqConfig;
import nicsim.adapter.WqePorts.WqeBeat;
import nicsim.adapter.WqePorts.WqeError;
import nicsim.adapter.WqePorts.WqebbBeat;
import nicsim.profile.Profile;
import nicsim.profile.Require;
import nicsim.sim.Block;
import nicsim.sim.ClockDomain;
import nicsim.sim.CounterOut;
import nicsim.sim.Counters;
import nicsim.sim.Flow;
import nicsim.sim.Port;
import nicsim.sim.Stream;

/**
 * Fetches send WQEs from host rings (docs/architecture.md#data-path, step 4). Cycle-exact twin of
 * {@code hw/.../WqeFetcher.scala}.
 *
 * <p>Per send queue (configured by firmware on {@code io_sqConfig}: QPN, ring base, 2^logSize
 * WQEBBs) it keeps the producer counter from the latest doorbell and the counter fetched so far.
 * When idle, a round-robin arbiter picks a queue with WQEBBs pending and issues one DMA read on
 * {@code io_dmaReq} for min(batch, pending, WQEBBs to the ring's end) WQEBBs: a batch never wraps,
 * the next one starts at the ring's beginning. One fetch is outstanding at a time.
 *
 * <p>Response beats ({@code io_dmaRsp}, one WQEBB each) are checked where a WQE starts: opcode
 * legal, DS not 0, the control segment's QPN is the queue's, its index is the WQEBB counter. A good
 * WQE's WQEBBs go out on {@code io_wqe} (first/last marked) through a two-entry output buffer; a
 * bad one, or a failed DMA, is reported on {@code io_error} with the control words as syndrome, the
 * queue stops (firmware moves the QP to error), and the rest of the batch is dropped. A doorbell
 * for a queue that is not configured is reported on {@code io_dropped}.
 *
 * <p>Every edge, decisions use the state before the edge; updates apply in this order: output pop,
 * request accepted, response beat, doorbell, queue configuration (so a configuration wins), arbiter.
 */
public final class WqeFetcher implements Block {
    public static final String NAME = "WqeFetcher";

    /** Parameters from the profile. */
    public record Config(int batch, int sqEntries) {
        public Config {
            Require.range("wqe.fetch.batch", batch, 1, 64, "WQEBBs");
            Require.powerOfTwo("wqe.sq.entries", sqEntries, 2, 256, "");
        }

        public static Config from(Profile p) {
            return new Config(p.countInt("wqe.fetch.batch"), p.countInt("wqe.sq.entries"));
        }
    }

    /** One send queue's registers. */
    private static final class Sq {
        boolean valid, error;
        long qpn, base;
        int logSize, producer, fetched, remain;
    }

    private final Config cfg;
    private final Counters counters;
    private final Counters.Counter wqebbsRequested;
    private final Stream<DoorbellMsg> doorbell;
    private final Flow<SqConfig> sqConfig;
    private final Stream<DmaReadReq> dmaReq;
    private final Stream<WqebbBeat> dmaRsp;
    private final Stream<WqeBeat> wqe;
    private final Flow<WqeError> error;
    private final Flow<DoorbellMsg> dropped;
    private final CounterOut wqes, wqebbs, fetches, errors;

    private final Sq[] sqs;
    private int pendingSqs; // queues the arbiter may pick (valid, running, WQEBBs to fetch): none spares it the scan
    private boolean busy, reqValid, dropping;
    private DmaReadReq req;
    private int curSq, curCount, curBeat, lastServed;
    private final ArrayDeque<WqeBeat> outQ = new ArrayDeque<>();
    private WqeError errReg;
    private DoorbellMsg droppedReg;

    public WqeFetcher(ClockDomain domain, Config cfg) {
        this.cfg = cfg;
        this.counters = domain.counters();
        this.wqebbsRequested = counters.counter(NAME + ".wqebbs_requested");
        doorbell = new Stream<>("io_doorbell", domain, DoorbellMsg.LAYOUT);
        sqConfig = new Flow<>("io_sqConfig", domain, WqePorts.SQ_CONFIG);
        dmaReq = new Stream<>("io_dmaReq", domain, WqePorts.DMA_READ_REQ);
        dmaRsp = new Stream<>("io_dmaRsp", domain, WqePorts.WQEBB_BEAT);
        wqe = new Stream<>("io_wqe", domain, WqePorts.WQE_BEAT);
        error = new Flow<>("io_error", domain, WqePorts.WQE_ERROR);
        dropped = new Flow<>("io_dropped", domain, DoorbellMsg.LAYOUT);
        wqes = new CounterOut(NAME, "io_wqes", "wqes", domain);
        wqebbs = new CounterOut(NAME, "io_wqebbs", "wqebbs", domain);
        fetches = new CounterOut(NAME, "io_fetches", "fetches", domain);
        errors = new CounterOut(NAME, "io_errors", "errors", domain);
        sqs = new Sq[cfg.sqEntries()];
        for (int i = 0; i < sqs.length; i++) sqs[i] = new Sq();
        lastServed = cfg.sqEntries() - 1;
        domain.add(this);
    }

    public Config config() { return cfg; }
    public Stream<DoorbellMsg> doorbell() { return doorbell; }
    public Flow<SqConfig> sqConfig() { return sqConfig; }
    public Stream<DmaReadReq> dmaReq() { return dmaReq; }
    public Stream<WqebbBeat> dmaRsp() { return dmaRsp; }
    public Stream<WqeBeat> wqe() { return wqe; }
    public Flow<WqeError> error() { return error; }
    public Flow<DoorbellMsg> dropped() { return dropped; }
    public long wqes() { return wqes.get(); }
    public long errors() { return errors.get(); }
    public long fetches() { return fetches.get(); }

    @Override public String name() { return NAME; }

    @Override public List<Port> ports() {
        return List.of(Port.in(doorbell), Port.in(sqConfig), Port.out(dmaReq), Port.in(dmaRsp), Port.out(wqe),
                Port.out(error), Port.out(dropped), wqes.port(), wqebbs.port(), fetches.port(), errors.port());
    }

    @Override public void drive() {
        doorbell.ready(true);
        if (reqValid) dmaReq.push(req); else dmaReq.idle();
        dmaRsp.ready(busy && !reqValid && outQ.size() < 2);
        if (outQ.isEmpty()) wqe.idle(); else wqe.push(outQ.peekFirst());
        if (errReg == null) error.idle(); else error.push(errReg);
        if (droppedReg == null) dropped.idle(); else dropped.push(droppedReg);
        wqes.drive();
        wqebbs.drive();
        fetches.drive();
        errors.drive();
    }

    @Override public void update() {
        // the arbiter's choice and the request it makes are decided on the state before the edge
        int pick = busy || reqValid ? -1 : arbitrate();
        DmaReadReq planned = pick < 0 ? null : plan(pick);
        errReg = null;
        droppedReg = null;
        if (wqe.fire()) outQ.pollFirst();
        if (dmaReq.fire()) reqValid = false;
        if (dmaRsp.fire()) beat(dmaRsp.payload());
        if (doorbell.fire()) ring(doorbell.payload());
        if (sqConfig.valid()) configure(sqConfig.payload());
        if (planned != null) issue(planned);
    }

    /** Its inputs' valid make it active, and it changes nothing while inactive: its domain may leave it out then. */
    @Override public boolean mayRest() { return true; }

    @Override public boolean active() {
        if (busy || occupied()) return true;
        if (doorbell.valid() || sqConfig.valid()) return true;
        return arbitrate() >= 0;
    }

    /**
     * How many of the coming edges it runs alone, with no input valid and nothing on its outputs: one to pick a queue
     * and plan its ring read (which the edge after drives); none while it drives or waits for anything;
     * {@link MttWalker#IDLE_EDGES} while no queue has WQEBBs to fetch.
     */
    long quietEdges() {
        if (busy || occupied()) return 0;
        return arbitrate() < 0 ? MttWalker.IDLE_EDGES : 1;
    }

    /** Runs the edge of {@link #quietEdges} as {@link #update} would with no input valid: the next read issued. */
    void coast() {
        int pick = busy || occupied() ? -1 : arbitrate();
        if (pick < 0) throw new IllegalStateException("WqeFetcher: coasting edge with no read to issue");
        issue(plan(pick));
    }

    /** The read the pick of {@link #quietEdges} issues, as it will be (a look-ahead: it changes nothing). */
    DmaReadReq nextRead() { return plan(arbitrate()); }

    /**
     * Runs an edge on which the read it drives is taken, as {@link #update} would with only {@code io_dmaReq} firing:
     * the read is no longer offered. Returns it.
     */
    DmaReadReq coastReadTaken() {
        if (!reqValid || !outQ.isEmpty() || errReg != null || droppedReg != null)
            throw new IllegalStateException("WqeFetcher: coasting a read's hand-over with none driven, or an output");
        reqValid = false;
        return req;
    }

    /** Runs an edge on which a beat of its read comes in, as {@link #update} would with only io_dmaRsp firing. */
    void coastBeat(WqebbBeat b) {
        if (!busy || occupied())
            throw new IllegalStateException("WqeFetcher: coasting a beat it does not wait for, or with an output");
        beat(b);
    }

    /**
     * Whether, quiet ({@link #quietEdges} finds no edge of its own), it takes doorbell {@code m} on the coming edge
     * with nothing on its outputs and then has a ring read to pick: a send doorbell of a configured, running queue
     * that announces WQEBBs not yet fetched. A look-ahead: it changes nothing.
     */
    boolean takesQuietly(DoorbellMsg m) {
        if (busy || occupied() || arbitrate() >= 0) return false;
        Sq s = sqs[(int) (m.qpn() & (sqs.length - 1))];
        return m.kind() == DoorbellMsg.Kind.SEND.ordinal() && s.valid && s.qpn == m.qpn() && !s.error
                && ((int) m.index() & 0xFFFF) != s.fetched;
    }

    /** The read it picks the edge after it takes doorbell {@code m} ({@link #takesQuietly}), as it will be. */
    DmaReadReq readAfter(DoorbellMsg m) {
        // no other queue has WQEBBs pending: the arbiter picks this one
        return plan((int) (m.qpn() & (sqs.length - 1)), (int) m.index() & 0xFFFF);
    }

    /** Runs an edge on which doorbell {@code m} comes in, as {@link #update} would with only io_doorbell firing. */
    void coastRing(DoorbellMsg m) {
        if (!takesQuietly(m))
            throw new IllegalStateException("WqeFetcher: coasting a doorbell it does not take quietly: " + m);
        ring(m);
    }

    /** Whether it drives a read or holds anything for its outputs (a WQEBB, an error, a dropped doorbell). */
    private boolean occupied() { return reqValid || !outQ.isEmpty() || errReg != null || droppedReg != null; }

    /** Round robin from the queue after the last one served: the first valid, running queue with WQEBBs pending. */
    private int arbitrate() {
        if (pendingSqs == 0) return -1;
        int n = sqs.length;
        for (int k = 1; k <= n; k++) {
            int i = (lastServed + k) % n;
            Sq s = sqs[i];
            if (pending(s)) return i;
        }
        return -1;
    }

    private static boolean pending(Sq s) { return s.valid && !s.error && s.producer != s.fetched; }

    /** Before and after changing a queue's state: keeps the count of pending queues. */
    private void unlist(Sq s) { if (pending(s)) pendingSqs--; }

    private void relist(Sq s) { if (pending(s)) pendingSqs++; }

    /** The read for queue {@code i}: min(batch, pending, WQEBBs to the ring's end) WQEBBs from the fetch point. */
    private DmaReadReq plan(int i) { return plan(i, sqs[i].producer); }

    /** As {@link #plan(int)}, with queue {@code i}'s producer counter {@code producer}. */
    private DmaReadReq plan(int i, int producer) {
        Sq s = sqs[i];
        int size = 1 << s.logSize;
        int pending = (producer - s.fetched) & 0xFFFF;
        int slot = s.fetched & (size - 1);
        int n = Math.min(cfg.batch(), Math.min(pending, size - slot));
        return new DmaReadReq(s.base + (long) slot * WqeLayout.WQEBB, (long) n * WqeLayout.WQEBB, i);
    }

    private void issue(DmaReadReq r) {
        req = r;
        reqValid = true;
        busy = true;
        curSq = (int) r.tag();
        curCount = (int) (r.length() / WqeLayout.WQEBB);
        curBeat = 0;
        lastServed = curSq;
        fetches.inc();
        wqebbsRequested.add(curCount);
    }

    private void beat(WqebbBeat b) {
        Sq s = sqs[curSq];
        int index = s.fetched;
        if (dropping || s.error) {
            // this batch's error is already reported: the rest of it is dropped
        } else if (b.status() != 0) {
            fail(s, index, WqeError.Code.DMA_ERROR, 0);
        } else {
            if (s.remain == 0) {
                long w = b.data()[0];
                WqeError.Code code = !WqeLayout.legalOpcode(WqeLayout.opcode(w)) ? WqeError.Code.BAD_OPCODE
                        : WqeLayout.ds(w) == 0 ? WqeError.Code.BAD_DS
                        : WqeLayout.qpn(w) != s.qpn ? WqeError.Code.BAD_QPN
                        : WqeLayout.index(w) != index ? WqeError.Code.BAD_INDEX : WqeError.Code.NONE;
                if (code != WqeError.Code.NONE) {
                    fail(s, index, code, w);
                } else {
                    int bbs = WqeLayout.wqebbs(WqeLayout.ds(w));
                    emit(s, index, true, bbs == 1, b);
                    s.remain = bbs - 1;
                    wqes.inc();
                }
            } else {
                emit(s, index, false, s.remain == 1, b);
                s.remain--;
            }
        }
        if (++curBeat == curCount) {
            busy = false;
            dropping = false;
        }
    }

    private void emit(Sq s, int index, boolean first, boolean last, WqebbBeat b) {
        outQ.addLast(new WqeBeat(s.qpn, index, first ? 1 : 0, last ? 1 : 0, b.data()));
        unlist(s);
        s.fetched = (s.fetched + 1) & 0xFFFF;
        relist(s);
        wqebbs.inc();
    }

    private void fail(Sq s, int index, WqeError.Code code, long ctrl) {
        errReg = new WqeError(s.qpn, index, code.ordinal(), ctrl);
        unlist(s);
        s.error = true;
        dropping = true;
        errors.inc();
        counters.counter(NAME + ".errors_" + code.name().toLowerCase()).inc();
    }

    private void ring(DoorbellMsg m) {
        Sq s = sqs[(int) (m.qpn() & (sqs.length - 1))];
        if (m.kind() == DoorbellMsg.Kind.SEND.ordinal() && s.valid && s.qpn == m.qpn()) {
            unlist(s);
            s.producer = (int) m.index() & 0xFFFF;
            relist(s);
        } else {
            droppedReg = m;
            counters.counter(NAME + ".doorbells_unknown_sq").inc();
        }
    }

    private void configure(SqConfig c) {
        Sq s = sqs[(int) (c.qpn() & (sqs.length - 1))];
        unlist(s);
        s.valid = c.valid() != 0;
        s.qpn = c.qpn();
        s.base = c.base();
        s.logSize = (int) c.logSize();
        s.producer = (int) c.producer();
        s.fetched = (int) c.start();
        s.remain = 0;
        s.error = false;
        relist(s);
    }
}
