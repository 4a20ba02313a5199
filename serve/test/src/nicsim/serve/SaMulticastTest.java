package nicsim.serve;

import static org.junit.jupiter.api.Assertions.*;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import nicsim.abi.BigEndian;
import nicsim.driver.World;
import nicsim.fabric.Faults;
import nicsim.fabric.Mad;
import nicsim.profile.Profiles;
import org.junit.jupiter.api.Test;

/**
 * The SA's multicast groups (MCMemberRecord), asked across the fabric from nodes' QP1 with MADs laid out as
 * the kernel's ib_sa sends them (ib_sa_join_multicast: Set; a leave: Delete), and the switch's MFT they program.
 */
class SaMulticastTest {
    private final World w = new World(3, Profiles.load("cx-gen3x16"), 1, Faults.NONE);
    private final SubnetManager sm = new SubnetManager(w);
    private final List<byte[]> got = new ArrayList<>();
    /** ff12:4001:ffff::f01:101: 239.1.1.1 as the kernel's RDMA CM maps it for RDMA_PS_UDP. */
    static final long CM_HI = 0xff12_4001_ffff_0000L, CM_LO = 0x0000_0000_0f01_0101L;

    SaMulticastTest() {
        for (int n = 1; n < 3; n++)
            w.host(n).firmware.management().listen((qp, slid, src, mad) -> Mad.isResponse(mad) && got.add(mad));
    }

    private byte[] ask(int node, byte[] mad) {
        got.clear();
        w.host(node).within(() -> { w.host(node).firmware.management().send(1, 1, 1, mad); return null; });
        w.runFor(500_000_000L);
        assertEquals(1, got.size(), "one answer");
        return got.get(0);
    }

    /** An MCMemberRecord MAD of {@code method} for port {@code node}'s GID, {@code mask} naming the fields set. */
    static byte[] member(int method, long hi, long lo, int node, int joinState, long mask) {
        byte[] m = Mad.request(Mad.CLASS_SUBN_ADM, SubnetManager.SA_VERSION, method, 0x1234_0000L + node,
                McGroups.ATTR, 0);
        BigEndian.put64(m, SubnetManager.SA_COMP_MASK, mask);
        int d = SubnetManager.SA_DATA;
        BigEndian.put64(m, d, hi);
        BigEndian.put64(m, d + 8, lo);
        System.arraycopy(SubnetManager.gid(node + 1), 0, m, d + 16, 16);
        Mad.put16(m, d + 40, 0xffff);
        m[d + 48] = (byte) joinState;
        return m;
    }

    static long bits(int... b) {
        long m = 0;
        for (int i : b) m |= 1L << i;
        return m;
    }

    /** IPoIB's join of the broadcast group: MGID, PortGID, P_Key and JoinState only (ipoib_mcast_join). */
    static final long IPOIB_BROADCAST = bits(McGroups.MGID, McGroups.PORT_GID, McGroups.PKEY, McGroups.JOIN_STATE);
    /** RDMA CM's join (cma_join_ib_multicast): what creating a group takes. */
    static final long CM_JOIN = IPOIB_BROADCAST | bits(McGroups.QKEY, McGroups.SL, McGroups.FLOW, McGroups.TCLASS);

    @Test
    void ipoibJoinsTheBroadcastGroupTheSaMadeAtStart() {
        byte[] r = ask(2, member(Mad.SET, McGroups.BROADCAST_HI, McGroups.BROADCAST_LO, 2, 1, IPOIB_BROADCAST));
        assertEquals(0, Mad.status(r));
        assertEquals(Mad.GET_RESP, Mad.method(r));
        int d = SubnetManager.SA_DATA;
        assertEquals(0xC000, Mad.get16(r, d + 36), "MLID");
        assertEquals(0x0b1b, BigEndian.get32(r, d + 32), "IPoIB's Q_Key");
        assertEquals(0xffff, Mad.get16(r, d + 40));
        assertEquals(2 << 6 | 5, r[d + 38] & 0xff, "MTU exactly 4096 (cx-gen3x16's link.mtu)");
        assertEquals(1, r[d + 48] & 0x0f, "full member");
        assertEquals(2, (r[d + 48] & 0xf0) >> 4, "link-local scope");
        assertArrayEquals(SubnetManager.gid(3), Arrays.copyOfRange(r, d + 16, d + 32));
        assertEquals(List.of(3), w.fabric.fabricSwitch().multicastPorts(0xC000),
                "the switch forwards to node 2's port");
    }

    @Test
    void aCmJoinCreatesAGroupWhichGoesWithItsLastMember() {
        long mask = CM_JOIN;
        byte[] q = member(Mad.SET, CM_HI, CM_LO, 1, 1, mask);
        BigEndian.put32(q, SubnetManager.SA_DATA + 32, 0x01234567);
        byte[] r = ask(1, q);
        assertEquals(0, Mad.status(r));
        int mlid = Mad.get16(r, SubnetManager.SA_DATA + 36);
        assertEquals(0xC001, mlid, "the lowest MLID the broadcast group does not hold");
        byte[] q2 = member(Mad.SET, CM_HI, CM_LO, 2, 1, mask);
        BigEndian.put32(q2, SubnetManager.SA_DATA + 32, 0x01234567);
        assertEquals(mlid, Mad.get16(ask(2, q2), SubnetManager.SA_DATA + 36), "the second joins the same group");
        assertEquals(List.of(2, 3), w.fabric.fabricSwitch().multicastPorts(mlid));
        BigEndian.put32(q2, SubnetManager.SA_DATA + 32, 0x1111);
        assertEquals(McGroups.REQ_INVALID, Mad.status(ask(2, q2)), "a join with another Q_Key than the group's");

        byte[] table = ask(1, member(Mad.GET_TABLE, CM_HI, CM_LO, 1, 0, bits(McGroups.MGID)));
        assertEquals(Mad.GET_TABLE_RESP, Mad.method(table));
        assertEquals(2 * 56 + 20, BigEndian.get32(table, SubnetManager.RMPP + 8),
                "two 52-byte records at 56-byte strides");

        byte[] leave = ask(2, member(McGroups.DELETE, CM_HI, CM_LO, 2, 1, IPOIB_BROADCAST));
        assertEquals(0, Mad.status(leave));
        assertEquals(McGroups.DELETE | Mad.RESPONSE, Mad.method(leave));
        assertEquals(List.of(2), w.fabric.fabricSwitch().multicastPorts(mlid),
                "node 2's port no longer gets the group");
        assertEquals(0, Mad.status(ask(1, member(McGroups.DELETE, CM_HI, CM_LO, 1, 1, IPOIB_BROADCAST))));
        assertEquals(List.of(), w.fabric.fabricSwitch().multicastPorts(mlid));
        assertEquals(McGroups.NO_RECORDS, Mad.status(ask(1, member(Mad.GET, CM_HI, CM_LO, 1, 0, bits(McGroups.MGID)))),
                "the group went with its last member");
        assertEquals(McGroups.REQ_INVALID,
                Mad.status(ask(1, member(McGroups.DELETE, CM_HI, CM_LO, 1, 1, IPOIB_BROADCAST))),
                "a leave of a group the port is not in");
    }

    @Test
    void aJoinWithoutWhatAGroupNeedsCreatesNothing() {
        byte[] r = ask(1, member(Mad.SET, CM_HI, CM_LO, 1, 1, IPOIB_BROADCAST));
        assertEquals(McGroups.NO_RECORDS, Mad.status(r),
                "no such group, and no Q_Key, SL, FlowLabel, TClass to make it");
        assertEquals(1, sm.groups.groups().size(), "only the broadcast group");
        assertEquals(McGroups.INSUFFICIENT_COMPONENTS,
                Mad.status(ask(1, member(Mad.SET, CM_HI, CM_LO, 1, 1, bits(McGroups.MGID, McGroups.JOIN_STATE)))),
                "no PortGID");
    }
}
