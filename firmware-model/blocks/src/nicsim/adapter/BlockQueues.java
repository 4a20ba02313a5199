package nicsim.adapter;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import nicsim.abi.BigEndian;
import nicsim.abi.Cqe64;
import nicsim.abi.Line64;
import nicsim.abi.WqeLayout;
import nicsim.adapter.CqePorts.CqConfig;
import nicsim.adapter.CqePorts.CqeIn;
import nicsim.adapter.WqePorts.SqConfig;
import nicsim.adapter.WqePorts.WqeBeat;
import nicsim.adapter.WqePorts.WqeError;
import nicsim.host.PciPort;
import nicsim.sim.ClockDomain;
import nicsim.sim.Clocked;
import nicsim.sim.Simulator;

/**
 * What waits for the adapter's blocks and what they hand back, on the core clock: the queues the firmware and the host
 * fill from outside the blocks' domain ({@link Adapter}'s methods marked "Firmware:", its doorbell writes), driven
 * onto the blocks' inputs a head an edge; and on each edge's update what the blocks took (the next head goes on) and
 * what they made: WQEs, doorbells, errors and translations to the firmware, CQEs DMA-written into the host's CQ rings
 * with their timestamps, MSI-X after the write of their CQE.
 */
final class BlockQueues implements Clocked {

    private final Adapter adapter;
    private final Simulator sim;
    private final ClockDomain core;
    private final DoorbellDecoder decoder;
    private final WqeFetcher fetcher;
    private final CqeWriter cqeWriter;
    private final MttWalker mtt;
    private final WqeTimeline timeline;
    private EmbeddedProcessor firmware;
    private PciPort port;

    final ArrayDeque<MttPorts.XlateReq> xlateIn = new ArrayDeque<>();
    final ArrayDeque<MttPorts.MkeyContext> mkeyIn = new ArrayDeque<>();
    final ArrayDeque<MttPorts.KlmEntry> klmIn = new ArrayDeque<>();
    private final ArrayDeque<MttPorts.MttFillRsp> fillRspIn = new ArrayDeque<>();
    final ArrayDeque<CqePorts.CqCi> ciIn = new ArrayDeque<>();
    private boolean fillBusy;
    final ArrayDeque<CqConfig> cqConfigIn = new ArrayDeque<>();
    final ArrayDeque<CqeIn> cqeIn = new ArrayDeque<>();
    final CqSettle settle = new CqSettle();
    private final ArrayDeque<Long> pendingMsix = new ArrayDeque<>();
    final ArrayDeque<MmioWrite> mmioIn = new ArrayDeque<>();
    final ArrayDeque<QueueTableWrite> tableIn = new ArrayDeque<>();
    final ArrayDeque<SqConfig> sqIn = new ArrayDeque<>();
    /** Every queue of what waits here for the blocks (whether the adapter is active, whether one entry is alone). */
    private final ArrayDeque<?>[] queues = {mmioIn, tableIn, sqIn, cqConfigIn, cqeIn, pendingMsix, xlateIn, mkeyIn,
            klmIn, fillRspIn, ciIn};
    private final List<byte[]> partial = new ArrayList<>();

    BlockQueues(Adapter adapter, WqeTimeline timeline) {
        this.adapter = adapter;
        this.sim = adapter.simulator();
        this.core = adapter.core();
        this.decoder = adapter.decoder();
        this.fetcher = adapter.fetcher();
        this.cqeWriter = adapter.cqeWriter();
        this.mtt = adapter.mtt();
        this.timeline = timeline;
    }

    /** The firmware the blocks' outputs go to, once it is made. */
    void firmware(EmbeddedProcessor fw) { this.firmware = fw; }

    /** The port CQEs and MSI-X go out through, once attached to a bus. */
    void connect(PciPort p) { this.port = p; }

    // the wires show the queues as they are: an edge's drive would change nothing (a queue the
    // firmware fills from outside, or one its update takes from, clears this)
    private boolean wiresCurrent;

    /** Something was queued for the blocks from outside their domain: the next edge drives it. */
    void queued() {
        wiresCurrent = false;
        core.wake();
    }

    @Override public void drive() {
        // a context waiting in sqIn goes out once the firmware lets it, which no queue here shows
        if (wiresCurrent && sqIn.isEmpty()) return;
        wiresCurrent = true;
        if (mmioIn.isEmpty()) decoder.mmio().idle(); else decoder.mmio().push(mmioIn.peekFirst());
        if (tableIn.isEmpty()) decoder.tableWrite().idle(); else decoder.tableWrite().push(tableIn.peekFirst());
        if (sqIn.isEmpty() || !firmware.mayLoad(sqIn.peekFirst())) fetcher.sqConfig().idle(); else fetcher.sqConfig()
                .push(sqIn.peekFirst());
        fetcher.wqe().ready(true);
        if (cqConfigIn.isEmpty()) cqeWriter.cqConfig().idle(); else cqeWriter.cqConfig().push(cqConfigIn.peekFirst());
        // a completion offered stays offered till the writer takes it (the stream's contract): a consumer-index
        // update or a configuration of its CQ that came meanwhile (a destroy, a resize) waits behind it, as it
        // would had the writer taken it at once
        if (cqeOffered) { cqeWriter.ci().idle(); cqeWriter.cqe().push(cqeIn.peekFirst()); }
        // a consumer-index update goes a cycle ahead of the completion it makes room for
        else if (!ciIn.isEmpty()) { cqeWriter.ci().push(ciIn.peekFirst()); cqeWriter.cqe().idle(); }
        else {
            cqeWriter.ci().idle();
            // a completion waits for its CQ's configuration still on the way (a ring moved by RESIZE_CQ)
            if (cqeIn.isEmpty() || configuring(cqeIn.peekFirst().cqn())) cqeWriter.cqe().idle();
            else {
                cqeWriter.cqe().push(cqeIn.peekFirst());
                cqeOffered = true;
            }
        }
        if (xlateIn.isEmpty()) mtt.req().idle(); else mtt.req().push(xlateIn.peekFirst());
        // a context waits for the KLM entries written before it, so an indirect mkey is never VALID over stale entries
        if (mkeyIn.isEmpty() || !klmIn.isEmpty()) mtt.mkeyWrite().idle(); else mtt.mkeyWrite().push(mkeyIn.peekFirst());
        if (klmIn.isEmpty()) mtt.klmWrite().idle(); else mtt.klmWrite().push(klmIn.peekFirst());
        if (fillRspIn.isEmpty()) mtt.fillRsp().idle(); else mtt.fillRsp().push(fillRspIn.peekFirst());
        mtt.rsp().ready(true);
        mtt.fill().ready(!fillBusy);
        cqeWriter.write().ready(true);
    }

    /** Whether the head of cqeIn is on the CqeWriter's input, not yet taken: it must stay there till it is. */
    private boolean cqeOffered;

    private boolean configuring(long cqn) {
        for (CqConfig c : cqConfigIn) if (c.cqn() == cqn) return true;
        return false;
    }

    @Override public void update() {
        if (decoder.mmio().valid()) taken(mmioIn);
        if (decoder.tableWrite().valid()) taken(tableIn);
        if (fetcher.sqConfig().valid()) {
            SqConfig c = taken(sqIn);
            if (c != null && c.valid() == 1) firmware.onSqLoaded(c.qpn());
        }
        if (decoder.doorbell().fire()) {
            DoorbellMsg m = decoder.doorbell().payload();
            timeline.doorbellDecoded(m.qpn(), m.index());
            if (m.kind() != DoorbellMsg.Kind.CQ_ARM.ordinal()) firmware.onDoorbell(m.qpn(), (int) m.index());
        }
        if (decoder.error().valid()) adapter.report(decoder.error().payload());
        if (fetcher.error().valid()) {
            WqeError e = fetcher.error().payload();
            adapter.report(e);
            firmware.onWqeError(e);
        }
        if (fetcher.dropped().valid()) {
            DoorbellMsg d = fetcher.dropped().payload();
            // a QP whose context is not in the fetcher: a context-cache miss for the firmware, not an error
            firmware.onSqMiss(d.qpn(), (int) d.index());
        }
        if (fetcher.dmaReq().fire()) timeline.fetchIssued(fetcher.dmaReq().payload(), sim.now());
        if (fetcher.wqe().fire()) collect(fetcher.wqe().payload());
        if (cqeWriter.cqConfig().valid()) taken(cqConfigIn);
        if (cqeWriter.cqe().fire()) {
            settle.accepted(taken(cqeIn).cqn());
            cqeOffered = false;
        }
        if (cqeWriter.ci().valid()) taken(ciIn);
        if (mtt.req().fire()) taken(xlateIn);
        if (mtt.mkeyWrite().valid()) taken(mkeyIn);
        if (mtt.klmWrite().valid()) taken(klmIn);
        if (mtt.fillRsp().fire()) { taken(fillRspIn); fillBusy = false; }
        if (mtt.rsp().fire()) firmware.onXlate(mtt.rsp().payload());
        if (mtt.fill().fire()) {
            fillBusy = true;
            wiresCurrent = false;
            firmware.onMttFill(mtt.fill().payload().index(), r -> {
                fillRspIn.add(new MttPorts.MttFillRsp(r[0], r[1]));
                queued();
            });
        }
        if (cqeWriter.error().valid()) {
            settle.refused();
            adapter.report(cqeWriter.error().payload());
            firmware.onCqError(cqeWriter.error().payload().cqn(), cqeWriter.error().payload().reason());
        }
        if (cqeWriter.dropped().valid())
            adapter.report("CQ arm for an unconfigured CQ: " + cqeWriter.dropped().payload());
        if (cqeWriter.event().valid()) { // it follows the CQE write the writer holds, if one; else it leaves now
            if (cqeWriter.write().valid()) pendingMsix.add(cqeWriter.event().payload().vector());
            else port.msix((int) cqeWriter.event().payload().vector());
        }
        if (cqeWriter.write().fire()) {
            CqePorts.Write64 w = cqeWriter.write().payload();
            byte[] entry = Line64.bytes(w.data());
            long cqn = settle.writing();
            stamp(entry);
            port.dmaWrite(w.addr(), entry, r -> {
                settle.written(cqn);
                if (r.status() != PciPort.DmaStatus.OK) {
                    adapter.report(String.format("CQE write to 0x%x failed: %s", w.addr(), r.status()));
                    return;
                }
                firmware.onCqeWritten(entry);
                if (timeline.tracing()) { // the WQE's last stage: its CQE is in host memory
                    int opcode = Cqe64.opcode(entry);
                    if (opcode == Cqe64.REQ || opcode == Cqe64.REQ_ERR)
                        timeline.cqeWritten(Cqe64.qpn(entry), Cqe64.wqeCounter(entry), opcode, w.addr());
                }
            });
            // an event's MSI-X follows its CQE's write on the link (posted writes stay in order): each event
            // waiting was raised while this write was held (a completion's, or an arm's behind it)
            while (!pendingMsix.isEmpty()) port.msix((int) (long) pendingMsix.pollFirst());
        }
    }

    /**
     * The completion timestamp of a CQE on its way to host memory, as mlx5's CQE carries it: the
     * core clock cycle its write left the writer, a free-running count from the simulation's start
     * (an error's CQE has none). A traced WQE's timeline marks the same instant as "cqe_stamped".
     */
    private void stamp(byte[] entry) {
        if (Cqe64.isError(entry)) return;
        // moved by RESIZE_CQ: it keeps the time it was first written
        if (BigEndian.get64(entry, Cqe64.TIMESTAMP) != 0) return;
        long cycles = sim.now() / core.periodPicos();
        BigEndian.put64(entry, Cqe64.TIMESTAMP, cycles);
        if (timeline.tracing() && Cqe64.opcode(entry) == Cqe64.REQ)
            timeline.cqeStamped(Cqe64.qpn(entry), Cqe64.wqeCounter(entry), cycles);
    }

    /** The head of {@code q}, which a block took on this edge: the next drive shows the one behind it. */
    <T> T taken(ArrayDeque<T> q) {
        wiresCurrent = false;
        return q.pollFirst();
    }

    private void collect(WqeBeat b) {
        byte[] bb = Line64.bytes(b.data());
        if (b.first() != 0) partial.clear();
        partial.add(bb);
        if (b.last() != 0) {
            byte[] all = bb; // a WQE of one WQEBB is its bytes
            if (partial.size() > 1) {
                all = new byte[partial.size() * WqeLayout.WQEBB];
                for (int i = 0; i < partial.size(); i++)
                    System.arraycopy(partial.get(i), 0, all, i * WqeLayout.WQEBB, WqeLayout.WQEBB);
            }
            long first = (b.index() - partial.size() + 1) & 0xFFFF;
            if (timeline.tracing()) timeline.delivered(b.qpn(), first, partial.size(), WqeLayout.opcode(b.data()[0]));
            firmware.onWqe(b.qpn(), (int) first, all);
            partial.clear();
        }
    }

    /** Whether one entry of {@code q} is all that waits here for the blocks. */
    boolean alone(ArrayDeque<?> q) {
        if (q.size() != 1) return false;
        for (ArrayDeque<?> other : queues) if (other != q && !other.isEmpty()) return false;
        return true;
    }

    /**
     * Whether a queue has something to hand on: a translation already at the walker's input waits for the walker,
     * active while it can take it.
     */
    @Override public boolean active() {
        for (ArrayDeque<?> q : queues) if (!q.isEmpty() && (q != xlateIn || !mtt.req().valid())) return true;
        return false;
    }
}
