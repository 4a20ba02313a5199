package nicsim.verbs;

import static org.junit.jupiter.api.Assertions.*;

import java.util.Random;
import nicsim.fabric.Faults;
import nicsim.profile.Profiles;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * MRs registered with a chosen IOVA (ibv_reg_mr_iova): the adapter addresses byte X of the region as
 * iova + X, for a peer's WRITEs, READs and atomics and for the region's own scatter/gather entries;
 * anything outside [iova, iova + length), the buffer's own virtual address included, is refused.
 */
class IovaTest {
    private static final long IOVA_B = 0x1234_0000_0000L, IOVA_A = 0x0000_0042_0000_0000L;

    private static Pair pair(String faults) {
        return new Pair(Profiles.load("cx-gen3x16"), QpType.RC, 1 << 16, Faults.parse(faults), 7, Pair.defaults())
                .up(Mtu.MTU_1024);
    }

    private static WorkCompletion write(Pair p, MemoryRegion src, long srcAddr, int len, long remote, int rkey) {
        p.a.qp.postSend(Wrs.signaled(1, WrOpcode.RDMA_WRITE)
                .sgList(new Sge(srcAddr, len, src.lkey())).remoteAddr(remote).rkey(rkey));
        return p.await(p.a.cq, 1).get(0);
    }

    @ParameterizedTest
    @ValueSource(strings = {"none", "drop=0.05,reorder=0.05"})
    void aPeerWritesReadsAndAddsThroughTheIova(String faults) {
        Pair p = pair(faults);
        MemoryRegion dst = p.b.pd.regMrIova(p.b.buf, IOVA_B, Connect.ALL_REMOTE);
        assertEquals(IOVA_B, dst.iova());
        assertEquals(p.b.buf.addr(), dst.addr());
        byte[] data = new byte[20_000];
        new Random(3).nextBytes(data);
        p.a.buf.write(0, data);
        WorkCompletion w = write(p, p.a.mr, p.a.buf.addr(), data.length, IOVA_B + 512, dst.rkey());
        assertEquals(WcStatus.SUCCESS, w.status(), w.toString());
        assertArrayEquals(data, p.b.buf.read(512, data.length), "byte X of the region is iova + X");
        assertArrayEquals(new byte[512], p.b.buf.read(0, 512), "nothing before it");

        // READ it back into A's buffer, from the IOVA
        p.a.qp.postSend(Wrs.signaled(2, WrOpcode.RDMA_READ)
                .sgList(new Sge(p.a.buf.addr() + 32768, data.length, p.a.mr.lkey()))
                .remoteAddr(IOVA_B + 512).rkey(dst.rkey()));
        assertEquals(WcStatus.SUCCESS, p.await(p.a.cq, 1).get(0).status());
        assertArrayEquals(data, p.a.buf.read(32768, data.length));

        // an atomic on the IOVA (a 64-bit word in the host's byte order: little-endian)
        p.b.buf.write(60_000, new byte[]{5, 0, 0, 0, 0, 0, 0, 0});
        p.a.qp.postSend(Wrs.signaled(3, WrOpcode.ATOMIC_FETCH_AND_ADD)
                .sgList(new Sge(p.a.buf.addr(), 8, p.a.mr.lkey()))
                .remoteAddr(IOVA_B + 60_000).rkey(dst.rkey()).compareAdd(10));
        assertEquals(WcStatus.SUCCESS, p.await(p.a.cq, 1).get(0).status());
        assertEquals(15, p.b.buf.read(60_000, 1)[0]);
        assertEquals(5, p.a.buf.read(0, 1)[0], "the value before the add");
    }

    @ParameterizedTest
    @ValueSource(strings = {"none", "drop=0.05,reorder=0.05"})
    void theRegionsOwnSgesUseItsIovaToo(String faults) {
        Pair p = pair(faults);
        MemoryRegion src = p.a.pd.regMrIova(p.a.buf, IOVA_A, AccessFlags.LOCAL_WRITE);
        p.a.buf.write(4096, "through the IOVA".getBytes());
        WorkCompletion w = write(p, src, IOVA_A + 4096, 16, p.b.buf.addr(), p.b.mr.rkey());
        assertEquals(WcStatus.SUCCESS, w.status(), w.toString());
        assertArrayEquals("through the IOVA".getBytes(), p.b.buf.read(0, 16));
    }

    @ParameterizedTest
    // the buffer's own address, just past its end, just before its start
    @ValueSource(longs = {0, 1 << 16, -4})
    void accessOutsideTheIovaRangeIsARemoteAccessError(long where) {
        Pair p = pair("none");
        MemoryRegion dst = p.b.pd.regMrIova(p.b.buf, IOVA_B, Connect.ALL_REMOTE);
        long remote = where == 0 ? p.b.buf.addr() : IOVA_B + where;
        p.b.buf.write(0, new byte[64]);
        WorkCompletion w = write(p, p.a.mr, p.a.buf.addr(), 8, remote, dst.rkey());
        assertEquals(WcStatus.REM_ACCESS_ERR, w.status(), w.toString());
        assertArrayEquals(new byte[64], p.b.buf.read(0, 64), "nothing written");
    }
}
