package nicsim.verbs;

import static org.junit.jupiter.api.Assertions.*;

import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * Pinned memory is registered in the largest pages its physical layout allows, up to the
 * profile's mtt.page.max (as mlx5's driver picks a page size per MR), so a large buffer takes a
 * few MTT entries instead of one per 4 KiB, and the walker's cache stops missing on every page;
 * a profile without mtt.page.max (the LANai ones) keeps 4 KiB pages. Data crosses byte for byte.
 */
class MrPageSizeTest {
    private static final int K4 = 4096;

    private static long[] contiguous(long pa, int pages) {
        long[] p = new long[pages];
        for (int i = 0; i < pages; i++) p[i] = pa + (long) i * K4;
        return p;
    }

    @Test
    void theLargestPageTheLayoutAllowsIsChosen() {
        long va = 0x7f00_0020_0000L; // 2 MB aligned
        assertEquals(21, MemoryRegion.bestPageShift(va, contiguous(0x4020_0000L, 1024), K4, 21));
        assertEquals(16, MemoryRegion.bestPageShift(va, contiguous(0x4020_0000L, 1024), K4, 16),
                "bounded by the profile");
        // the same offset in a 64 KiB page but not in a 2 MB one
        assertEquals(16, MemoryRegion.bestPageShift(va, contiguous(0x4021_0000L, 1024), K4, 21));
        // physically 4 KiB apart from its virtual alignment: 4 KiB pages only
        assertEquals(12, MemoryRegion.bestPageShift(va, contiguous(0x4020_1000L, 64), K4, 21));
        // two 2 MB halves, each contiguous and aligned, far apart: still 2 MB pages
        long[] halves = contiguous(0x4020_0000L, 1024);
        for (int i = 512; i < 1024; i++) halves[i] += 0x1000_0000L;
        assertEquals(21, MemoryRegion.bestPageShift(va, halves, K4, 21));
        // a break inside a 2 MB page at its middle: 1 MB pages
        long[] broken = contiguous(0x4020_0000L, 1024);
        for (int i = 256; i < 512; i++) broken[i] += 0x1000_0000L;
        assertEquals(20, MemoryRegion.bestPageShift(va, broken, K4, 21));
    }

    /** An 8 MiB RDMA WRITE from A's buffer to B's: the MTT cache misses it took, with the bytes checked. */
    private static long writeMisses(String profile) {
        int size = 8 << 20;
        Pair p = new Pair(profile, QpType.RC, size).up(Mtu.MTU_2048);
        byte[] data = new byte[size];
        new Random(7).nextBytes(data);
        p.a.buf.write(0, data);
        long before = p.world.sim.counters().get("MttWalker.cache_misses");
        p.a.qp.postSend(Wrs.signaled(1, WrOpcode.RDMA_WRITE)
                .sgList(new Sge(p.a.buf.addr(), size, p.a.mr.lkey())).remoteAddr(p.b.buf.addr()).rkey(p.b.mr.rkey()));
        List<WorkCompletion> wc = p.await(p.a.cq, 1);
        assertEquals(WcStatus.SUCCESS, wc.get(0).status(), wc.toString());
        assertArrayEquals(data, p.b.buf.read(0, size), "every byte arrived");
        return p.world.sim.counters().get("MttWalker.cache_misses") - before;
    }

    @Test
    void aLargeBufferTakesFewTranslationMissesWhereTheProfileAllowsLargePages() {
        long cx = writeMisses("cx-gen3x16"), lanai = writeMisses("lanai72");
        assertTrue(cx <= 16, "8 MiB in 2 MB pages: " + cx + " misses");
        assertTrue(lanai >= 2 * 2048, "8 MiB in 4 KiB pages, read and written: " + lanai + " misses");
    }
}
