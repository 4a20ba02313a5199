package nicsim.adapter;

import nicsim.sim.Layout;

/**
 * What the doorbell decoder queues for the WQE fetcher after decoding one doorbell write: the
 * queue it names, the producer index written, and which register was hit. The {@link #LAYOUT} is
 * the single definition of its bit fields, used by the Java model and by the RTL (hw) alike.
 *
 * @param qpn           queue pair (or CQ) number, 24 bits as in InfiniBand
 * @param producerIndex the 16-bit WQE counter the driver wrote (mlx5 sq doorbell: wqe_counter)
 * @param kind          register kind: see {@link Kind}
 */
public record DoorbellMsg(long qpn, long producerIndex, long kind) {
    /** Register kinds a doorbell page offset decodes to. */
    public enum Kind { SEND, CQ_ARM, CQ_CONSUMER, BLUEFLAME }

    public static final Layout<DoorbellMsg> LAYOUT = Layout.<DoorbellMsg>builder("DoorbellMsg")
            .field("qpn", 24, DoorbellMsg::qpn)
            .field("producerIndex", 16, DoorbellMsg::producerIndex)
            .field("kind", 2, DoorbellMsg::kind)
            .build(v -> new DoorbellMsg(v[0], v[1], v[2]));

    @Override public String toString() {
        return String.format("DoorbellMsg(qpn=0x%x pi=%d %s)", qpn, producerIndex,
                kind < Kind.values().length ? Kind.values()[(int) kind] : "kind" + kind);
    }
}
