package nicsim.verbs;

import static org.junit.jupiter.api.Assertions.*;

import java.util.Arrays;
import java.util.List;
import nicsim.abi.BigEndian;
import nicsim.abi.Cmd;
import nicsim.driver.ErrnoException;
import nicsim.driver.World;
import nicsim.fabric.Faults;
import nicsim.profile.Profiles;
import org.junit.jupiter.api.Test;

/**
 * UD multicast through the whole stack (docs/device.md, "Multicast"): QPs attached to a group by
 * ATTACH_MCAST, the switch copying a packet to a multicast LID to every member port its MFT lists, and
 * each adapter delivering a copy, GRH first, to every QP of the group but the sender.
 */
class MulticastTest {
    static final int MLID = 0xC001, QKEY = 0x01234567;
    /** ff12:401b:ffff::1, a link-local group's MGID. */
    static final byte[] MGID = {(byte) 0xff, 0x12, 0x40, 0x1b, (byte) 0xff, (byte) 0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};

    /** Three nodes, a UD QP each at RTS: node 0 sends, nodes 1 and 2 receive. */
    static final class Three {
        final World world = new World(3, Profiles.load("cx-gen3x16"), 1, Faults.NONE);
        final Pair.Side[] n = new Pair.Side[3];

        Three() {
            for (int i = 0; i < 3; i++) {
                n[i] = new Pair.Side(world, i, QpType.UD, 8192, Pair.defaults());
                up(n[i].qp);
            }
        }

        static void up(QueuePair qp) {
            qp.modify(new QpAttr().qpState(QpState.INIT).pkeyIndex(0).portNum(1).qkey(QKEY),
                    QpAttrMask.STATE | QpAttrMask.PKEY_INDEX | QpAttrMask.PORT | QpAttrMask.QKEY);
            qp.modify(new QpAttr().qpState(QpState.RTR), QpAttrMask.STATE);
            qp.modify(new QpAttr().qpState(QpState.RTS).sqPsn(0), QpAttrMask.STATE | QpAttrMask.SQ_PSN);
        }

        int lid(int i) { return n[i].ctx.queryPort(1).lid(); }

        /** The switch forwards MLID to these nodes' ports, as the SM programs it when they join. */
        void members(int... nodes) {
            for (int i : nodes) world.fabric.fabricSwitch().multicastMember(MLID, lid(i), true);
        }

        void post(int node, int at) {
            n[node].qp.postRecv(new RecvWr().wrId(at).sgList(new Sge(n[node].buf.addr() + at, 256, n[node].mr.lkey())));
        }

        void send(byte[] msg) {
            n[0].buf.write(4096, msg);
            AddressHandle ah = n[0].pd.createAh(new AhAttr().dlid(MLID).isGlobal(true).dgid(MGID).hopLimit(1));
            n[0].qp.postSend(Wrs.signaled(9, WrOpcode.SEND).ah(ah)
                    .remoteQpn(0xFFFFFF).remoteQkey(QKEY)
                    .sgList(new Sge(n[0].buf.addr() + 4096, msg.length, n[0].mr.lkey())));
            assertEquals(WcStatus.SUCCESS, Completions.await(world, n[0].cq, 1).get(0).status());
        }
    }

    @Test
    void eachMemberGetsOneCopyGrhFirstAndTheSenderNone() {
        Three t = new Three();
        for (int i = 0; i < 3; i++) t.n[i].qp.attachMcast(MGID, MLID);
        QueuePair second = t.n[1].pd.createQp(Pair.defaults().qpType(QpType.UD).sendCq(t.n[1].cq).recvCq(t.n[1].cq));
        Three.up(second);
        second.attachMcast(MGID, MLID);
        second.postRecv(new RecvWr().wrId(1024).sgList(new Sge(t.n[1].buf.addr() + 1024, 256, t.n[1].mr.lkey())));
        t.members(1, 2);
        for (int i = 0; i < 3; i++) t.post(i, 0);
        byte[] msg = "to every member of the group".getBytes();
        t.send(msg);
        List<WorkCompletion> at1 = Completions.await(t.world, t.n[1].cq, 2);
        WorkCompletion at2 = Completions.await(t.world, t.n[2].cq, 1).get(0);
        for (WorkCompletion wc : List.of(at1.get(0), at1.get(1), at2)) {
            assertEquals(WcStatus.SUCCESS, wc.status(), wc.toString());
            assertEquals(40 + msg.length, wc.byteLen());
            assertEquals(t.n[0].qp.qpNum(), wc.srcQp());
            assertEquals(t.lid(0), wc.slid());
            assertEquals(WcFlags.GRH, wc.wcFlags() & WcFlags.GRH, "a multicast receive reports its GRH");
        }
        assertEquals(List.of(0L, 1024L), at1.stream().map(WorkCompletion::wrId).sorted().toList(),
                "both QPs of node 1");
        for (int[] where : new int[][]{{1, 0}, {1, 1024}, {2, 0}}) {
            byte[] grh = t.n[where[0]].buf.read(where[1], 40);
            assertEquals(6, (grh[0] & 0xff) >> 4, "IP version 6");
            assertEquals(0x1B, grh[6] & 0xff, "next header: BTH");
            assertArrayEquals(MGID, Arrays.copyOfRange(grh, 24, 40), "DGID: the group");
            assertEquals(0xfe80_0000_0000_0000L, BigEndian.get64(grh, 8), "SGID: the sender's port GID");
            assertArrayEquals(t.n[0].ctx.queryPort(1).gid(), Arrays.copyOfRange(grh, 8, 24),
                    "the link-local prefix and the sender's port GUID, as its GID table says");
            assertArrayEquals(msg, t.n[where[0]].buf.read(where[1] + 40, msg.length));
        }
        t.world.runFor(20_000_000);
        assertTrue(t.n[0].cq.poll(4).isEmpty(), "the sending QP gets no copy of its own");
        assertEquals(1, t.world.sim.counters().get("Fabric.multicast_packets"));
        assertEquals(2, t.world.sim.counters().get("Fabric.multicast_copies"), "one copy per member port, none back");
    }

    @Test
    void aDetachedQpGetsNothingMoreAndALocalMemberGetsTheLoopback() {
        Three t = new Three();
        t.n[1].qp.attachMcast(MGID, MLID);
        t.n[2].qp.attachMcast(MGID, MLID);
        QueuePair local = t.n[0].pd.createQp(Pair.defaults().qpType(QpType.UD).sendCq(t.n[0].cq).recvCq(t.n[0].cq));
        Three.up(local);
        local.attachMcast(MGID, MLID);
        local.postRecv(new RecvWr().wrId(77).sgList(new Sge(t.n[0].buf.addr(), 256, t.n[0].mr.lkey())));
        t.members(1, 2);
        t.n[2].qp.detachMcast(MGID, MLID);
        for (int i = 1; i < 3; i++) t.post(i, 0);
        t.send("after the detach".getBytes());
        assertEquals(1, Completions.await(t.world, t.n[1].cq, 1).size());
        WorkCompletion lb = Completions.await(t.world, t.n[0].cq, 1).get(0);
        assertEquals(77, lb.wrId(), "the sender's adapter loops the packet back to its other member QP");
        assertEquals(t.n[0].qp.qpNum(), lb.srcQp());
        t.world.runFor(20_000_000);
        assertTrue(t.n[2].cq.poll(4).isEmpty(), "node 2's QP left the group");
        assertEquals(1, t.world.sim.counters().get("Firmware.mcast_no_group"),
                "node 2's port still got the packet: dropped");
        VerbsException again = assertThrows(VerbsException.class, () -> t.n[2].qp.detachMcast(MGID, MLID));
        assertEquals(Errno.EINVAL, again.errno());
        assertTrue(again.getMessage().contains("not attached"), again.getMessage());
    }

    @Test
    void aGidThatIsNotMulticastIsRefusedByTheAdapterWithItsValue() {
        Three t = new Three();
        byte[] unicast = t.n[1].ctx.queryPort(1).gid();
        VerbsException v = assertThrows(VerbsException.class, () -> t.n[1].qp.attachMcast(unicast, MLID));
        assertEquals(Errno.EINVAL, v.errno());
        assertTrue(v.getMessage().contains("fe80:0000"), v.getMessage());
        // past the verbs layer's check, the adapter's own: BAD_MGID with the GID's first half
        ErrnoException c = assertThrows(ErrnoException.class, () -> t.world.host(1).driver().command(Cmd.ATTACH_MCAST,
                Cmd.MCAST_ATTACH_IN, new Cmd.McastAttach(t.n[1].qp.qpNum(), 0xfe80_0000_0000_0000L, 2), Cmd.EMPTY));
        assertEquals(Errno.EINVAL, c.errno());
        assertTrue(c.getMessage().contains("not a multicast GID") && c.getMessage().contains("0xfe80000000000000"),
                c.getMessage());
        QueuePair rc = t.n[1].pd.createQp(Pair.defaults().qpType(QpType.RC).sendCq(t.n[1].cq).recvCq(t.n[1].cq));
        assertEquals(Errno.EINVAL, assertThrows(VerbsException.class, () -> rc.attachMcast(MGID, MLID)).errno());
        assertEquals(Errno.EINVAL, assertThrows(VerbsException.class, () -> t.n[1].qp.attachMcast(MGID, 5)).errno(),
                "LID 5 is not a multicast LID");
    }
}
