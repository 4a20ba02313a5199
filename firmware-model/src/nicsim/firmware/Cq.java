package nicsim.firmware;

import java.util.ArrayDeque;
import nicsim.abi.BigEndian;
import nicsim.adapter.Adapter;
import nicsim.host.PciPort;
import nicsim.sim.Counters;

/**
 * A completion queue as firmware knows it: where its doorbell record is, how full it may be, and
 * the completions waiting to be written in order.
 */
final class Cq {
    final long cqn, ring, dbrec;
    final int size;
    private final Adapter adapter;
    private final Counters.Ref lost;
    long produced, knownCi;
    boolean error;
    /** QPs and SRQs that name this CQ: it is not destroyed under them. */
    int users;
    private final ArrayDeque<Pending> waiting = new ArrayDeque<>();
    private boolean refreshing, confirmedFull;

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
        if (error) { lost.inc(); return; }
        waiting.add(new Pending(cqe, solicited));
        drain();
    }

    private void drain() {
        while (!waiting.isEmpty() && !refreshing) {
            if (produced - knownCi >= size && !confirmedFull) {
                refreshing = true;
                adapter.port().dmaRead(dbrec, 4, r -> {
                    refreshing = false;
                    long ci = r.status() == PciPort.DmaStatus.OK ? BigEndian.get32(r.data(), 0) & 0xFFFFFF : knownCi;
                    long delta = (ci - knownCi) & 0xFFFFFF;
                    knownCi += delta;
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
}
