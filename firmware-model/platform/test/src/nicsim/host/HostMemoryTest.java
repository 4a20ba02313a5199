package nicsim.host;

import static org.junit.jupiter.api.Assertions.*;

import nicsim.profile.Profile;
import nicsim.profile.Profiles;
import org.junit.jupiter.api.Test;

class HostMemoryTest {
    @Test
    void sparseMemoryTouchesOnlyWrittenPagesAndReadsZeroElsewhere() {
        HostMemory m = new HostMemory(1L << 40, 4096); // 1 TiB costs nothing until written
        byte[] data = new byte[10_000];
        for (int i = 0; i < data.length; i++) data[i] = (byte) (i * 7);
        m.write((1L << 39) + 4000, data); // crosses page boundaries
        assertArrayEquals(data, m.read((1L << 39) + 4000, data.length));
        assertEquals(4, m.pagesTouched());
        assertArrayEquals(new byte[16], m.read(12345, 16));
        m.writeLong(64, 0x1122334455667788L);
        assertEquals(0x1122334455667788L, m.readLong(64));
        assertEquals(0x88, m.read(64, 1)[0] & 0xff); // little-endian
    }

    /**
     * Pages whose numbers share their low bits (and chunks of the page table) give what was written last to each,
     * and a page given back reads as zero again; a byte read alone is the one the page holds.
     */
    @Test
    void pagesAtHandStayTrueAcrossSlotsAndRelease() {
        HostMemory m = new HostMemory(1L << 30, 4096);
        long a = m.allocate(4096, 4096), b = a + 64L * 4096; // the same slot among the pages at hand
        m.reserve(b, 4096);
        m.write(a, new byte[]{1, 2, 3});
        m.write(b, new byte[]{9});
        assertEquals(2, m.readByte(a + 1));
        assertEquals(9, m.readByte(b));
        m.write(a + 2, new byte[]{7});
        assertArrayEquals(new byte[]{1, 2, 7}, m.read(a, 3));
        assertEquals(0, m.readByte(a + 4095), "unwritten");
        m.release(a, 4096);
        assertEquals(0, m.readByte(a), "given back: zero again");
        assertEquals(9, m.readByte(b));
        assertThrows(MemoryAccessException.class, () -> m.readByte(1L << 30));
    }

    /** The page table's chunks: the last page of a memory that is no whole number of chunks holds its bytes. */
    @Test
    void pagesInEveryChunkUpToTheLastHoldTheirBytes() {
        long size = (3L << 30) + 5 * 4096; // 786437 pages: chunks of 1024, the last one partly used
        HostMemory m = new HostMemory(size, 4096);
        long[] at = {0, 511L * 4096, 1023L * 4096, 1024L * 4096, size - 4096, size - 1};
        for (int i = 0; i < at.length; i++) m.write(at[i], new byte[]{(byte) (i + 1)});
        for (int i = 0; i < at.length; i++)
            assertEquals(i + 1, m.readByte(at[i]), "the byte at 0x" + Long.toHexString(at[i]));
        assertEquals(5, m.pagesTouched(), "the last two bytes share the last page");
        m.reserve(size - 8192, 8192);
        m.release(size - 8192, 8192);
        assertEquals(4, m.pagesTouched());
        assertEquals(0, m.readByte(size - 1), "given back: zero again");
        assertEquals(4, m.readByte(1024L * 4096), "a page of another chunk keeps its byte");
    }

    /** A memory as large as a long (a stimulus's) holds bytes anywhere, above its page table's chunks too. */
    @Test
    void aMemoryAsLargeAsALongHoldsBytesAnywhere() {
        long size = Long.MAX_VALUE & -4096L;
        HostMemory m = new HostMemory(size, 4096);
        long[] at = {1 << 20, 1L << 40, 1L << 62, size - 2};
        for (int i = 0; i < at.length; i++) m.write(at[i], new byte[]{(byte) (i + 1), (byte) (i + 11)});
        for (int i = 0; i < at.length; i++)
            assertArrayEquals(new byte[]{(byte) (i + 1), (byte) (i + 11)}, m.read(at[i], 2),
                    "at 0x" + Long.toHexString(at[i]));
        assertEquals(4, m.pagesTouched());
        m.reserve(1L << 62, 4096);
        m.release(1L << 62, 4096);
        assertEquals(3, m.pagesTouched());
        assertEquals(0, m.readByte(1L << 62), "given back: zero again");
    }

    @Test
    void outOfBoundsAccessNamesAddressAndLength() {
        HostMemory m = new HostMemory(1 << 20, 4096);
        MemoryAccessException e = assertThrows(MemoryAccessException.class, () -> m.read((1 << 20) - 4, 8));
        assertTrue(e.getMessage().contains("0xffffc") && e.getMessage().contains("8 bytes"), e.getMessage());
        assertThrows(MemoryAccessException.class, () -> m.write(-1, new byte[1]));
        assertThrows(IllegalArgumentException.class, () -> new HostMemory(1 << 20, 1000));
    }

    @Test
    void theProfilesPageSizeIsTypedAndChecked() {
        Profile cx = Profiles.load("cx-gen3x16");
        assertEquals(4096, HostMemory.Config.from(cx).pageBytes());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> HostMemory.Config.from(cx.with("host.page.size", "3000 B")));
        assertEquals("host.page.size = 3000 B: must be a power of two from 64 B to 1073741824 B", e.getMessage());
    }

    @Test
    void allocationsAreAlignedAndDisjoint() {
        HostMemory m = new HostMemory(1L << 30, 4096);
        long a = m.allocate(100, 64), b = m.allocate(4096, 4096);
        assertEquals(0, a % 64);
        assertEquals(0, b % 4096);
        assertTrue(b >= a + 100);
        assertThrows(MemoryAccessException.class, () -> m.allocate(1L << 31, 8));
    }

    @Test
    void releasedRangesStopTakingMemoryAndComeBackOnceFreshSpaceIsSpent() {
        HostMemory m = new HostMemory(4L << 20, 4096); // allocation starts at 1 MiB: 3 MiB to give
        long ring = m.allocate(8192, 4096), rec = m.allocate(8, 8);
        m.write(ring, new byte[8192]);
        assertEquals(0, m.pagesTouched(), "zeros written to unwritten pages change nothing and take nothing");
        m.write(ring + 100, new byte[]{1});
        m.write(ring + 5000, new byte[]{2});
        m.write(rec, new byte[]{3});
        int before = m.pagesTouched();
        m.release(ring, 8192);
        assertEquals(before - 2, m.pagesTouched(), "the ring's two pages are gone");
        assertEquals(0, m.read(ring + 100, 1)[0], "and read as zero");
        assertEquals(3, m.read(rec, 1)[0], "its neighbour keeps its bytes");
        m.release(rec, 8);
        assertEquals(0, m.pagesTouched(), "a page with nothing left in it goes too");
        long fresh = m.allocate(4096, 4096);
        assertTrue(fresh > rec, "fresh space first: a late DMA to a released range does not reach its next owner");
        m.allocate((4L << 20) - fresh - 4096, 4096); // the rest of the fresh space
        assertEquals(ring, m.allocate(8192, 4096), "then released ranges are reused");
    }
}
