package nicsim.verbs;

import static org.junit.jupiter.api.Assertions.*;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import nicsim.fabric.Faults;
import nicsim.profile.Profiles;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The error rows of docs/sources.md#responder-errors and docs/sources.md#verbs-error-model, each produced on the side
 * and in the form they say, with the state change.
 */
class ErrorsTest {
    private static List<AsyncEvent> events(Context ctx) {
        List<AsyncEvent> out = new ArrayList<>();
        for (Optional<AsyncEvent> e = ctx.pollAsyncEvent(); e.isPresent(); e = ctx.pollAsyncEvent()) out.add(e.get());
        return out;
    }

    @Test
    void writeWithBadRkeyIsRemAccessErrAtRequesterAndQpAccessErrAtResponder() {
        Pair p = new Pair("cx-gen3x16", QpType.RC, 8192).up(Mtu.MTU_1024);
        p.a.qp.postSend(Wrs.signaled(1, WrOpcode.RDMA_WRITE)
                .sgList(new Sge(p.a.buf.addr(), 100, p.a.mr.lkey()))
                .remoteAddr(p.b.buf.addr()).rkey(p.b.mr.rkey() ^ 0x01));
        p.a.qp.postSend(Wrs.signaled(2, WrOpcode.RDMA_WRITE)
                .sgList(new Sge(p.a.buf.addr(), 100, p.a.mr.lkey())).remoteAddr(p.b.buf.addr()).rkey(p.b.mr.rkey()));
        List<WorkCompletion> wc = p.await(p.a.cq, 2);
        assertEquals(WcStatus.REM_ACCESS_ERR, wc.get(0).status(), wc.toString());
        assertEquals(1, wc.get(0).wrId());
        assertTrue(wc.get(0).syndrome().contains("remote access"), wc.get(0).syndrome());
        assertEquals(WcStatus.WR_FLUSH_ERR, wc.get(1).status(), "the rest of the SQ is flushed");
        assertEquals(QpState.ERR, p.a.qp.query().qpState());
        assertEquals(QpState.ERR, p.b.qp.query().qpState());
        assertTrue(events(p.b.ctx).stream()
                .anyMatch(e -> e.type() == EventType.QP_ACCESS_ERR && e.qpNum() == p.b.qp.qpNum()));
        assertArrayEquals(new byte[100], p.b.buf.read(0, 100), "nothing was written");
    }

    @Test
    void sendLongerThanTheReceiveBufferIsLocLenErrAtResponderAndRemInvReqErrAtRequester() {
        Pair p = new Pair("cx-gen3x16", QpType.RC, 8192).up(Mtu.MTU_1024);
        p.b.qp.postRecv(new RecvWr().wrId(5).sgList(new Sge(p.b.buf.addr(), 100, p.b.mr.lkey())));
        p.b.qp.postRecv(new RecvWr().wrId(6).sgList(new Sge(p.b.buf.addr(), 100, p.b.mr.lkey())));
        p.a.qp.postSend(Wrs.signaled(1, WrOpcode.SEND)
                .sgList(new Sge(p.a.buf.addr(), 200, p.a.mr.lkey())));
        List<WorkCompletion> r = p.await(p.b.cq, 2);
        assertEquals(WcStatus.LOC_LEN_ERR, r.get(0).status(), r.toString());
        assertEquals(5, r.get(0).wrId());
        assertEquals(WcStatus.WR_FLUSH_ERR, r.get(1).status(), "the other receive is flushed");
        assertEquals(6, r.get(1).wrId());
        WorkCompletion s = p.await(p.a.cq, 1).get(0);
        assertEquals(WcStatus.REM_INV_REQ_ERR, s.status(), s.toString());
        assertEquals(QpState.ERR, p.a.qp.query().qpState());
    }

    @Test
    void aReceiveThatFailsTranslationCompletesAfterTheReceiveBeforeIt() {
        // the responder takes the next packet while the previous one's writes are still on their way,
        // yet receive completions stay in the order of their WQEs
        Pair p = new Pair("cx-gen3x16", QpType.RC, 8192).up(Mtu.MTU_1024);
        byte[] data = new byte[4000];
        new Random(4).nextBytes(data);
        p.a.buf.write(0, data);
        p.b.qp.postRecv(new RecvWr().wrId(5).sgList(new Sge(p.b.buf.addr(), 4000, p.b.mr.lkey())));
        // runs past the MR
        p.b.qp.postRecv(new RecvWr().wrId(6).sgList(new Sge(p.b.buf.addr() + 8000, 1000, p.b.mr.lkey())));
        p.a.qp.postSend(Wrs.signaled(1, WrOpcode.SEND)
                .sgList(new Sge(p.a.buf.addr(), 4000, p.a.mr.lkey())));
        p.a.qp.postSend(Wrs.signaled(2, WrOpcode.SEND)
                .sgList(new Sge(p.a.buf.addr(), 1000, p.a.mr.lkey())));
        List<WorkCompletion> r = p.await(p.b.cq, 2);
        assertEquals(List.of(5L, 6L), r.stream().map(WorkCompletion::wrId).toList(), r.toString());
        assertEquals(WcStatus.SUCCESS, r.get(0).status(), r.toString());
        assertEquals(4000, r.get(0).byteLen());
        assertEquals(WcStatus.LOC_PROT_ERR, r.get(1).status(), r.toString());
        assertArrayEquals(data, p.b.buf.read(0, 4000), "the first message landed whole");
        assertEquals(QpState.ERR, p.b.qp.query().qpState());
    }

    @Test
    void misalignedAtomicIsRefusedAtPostWithEinval() {
        Pair p = new Pair("cx-gen3x16", QpType.RC, 8192).up(Mtu.MTU_1024);
        // the driver refuses a misaligned remote address at post time (EINVAL); a raw WQE is what reaches the responder
        VerbsException e = assertThrows(VerbsException.class, () -> p.a.qp.postSend(
                new SendWr().opcode(WrOpcode.ATOMIC_FETCH_AND_ADD).sgList(new Sge(p.a.buf.addr(), 8, p.a.mr.lkey()))
                        .remoteAddr(p.b.buf.addr() + 4).rkey(p.b.mr.rkey())));
        assertEquals(Errno.EINVAL, e.errno());
        assertTrue(e.getMessage().contains("remoteAddr"), e.getMessage());
        assertEquals(0, e.badWrIndex());
    }

    @Test
    void badLkeyIsLocProtErrAndTheQpGoesToErr() {
        Pair p = new Pair("cx-gen3x16", QpType.RC, 8192).up(Mtu.MTU_1024);
        p.a.qp.postSend(Wrs.signaled(3, WrOpcode.RDMA_WRITE)
                .sgList(new Sge(p.a.buf.addr() + 8000, 1000, p.a.mr.lkey()))
                .remoteAddr(p.b.buf.addr()).rkey(p.b.mr.rkey()));
        WorkCompletion wc = p.await(p.a.cq, 1).get(0);
        assertEquals(WcStatus.LOC_PROT_ERR, wc.status(), wc.toString());
        assertTrue(wc.syndrome().contains("range"), wc.syndrome());
        assertEquals(QpState.ERR, p.a.qp.query().qpState());
    }

    @Test
    void writeToAQpWithoutRemoteWriteAccessIsRemInvReqErr() {
        Pair p = new Pair("cx-gen3x16", QpType.RC, 8192);
        Connect.up(p.a.qp, Connect.ALL_REMOTE, Connect.Dest.of(p.b.ctx, p.b.qp, 200), Mtu.MTU_1024, 100);
        Connect.up(p.b.qp, AccessFlags.LOCAL_WRITE, Connect.Dest.of(p.a.ctx, p.a.qp, 100), Mtu.MTU_1024, 200);
        p.a.qp.postSend(Wrs.signaled(3, WrOpcode.RDMA_WRITE)
                .sgList(new Sge(p.a.buf.addr(), 64, p.a.mr.lkey())).remoteAddr(p.b.buf.addr()).rkey(p.b.mr.rkey()));
        assertEquals(WcStatus.REM_INV_REQ_ERR, p.await(p.a.cq, 1).get(0).status());
        assertTrue(events(p.b.ctx).stream().anyMatch(e -> e.type() == EventType.QP_REQ_ERR));
    }

    @Test
    void noReceiveWithRnrRetryZeroIsRnrRetryExcErr() {
        Pair p = new Pair("cx-gen3x16", QpType.RC, 8192).up(Mtu.MTU_1024);
        // rebuild A with rnr_retry 0: RESET and up again
        p.a.qp.modify(new QpAttr().qpState(QpState.RESET), QpAttrMask.STATE);
        Connect.toInit(p.a.qp, Connect.ALL_REMOTE);
        Connect.toRtr(p.a.qp, Connect.Dest.of(p.b.ctx, p.b.qp, 200), Mtu.MTU_1024);
        p.a.qp.modify(new QpAttr().qpState(QpState.RTS).sqPsn(100).timeout(14).retryCnt(7).rnrRetry(0).maxRdAtomic(1),
                QpAttrMask.STATE | QpAttrMask.SQ_PSN | QpAttrMask.TIMEOUT | QpAttrMask.RETRY_CNT
                        | QpAttrMask.RNR_RETRY | QpAttrMask.MAX_QP_RD_ATOMIC);
        p.a.qp.postSend(Wrs.signaled(8, WrOpcode.SEND)
                .sgList(new Sge(p.a.buf.addr(), 64, p.a.mr.lkey())));
        WorkCompletion wc = p.await(p.a.cq, 1).get(0);
        assertEquals(WcStatus.RNR_RETRY_EXC_ERR, wc.status(), wc.toString());
        assertEquals(QpState.RTS, p.b.qp.query().qpState(), "RNR leaves the responder up");
    }

    @Test
    void noResponderIsRetryExcErrAfterRetryCntTimeouts() {
        Pair p = new Pair("cx-gen3x16", QpType.RC, 8192);
        Connect.Dest nowhere = new Connect.Dest(p.b.ctx.queryPort(1).lid(), 0xFFFF, 200, 0, 0);
        Connect.up(p.a.qp, Connect.ALL_REMOTE, nowhere, Mtu.MTU_1024, 100);
        p.a.qp.postSend(Wrs.signaled(4, WrOpcode.RDMA_WRITE)
                .sgList(new Sge(p.a.buf.addr(), 64, p.a.mr.lkey())).remoteAddr(p.b.buf.addr()).rkey(p.b.mr.rkey()));
        long t0 = p.world.now();
        WorkCompletion wc = p.await(p.a.cq, 1).get(0);
        assertEquals(WcStatus.RETRY_EXC_ERR, wc.status(), wc.toString());
        // 1 + retry_cnt (7) transmissions, each waiting the local ACK timeout 4.096 us x 2^14
        long timeout = 4_096_000L << 14;
        assertTrue(p.world.now() - t0 >= 8 * timeout, "took " + (p.world.now() - t0) + " ps");
        assertTrue(p.world.now() - t0 < 9 * timeout, "took " + (p.world.now() - t0) + " ps");
    }

    @Test
    void cqOverflowRaisesCqErrAndQpFatal() {
        Pair p = new Pair("cx-gen3x16", QpType.RC, 8192);
        // a CQ of 1 (2 slots) for A's sends, never polled
        CompletionQueue small = p.a.ctx.createCq(1);
        QueuePair qp = p.overflowSendCq(small);
        p.world.runFor(100_000_000L);
        List<AsyncEvent> ev = events(p.a.ctx);
        assertTrue(ev.stream().anyMatch(e -> e.type() == EventType.CQ_ERR && e.cqHandle() == small.handle()),
                ev.toString());
        assertTrue(ev.stream().anyMatch(e -> e.type() == EventType.QP_FATAL && e.qpNum() == qp.qpNum()), ev.toString());
        assertEquals(QpState.ERR, qp.query().qpState());
    }

    @ParameterizedTest
    @ValueSource(longs = {7, 8, 9, 10, 11})
    void underLossEveryWriteLandsExactlyOnce(long seed) {
        Pair p = new Pair(Profiles.load("cx-gen3x16").with("fw.ack.coalesce", "4"), QpType.RC, 1 << 20,
                Faults.parse("drop=0.05,dup=0.02,reorder=0.05,corrupt=0.01"), seed, Pair.defaults());
        p.up(Mtu.MTU_1024);
        Random rnd = new Random(5);
        byte[] data = new byte[1 << 19];
        rnd.nextBytes(data);
        p.a.buf.write(0, data);
        int n = 32, each = data.length / n;
        for (int i = 0; i < n; i++) {
            p.a.qp.postSend(Wrs.signaled(i, WrOpcode.RDMA_WRITE)
                    .sgList(new Sge(p.a.buf.addr() + (long) i * each, each, p.a.mr.lkey()))
                    .remoteAddr(p.b.buf.addr() + (long) i * each)
                    .rkey(p.b.mr.rkey()));
            if (i % 16 == 15) {
                List<WorkCompletion> wc = p.await(p.a.cq, 16);
                for (WorkCompletion w : wc) assertEquals(WcStatus.SUCCESS, w.status(), w.toString());
            }
        }
        assertArrayEquals(data, p.b.buf.read(0, data.length));
        assertTrue(p.world.sim.counters().get("Fabric.dropped") > 0);
        assertTrue(p.world.sim.counters().get("Firmware.retransmits") > 0);
    }
}
