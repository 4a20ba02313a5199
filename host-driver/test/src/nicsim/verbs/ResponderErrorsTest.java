package nicsim.verbs;

import static org.junit.jupiter.api.Assertions.*;

import java.util.List;
import nicsim.abi.WqeFormat;
import nicsim.abi.WqeLayout;
import org.junit.jupiter.api.Test;

/** More rows of docs/sources.md#responder-errors, including the ones only a raw WQE can reach past the verbs checks. */
class ResponderErrorsTest {
    @Test
    void aSendIntoAReceiveWithABadLkeyIsLocProtErrAndRemOpErr() {
        Pair p = new Pair("cx-gen3x16", QpType.RC, 8192).up(Mtu.MTU_1024);
        p.b.qp.postRecv(new RecvWr().wrId(4).sgList(new Sge(p.b.buf.addr(), 64, p.b.mr.lkey() ^ 0x80)));
        p.a.qp.postSend(Wrs.signaled(1, WrOpcode.SEND).sgList(new Sge(p.a.buf.addr(), 32, p.a.mr.lkey())));
        WorkCompletion r = p.await(p.b.cq, 1).get(0);
        assertEquals(WcStatus.LOC_PROT_ERR, r.status(), r.toString());
        assertEquals(4, r.wrId());
        assertEquals(WcStatus.REM_OP_ERR, p.await(p.a.cq, 1).get(0).status());
        assertEquals(QpState.ERR, p.b.qp.query().qpState());
    }

    @Test
    void aReadWithABadRkeyIsRemAccessErrAndQpAccessErr() {
        Pair p = new Pair("cx-gen3x16", QpType.RC, 8192).up(Mtu.MTU_1024);
        p.a.qp.postSend(Wrs.signaled(1, WrOpcode.RDMA_READ)
                .sgList(new Sge(p.a.buf.addr(), 64, p.a.mr.lkey()))
                .remoteAddr(p.b.buf.addr() + 8190).rkey(p.b.mr.rkey()));
        WorkCompletion wc = p.await(p.a.cq, 1).get(0);
        assertEquals(WcStatus.REM_ACCESS_ERR, wc.status(), wc.toString());
        p.world.runFor(10_000_000);
        assertEquals(EventType.QP_ACCESS_ERR, p.b.ctx.pollAsyncEvent().orElseThrow().type());
    }

    @Test
    void aMisalignedAtomicReachingTheResponderIsRemInvReqErr() {
        Pair p = new Pair("cx-gen3x16", QpType.RC, 8192).up(Mtu.MTU_1024);
        var local = List.of(new WqeFormat.Sge(p.a.buf.addr(), 8, p.a.mr.lkey()));
        byte[] wqe = WqeFormat.encode(new WqeFormat.SendWqe(WqeLayout.OP_ATOMIC_FA, 0, p.a.qp.qpNum(),
                WqeFormat.CQ_UPDATE, 0, null, p.b.buf.addr() + 4, p.b.mr.rkey(), 1, 0, local, null), false);
        p.a.qp.postRawWqe(77, wqe);
        WorkCompletion wc = p.await(p.a.cq, 1).get(0);
        assertEquals(WcStatus.REM_INV_REQ_ERR, wc.status(), wc.toString());
        assertEquals(77, wc.wrId());
        p.world.runFor(10_000_000);
        assertEquals(EventType.QP_ACCESS_ERR, p.b.ctx.pollAsyncEvent().orElseThrow().type());
    }

    @Test
    void aMessageLongerThanTheAdapterTakesIsLocLenErr() {
        Pair p = new Pair("cx-gen3x16", QpType.RC, 8192).up(Mtu.MTU_1024);
        // two 600 MB SGEs: 1.2 GB, past the adapter's 1 GB message limit (the verbs layer refuses it; a raw WQE does
        // not)
        var twice = List.of(new WqeFormat.Sge(p.a.buf.addr(), 600 << 20, p.a.mr.lkey()),
                new WqeFormat.Sge(p.a.buf.addr(), 600 << 20, p.a.mr.lkey()));
        byte[] wqe = WqeFormat.encode(new WqeFormat.SendWqe(WqeLayout.OP_RDMA_WRITE, 0, p.a.qp.qpNum(),
                WqeFormat.CQ_UPDATE, 0, null, p.b.buf.addr(), p.b.mr.rkey(), 0, 0, twice, null), false);
        p.a.qp.postRawWqe(79, wqe);
        WorkCompletion wc = p.await(p.a.cq, 1).get(0);
        assertEquals(WcStatus.LOC_LEN_ERR, wc.status(), wc.toString());
        assertTrue(wc.syndrome().contains("longer"), wc.syndrome());
        VerbsException e = assertThrows(VerbsException.class, () -> p.a.qp.postSend(new SendWr()
                .opcode(WrOpcode.RDMA_WRITE).sgList(new Sge(p.a.buf.addr(), 600 << 20, p.a.mr.lkey()),
                        new Sge(p.a.buf.addr(), 600 << 20, p.a.mr.lkey()))));
        assertEquals(Errno.EINVAL, e.errno());
    }

    @Test
    void aWqeWithBrokenSegmentsIsLocQpOpErrNamingTheField() {
        Pair p = new Pair("cx-gen3x16", QpType.RC, 8192).up(Mtu.MTU_1024);
        byte[] wqe = new byte[64];
        wqe[3] = (byte) WqeLayout.OP_RDMA_WRITE;
        wqe[7] = 1; // DS 1: the ctrl segment only, no room for the remote-address segment a WRITE needs
        wqe[11] = (byte) WqeFormat.CQ_UPDATE;
        p.a.qp.postRawWqe(78, wqe);
        WorkCompletion wc = p.await(p.a.cq, 1).get(0);
        assertEquals(WcStatus.LOC_QP_OP_ERR, wc.status(), wc.toString());
        assertTrue(wc.syndrome().contains("segments"), wc.syndrome());
        var errors = p.world.host(0).adapter.errors();
        assertTrue(errors.stream().anyMatch(e -> e.toString().contains("remote address segment")), errors.toString());
    }
}
