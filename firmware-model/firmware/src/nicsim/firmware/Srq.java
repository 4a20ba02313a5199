package nicsim.firmware;

import java.util.function.Consumer;
import nicsim.abi.EqeType;

/**
 * A shared receive queue: one receive ring that many QPs take WQEs from, in order. An armed limit
 * fires SRQ_LIMIT_REACHED once when fewer WQEs than the limit remain (checked against the doorbell
 * record, so WQEs the host posted meanwhile count), then stays disarmed until set again.
 */
final class Srq {
    final Firmware fw;
    final long srqn, pd;
    final RecvRingReader ring;
    int limit, users;
    /** An XRC SRQ's domain (0: a basic SRQ) and the CQ its receives complete to (a basic SRQ's go to their QP's). */
    final long xrcd;
    final Cq cq;
    /** A tag-matching SRQ's tag list (null: not one); its completions go to {@link #cq}. */
    final TagMatching tm;

    Srq(Firmware fw, long srqn, long pd, RecvRingReader ring, int limit) {
        this(fw, srqn, pd, ring, limit, 0, null, null);
    }

    Srq(Firmware fw, long srqn, long pd, RecvRingReader ring, int limit, long xrcd, Cq cq) {
        this(fw, srqn, pd, ring, limit, xrcd, cq, null);
    }

    Srq(Firmware fw, long srqn, long pd, RecvRingReader ring, int limit, long xrcd, Cq cq, TagMatching tm) {
        this.fw = fw;
        this.srqn = srqn;
        this.pd = pd;
        this.ring = ring;
        this.limit = limit;
        this.xrcd = xrcd;
        this.cq = cq;
        this.tm = tm;
    }

    boolean xrc() { return xrcd != 0; }

    void take(Consumer<RecvRingReader.Wqe> done) {
        ring.take(w -> {
            done.accept(w);
            if (w != null) checkLimit();
        });
    }

    private void checkLimit() {
        if (limit == 0 || ring.known() >= limit) return;
        ring.readProducer(() -> {
            if (limit > 0 && ring.known() < limit) {
                limit = 0;
                fw.event(EqeType.SRQ_LIMIT_REACHED, srqn);
            }
        });
    }
}
