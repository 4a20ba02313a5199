package nicsim.verbs;

import static org.junit.jupiter.api.Assertions.*;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Every path where the adapter changes a QP's state by itself shows in {@link QueuePair#state()}
 * as soon as the program learns of it (the event or the completion), without a query(): a program
 * that reacts to an error by looking at the state sees the state the device put the QP in.
 */
class DeviceMovedStateTest {
    @Test
    void aWriteWithAWrongRkeyPutsTheResponderInErrWhenItsEventArrives() {
        Pair p = new Pair("cx-gen3x16", QpType.RC, 8192).up(Mtu.MTU_1024);
        p.a.qp.postSend(Wrs.signaled(1, WrOpcode.RDMA_WRITE)
                .sgList(new Sge(p.a.buf.addr(), 64, p.a.mr.lkey()))
                .remoteAddr(p.b.buf.addr()).rkey(p.b.mr.rkey() ^ 0x100));
        assertEquals(WcStatus.REM_ACCESS_ERR, p.await(p.a.cq, 1).get(0).status());
        assertEquals(QpState.ERR, p.a.qp.state(), "the requester, from its error completion");
        List<AsyncEvent> seen = new ArrayList<>();
        p.world.runUntil(() -> {
            p.b.ctx.pollAsyncEvent().ifPresent(seen::add);
            return !seen.isEmpty();
        }, 1_000_000_000L);
        assertEquals(EventType.QP_ACCESS_ERR, seen.get(0).type());
        assertEquals(QpState.ERR, p.b.qp.state(), "the responder, as the event says");
        assertEquals(QpState.ERR, p.b.qp.query().qpState(), "and the adapter agrees");
    }

    @Test
    void aQpFatalAfterCqOverflowShowsBeforeTheProgramPollsTheEvent() {
        Pair p = new Pair("cx-gen3x16", QpType.RC, 8192);
        CompletionQueue small = p.a.ctx.createCq(1);
        QueuePair qp = p.overflowSendCq(small);
        p.world.runUntil(() -> qp.state() == QpState.ERR, 1_000_000_000L);
        List<EventType> types = new ArrayList<>();
        for (var e = p.a.ctx.pollAsyncEvent(); e.isPresent(); e = p.a.ctx.pollAsyncEvent()) types.add(e.get().type());
        assertTrue(types.contains(EventType.QP_FATAL), types.toString());
    }

    @Test
    void aUdSendErrorShowsSqeNotErrAndTheQpStillReceives() {
        Pair p = new Pair("cx-gen3x16", QpType.UD, 8192).upUd(Mtu.MTU_1024);
        AddressHandle ah = p.a.pd.createAh(new AhAttr().dlid(p.b.ctx.queryPort(1).lid()));
        p.a.qp.postSend(Wrs.signaled(3, WrOpcode.SEND).ah(ah).remoteQpn(p.b.qp.qpNum())
                .remoteQkey(Connect.QKEY).sgList(new Sge(p.a.buf.addr(), 8, p.a.mr.lkey() ^ 0x10)));
        assertEquals(WcStatus.LOC_PROT_ERR, p.await(p.a.cq, 1).get(0).status());
        assertEquals(QpState.SQE, p.a.qp.state(), "a UD send error stops only the send queue");
        assertEquals(QpState.SQE, p.a.qp.query().qpState());
        // SQE receives: B's datagram still lands
        p.a.qp.postRecv(new RecvWr().wrId(9).sgList(new Sge(p.a.buf.addr() + 4096, 4096, p.a.mr.lkey())));
        AddressHandle back = p.b.pd.createAh(new AhAttr().dlid(p.a.ctx.queryPort(1).lid()));
        p.b.buf.write(0, "after SQE".getBytes());
        p.b.qp.postSend(new SendWr().wrId(4).opcode(WrOpcode.SEND).ah(back).remoteQpn(p.a.qp.qpNum())
                .remoteQkey(Connect.QKEY).sgList(new Sge(p.b.buf.addr(), 9, p.b.mr.lkey())));
        WorkCompletion r = p.await(p.a.cq, 1).get(0);
        assertEquals(WcStatus.SUCCESS, r.status(), r.toString());
        assertArrayEquals("after SQE".getBytes(), p.a.buf.read(4096 + 40, 9));
        assertEquals(QpState.SQE, p.a.qp.state());
    }

    @Test
    void aLateErrorCompletionDoesNotUndoTheProgramsReset() {
        Pair p = new Pair("cx-gen3x16", QpType.UC, 8192).up(Mtu.MTU_1024);
        p.a.qp.postSend(Wrs.signaled(5, WrOpcode.RDMA_WRITE)
                .sgList(new Sge(p.a.buf.addr(), 8, p.a.mr.lkey() ^ 0x10))
                .remoteAddr(p.b.buf.addr()).rkey(p.b.mr.rkey()));
        p.world.runFor(50_000_000L);
        p.a.qp.modify(new QpAttr().qpState(QpState.ERR), QpAttrMask.STATE);
        List<WorkCompletion> wc = p.await(p.a.cq, 1);
        assertEquals(WcStatus.LOC_PROT_ERR, wc.get(0).status());
        assertEquals(QpState.ERR, p.a.qp.state(),
                "the error completion, polled after the program's modify to ERR, does not say SQE");
    }
}
