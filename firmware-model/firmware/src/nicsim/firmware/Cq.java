package nicsim.firmware;

import java.util.ArrayDeque;
import java.util.function.Consumer;
import nicsim.abi.BigEndian;
import nicsim.abi.Cmd;
import nicsim.abi.DoorbellRecord;
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
    private final Counters.Ref lost, malformed;
    private final Consumer<String> report;
    long produced, knownCi;
    boolean error;
    /** QPs and SRQs that name this CQ: it is not destroyed under them. */
    int users;
    private final ArrayDeque<Pending> waiting = new ArrayDeque<>();
    private boolean refreshing, confirmedFull, resizing, gone;
    /** Whether a malformed consumer index was told (once a CQ; each is counted). */
    private boolean malformedTold;

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

    Cq(Firmware fw, long cqn, long ring, int size, long dbrec) {
        this.adapter = fw.adapter;
        this.lost = fw.stats.ref(FirmwareStat.CQES_LOST);
        this.malformed = fw.stats.ref(FirmwareStat.CQ_RECORDS_MALFORMED);
        this.report = fw::report;
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
                    long delta = adopt(ci);
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
     * Takes {@code ci}, read from the doorbell record, as the consumer index and returns how far it moved, unless it
     * claims more CQEs consumed than were written or is behind the index read before (which, at a read, is behind
     * the producer by more than the CQ holds): software consumes only what was written, and its index only moves on,
     * so such an index is malformed (a killed program's memory reading as zeros, a driver's stray write or bug). As
     * a refused doorbell, it changes nothing (0: as if the record had not moved, so a full CQ stays full). Counted
     * each time, told once a CQ.
     */
    private long adopt(long ci) {
        long delta = (ci - knownCi) & 0xFFFFFF;
        if (delta <= produced - knownCi) {
            knownCi += delta;
            return delta;
        }
        malformed.inc();
        if (malformedTold) return 0;
        malformedTold = true;
        report.accept(String.format("MALFORMED_CQ_DBREC on cqn 0x%x: the doorbell record's consumer index (at 0x%x) "
                + "is 0x%x, but 0x%x CQEs are written and 0x%x consumed: an index past those written (or behind) is "
                + "ignored", cqn, dbrec + DoorbellRecord.CQ_CI, ci, produced & 0xFFFFFF, knownCi & 0xFFFFFF));
        return 0;
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
            // the record read is taken as at a full ring's read: one past the CQEs written or behind the index known
            // is counted and told, and moves nothing (a killed program's zeros would move CQEs already polled)
            adopt(r.status() == PciPort.DmaStatus.OK ? BigEndian.get32(r.data(), 0) & 0xFFFFFF : knownCi & 0xFFFFFF);
            long ci = knownCi;
            int left = (int) (produced - ci);
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
