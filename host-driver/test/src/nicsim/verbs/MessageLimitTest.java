package nicsim.verbs;

import static org.junit.jupiter.api.Assertions.*;

import java.util.Arrays;
import nicsim.fabric.Faults;
import nicsim.profile.Profile;
import nicsim.profile.Profiles;
import org.junit.jupiter.api.Test;

/**
 * The "message longer than the maximum" rows of docs/sources.md#responder-errors, on the responder: two
 * generations of adapter on one fabric, where B accepts messages of at most 4 KiB
 * ({@code fw.max.msg.size}) and A sends 8 KiB ones.
 */
class MessageLimitTest {
    static final int LIMIT = 4096, LONG = 8192;

    static Pair pair(QpType type) {
        Profile a = Profiles.load("cx-gen3x16");
        Profile b = a.with("fw.max.msg.size", LIMIT + " B");
        Pair p = new Pair(a, b, type, 4 * LONG, Faults.NONE, 1, Pair.defaults());
        return type == QpType.RC || type == QpType.UC ? p.up(Mtu.MTU_1024) : p;
    }

    static SendWr send(Pair p, long id, int len) {
        return Wrs.signaled(id, WrOpcode.SEND).sgList(new Sge(p.a.buf.addr(), len, p.a.mr.lkey()));
    }

    @Test
    void eachAdapterReportsItsOwnLimitAndTheVerbsLayerKeepsToIt() {
        Pair p = pair(QpType.RC);
        assertEquals(1L << 30, p.a.ctx.queryPort(1).maxMsgSz());
        assertEquals(LIMIT, p.b.ctx.queryPort(1).maxMsgSz());
        VerbsException e = assertThrows(VerbsException.class, () -> p.b.qp.postSend(new SendWr().opcode(WrOpcode.SEND)
                .sgList(new Sge(p.b.buf.addr(), LONG, p.b.mr.lkey()))));
        assertEquals(Errno.EINVAL, e.errno());
        assertTrue(e.getMessage().contains("maximum message size " + LIMIT), e.getMessage());
    }

    @Test
    void anRcSendPastTheResponderLimitIsLocLenErrThereAndRemInvReqErrHere() {
        Pair p = pair(QpType.RC);
        p.b.qp.postRecv(new RecvWr().wrId(10).sgList(new Sge(p.b.buf.addr(), 4 * LONG, p.b.mr.lkey())));
        p.b.qp.postRecv(new RecvWr().wrId(11).sgList(new Sge(p.b.buf.addr(), 4 * LONG, p.b.mr.lkey())));
        p.a.qp.postSend(send(p, 1, LIMIT)); // exactly the limit is fine
        WorkCompletion ok = p.await(p.b.cq, 1).get(0);
        assertEquals(WcStatus.SUCCESS, ok.status(), ok.toString());
        assertEquals(LIMIT, ok.byteLen());
        assertEquals(WcStatus.SUCCESS, p.await(p.a.cq, 1).get(0).status());

        p.a.qp.postSend(send(p, 2, LONG));
        WorkCompletion there = p.await(p.b.cq, 1).get(0);
        assertEquals(WcStatus.LOC_LEN_ERR, there.status(), there.toString());
        assertEquals(11, there.wrId());
        assertTrue(there.syndrome().contains("maximum"), there.syndrome());
        WorkCompletion here = p.await(p.a.cq, 1).get(0);
        assertEquals(WcStatus.REM_INV_REQ_ERR, here.status(), here.toString());
        assertEquals(2, here.wrId());
        assertEquals(QpState.ERR, p.a.qp.query().qpState());
        assertEquals(QpState.ERR, p.b.qp.query().qpState());
    }

    @Test
    void anRcWriteOrReadPastTheResponderLimitIsQpReqErrThereAndRemInvReqErrHere() {
        for (WrOpcode op : new WrOpcode[]{WrOpcode.RDMA_WRITE, WrOpcode.RDMA_READ}) {
            Pair p = pair(QpType.RC);
            byte[] before = p.b.buf.read(0, LONG);
            p.a.buf.write(0, filled(LONG, (byte) 0x5a));
            p.a.qp.postSend(new SendWr().wrId(3).opcode(op).sendFlags(SendFlags.SIGNALED)
                    .sgList(new Sge(p.a.buf.addr(), LONG, p.a.mr.lkey()))
                    .remoteAddr(p.b.buf.addr()).rkey(p.b.mr.rkey()));
            WorkCompletion here = p.await(p.a.cq, 1).get(0);
            assertEquals(WcStatus.REM_INV_REQ_ERR, here.status(), op + ": " + here);
            p.world.runFor(10_000_000);
            AsyncEvent ev = p.b.ctx.pollAsyncEvent()
                    .orElseThrow(() -> new AssertionError(op + ": no async event at the responder"));
            assertEquals(EventType.QP_REQ_ERR, ev.type(), op + ": " + ev);
            assertTrue(p.b.cq.poll(4).isEmpty(), op + ": no receive WQE was in use, so no CQE at the responder");
            assertEquals(QpState.ERR, p.b.qp.query().qpState());
            assertArrayEquals(before, p.b.buf.read(0, LONG),
                    op + ": not one byte of the refused message reached B's memory");
        }
    }

    @Test
    void aUcSendPastTheResponderLimitIsLocLenErrThereAndSilentHere() {
        Pair p = pair(QpType.UC);
        p.b.qp.postRecv(new RecvWr().wrId(20).sgList(new Sge(p.b.buf.addr(), 4 * LONG, p.b.mr.lkey())));
        p.a.qp.postSend(send(p, 4, LONG));
        WorkCompletion there = p.await(p.b.cq, 1).get(0);
        assertEquals(WcStatus.LOC_LEN_ERR, there.status(), there.toString());
        assertEquals(20, there.wrId());
        WorkCompletion here = p.await(p.a.cq, 1).get(0);
        assertEquals(WcStatus.SUCCESS, here.status(), "UC has no NAK: the requester does not hear of it");
        assertEquals(QpState.RTS, p.a.qp.query().qpState());
        assertEquals(QpState.ERR, p.b.qp.query().qpState());
    }

    static byte[] filled(int n, byte v) {
        byte[] b = new byte[n];
        Arrays.fill(b, v);
        return b;
    }
}
