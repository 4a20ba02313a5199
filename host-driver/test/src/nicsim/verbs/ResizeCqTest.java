package nicsim.verbs;

import static org.junit.jupiter.api.Assertions.*;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * ibv_resize_cq from Java: the completions not yet polled move to the new ring in order, with the
 * time they were first written; completions after the resize follow them; a ring too small for
 * what waits, or a size out of range, is EINVAL and leaves the CQ as it was.
 */
class ResizeCqTest {
    private static void writes(Pair p, CompletionQueue cq, QueuePair qp, int from, int n) {
        for (int i = from; i < from + n; i++)
            qp.postSend(Wrs.signaled(i, WrOpcode.RDMA_WRITE)
                    .sgList(new Sge(p.a.buf.addr(), 64, p.a.mr.lkey())).remoteAddr(p.b.buf.addr()).rkey(p.b.mr.rkey()));
    }

    /** Runs 200 us, far longer than a dozen WRITEs take, polling nothing: their completions wait in the ring. */
    private static void landed(Pair p, CompletionQueue cq) {
        p.world.runFor(200_000_000L);
        assertTrue(cq.ready(), "completions wait");
    }

    @Test
    void unpolledCompletionsMoveInOrderAndNewOnesFollow() {
        Pair p = new Pair("cx-gen3x16", QpType.RC, 1 << 16);
        CompletionQueue cq = p.a.ctx.createCq(15);
        QueuePair qp = p.a.pd.createQp(new QpInitAttr().qpType(QpType.RC).sendCq(cq).recvCq(p.a.cq)
                .maxSendWr(64).maxRecvWr(4));
        Connect.up(qp, Connect.ALL_REMOTE, Connect.Dest.of(p.b.ctx, p.b.qp, 200), Mtu.MTU_1024, 100);
        Connect.up(p.b.qp, Connect.ALL_REMOTE, Connect.Dest.of(p.a.ctx, qp, 100), Mtu.MTU_1024, 200);
        writes(p, cq, qp, 0, 12);
        landed(p, cq);
        List<WorkCompletion> got = new ArrayList<>(cq.poll(5));
        assertEquals(15, cq.cqe());

        VerbsException small = assertThrows(VerbsException.class, () -> cq.resize(3));
        assertEquals(Errno.EINVAL, small.errno(), "4 entries cannot hold the 7 waiting: " + small.getMessage());
        assertThrows(VerbsException.class, () -> cq.resize(0));
        assertThrows(VerbsException.class, () -> cq.resize(Integer.MAX_VALUE));
        assertEquals(15, cq.cqe(), "a refused resize leaves the CQ as it was");

        cq.resize(100);
        assertEquals(127, cq.cqe(), "rounded up as at create");
        writes(p, cq, qp, 12, 40); // more than the old ring held
        got.addAll(Completions.await(p.world, cq, 47));
        assertEquals(52, got.size());
        for (int i = 0; i < got.size(); i++) {
            assertEquals(i, got.get(i).wrId(), "completion " + i + " in order");
            assertEquals(WcStatus.SUCCESS, got.get(i).status());
        }
        for (int i = 1; i < got.size(); i++)
            assertTrue(got.get(i).timestamp() >= got.get(i - 1).timestamp(),
                    "moved completions keep the time they were first written: " + got.get(i - 1).timestamp()
                            + " then " + got.get(i).timestamp());

        cq.resize(7); // shrink, nothing waiting
        assertEquals(7, cq.cqe());
        writes(p, cq, qp, 52, 7);
        List<WorkCompletion> last = Completions.await(p.world, cq, 7);
        assertEquals(52, last.get(0).wrId());
        assertEquals(58, last.get(6).wrId());
    }

    @Test
    void anArmSurvivesTheResize() {
        Pair p = new Pair("cx-gen3x16", QpType.RC, 1 << 16);
        CompletionChannel ch = p.a.ctx.createCompChannel();
        CompletionQueue cq = p.a.ctx.createCq(16, ch);
        QueuePair qp = p.a.pd.createQp(new QpInitAttr().qpType(QpType.RC).sendCq(cq).recvCq(cq)
                .maxSendWr(8).maxRecvWr(4));
        Connect.up(qp, Connect.ALL_REMOTE, Connect.Dest.of(p.b.ctx, p.b.qp, 200), Mtu.MTU_1024, 100);
        Connect.up(p.b.qp, Connect.ALL_REMOTE, Connect.Dest.of(p.a.ctx, qp, 100), Mtu.MTU_1024, 200);
        cq.reqNotify(false);
        cq.resize(1000);
        writes(p, cq, qp, 0, 1);
        p.world.runUntil(() -> ch.eventsDelivered() > 0, 1_000_000_000L);
        assertSame(cq, ch.getCqEvent().orElseThrow(),
                "the completion after the resize raised the event armed before it");
        assertEquals(0, cq.poll(4).get(0).wrId());
    }
}
