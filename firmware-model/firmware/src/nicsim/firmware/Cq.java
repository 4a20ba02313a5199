package nicsim.firmware;

import java.util.ArrayDeque;
import java.util.function.Consumer;
import nicsim.abi.BigEndian;
import nicsim.abi.Cmd;
import nicsim.abi.Line64;
import nicsim.adapter.Adapter;
import nicsim.host.PciPort;
import nicsim.sim.Counters;

/**
 * A completion queue as firmware knows it: where its doorbell record is, how full it may be, and
 * the completions waiting to be written in order.
 */
final class Cq {
    final long cqn, dbrec;
    long ring;
    int size;
    private final Adapter adapter;
    private final Counters.Ref lost;
    long produced, knownCi;
    boolean error;
    /** QPs and SRQs that name this CQ: it is not destroyed under them. */
    int users;
    private final ArrayDeque<Pending> waiting = new ArrayDeque<>();
    private boolean refreshing, confirmedFull, resizing, gone;

    /**
     * DESTROY_CQ: completions still waiting here (for the consumer index to move) are lost, counted;
     * those already handed to the writer are its to finish.
     */
    void destroy() {
        gone = true;
        for (int i = 0; i < waiting.size(); i++) lost.inc();
        waiting.clear();
    }

    private record Pending(long[] cqe, boolean solicited) {}

    Cq(Adapter adapter, Counters.Ref lost, long cqn, long ring, int size, long dbrec) {
        this.adapter = adapter;
        this.lost = lost;
        this.cqn = cqn;
        this.ring = ring;
        this.size = size;
        this.dbrec = dbrec;
    }

    /**
     * Writes a completion, in order. When the ring might be full by firmware's count, it first
     * re-reads the consumer index from the doorbell record, so the writer sees an overflow only when
     * software really has not consumed.
     */
    void post(long[] cqe, boolean solicited) {
        if (error || gone) { lost.inc(); return; }
        waiting.add(new Pending(cqe, solicited));
        drain();
    }

    private void drain() {
        while (!waiting.isEmpty() && !refreshing && !resizing) {
            if (produced - knownCi >= size && !confirmedFull) {
                refreshing = true;
                adapter.port().dmaRead(dbrec, 4, r -> {
                    refreshing = false;
                    if (gone) return;
                    long ci = r.status() == PciPort.DmaStatus.OK ? BigEndian.get32(r.data(), 0) & 0xFFFFFF : knownCi;
                    long delta = (ci - knownCi) & 0xFFFFFF;
                    knownCi += delta;
                    if (knownCi > produced) // a driver's bug the device can see: it claims entries not yet written
                        adapter.report(String.format("CQ 0x%x: the consumer index in its doorbell record (0x%x) is "
                                + "past the producer (0x%x): software claims completions not yet written", cqn, ci,
                                produced & 0xFFFFFF));
                    if (delta != 0) adapter.cqConsumerIndex(cqn, ci);
                    else confirmedFull = true; // still full: the writer sees it and reports the overflow
                    drain();
                });
                return;
            }
            produced++;
            Pending p = waiting.poll();
            adapter.postCqe(cqn, p.cqe, p.solicited);
        }
    }

    /**
     * RESIZE_CQ: holds new completions, waits for those on their way to land, reads the ones
     * software has not polled (from the consumer index in the doorbell record: software polls
     * nothing while it resizes), moves the writer to the new ring and writes them there first,
     * in order, then lets the held ones follow. {@code done} gets null, or why it was refused
     * (the ring then stays where it was).
     */
    void resize(long newRing, int logSize, Consumer<Cmd.Syndrome> done) {
        if (resizing) { done.accept(Cmd.Syndrome.CQ_RESIZING); return; }
        resizing = true;
        adapter.whenCqSettled(cqn, () -> adapter.port().dmaRead(dbrec, 4, r -> {
            long ci = r.status() == PciPort.DmaStatus.OK ? BigEndian.get32(r.data(), 0) & 0xFFFFFF : knownCi;
            int left = (int) ((produced - ci) & 0xFFFFFF);
            if (left > (1 << logSize) - 1) { // the CQ reports size - 1 entries (cqe): what waits must fit in them
                resizing = false;
                drain();
                done.accept(Cmd.Syndrome.CQ_TOO_SMALL);
                return;
            }
            long[][] moved = new long[left][];
            readEntries(ci, 0, moved, () -> {
                adapter.moveCq(cqn, newRing, logSize);
                for (long[] e : moved) adapter.postCqe(cqn, e, false);
                ring = newRing;
                size = 1 << logSize;
                produced = left;
                knownCi = 0;
                confirmedFull = false;
                adapter.port().dmaWrite(dbrec, new byte[4], w -> {}); // the new ring's consumer index: 0
                resizing = false;
                drain();
                done.accept(null);
            });
        }));
    }

    /** Reads the entries from index {@code from} (a page of them at a time) into {@code out} from {@code at}. */
    private void readEntries(long from, int at, long[][] out, Runnable then) {
        if (at == out.length) { then.run(); return; }
        int slot = (int) ((from + at) & (size - 1));
        int n = Math.min(Math.min(out.length - at, size - slot), 64);
        adapter.port().dmaRead(ring + 64L * slot, 64 * n, r -> {
            for (int i = 0; i < n; i++) {
                out[at + i] = r.status() == PciPort.DmaStatus.OK ? Line64.words(r.data(), 64 * i) : new long[8];
            }
            readEntries(from, at + n, out, then);
        });
    }
}
