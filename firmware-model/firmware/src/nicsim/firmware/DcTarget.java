package nicsim.firmware;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import nicsim.abi.QpcState;
import nicsim.fabric.Packet.Op;
import nicsim.fabric.Packet;

/**
 * A DC target (DCT; docs/sources.md#dc-transport): one QP number any
 * initiator that knows it and its DC access key may reach. Each initiator that connects gets a DC
 * responder (DCR) from the target's pool: an RC responder of its own ({@link Qp}'s DCR form) over
 * the target's SRQ, CQ and PD, which lives until the initiator disconnects. When the pool is spent
 * the target answers the connect with a CNAK and drops that initiator's packets until it connects
 * again; a connect under another key is refused (NAK remote access) and counted as a key
 * violation, and no responder is given.
 */
final class DcTarget {
    private final Qp t;
    /** The DC access key requests must carry (mlx5dv's dct_access_key). */
    final long key;
    /** The responders in use, by initiator (LID << 24 | QP number). */
    private final Map<Long, Qp> dcrs = new LinkedHashMap<>();

    DcTarget(Qp t, long key) {
        this.t = t;
        this.key = key;
    }

    /** Responders in use. */
    int inUse() { return dcrs.size(); }

    void onPacket(Packet p) {
        Firmware fw = t.fw;
        if (t.state != QpcState.RTR) { t.count(FirmwareStat.PACKETS_DROPPED_STATE); return; }
        // a target sends nothing, so hears no answers
        if (p.transport() != Packet.DC || !(p.op().isRequest() || p.op().isDcControl())) {
            t.count(FirmwareStat.PACKETS_DROPPED_TYPE);
            return;
        }
        long who = (long) p.slid() << 24 | p.srcQp();
        Qp r = dcrs.get(who);
        if (p.dcKey() != key) {
            fw.stats.inc(FirmwareStat.DC_KEY_VIOLATIONS);
            if (p.op() == Op.DC_CONNECT) {
                fw.report(String.format("DC key violation at DCT 0x%x: initiator QP 0x%x at LID %d presented key 0x%x",
                        t.qpn, p.srcQp(), p.slid(), p.dcKey()));
                answer(p, Op.ACK, Packet.AETH_NAK_ACCESS);
            }
            return;
        }
        switch (p.op()) {
            case DC_CONNECT -> connect(p, who, r);
            case DC_DISCONNECT -> { if (r != null) release(r); }
            default -> {
                if (r == null) { fw.stats.inc(FirmwareStat.DC_DROPPED_UNCONNECTED); return; }
                r.lastUse = fw.sim.now();
                r.responder.onPacket(p);
            }
        }
    }

    private void connect(Packet p, long who, Qp r) {
        Firmware fw = t.fw;
        if (r != null && r.dcConnectPsn == p.psn()) { // the same connect again (its ACK was lost): answered again
            r.responder.ack(Op.ACK, p.psn(), Packet.AETH_ACK, 0);
            return;
        }
        if (r != null) release(r); // a new connection from the same initiator, whose disconnect was lost
        if (dcrs.size() >= fw.dc.dcrPool()) reclaimIdle();
        if (dcrs.size() >= fw.dc.dcrPool()) {
            fw.stats.inc(FirmwareStat.DC_CNAKS_SENT);
            answer(p, Op.DC_CNAK, Packet.AETH_ACK);
            return;
        }
        Qp dcr = new Qp(t, p.slid(), p.srcQp(), p.psn());
        dcr.lastUse = fw.sim.now();
        dcrs.put(who, dcr);
        fw.stats.inc(FirmwareStat.DC_DCRS_GIVEN);
        dcr.responder.ack(Op.ACK, p.psn(), Packet.AETH_ACK, 0);
    }

    /** Takes back responders idle longer than {@code dc.dcr.timeout} (their disconnects were lost). */
    private void reclaimIdle() {
        long now = t.fw.sim.now();
        for (Qp r : List.copyOf(dcrs.values()))
            if (now - r.lastUse >= t.fw.dc.dcrTimeout() && r.responder.idle()) {
                t.fw.stats.inc(FirmwareStat.DC_DCRS_RECLAIMED);
                release(r);
            }
    }

    /** An answer from the target itself (no responder): a CNAK, or the NAK of a refused key. */
    private void answer(Packet p, Op op, int aeth) {
        Packet a = new Packet(t.fw.lid(), p.slid(), op, p.srcQp(), t.qpn, p.psn(), false, false, 0, 0, 0, 0, 0, aeth,
                0, 0, 0, 0, new byte[0], Packet.DC);
        t.fw.exec(t.fw.packetCycles, t.live(() -> t.fw.send(a)));
    }

    /** Gives responder {@code r} back to the pool (what it has started, such as a completion, still finishes). */
    void release(Qp r) { dcrs.values().remove(r); }

    /** The target is reset or destroyed: every responder goes, and whatever they had scheduled is dropped. */
    void releaseAll() {
        for (Qp r : dcrs.values()) r.generation++;
        dcrs.clear();
    }
}
