package nicsim.adapter;

import nicsim.sim.Layout;

/**
 * What the doorbell decoder queues after decoding one doorbell write: the queue it names, the
 * index written, and which register was hit. The {@link #LAYOUT} is the single definition of its
 * bit fields, used by the Java model and by the RTL (hw) alike.
 *
 * @param qpn       queue number: the QP for a send doorbell, the CQ for an arm doorbell (24 bits)
 * @param index     send: the 16-bit WQE counter (producer index); CQ arm: the 24-bit consumer index
 * @param kind      register kind: see {@link Kind}
 * @param sn        CQ arm sequence number (2 bits), 0 for sends
 * @param solicited CQ arm: 1 to be notified of solicited completions only
 */
public record DoorbellMsg(long qpn, long index, long kind, long sn, long solicited) {
    /** Register kinds a doorbell page offset decodes to. */
    public enum Kind { SEND, CQ_ARM }

    public static final Layout<DoorbellMsg> LAYOUT = Layout.<DoorbellMsg>builder("DoorbellMsg")
            .field("qpn", 24, DoorbellMsg::qpn)
            .field("index", 24, DoorbellMsg::index)
            .field("kind", 2, DoorbellMsg::kind)
            .field("sn", 2, DoorbellMsg::sn)
            .field("solicited", 1, DoorbellMsg::solicited)
            .build(v -> new DoorbellMsg(v[0], v[1], v[2], v[3], v[4]));

    public static DoorbellMsg send(long qpn, long wqeCounter) {
        return new DoorbellMsg(qpn, wqeCounter, Kind.SEND.ordinal(), 0, 0);
    }

    /** Same queue and register: a later doorbell of this key supersedes an earlier one still queued. */
    public boolean sameQueue(DoorbellMsg o) { return qpn == o.qpn && kind == o.kind; }

    @Override public String toString() {
        Object what = kind < Kind.values().length ? Kind.values()[(int) kind] : "kind" + kind;
        String arm = kind == Kind.CQ_ARM.ordinal() ? " sn=" + sn + (solicited != 0 ? " solicited" : "") : "";
        return String.format("DoorbellMsg(%s 0x%x idx=%d%s)", what, qpn, index, arm);
    }
}
