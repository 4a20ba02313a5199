package nicsim.verbs;

import static org.junit.jupiter.api.Assertions.*;

import java.util.ArrayList;
import java.util.List;
import nicsim.fabric.Faults;
import nicsim.profile.Profiles;
import org.junit.jupiter.api.Test;

/**
 * Scatter to CQE (seed: inline receive): a receive of at most cqe.scatter.max bytes on a QP that
 * allows it is placed in its CQE, not written to the buffer by DMA; the library copies it to the
 * buffers the receive named, so the program sees the same bytes, sooner.
 */
class ScatterToCqeTest {
    static byte[] pattern(int n, int seed) {
        byte[] b = new byte[n];
        for (int i = 0; i < n; i++) b[i] = (byte) (seed * 17 + i * 5 + 3);
        return b;
    }

    /**
     * Sends each size from A to B, one receive each (two SGEs: 10 bytes, then the rest); returns B's completions and
     * the time each came.
     */
    static List<long[]> exchange(Pair p, int... sizes) {
        List<long[]> out = new ArrayList<>();
        for (int k = 0; k < sizes.length; k++) {
            long rbase = p.b.buf.addr() + 4096L * k;
            p.b.qp.postRecv(new RecvWr().wrId(k)
                    .sgList(new Sge(rbase, 10, p.b.mr.lkey()), new Sge(rbase + 100, 2000, p.b.mr.lkey())));
            p.a.buf.write(4096L * k, pattern(sizes[k], k));
            long posted = p.world.sim.now();
            p.a.qp.postSend(Wrs.signaled(k, WrOpcode.SEND)
                    .sgList(new Sge(p.a.buf.addr() + 4096L * k, sizes[k], p.a.mr.lkey())));
            WorkCompletion wc = p.await(p.b.cq, 1).get(0);
            assertEquals(WcStatus.SUCCESS, wc.status(), wc.toString());
            assertEquals(sizes[k], wc.byteLen());
            assertEquals(WcStatus.SUCCESS, p.await(p.a.cq, 1).get(0).status());
            out.add(new long[]{wc.byteLen(), p.world.sim.now() - posted});
            byte[] want = pattern(sizes[k], k), got = new byte[sizes[k]];
            int first = Math.min(10, sizes[k]);
            System.arraycopy(p.b.buf.read(4096L * k, first), 0, got, 0, first);
            if (sizes[k] > 10)
                System.arraycopy(p.b.buf.read(4096L * k + 100, sizes[k] - 10), 0, got, 10, sizes[k] - 10);
            assertArrayEquals(want, got, "message " + k + " of " + sizes[k] + " bytes in the receive's two buffers");
        }
        return out;
    }

    static Pair pair(String profile, boolean scatter) {
        return new Pair(Profiles.load(profile), QpType.RC, 1 << 16, Faults.NONE, 1,
                Pair.defaults().scatterToCqe(scatter)).up(Mtu.MTU_1024);
    }

    @Test
    void smallReceivesComeInTheirCqeAndLandInTheBuffersTheyNamed() {
        Pair on = pair("cx-gen3x16", true), off = pair("cx-gen3x16", false);
        int[] sizes = {1, 8, 32, 33, 100};
        exchange(on, sizes);
        exchange(off, sizes);
        var c = on.world.sim.counters().scope("node1");
        assertEquals(3, c.get("Firmware.cqe_scatters"), "1, 8 and 32 bytes fit the CQE; 33 and 100 do not");
        assertEquals(41, c.get("Firmware.cqe_scatter_bytes"));
        assertEquals(0, off.world.sim.counters().get("Firmware.cqe_scatters"), "not asked for, not done");
        long withDma = off.world.sim.counters().scope("node1").get("pci.dma_writes"), without = c.get("pci.dma_writes");
        assertTrue(without < withDma, "node 1 made fewer PCI writes: " + without + " against " + withDma);
    }

    @Test
    void aScatteredReceiveCompletesSoonerThanOneWrittenByDma() {
        long on = exchange(pair("cx-gen3x16", true), 8).get(0)[1];
        long off = exchange(pair("cx-gen3x16", false), 8).get(0)[1];
        assertTrue(on < off,
                "8 bytes in the CQE: " + on + " ps from post to receive completion, against " + off + " ps by DMA");
    }

    @Test
    void aProfileWithoutItNeverScatters() {
        Pair p = pair("lanai72", true);
        exchange(p, 8);
        assertEquals(0, p.world.sim.counters().get("Firmware.cqe_scatters"));
    }

    @Test
    void receivesFromAnSrqAreCopiedFromTheSrqsWqe() {
        Pair p = pair("cx-gen3x16", true);
        SharedReceiveQueue srq = p.b.pd.createSrq(new SrqInitAttr().maxWr(8).maxSge(2));
        QueuePair b2 = p.b.pd.createQp(Pair.defaults().qpType(QpType.RC).sendCq(p.b.cq).recvCq(p.b.cq).srq(srq)
                .scatterToCqe(true));
        QueuePair a2 = p.a.pd.createQp(Pair.defaults().qpType(QpType.RC).sendCq(p.a.cq).recvCq(p.a.cq));
        Connect.up(a2, Connect.ALL_REMOTE, Connect.Dest.of(p.b.ctx, b2, 300), Mtu.MTU_1024, 400);
        Connect.up(b2, Connect.ALL_REMOTE, Connect.Dest.of(p.a.ctx, a2, 400), Mtu.MTU_1024, 300);
        srq.postRecv(new RecvWr().wrId(9).sgList(new Sge(p.b.buf.addr() + 8000, 64, p.b.mr.lkey())));
        p.a.buf.write(0, pattern(20, 4));
        a2.postSend(Wrs.signaled(1, WrOpcode.SEND).sgList(new Sge(p.a.buf.addr(), 20, p.a.mr.lkey())));
        WorkCompletion wc = p.await(p.b.cq, 1).get(0);
        assertEquals(9, wc.wrId());
        assertEquals(b2.qpNum(), wc.qpNum());
        assertArrayEquals(pattern(20, 4), p.b.buf.read(8000, 20));
        assertEquals(1, p.world.sim.counters().get("Firmware.cqe_scatters"));
    }

    /** A scattered receive right behind a large one written by DMA completes after it, in order, both bytes right. */
    @Test
    void aScatteredReceiveKeepsItsPlaceBehindOneStillBeingWritten() {
        Pair p = pair("cx-gen3x16", true);
        int[] sizes = {3000, 8, 2000, 16};
        for (int k = 0; k < sizes.length; k++) {
            p.b.qp.postRecv(new RecvWr().wrId(k).sgList(new Sge(p.b.buf.addr() + 4096L * k, 4096, p.b.mr.lkey())));
            p.a.buf.write(4096L * k, pattern(sizes[k], k));
        }
        for (int k = 0; k < sizes.length; k++)
            p.a.qp.postSend(Wrs.signaled(k, WrOpcode.SEND)
                    .sgList(new Sge(p.a.buf.addr() + 4096L * k, sizes[k], p.a.mr.lkey())));
        List<WorkCompletion> wcs = p.await(p.b.cq, sizes.length);
        for (int k = 0; k < sizes.length; k++) {
            assertEquals(k, wcs.get(k).wrId(), "completions in message order: " + wcs);
            assertArrayEquals(pattern(sizes[k], k), p.b.buf.read(4096L * k, sizes[k]));
        }
        assertEquals(2, p.world.sim.counters().get("Firmware.cqe_scatters"));
    }
}
