package nicsim.serve;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import nicsim.abi.BigEndian;
import nicsim.driver.Host;
import nicsim.driver.World;
import nicsim.fabric.Grh;
import nicsim.fabric.Packet;
import nicsim.fabric.Mad;

/**
 * The subnet administrator's multicast groups (MCMemberRecord, IBA 15.2.5.17): Set joins a port to a group,
 * creating it if the record carries what a group needs (Q_Key, P_Key, SL, FlowLabel, TClass: opensm's
 * REQUIRED_MC_CREATE_COMP_MASK) and giving it the lowest free MLID from 0xC000; Delete takes join states
 * away, the port leaving once it has none and the group going with its last member (a group the SA made
 * at start stays); Get and GetTable answer one record per member. As opensm programs the switches' MFTs,
 * each change is written to the fabric's switch: a port receives a group's packets while it is a full
 * member or a non-member (JoinState bits 0 and 1); a send-only member does not. IPoIB's IPv4 broadcast
 * group of the default partition (ff12:401b:ffff::ffff:ffff, Q_Key 0x0b1b) exists from the start, as
 * opensm's partitions.conf "Default=0x7fff,ipoib" creates it, so the kernel's first join (MGID, PortGID,
 * P_Key, JoinState only) finds it.
 */
final class McGroups {
    static final int ATTR = 0x0038, SIZE = 52;
    /** Component mask bits (IBA table 193). */
    static final int MGID = 0, PORT_GID = 1, QKEY = 2, MLID = 3, MTU_SEL = 4, MTU = 5, TCLASS = 6, PKEY = 7,
            RATE_SEL = 8, RATE = 9, LIFE_SEL = 10, LIFE = 11, SL = 12, FLOW = 13, HOP = 14, SCOPE = 15, JOIN_STATE = 16;
    /** Record offsets. */
    static final int R_MGID = 0, R_PORT_GID = 16, R_QKEY = 32, R_MLID = 36, R_MTU = 38, R_TCLASS = 39, R_PKEY = 40,
            R_RATE = 42, R_LIFE = 43, R_SL_FLOW_HOP = 44, R_SCOPE_JOIN = 48;
    /** SA statuses (bits 14..8 of the MAD status): invalid request, no records, insufficient components. */
    static final int REQ_INVALID = 2 << 8, NO_RECORDS = 3 << 8, INSUFFICIENT_COMPONENTS = 6 << 8;
    static final int DELETE = 0x15;
    static final long BROADCAST_HI = 0xff12_401b_ffff_0000L, BROADCAST_LO = 0x0000_0000_ffff_ffffL;
    static final int IPOIB_QKEY = 0x0b1b;

    /** A group: its MGID, MLID and the record's group-wide fields as made; its members' join states by port LID. */
    static final class Group {
        final long hi, lo;
        final int mlid;
        final byte[] proto; // the record as created: Q_Key, MTU, TClass, P_Key, rate, life, SL/flow/hop, scope
        final boolean permanent;
        final Map<Integer, Integer> members = new TreeMap<>();

        Group(long hi, long lo, int mlid, byte[] proto, boolean permanent) {
            this.hi = hi;
            this.lo = lo;
            this.mlid = mlid;
            this.proto = proto;
            this.permanent = permanent;
        }

        @Override public String toString() { return Grh.text(hi, lo) + String.format(" (MLID 0x%x)", mlid); }
    }

    private final World world;
    private final Map<String, Group> groups = new TreeMap<>();

    McGroups(World world) {
        this.world = world;
        byte[] r = new byte[SIZE];
        Host h = world.host(SubnetManager.SM_NODE);
        BigEndian.put32(r, R_QKEY, IPOIB_QKEY);
        Mad.put16(r, R_PKEY, 0xffff);
        r[R_MTU] = (byte) (2 << 6 | SubnetManager.mtuCode(h));
        r[R_RATE] = (byte) (2 << 6 | SubnetManager.rateCode(h));
        r[R_LIFE] = (byte) (2 << 6 | 18);
        r[R_SCOPE_JOIN] = 0x20; // link-local
        add(new Group(BROADCAST_HI, BROADCAST_LO, Packet.MULTICAST_LID_FIRST, r, true));
    }

    private static String key(long hi, long lo) { return Grh.text(hi, lo); }

    private void add(Group g) { groups.put(key(g.hi, g.lo), g); }

    /** The groups, in MGID order. */
    List<Group> groups() { return List.copyOf(groups.values()); }

    private static boolean want(long mask, int bit) { return (mask >>> bit & 1) != 0; }

    /** What an MCMemberRecord request gets: an SA status (0: the records), and the records. */
    record Answer(int status, List<byte[]> records) {
        static Answer of(Object r) {
            return r instanceof Integer s ? new Answer(s, List.of()) : new Answer(0, List.of((byte[]) r));
        }
    }

    /** Answers a Set (join), Delete (leave), Get or GetTable of MCMemberRecord. */
    Answer answer(byte[] req, long mask) {
        byte[] rec = Arrays.copyOfRange(req, SubnetManager.SA_DATA, SubnetManager.SA_DATA + SIZE);
        return switch (Mad.method(req)) {
            case Mad.SET -> Answer.of(join(rec, mask));
            case DELETE -> Answer.of(leave(rec, mask));
            default -> {
                List<byte[]> out = new ArrayList<>();
                for (Group g : groups.values())
                    for (var m : g.members.entrySet()) {
                        byte[] r = record(g, m.getKey(), m.getValue());
                        if (matches(r, rec, mask)) out.add(r);
                    }
                yield new Answer(0, out);
            }
        };
    }

    private boolean matches(byte[] r, byte[] q, long mask) {
        int[][] fields = {{MGID, R_MGID, 16}, {PORT_GID, R_PORT_GID, 16}, {MLID, R_MLID, 2}, {PKEY, R_PKEY, 2}};
        for (int[] f : fields)
            if (want(mask, f[0]) && !Arrays.equals(r, f[1], f[1] + f[2], q, f[1], f[1] + f[2])) return false;
        return true;
    }

    private byte[] record(Group g, int lid, int joinState) {
        byte[] r = g.proto.clone();
        BigEndian.put64(r, R_MGID, g.hi);
        BigEndian.put64(r, R_MGID + 8, g.lo);
        System.arraycopy(SubnetManager.gid(lid), 0, r, R_PORT_GID, 16);
        Mad.put16(r, R_MLID, g.mlid);
        r[R_SCOPE_JOIN] = (byte) (r[R_SCOPE_JOIN] & 0xF0 | joinState & 0x0F);
        return r;
    }

    /** The LID of the port whose GID is at {@code at} of {@code rec}, or -1. */
    private int portLid(byte[] rec, int at) {
        for (Host h : world.hosts())
            if (Arrays.equals(SubnetManager.gid(h.firmware.lid()), 0, 16, rec, at, at + 16))
                return h.firmware.lid();
        return -1;
    }

    private Object join(byte[] rec, long mask) {
        if (!want(mask, MGID) || !want(mask, PORT_GID) || !want(mask, JOIN_STATE)) return INSUFFICIENT_COMPONENTS;
        int lid = portLid(rec, R_PORT_GID), state = rec[R_SCOPE_JOIN] & 0x0F;
        if (lid < 0 || state == 0) return REQ_INVALID;
        long hi = BigEndian.get64(rec, R_MGID), lo = BigEndian.get64(rec, R_MGID + 8);
        Group g = groups.get(key(hi, lo));
        if (g == null) {
            boolean create = want(mask, QKEY) && want(mask, PKEY) && want(mask, SL) && want(mask, FLOW)
                    && want(mask, TCLASS);
            if (!create) return hi == 0 && lo == 0 ? INSUFFICIENT_COMPONENTS : NO_RECORDS;
            int mlid = freeMlid();
            if (mlid < 0) return 1 << 8; // no resources
            if (hi == 0 && lo == 0) { // the SA picks the MGID (IBA 15.2.5.17.3.1): ff12:a01b:<P_Key>::<MLID>
                hi = 0xff12_a01b_0000_0000L | (long) Mad.get16(rec, R_PKEY) << 16;
                lo = mlid;
            }
            if (!Grh.multicast(hi)) return REQ_INVALID;
            byte[] proto = rec.clone();
            proto[R_MTU] = (byte) (2 << 6 | SubnetManager.mtuCode(world.host(SubnetManager.SM_NODE)));
            proto[R_RATE] = (byte) (2 << 6 | SubnetManager.rateCode(world.host(SubnetManager.SM_NODE)));
            proto[R_LIFE] = (byte) (2 << 6 | 18);
            if (!want(mask, SCOPE)) proto[R_SCOPE_JOIN] = (byte) ((hi >>> 48 & 0xF) << 4);
            g = new Group(hi, lo, mlid, proto, false);
            add(g);
        } else if (want(mask, QKEY) && BigEndian.get32(rec, R_QKEY) != BigEndian.get32(g.proto, R_QKEY)
                || want(mask, PKEY) && Mad.get16(rec, R_PKEY) != Mad.get16(g.proto, R_PKEY)) {
            return REQ_INVALID; // a join must agree with the group's Q_Key and P_Key
        }
        int now = g.members.getOrDefault(lid, 0) | state;
        g.members.put(lid, now);
        program(g, lid, now);
        return record(g, lid, now);
    }

    private Object leave(byte[] rec, long mask) {
        if (!want(mask, MGID) || !want(mask, PORT_GID) || !want(mask, JOIN_STATE)) return INSUFFICIENT_COMPONENTS;
        Group g = groups.get(key(BigEndian.get64(rec, R_MGID), BigEndian.get64(rec, R_MGID + 8)));
        int lid = portLid(rec, R_PORT_GID), state = rec[R_SCOPE_JOIN] & 0x0F;
        Integer had = g == null ? null : g.members.get(lid);
        if (had == null || (had & state) == 0) return REQ_INVALID;
        int now = had & ~state;
        byte[] answer = record(g, lid, had);
        if (now == 0) g.members.remove(lid);
        else g.members.put(lid, now);
        program(g, lid, now);
        if (g.members.isEmpty() && !g.permanent) groups.remove(key(g.hi, g.lo));
        return answer;
    }

    /** The switch's MFT for the group's MLID: port {@code lid} receives while a full member or non-member. */
    private void program(Group g, int lid, int state) {
        world.fabric.fabricSwitch().multicastMember(g.mlid, lid, (state & 0x3) != 0);
    }

    private int freeMlid() {
        for (int mlid = Packet.MULTICAST_LID_FIRST; mlid <= Packet.MULTICAST_LID_LAST; mlid++) {
            boolean used = false;
            for (Group g : groups.values()) used |= g.mlid == mlid;
            if (!used) return mlid;
        }
        return -1;
    }
}
