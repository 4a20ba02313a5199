package nicsim.adapter;

import nicsim.sim.Layout;

/**
 * Firmware's update of the doorbell decoder's queue table: which UAR page owns queue {@code qpn}.
 * The table is indexed by the low bits of the queue number and tagged with the whole number, so
 * a doorbell naming a queue that was never created (or was destroyed) is caught.
 *
 * @param cq    1 for the CQ table, 0 for the QP table
 * @param valid 0 removes the entry
 */
public record QueueTableWrite(long cq, long qpn, long uar, long valid) {
    public static final Layout<QueueTableWrite> LAYOUT = Layout.<QueueTableWrite>builder("QueueTableWrite")
            .field("cq", 1, QueueTableWrite::cq)
            .field("qpn", 24, QueueTableWrite::qpn)
            .field("uar", 16, QueueTableWrite::uar)
            .field("valid", 1, QueueTableWrite::valid)
            .build(v -> new QueueTableWrite(v[0], v[1], v[2], v[3]));
}
