package nicsim.verbs;

import static org.junit.jupiter.api.Assertions.*;

import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import nicsim.abi.QpTransitions;
import nicsim.abi.QpcState;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** The QP state machine through the verbs API: transitions, posting rules per state, flush and reset. */
class QpStateTest {
    private static final int RC_INIT = QpAttrMask.STATE | QpAttrMask.PKEY_INDEX | QpAttrMask.PORT
            | QpAttrMask.ACCESS_FLAGS;

    /** Every (from, to) pair the table refuses is EINVAL and leaves the QP where it was, for RC, UC and UD. */
    @ParameterizedTest
    @EnumSource(value = QpType.class, names = {"RC", "UC", "UD"})
    void illegalTransitionsAreEinvalAndChangeNothing(QpType type) {
        Pair p = new Pair("cx-gen3x16", type, 4096);
        QueuePair qp = p.a.qp;
        for (QpState to : QpState.values()) {
            if (QpTransitions.valid(QpcState.RESET, DeviceCodes.device(to))) continue;
            VerbsException e = assertThrows(VerbsException.class,
                    () -> qp.modify(new QpAttr().qpState(to), QpAttrMask.STATE));
            assertEquals(Errno.EINVAL, e.errno());
            assertTrue(e.getMessage().contains("RESET -> " + to), e.getMessage());
            assertEquals(QpState.RESET, qp.query().qpState());
        }
        // a legal target with a missing required attribute
        VerbsException e = assertThrows(VerbsException.class,
                () -> qp.modify(new QpAttr().qpState(QpState.INIT), QpAttrMask.STATE));
        assertEquals(Errno.EINVAL, e.errno());
        assertTrue(e.getMessage().contains("missing"), e.getMessage());
        assertEquals(QpState.RESET, qp.query().qpState());
    }

    @Test
    void theUsualPathReachesRtsAndQueryAgrees() {
        Pair p = new Pair("cx-gen3x16", QpType.RC, 4096).up(Mtu.MTU_2048);
        QpAttr a = p.a.qp.query();
        assertEquals(QpState.RTS, a.qpState());
        assertEquals(Mtu.MTU_2048, a.pathMtu());
        assertEquals(p.b.qp.qpNum(), a.destQpNum());
        assertEquals(100, a.sqPsn());
        assertEquals(200, a.rqPsn());
        assertEquals(Connect.TIMEOUT, a.timeout());
    }

    @Test
    void postingBeforeRtsIsEinvalAndWritesNothing() {
        Pair p = new Pair("cx-gen3x16", QpType.RC, 4096);
        SendWr wr = new SendWr().opcode(WrOpcode.SEND).sgList(new Sge(p.a.buf.addr(), 8, p.a.mr.lkey()));
        RecvWr rwr = new RecvWr().sgList(new Sge(p.a.buf.addr(), 8, p.a.mr.lkey()));
        VerbsException e = assertThrows(VerbsException.class, () -> p.a.qp.postSend(wr));
        assertEquals(Errno.EINVAL, e.errno());
        assertEquals(0, e.badWrIndex());
        assertThrows(VerbsException.class, () -> p.a.qp.postRecv(rwr), "receive in RESET");
        p.a.qp.modify(new QpAttr().qpState(QpState.INIT).qpAccessFlags(0), RC_INIT);
        assertThrows(VerbsException.class, () -> p.a.qp.postSend(wr), "send in INIT");
        p.a.qp.postRecv(rwr); // receive in INIT is fine
        p.world.runFor(10_000_000);
        assertTrue(p.a.cq.poll(10).isEmpty());
    }

    @Test
    void aFullSendQueueIsEnomemAndKeepsTheRequestsBeforeIt() {
        Pair p = new Pair("cx-gen3x16", QpType.RC, 4096).up(Mtu.MTU_1024);
        SendWr[] wrs = new SendWr[70];
        for (int i = 0; i < wrs.length; i++)
            wrs[i] = Wrs.signaled(i, WrOpcode.RDMA_WRITE)
                    .sgList(new Sge(p.a.buf.addr(), 8, p.a.mr.lkey())).remoteAddr(p.b.buf.addr()).rkey(p.b.mr.rkey());
        VerbsException e = assertThrows(VerbsException.class, () -> p.a.qp.postSend(wrs));
        assertEquals(Errno.ENOMEM, e.errno());
        assertEquals(64, e.badWrIndex());
        List<WorkCompletion> wc = p.await(p.a.cq, 64);
        for (int i = 0; i < 64; i++) assertEquals(i, wc.get(i).wrId());
        p.world.runFor(10_000_000);
        assertTrue(p.a.cq.poll(10).isEmpty(), "the refused requests never ran");
    }

    @Test
    void enteringErrFlushesBothQueuesAndLaterPostsFlushToo() {
        Pair p = new Pair("cx-gen3x16", QpType.RC, 4096).up(Mtu.MTU_1024);
        p.b.qp.postRecv(new RecvWr().wrId(10).sgList(new Sge(p.b.buf.addr(), 64, p.b.mr.lkey())),
                new RecvWr().wrId(11).sgList(new Sge(p.b.buf.addr(), 64, p.b.mr.lkey())));
        p.b.qp.modify(new QpAttr().qpState(QpState.ERR), QpAttrMask.STATE);
        List<WorkCompletion> wc = p.await(p.b.cq, 2);
        assertEquals(List.of(10L, 11L), wc.stream().map(WorkCompletion::wrId).toList());
        for (WorkCompletion w : wc) {
            assertEquals(WcStatus.WR_FLUSH_ERR, w.status());
            assertEquals(p.b.qp.qpNum(), w.qpNum());
        }
        p.b.qp.postRecv(new RecvWr().wrId(12).sgList(new Sge(p.b.buf.addr(), 64, p.b.mr.lkey())));
        p.b.qp.postSend(new SendWr().wrId(13).opcode(WrOpcode.SEND).sgList(new Sge(p.b.buf.addr(), 8, p.b.mr.lkey())));
        List<WorkCompletion> more = p.await(p.b.cq, 2);
        assertEquals(Set.of(12L, 13L), more.stream().map(WorkCompletion::wrId).collect(Collectors.toSet()));
        for (WorkCompletion w : more) assertEquals(WcStatus.WR_FLUSH_ERR, w.status(), "even unsignaled: " + w);
    }

    @Test
    void resetDiscardsWorkAndRemovesUnpolledCompletions() {
        Pair p = new Pair("cx-gen3x16", QpType.RC, 4096).up(Mtu.MTU_1024);
        p.b.qp.postRecv(new RecvWr().wrId(1).sgList(new Sge(p.b.buf.addr(), 64, p.b.mr.lkey())));
        p.b.qp.modify(new QpAttr().qpState(QpState.ERR), QpAttrMask.STATE);
        p.world.runFor(50_000_000); // the flush CQE is in the ring, not polled
        p.b.qp.modify(new QpAttr().qpState(QpState.RESET), QpAttrMask.STATE);
        assertTrue(p.b.cq.poll(10).isEmpty(), "RESET removed the QP's completions");
        assertEquals(QpState.RESET, p.b.qp.query().qpState());
        // and the QP works again from scratch
        Connect.up(p.b.qp, Connect.ALL_REMOTE, Connect.Dest.of(p.a.ctx, p.a.qp, 100), Mtu.MTU_1024, 200);
        p.b.qp.postSend(Wrs.signaled(5, WrOpcode.RDMA_WRITE)
                .sgList(new Sge(p.b.buf.addr(), 8, p.b.mr.lkey())).remoteAddr(p.a.buf.addr()).rkey(p.a.mr.rkey()));
        WorkCompletion w = p.await(p.b.cq, 1).get(0);
        assertEquals(WcStatus.SUCCESS, w.status(), w.toString());
        assertEquals(5, w.wrId());
    }

    @Test
    void sqdDrainsAndReportsSqDrained() {
        Pair p = new Pair("cx-gen3x16", QpType.RC, 65536).up(Mtu.MTU_1024);
        for (int i = 0; i < 8; i++)
            p.a.qp.postSend(Wrs.signaled(i, WrOpcode.RDMA_WRITE)
                    .sgList(new Sge(p.a.buf.addr(), 4096, p.a.mr.lkey()))
                    .remoteAddr(p.b.buf.addr()).rkey(p.b.mr.rkey()));
        p.a.qp.modify(new QpAttr().qpState(QpState.SQD).enSqdAsyncNotify(true),
                QpAttrMask.STATE | QpAttrMask.EN_SQD_ASYNC_NOTIFY);
        p.world.runUntil(() -> p.a.ctx.pollAsyncEvent().filter(e -> e.type() == EventType.SQ_DRAINED).isPresent(),
                1_000_000_000L);
        assertEquals(QpState.SQD, p.a.qp.query().qpState());
        p.a.qp.modify(new QpAttr().qpState(QpState.RTS), QpAttrMask.STATE);
        assertEquals(8, p.await(p.a.cq, 8).size());
    }

    @Test
    void firstPacketInRtrRaisesCommEst() {
        Pair p = new Pair("cx-gen3x16", QpType.RC, 4096);
        Connect.up(p.a.qp, Connect.ALL_REMOTE, Connect.Dest.of(p.b.ctx, p.b.qp, 200), Mtu.MTU_1024, 100);
        Connect.toInit(p.b.qp, Connect.ALL_REMOTE);
        Connect.toRtr(p.b.qp, Connect.Dest.of(p.a.ctx, p.a.qp, 100), Mtu.MTU_1024);
        p.a.qp.postSend(Wrs.signaled(1, WrOpcode.RDMA_WRITE)
                .sgList(new Sge(p.a.buf.addr(), 8, p.a.mr.lkey())).remoteAddr(p.b.buf.addr()).rkey(p.b.mr.rkey()));
        assertEquals(WcStatus.SUCCESS, p.await(p.a.cq, 1).get(0).status());
        assertEquals(EventType.COMM_EST, p.b.ctx.pollAsyncEvent().orElseThrow().type());
        assertEquals(1, p.b.ctx.driver().eqInterrupts(), "the event queue raised its MSI-X vector");
    }

    @Test
    void closingTheContextDestroysEverythingAndLaterCallsThrow() {
        Pair p = new Pair("cx-gen3x16", QpType.RC, 4096);
        long before = p.a.ctx.driver().commandsIssued();
        p.a.ctx.close();
        // QP, CQ, MR, PD, UAR: one destroy command each
        assertEquals(before + 5, p.a.ctx.driver().commandsIssued());
        assertTrue(p.a.qp.isClosed());
        VerbsException e = assertThrows(VerbsException.class, () -> p.a.qp.postSend());
        assertEquals(Errno.EINVAL, e.errno());
        assertTrue(e.getMessage().contains("closed"));
    }

    @Test
    void aCommandTheFirmwareRefusesIsAnErrnoWithItsSyndrome() {
        Pair p = new Pair("cx-gen3x16", QpType.RC, 4096);
        // destroying a CQ still used by a QP: the adapter answers RESOURCE_BUSY -> EBUSY
        VerbsException e = assertThrows(VerbsException.class, p.a.cq::close);
        assertEquals(Errno.EBUSY, e.errno());
        assertTrue(e.getMessage().contains("still used"), e.getMessage());
    }
}
