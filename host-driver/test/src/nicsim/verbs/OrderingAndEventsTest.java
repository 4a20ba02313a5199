package nicsim.verbs;

import static org.junit.jupiter.api.Assertions.*;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import nicsim.sim.Trace;
import org.junit.jupiter.api.Test;

/** Fence, solicited events through a completion channel, and the responder's read/atomic limit. */
class OrderingAndEventsTest {
    private static Map<String, Long> stages(Pair p, QueuePair qp, int index) {
        String txn = p.world.host(0).adapter.wqeTxn(qp.qpNum(), index);
        return p.world.sim.trace().entries(txn).stream()
                .collect(Collectors.toMap(Trace.Entry::stage, Trace.Entry::timePicos, (x, y) -> x));
    }

    @Test
    void aFencedWqeWaitsForEarlierReadsToComplete() {
        for (boolean fence : new boolean[]{false, true}) {
            Pair p = new Pair("cx-gen3x16", QpType.RC, 1 << 17).up(Mtu.MTU_4096);
            p.world.sim.trace().enable("wqe");
            p.a.qp.postSend(Wrs.signaled(1, WrOpcode.RDMA_READ)
                    .sgList(new Sge(p.a.buf.addr(), 65536, p.a.mr.lkey()))
                    .remoteAddr(p.b.buf.addr()).rkey(p.b.mr.rkey()));
            p.a.qp.postSend(new SendWr().wrId(2).opcode(WrOpcode.RDMA_WRITE)
                    .sendFlags(SendFlags.SIGNALED | (fence ? SendFlags.FENCE : 0))
                    .sgList(new Sge(p.a.buf.addr() + 65536, 64, p.a.mr.lkey()))
                    .remoteAddr(p.b.buf.addr() + 65536).rkey(p.b.mr.rkey()));
            List<WorkCompletion> wc = p.await(p.a.cq, 2);
            assertEquals(List.of(1L, 2L), wc.stream().map(WorkCompletion::wrId).toList());
            long readDone = stages(p, p.a.qp, 0).get("acked"), writeOnWire = stages(p, p.a.qp, 1).get("on_wire");
            if (fence)
                assertTrue(writeOnWire >= readDone,
                        "fenced WRITE left at " + writeOnWire + ", the READ completed at " + readDone);
            else assertTrue(writeOnWire < readDone, "without a fence the WRITE does not wait");
        }
    }

    @Test
    void solicitedOnlyArmingWakesTheChannelOnlyForASolicitedSend() {
        Pair p = new Pair("cx-gen3x16", QpType.RC, 8192);
        CompletionChannel ch = p.b.ctx.createCompChannel();
        CompletionQueue cq = p.b.ctx.createCq(16, ch);
        QueuePair qp = p.b.pd.createQp(new QpInitAttr().qpType(QpType.RC).sendCq(cq).recvCq(cq).maxRecvWr(8));
        Connect.up(p.a.qp, Connect.ALL_REMOTE, Connect.Dest.of(p.b.ctx, qp, 2), Mtu.MTU_1024, 1);
        Connect.up(qp, Connect.ALL_REMOTE, Connect.Dest.of(p.a.ctx, p.a.qp, 1), Mtu.MTU_1024, 2);
        for (int i = 0; i < 4; i++)
            qp.postRecv(new RecvWr().wrId(i).sgList(new Sge(p.b.buf.addr(), 64, p.b.mr.lkey())));
        cq.reqNotify(true);
        p.a.qp.postSend(new SendWr().wrId(1).opcode(WrOpcode.SEND).sgList(new Sge(p.a.buf.addr(), 8, p.a.mr.lkey())));
        p.world.runFor(20_000_000);
        assertTrue(ch.getCqEvent().isEmpty(), "an unsolicited SEND does not wake a solicited-only arm");
        p.a.qp.postSend(new SendWr().wrId(2).opcode(WrOpcode.SEND).sendFlags(SendFlags.SOLICITED)
                .sgList(new Sge(p.a.buf.addr(), 8, p.a.mr.lkey())));
        p.world.runUntil(() -> ch.eventsDelivered() > 0, 1_000_000_000L);
        assertSame(cq, ch.getCqEvent().orElseThrow());
        assertEquals(2, cq.poll(8).size(), "both receives are there to poll after the event");
        assertEquals(1, cq.interrupts());
    }

    /**
     * As many CQs as the adapter holds, more than its MSI-X vectors: CQs share vectors, each event still reaches
     * only its own CQ's channel, and the translation handler keeps its vector, so on-demand pages still fault in
     * (a shared vector once took it over: page faults were never answered and the responder
     * answered RNR forever).
     */
    @Test
    void moreCqsThanVectorsShareThemAndKeepTheTranslationVector() {
        Pair p = new Pair("cx-gen3x16", QpType.RC, 1 << 16);
        CompletionChannel ch = p.b.ctx.createCompChannel();
        List<CompletionQueue> many = new ArrayList<>();
        // as many as the adapter holds
        while (many.size() + 1 < p.b.ctx.queryDevice().maxCq()) many.add(p.b.ctx.createCq(4, ch));
        CompletionQueue cq = many.get(many.size() - 1);
        QueuePair qp = p.b.pd.createQp(new QpInitAttr().qpType(QpType.RC).sendCq(cq).recvCq(cq).maxRecvWr(8));
        Connect.up(p.a.qp, Connect.ALL_REMOTE, Connect.Dest.of(p.b.ctx, qp, 2), Mtu.MTU_1024, 1);
        Connect.up(qp, Connect.ALL_REMOTE, Connect.Dest.of(p.a.ctx, p.a.qp, 1), Mtu.MTU_1024, 2);
        for (CompletionQueue c : List.of(many.get(0), p.b.cq, cq)) c.reqNotify(false); // p.b.cq shares cq's vector
        qp.postRecv(new RecvWr().wrId(7).sgList(new Sge(p.b.buf.addr(), 64, p.b.mr.lkey())));
        p.a.qp.postSend(new SendWr().wrId(1).opcode(WrOpcode.SEND).sgList(new Sge(p.a.buf.addr(), 8, p.a.mr.lkey())));
        p.world.runUntil(() -> ch.eventsDelivered() > 0, 1_000_000_000L);
        p.world.runFor(10_000_000);
        assertEquals(1, ch.eventsDelivered(), "one event, for the one CQ that completed");
        assertSame(cq, ch.getCqEvent().orElseThrow());
        // an on-demand WRITE still faults its pages in through the translation handler's vector
        MemoryRegion odp = p.b.pd.regMr(p.b.buf, Connect.ALL_REMOTE | AccessFlags.ON_DEMAND);
        p.a.qp.postSend(Wrs.signaled(2, WrOpcode.RDMA_WRITE).remoteAddr(p.b.buf.addr() + 8192)
                .rkey(odp.rkey()).sgList(new Sge(p.a.buf.addr(), 4096, p.a.mr.lkey())));
        assertEquals(WcStatus.SUCCESS, p.await(p.a.cq, 1).get(0).status());
        assertTrue(p.world.sim.counters().get("Firmware.odp_page_faults") > 0);
    }

    @Test
    void moreReadsThanMaxDestRdAtomicIsQpAccessErrAndRemInvReqErr() {
        Pair p = new Pair("cx-gen3x16", QpType.RC, 1 << 18);
        Connect.up(p.a.qp, Connect.ALL_REMOTE, Connect.Dest.of(p.b.ctx, p.b.qp, 200), Mtu.MTU_4096, 100);
        Connect.toInit(p.b.qp, Connect.ALL_REMOTE);
        p.b.qp.modify(new QpAttr().qpState(QpState.RTR).pathMtu(Mtu.MTU_4096).destQpNum(p.a.qp.qpNum()).rqPsn(100)
                        .ahAttr(new AhAttr().dlid(p.a.ctx.queryPort(1).lid())).maxDestRdAtomic(1).minRnrTimer(12),
                QpAttrMask.STATE | QpAttrMask.AV | QpAttrMask.PATH_MTU | QpAttrMask.DEST_QPN | QpAttrMask.RQ_PSN
                        | QpAttrMask.MAX_DEST_RD_ATOMIC | QpAttrMask.MIN_RNR_TIMER);
        Connect.toRts(p.b.qp, 200);
        for (int i = 0; i < 2; i++)
            p.a.qp.postSend(Wrs.signaled(i, WrOpcode.RDMA_READ)
                    .sgList(new Sge(p.a.buf.addr() + 65536L * i, 65536, p.a.mr.lkey()))
                    .remoteAddr(p.b.buf.addr()).rkey(p.b.mr.rkey()));
        List<WorkCompletion> wc = p.await(p.a.cq, 2);
        assertEquals(WcStatus.SUCCESS, wc.get(0).status(), wc.toString());
        assertEquals(WcStatus.REM_INV_REQ_ERR, wc.get(1).status(), wc.toString());
        p.world.runFor(10_000_000);
        assertEquals(EventType.QP_ACCESS_ERR, p.b.ctx.pollAsyncEvent().orElseThrow().type());
    }
}
