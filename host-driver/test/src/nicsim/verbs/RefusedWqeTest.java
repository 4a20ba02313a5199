package nicsim.verbs;

import static org.junit.jupiter.api.Assertions.*;

import java.util.Arrays;
import java.util.List;
import nicsim.abi.WqeFormat;
import org.junit.jupiter.api.Test;

/**
 * A WQE the fetcher refuses (its control segment is bad) completes LOC_QP_OP_ERR and moves the QP to
 * ERR; every WQE posted behind it, already rung or not, still completes WR_FLUSH_ERR with its own
 * wr_id, in order, and nothing of them reaches the peer (no work request is lost: docs/sources.md#verbs-error-model).
 */
class RefusedWqeTest {
    static final int ILLEGAL_OPCODE = 0x1f;

    /** A raw WQE of {@code wqebbs} WQEBBs: opcode and DS as given, signaled, the rest {@code fill}. */
    static byte[] raw(int opcode, int ds, int wqebbs, byte fill) {
        byte[] w = new byte[64 * wqebbs];
        Arrays.fill(w, fill);
        w[3] = (byte) opcode;
        w[7] = (byte) ds;
        w[11] = (byte) WqeFormat.CQ_UPDATE;
        return w;
    }

    static SendWr write(Pair p, long wrId, int off) {
        return Wrs.signaled(wrId, WrOpcode.RDMA_WRITE)
                .sgList(new Sge(p.a.buf.addr() + off, 256, p.a.mr.lkey()))
                .remoteAddr(p.b.buf.addr() + off).rkey(p.b.mr.rkey());
    }

    /**
     * Posts {@code bad} and three WRITEs right behind it (rung before the fetcher reads {@code bad}); returns the four
     * completions.
     */
    static List<WorkCompletion> postBehind(Pair p, byte[] bad) {
        p.a.buf.write(0, new byte[4096]);
        byte[] src = new byte[1024];
        Arrays.fill(src, (byte) 0x5a);
        p.a.buf.write(0, src);
        p.a.qp.postRawWqe(1, bad);
        for (int i = 0; i < 3; i++) p.a.qp.postSend(write(p, 2 + i, 256 * i));
        return p.await(p.a.cq, 4);
    }

    static void assertFlushedBehind(Pair p, List<WorkCompletion> wcs) {
        assertEquals(4, wcs.size(), wcs.toString());
        assertEquals(1, wcs.get(0).wrId());
        assertEquals(WcStatus.LOC_QP_OP_ERR, wcs.get(0).status(), wcs.get(0).toString());
        for (int i = 1; i < 4; i++) {
            assertEquals(1 + i, wcs.get(i).wrId(), wcs.toString());
            assertEquals(WcStatus.WR_FLUSH_ERR, wcs.get(i).status(), wcs.get(i).toString());
        }
        assertArrayEquals(new byte[768], p.b.buf.read(0, 768), "a flushed WRITE reached the peer");
        p.world.runFor(10_000_000);
        assertEquals(List.of(), p.a.cq.poll(4), "no completion for a WQEBB that is not a WQE");
        // the queue is whole: a WQE posted now flushes too
        p.a.qp.postSend(write(p, 9, 0));
        WorkCompletion more = p.await(p.a.cq, 1).get(0);
        assertEquals(9, more.wrId());
        assertEquals(WcStatus.WR_FLUSH_ERR, more.status());
    }

    @Test
    void theWqesRungBehindAnIllegalOpcodeAreFlushedInOrder() {
        Pair p = new Pair("cx-gen3x16", QpType.RC, 8192).up(Mtu.MTU_1024);
        // two WQEBBs with a DS that says so: the fetch restarts right after them
        List<WorkCompletion> wcs = postBehind(p, raw(ILLEGAL_OPCODE, 8, 2, (byte) 0));
        assertFlushedBehind(p, wcs);
        assertEquals(0, p.world.sim.counters().get("Firmware.wqebbs_skipped"));
    }

    @Test
    void afterAControlSegmentWithNoSizeTheFetchFindsTheNextWqe() {
        Pair p = new Pair("cx-gen3x16", QpType.RC, 8192).up(Mtu.MTU_1024);
        p.world.sim.trace().enable("Adapter"); // each violation is marked on the timeline too
        // DS 0 gives no WQE boundary: its second WQEBB (0xa5 bytes, no control segment) is skipped, reported, not
        // completed
        List<WorkCompletion> wcs = postBehind(p, raw(ILLEGAL_OPCODE, 0, 2, (byte) 0xa5));
        assertFlushedBehind(p, wcs);
        assertEquals(1, p.world.sim.counters().get("Firmware.wqebbs_skipped"));
        assertTrue(p.world.host(0).adapter.errors().stream().anyMatch(e -> e.toString().contains("skipped")),
                p.world.host(0).adapter.errors().toString());
        var marks = p.world.sim.trace().entries().stream().filter(e -> e.stage().equals("violation")).toList();
        assertEquals(p.world.host(0).adapter.errors().size(), marks.size(), "one mark per violation: " + marks);
        assertTrue(marks.get(0).track().endsWith("Adapter") && marks.get(0).detail().contains("on qpn 0x"),
                marks.toString());
    }

    @Test
    void onUdOnlyTheSendQueueStopsAndTheSendsBehindFlush() {
        Pair p = new Pair("cx-gen3x16", QpType.UD, 8192).upUd(Mtu.MTU_2048);
        AddressHandle toB = p.a.pd.createAh(new AhAttr().dlid(p.b.ctx.queryPort(1).lid()));
        p.a.qp.postRawWqe(1, raw(ILLEGAL_OPCODE, 8, 2, (byte) 0));
        for (int i = 0; i < 2; i++)
            p.a.qp.postSend(Wrs.signaled(2 + i, WrOpcode.SEND).ah(toB).remoteQpn(p.b.qp.qpNum())
                    .remoteQkey(Connect.QKEY).sgList(new Sge(p.a.buf.addr(), 16, p.a.mr.lkey())));
        List<WorkCompletion> wcs = p.await(p.a.cq, 3);
        assertEquals(List.of(1L, 2L, 3L), wcs.stream().map(WorkCompletion::wrId).toList(), wcs.toString());
        assertEquals(List.of(WcStatus.LOC_QP_OP_ERR, WcStatus.WR_FLUSH_ERR, WcStatus.WR_FLUSH_ERR),
                wcs.stream().map(WorkCompletion::status).toList());
        assertEquals(QpState.SQE, p.a.qp.query().qpState());
        // its receive queue still works
        p.a.qp.postRecv(new RecvWr().wrId(7).sgList(new Sge(p.a.buf.addr() + 4096, 100, p.a.mr.lkey())));
        AddressHandle toA = p.b.pd.createAh(new AhAttr().dlid(p.a.ctx.queryPort(1).lid()));
        p.b.qp.postSend(new SendWr().wrId(8).opcode(WrOpcode.SEND).ah(toA).remoteQpn(p.a.qp.qpNum())
                .remoteQkey(Connect.QKEY).sgList(new Sge(p.b.buf.addr(), 16, p.b.mr.lkey())));
        WorkCompletion r = p.await(p.a.cq, 1).get(0);
        assertEquals(7, r.wrId());
        assertEquals(WcStatus.SUCCESS, r.status(), r.toString());
    }
}
