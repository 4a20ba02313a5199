package nicsim.verbs;

import static org.junit.jupiter.api.Assertions.*;

import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The RC requester's ACK timer (the local ACK timeout, 4.096 us x 2^timeout): it fires only while a request is
 * unacknowledged, and then retransmits from the oldest unacknowledged PSN; once everything is acknowledged
 * nothing of it stays queued, so a program waiting in a verb does not see simulated time run on to a timer
 * that can do nothing (docs/attach.md R4, R13: 67 ms, 4.29 s).
 */
class AckTimerTest {
    private static final long ACK_TIMEOUT = 4_096_000L << Connect.TIMEOUT;

    private static SendWr write(Pair p, int bytes) {
        return Wrs.signaled(1, WrOpcode.RDMA_WRITE)
                .sgList(new Sge(p.a.buf.addr(), bytes, p.a.mr.lkey())).remoteAddr(p.b.buf.addr()).rkey(p.b.mr.rkey());
    }

    @Test
    void nothingIsLeftToHappenOnceEveryRequestIsAcknowledged() {
        Pair p = new Pair("cx-gen3x16", QpType.RC, 65536).up(Mtu.MTU_4096);
        for (int i = 0; i < 3; i++) {
            p.a.qp.postSend(write(p, 65536));
            assertEquals(WcStatus.SUCCESS, p.await(p.a.cq, 1).get(0).status());
            long done = p.world.now();
            // the ACKs' last echoes settle within microseconds; the ACK timer's event used to stay until it expired
            long idleAt = p.world.runUntilIdle(2 * ACK_TIMEOUT);
            assertTrue(idleAt - done < 1_000_000_000L, "the simulation went idle " + (idleAt - done)
                    + " ps after the completion (ACK timeout " + ACK_TIMEOUT + " ps)");
        }
        assertEquals(0, p.world.sim.counters().get("Firmware.timeouts"));
        assertEquals(0, p.world.sim.counters().get("Firmware.retransmits"));
    }

    @Test
    void aLostRequestIsSentAgainWhenTheTimerFires() {
        Pair p = new Pair("cx-gen3x16", QpType.RC, 65536);
        Connect.up(p.a.qp, Connect.ALL_REMOTE, Connect.Dest.of(p.b.ctx, p.b.qp, 200), Mtu.MTU_4096, 100);
        Connect.toInit(p.b.qp, Connect.ALL_REMOTE); // B takes no request yet: the WRITE's packets are dropped
        byte[] data = new byte[16384];
        new Random(57).nextBytes(data);
        p.a.buf.write(0, data);
        long t0 = p.world.now();
        p.a.qp.postSend(write(p, data.length));
        p.world.runFor(1_000_000_000L); // 1 ms: sent and dropped, the timer running
        assertEquals(4, p.world.sim.counters().get("Firmware.packets_dropped_state"), "B dropped the four packets");
        Connect.toRtr(p.b.qp, Connect.Dest.of(p.a.ctx, p.a.qp, 100), Mtu.MTU_4096);
        Connect.toRts(p.b.qp, 200);
        WorkCompletion wc = p.await(p.a.cq, 1).get(0);
        assertEquals(WcStatus.SUCCESS, wc.status(), wc.toString());
        long took = p.world.now() - t0;
        assertTrue(took >= ACK_TIMEOUT && took < 2 * ACK_TIMEOUT, "completed after " + took + " ps: one ACK timeout");
        assertEquals(1, p.world.sim.counters().get("Firmware.timeouts"));
        assertEquals(1, p.world.sim.counters().get("Firmware.retransmits"));
        assertArrayEquals(data, p.b.buf.read(0, data.length), "the retransmitted WRITE's bytes");
    }
}
