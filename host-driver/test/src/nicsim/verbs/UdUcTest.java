package nicsim.verbs;

import static org.junit.jupiter.api.Assertions.*;

import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** UD and UC through the whole stack. */
class UdUcTest {
    @Test
    void udSendArrivesAfterTheGrhSpaceWithSourceQpAndLid() {
        Pair p = new Pair("cx-gen3x16", QpType.UD, 8192).upUd(Mtu.MTU_2048);
        byte[] msg = "hello over UD".getBytes();
        p.a.buf.write(0, msg);
        p.b.qp.postRecv(new RecvWr().wrId(3).sgList(new Sge(p.b.buf.addr(), 40 + 100, p.b.mr.lkey())));
        AddressHandle ah = p.a.pd.createAh(new AhAttr().dlid(p.b.ctx.queryPort(1).lid()));
        p.a.qp.postSend(Wrs.signaled(1, WrOpcode.SEND).ah(ah).remoteQpn(p.b.qp.qpNum())
                .remoteQkey(Connect.QKEY).sgList(new Sge(p.a.buf.addr(), msg.length, p.a.mr.lkey())));
        WorkCompletion r = p.await(p.b.cq, 1).get(0);
        assertEquals(WcStatus.SUCCESS, r.status(), r.toString());
        assertEquals(40 + msg.length, r.byteLen(), "byte_len counts the 40-byte GRH space");
        assertEquals(p.a.qp.qpNum(), r.srcQp());
        assertEquals(p.a.ctx.queryPort(1).lid(), r.slid());
        assertArrayEquals(msg, p.b.buf.read(40, msg.length));
        assertEquals(WcStatus.SUCCESS, p.await(p.a.cq, 1).get(0).status());
    }

    @Test
    void udWithTheWrongQkeyIsDroppedSilently() {
        Pair p = new Pair("cx-gen3x16", QpType.UD, 8192).upUd(Mtu.MTU_2048);
        p.b.qp.postRecv(new RecvWr().wrId(3).sgList(new Sge(p.b.buf.addr(), 200, p.b.mr.lkey())));
        AddressHandle ah = p.a.pd.createAh(new AhAttr().dlid(p.b.ctx.queryPort(1).lid()));
        p.a.qp.postSend(Wrs.signaled(1, WrOpcode.SEND).ah(ah).remoteQpn(p.b.qp.qpNum())
                .remoteQkey(0x1234).sgList(new Sge(p.a.buf.addr(), 10, p.a.mr.lkey())));
        assertEquals(WcStatus.SUCCESS, p.await(p.a.cq, 1).get(0).status(), "UD sends complete when sent");
        p.world.runFor(50_000_000);
        assertTrue(p.b.cq.poll(1).isEmpty());
        assertEquals(QpState.RTS, p.b.qp.query().qpState());
        assertTrue(p.world.sim.counters().get("Firmware.qkey_mismatch") > 0);
    }

    /**
     * qkey 0 is a qkey like any other (Open MPI's UD connection manager uses it); a controlled qkey
     * (the high bit set) sends the QP's own.
     */
    @Test
    void qkeyZeroAndAControlledQkeyArrive() {
        Pair p = new Pair("cx-gen3x16", QpType.UD, 8192).upUd(Mtu.MTU_2048);
        p.b.qp.modify(new QpAttr().qpState(QpState.RTS).qkey(0), QpAttrMask.STATE | QpAttrMask.QKEY);
        p.b.qp.postRecv(new RecvWr().wrId(3).sgList(new Sge(p.b.buf.addr(), 200, p.b.mr.lkey())));
        p.b.qp.postRecv(new RecvWr().wrId(4).sgList(new Sge(p.b.buf.addr() + 256, 200, p.b.mr.lkey())));
        AddressHandle ah = p.a.pd.createAh(new AhAttr().dlid(p.b.ctx.queryPort(1).lid()));
        p.a.qp.postSend(Wrs.signaled(1, WrOpcode.SEND).ah(ah)
                .remoteQpn(p.b.qp.qpNum()).remoteQkey(0).sgList(new Sge(p.a.buf.addr(), 10, p.a.mr.lkey())));
        assertEquals(WcStatus.SUCCESS, p.await(p.b.cq, 1).get(0).status(), "qkey 0 matched the receiver's 0");
        p.a.qp.modify(new QpAttr().qpState(QpState.RTS).qkey(0), QpAttrMask.STATE | QpAttrMask.QKEY);
        p.a.qp.postSend(Wrs.signaled(2, WrOpcode.SEND).ah(ah)
                .remoteQpn(p.b.qp.qpNum()).remoteQkey(0x80000000).sgList(new Sge(p.a.buf.addr(), 10, p.a.mr.lkey())));
        assertEquals(WcStatus.SUCCESS, p.await(p.b.cq, 1).get(0).status(), "the high bit sent the sender QP's qkey, 0");
        assertEquals(0, p.world.sim.counters().get("Firmware.qkey_mismatch"));
    }

    @Test
    void rdmaReadOnUdIsRefusedAtPost() {
        Pair p = new Pair("cx-gen3x16", QpType.UD, 8192).upUd(Mtu.MTU_2048);
        VerbsException e = assertThrows(VerbsException.class,
                () -> p.a.qp.postSend(new SendWr().opcode(WrOpcode.RDMA_READ)));
        assertEquals(Errno.EINVAL, e.errno());
        assertTrue(e.getMessage().contains("RDMA_READ"), e.getMessage());
    }

    @Test
    void ucWriteWithImmediateConsumesAReceive() {
        Pair p = new Pair("cx-gen3x16", QpType.UC, 16384).up(Mtu.MTU_1024);
        byte[] data = new byte[5000];
        new Random(4).nextBytes(data);
        p.a.buf.write(0, data);
        p.b.qp.postRecv(new RecvWr().wrId(77));
        p.a.qp.postSend(new SendWr().wrId(1).opcode(WrOpcode.RDMA_WRITE_WITH_IMM).immData(99)
                .sendFlags(SendFlags.SIGNALED)
                .sgList(new Sge(p.a.buf.addr(), data.length, p.a.mr.lkey()))
                .remoteAddr(p.b.buf.addr() + 1000).rkey(p.b.mr.rkey()));
        WorkCompletion r = p.await(p.b.cq, 1).get(0);
        assertEquals(WcStatus.SUCCESS, r.status(), r.toString());
        assertEquals(WcOpcode.RECV_RDMA_WITH_IMM, r.opcode());
        assertEquals(99, r.immData());
        assertEquals(77, r.wrId());
        assertArrayEquals(data, p.b.buf.read(1000, data.length));
    }
}
