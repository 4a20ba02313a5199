package nicsim.firmware;

import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Map;
import nicsim.adapter.WqePorts;

/**
 * The WqeFetcher's send-queue slots as a cache of every QP's send-queue context: QPNs map to slots
 * by their low bits (direct-mapped), a doorbell for a QP whose context the fetcher does not hold
 * is a miss, and a context is evicted only once its queue has nothing left to fetch.
 */
final class SqContexts {
    /** Bytes of one QP context in host memory (ICM), read on a miss. */
    static final int QPC_BYTES = 256;

    private final Firmware fw;
    private final int queueTableEntries;
    /** Where QP contexts live in host memory (-1: nowhere, loading costs no read). */
    long qpcAddr = -1;
    /** Which QP's send queue each fetcher slot holds, which one is being loaded into it, and which one that evicts. */
    private final Qp[] resident, loading, evicting;
    private final Map<Integer, ArrayDeque<Qp>> waiting = new HashMap<>();

    SqContexts(Firmware fw, int slots, int queueTableEntries) {
        this.fw = fw;
        this.queueTableEntries = queueTableEntries;
        this.resident = new Qp[slots];
        this.loading = new Qp[slots];
        this.evicting = new Qp[slots];
    }

    int slot(long qpn) { return (int) (qpn & (resident.length - 1)); }

    boolean resident(Qp q) { return resident[slot(q.qpn)] == q; }

    /** A new QP: its context is written to host memory, and loaded at once if its slot is free. */
    void created(Qp q) {
        if (qpcAddr >= 0) fw.adapter.port()
                .dmaWrite(qpcAddr + (q.qpn & (queueTableEntries - 1)) * QPC_BYTES, new byte[QPC_BYTES], r -> {});
        int slot = slot(q.qpn);
        if (resident[slot] == null && loading[slot] == null) {
            loading[slot] = q;
            fw.adapter.loadSq(q.qpn, q.sqAddr, q.sqLogSize, 0, 0);
        }
    }

    /** A destroyed QP leaves the fetcher (if it was there) and the waiting list, and its slot goes to the next. */
    void destroyed(Qp q) {
        int slot = slot(q.qpn);
        boolean wasResident = resident[slot] == q;
        fw.adapter.destroySq(q.qpn, wasResident);
        if (wasResident) resident[slot] = null;
        if (loading[slot] == q) loading[slot] = null;
        ArrayDeque<Qp> w = waiting.get(slot);
        if (w != null) w.remove(q);
        tryLoad(slot);
    }

    /**
     * A doorbell reached the fetcher for a QP whose context it does not hold: read the context from
     * host memory and load it, evicting the slot's QP once that one has nothing left to fetch; then
     * ring the doorbell again from inside.
     */
    void miss(Qp q, int producer) {
        q.requester.doorbell(producer);
        int slot = slot(q.qpn);
        if (resident[slot] == q) { // loaded while this doorbell was on its way: ring again
            fw.adapter.reRing(q.qpn, (int) q.uar, q.requester.producerSeen());
            return;
        }
        if (loading[slot] == q) return; // the re-ring after loading carries the newest producer
        ArrayDeque<Qp> w = waiting.computeIfAbsent(slot, k -> new ArrayDeque<>());
        if (!w.contains(q)) w.add(q);
        fw.stats.inc(FirmwareStat.SQ_CONTEXT_MISSES);
        tryLoad(slot);
    }

    /**
     * Loads the next waiting QP into {@code slot} if the slot is free, or its QP is idle (every posted WQEBB
     * delivered).
     */
    void tryLoad(int slot) {
        ArrayDeque<Qp> w = waiting.get(slot);
        if (w == null || w.isEmpty() || loading[slot] != null) return;
        Qp cur = resident[slot];
        if (cur != null && !cur.requester.idle()) return; // evict only a queue with nothing in flight
        Qp next = w.poll();
        loading[slot] = next;
        evicting[slot] = cur;
        if (cur != null) fw.stats.inc(FirmwareStat.SQ_CONTEXT_EVICTIONS);
        Runnable load = () -> fw.adapter.loadSq(next.qpn, next.sqAddr, next.sqLogSize, next.requester.delivered(),
                next.requester.delivered());
        if (qpcAddr < 0) load.run();
        else fw.adapter.port()
                .dmaRead(qpcAddr + (next.qpn & (queueTableEntries - 1)) * QPC_BYTES, QPC_BYTES, r -> load.run());
    }

    /** The fetcher took the context of {@code q}. */
    void loaded(Qp q) {
        int slot = slot(q.qpn);
        if (loading[slot] == q) loading[slot] = null;
        Qp evicted = evicting[slot];
        evicting[slot] = null;
        resident[slot] = q;
        if (!q.requester.idle()) fw.adapter.reRing(q.qpn, (int) q.uar, q.requester.producerSeen());
        // a doorbell the evicted queue got on the very edge its context was replaced is lost in the fetcher: treat it
        // as a miss
        if (evicted != null && evicted != q && !evicted.requester.idle() && fw.qps.containsKey(evicted.qpn))
            miss(evicted, evicted.requester.producerSeen());
        tryLoad(slot);
    }

    /**
     * Whether the fetcher may take {@code c} now: a context replacing another queue's waits until that
     * queue has nothing in flight (checked on the edge it would be taken, so a fetch never loses its slot).
     */
    boolean mayLoad(WqePorts.SqConfig c) {
        if (c.valid() == 0) return true;
        Qp cur = resident[slot(c.qpn())];
        return cur == null || cur.qpn == c.qpn() || cur.requester.idle();
    }

    /** A QP went back to RESET (its requester's counters at WQEBB 0): its context, if loaded, restarts there. */
    void reset(Qp q) {
        if (resident(q) || loading[slot(q.qpn)] == q) fw.adapter.loadSq(q.qpn, q.sqAddr, q.sqLogSize, 0, 0);
    }
}
