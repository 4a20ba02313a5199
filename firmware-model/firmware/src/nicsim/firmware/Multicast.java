package nicsim.firmware;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import nicsim.abi.Cmd;
import nicsim.abi.ServiceType;
import nicsim.fabric.Grh;
import nicsim.fabric.Packet;

/**
 * The adapter's multicast groups (ATTACH_MCAST, DETACH_MCAST): for each MGID, the UD QPs attached to it.
 * A packet to QP 0xFFFFFF whose GRH names a group is delivered, one copy each, to every QP attached to
 * that group, in QPN order (so the same order every run); one with no GRH or to a group no QP of this
 * adapter is in is dropped and counted ({@code Firmware.mcast_no_group}), as an HCA drops it.
 *
 * <p>Loopback: a send to a multicast group also reaches the other QPs of the sending adapter attached
 * to it, from the adapter itself once the packet has left (the switch never sends a packet back out
 * its in-port), but never the sending QP: nicsim's QPs always behave as mlx5's created with
 * IBV_QP_CREATE_BLOCK_SELF_MCAST_LB.
 *
 * <p>Attaching a QP does not make the switch forward the group's packets to this port: that is the
 * subnet manager's, when the port joins the group (an SA MCMemberRecord Set), as on a real fabric.
 */
final class Multicast {
    /**
     * The port GID's prefix (link-local: the GID is fe80:: and the port GUID) and the hop limit of a multicast
     * send's GRH.
     */
    static final long GID_PREFIX = 0xfe80_0000_0000_0000L;
    static final int HOP_LIMIT = 1;

    /** An MGID, ordered as its bytes are. */
    record Mgid(long hi, long lo) implements Comparable<Mgid> {
        @Override public int compareTo(Mgid o) {
            int c = Long.compareUnsigned(hi, o.hi);
            return c != 0 ? c : Long.compareUnsigned(lo, o.lo);
        }

        @Override public String toString() { return Grh.text(hi, lo); }
    }

    private final Firmware fw;
    private final Map<Mgid, TreeSet<Long>> groups = new TreeMap<>();
    /** QP attachments now, over all groups: read from other threads (serve's tests wait on it). */
    volatile int attachments;

    Multicast(Firmware fw) { this.fw = fw; }

    /** ATTACH_MCAST: UD QP {@code qpn} receives what is sent to group {@code mgid}; attaching twice changes nothing. */
    void attach(Cmd.McastAttach a) {
        Qp q = check(a);
        Mgid g = new Mgid(a.gidHi(), a.gidLo());
        TreeSet<Long> members = groups.get(g);
        if (members != null && members.contains(q.qpn)) return;
        if (members == null && groups.size() >= Cmd.MAX_MCAST_GROUPS)
            throw new CommandRefused(Cmd.Syndrome.OUT_OF_MCAST_GROUPS, Cmd.MAX_MCAST_GROUPS);
        if (members != null && members.size() >= Cmd.MAX_MCAST_QP_ATTACH)
            throw new CommandRefused(Cmd.Syndrome.MCAST_GROUP_FULL, Cmd.MAX_MCAST_QP_ATTACH);
        groups.computeIfAbsent(g, k -> new TreeSet<>()).add(q.qpn);
        attachments++;
    }

    /** DETACH_MCAST: QP {@code qpn} leaves group {@code mgid}, which it must be in (NOT_ATTACHED). */
    void detach(Cmd.McastAttach a) {
        Qp q = check(a);
        Mgid g = new Mgid(a.gidHi(), a.gidLo());
        TreeSet<Long> members = groups.get(g);
        if (members == null || !members.remove(q.qpn)) throw new CommandRefused(Cmd.Syndrome.NOT_ATTACHED, q.qpn);
        attachments--;
        if (members.isEmpty()) groups.remove(g);
    }

    private Qp check(Cmd.McastAttach a) {
        Qp q = fw.qps.get(a.qpn());
        if (q == null) throw new CommandRefused(Cmd.Syndrome.UNKNOWN_QP, a.qpn());
        if (q.type != ServiceType.UD) throw new CommandRefused(Cmd.Syndrome.BAD_QP_TYPE, q.type.value());
        if (!Grh.multicast(a.gidHi())) throw new CommandRefused(Cmd.Syndrome.BAD_MGID, a.gidHi());
        return q;
    }

    /** A destroyed QP leaves every group it was in. */
    void destroyed(long qpn) {
        for (TreeSet<Long> m : groups.values()) if (m.remove(qpn)) attachments--;
        groups.values().removeIf(TreeSet::isEmpty);
    }

    /** The groups QP {@code qpn} is attached to, in MGID order. */
    List<Mgid> groupsOf(long qpn) {
        List<Mgid> out = new ArrayList<>();
        for (var e : groups.entrySet()) if (e.getValue().contains(qpn)) out.add(e.getKey());
        return out;
    }

    /** A packet to QP 0xFFFFFF from the fabric: a copy to each QP of its group. */
    void onPacket(Packet p) { deliver(p, -1); }

    /** A packet this adapter's QP {@code p.srcQp()} sent to a group, once it left: to the group's other QPs here. */
    void loopback(Packet p) {
        if (deliver(p, p.srcQp()) > 0) fw.stats.inc(FirmwareStat.MCAST_LOOPBACK);
    }

    /** Delivers to every member but {@code except}; returns how many copies. */
    private int deliver(Packet p, long except) {
        Grh h = p.grh();
        TreeSet<Long> members = h == null ? null : groups.get(new Mgid(h.dgidHi(), h.dgidLo()));
        if (members == null) {
            if (except < 0) fw.stats.inc(FirmwareStat.MCAST_NO_GROUP);
            return 0;
        }
        int n = 0;
        for (long qpn : List.copyOf(members)) {
            Qp q = fw.qps.get(qpn);
            if (q == null || qpn == except) continue;
            fw.stats.inc(FirmwareStat.MCAST_DELIVERED);
            q.responder.onPacket(p);
            n++;
        }
        return n;
    }
}
