package nicsim.verbs;

import static org.junit.jupiter.api.Assertions.*;

import nicsim.fabric.Faults;
import nicsim.profile.Profiles;
import org.junit.jupiter.api.Test;

/**
 * Seed error-handling 4.3: a request the responder cannot take is dropped before it reaches the QP
 * (no completion, no event, no state change), and counted. The requester of an RC QP then hears
 * nothing and, after its retries, completes RETRY_EXC_ERR.
 */
class PacketDiscardTest {
    static final long US = 1_000_000;

    static SendWr send(Pair p, long id) {
        return Wrs.signaled(id, WrOpcode.SEND).sgList(new Sge(p.a.buf.addr(), 64, p.a.mr.lkey()));
    }

    static long count(Pair p, String counter) { return p.world.sim.counters().get(counter); }

    static void assertUntouched(Pair p, QueuePair qp, QpState state) {
        assertEquals(state, qp.query().qpState());
        assertTrue(p.b.cq.poll(4).isEmpty(), "no completion at the responder");
        assertTrue(p.b.ctx.pollAsyncEvent().isEmpty(), "no async event at the responder");
    }

    @Test
    void aRequestForAQpThatDoesNotExistIsDroppedAndTheRequesterRunsOutOfRetries() {
        Pair p = new Pair("cx-gen3x16", QpType.RC, 8192);
        Connect.Dest noSuchQp = new Connect.Dest(p.b.ctx.queryPort(1).lid(), p.b.qp.qpNum() + 7, 200, 0, 0);
        Connect.up(p.a.qp, Connect.ALL_REMOTE, noSuchQp, Mtu.MTU_1024, 100);
        Connect.up(p.b.qp, Connect.ALL_REMOTE, Connect.Dest.of(p.a.ctx, p.a.qp, 100), Mtu.MTU_1024, 200);
        p.b.qp.postRecv(new RecvWr().wrId(9).sgList(new Sge(p.b.buf.addr(), 64, p.b.mr.lkey())));
        p.a.qp.postSend(send(p, 1));
        p.world.runFor(100 * US);
        assertTrue(count(p, "Firmware.packets_no_qp") >= 1);
        assertUntouched(p, p.b.qp, QpState.RTS);
        WorkCompletion wc = p.await(p.a.cq, 1).get(0);
        assertEquals(WcStatus.RETRY_EXC_ERR, wc.status(), wc.toString());
    }

    @Test
    void aRequestForAQpDestroyedAfterItsTrafficIsDroppedAsForNone() {
        Pair p = new Pair("cx-gen3x16", QpType.RC, 8192).up(Mtu.MTU_1024);
        p.b.qp.postRecv(new RecvWr().wrId(9).sgList(new Sge(p.b.buf.addr(), 64, p.b.mr.lkey())));
        p.a.qp.postSend(send(p, 1));
        assertEquals(WcStatus.SUCCESS, p.await(p.a.cq, 1).get(0).status()); // B's firmware found its QP just now
        long before = count(p, "Firmware.packets_no_qp");
        p.b.qp.close();
        p.a.qp.postSend(send(p, 2));
        p.world.runFor(100 * US);
        assertTrue(count(p, "Firmware.packets_no_qp") > before, "the destroyed QP's packets count as for no QP");
        WorkCompletion wc = p.await(p.a.cq, 1).get(0);
        assertEquals(WcStatus.RETRY_EXC_ERR, wc.status(), wc.toString());
    }

    @Test
    void aRequestForAQpNotYetInRtrIsDropped() {
        Pair p = new Pair("cx-gen3x16", QpType.RC, 8192);
        Connect.up(p.a.qp, Connect.ALL_REMOTE, Connect.Dest.of(p.b.ctx, p.b.qp, 200), Mtu.MTU_1024, 100);
        Connect.toInit(p.b.qp, Connect.ALL_REMOTE);
        p.b.qp.postRecv(new RecvWr().wrId(9).sgList(new Sge(p.b.buf.addr(), 64, p.b.mr.lkey())));
        p.a.qp.postSend(send(p, 1));
        p.world.runFor(100 * US);
        assertTrue(count(p, "Firmware.packets_dropped_state") >= 1);
        assertUntouched(p, p.b.qp, QpState.INIT);
    }

    @Test
    void aUcRequestForAnRcQpIsDropped() {
        Pair p = new Pair(Profiles.load("cx-gen3x16"), QpType.UC, 8192, Faults.NONE, 1, Pair.defaults());
        QueuePair rc = p.b.pd.createQp(Pair.defaults().qpType(QpType.RC).sendCq(p.b.cq).recvCq(p.b.cq));
        Connect.up(p.a.qp, Connect.ALL_REMOTE, Connect.Dest.of(p.b.ctx, rc, 200), Mtu.MTU_1024, 100);
        Connect.up(rc, Connect.ALL_REMOTE, Connect.Dest.of(p.a.ctx, p.a.qp, 100), Mtu.MTU_1024, 200);
        rc.postRecv(new RecvWr().wrId(9).sgList(new Sge(p.b.buf.addr(), 64, p.b.mr.lkey())));
        p.a.qp.postSend(send(p, 1));
        assertEquals(WcStatus.SUCCESS, p.await(p.a.cq, 1).get(0).status(), "UC expects no answer");
        p.world.runFor(100 * US);
        assertTrue(count(p, "Firmware.packets_dropped_type") >= 1);
        assertUntouched(p, rc, QpState.RTS);
    }

    @Test
    void aRequestFromAPortOtherThanTheQpsDestinationIsDropped() {
        Pair p = new Pair("cx-gen3x16", QpType.RC, 8192);
        Connect.up(p.a.qp, Connect.ALL_REMOTE, Connect.Dest.of(p.b.ctx, p.b.qp, 200), Mtu.MTU_1024, 100);
        int wrongLid = p.a.ctx.queryPort(1).lid() + 40;
        Connect.up(p.b.qp, Connect.ALL_REMOTE, new Connect.Dest(wrongLid, p.a.qp.qpNum(), 100, 0, 0), Mtu.MTU_1024,
                200);
        p.b.qp.postRecv(new RecvWr().wrId(9).sgList(new Sge(p.b.buf.addr(), 64, p.b.mr.lkey())));
        p.a.qp.postSend(send(p, 1));
        p.world.runFor(100 * US);
        assertTrue(count(p, "Firmware.packets_dropped_path") >= 1);
        assertUntouched(p, p.b.qp, QpState.RTS);
    }
}
