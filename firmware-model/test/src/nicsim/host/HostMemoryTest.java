package nicsim.host;

import static org.junit.jupiter.api.Assertions.*;

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

    @Test
    void outOfBoundsAccessNamesAddressAndLength() {
        HostMemory m = new HostMemory(1 << 20, 4096);
        MemoryAccessException e = assertThrows(MemoryAccessException.class, () -> m.read((1 << 20) - 4, 8));
        assertTrue(e.getMessage().contains("0xffffc") && e.getMessage().contains("8 bytes"), e.getMessage());
        assertThrows(MemoryAccessException.class, () -> m.write(-1, new byte[1]));
        assertThrows(IllegalArgumentException.class, () -> new HostMemory(1 << 20, 1000));
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
}
