package nicsim.serve;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import nicsim.host.HostMemory;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A program's memory as the adapter's DMA reaches it, held while simulated time moves: what the
 * adapter wrote reaches the program only when the memory is settled, the adapter reads its own
 * writes meanwhile, and bytes it did not write stay as the program left them. The program here is
 * a sleeping process, its memory the bottom of its stack (mapped, never used).
 */
class ProcMemoryTest {
    private Process sleeper;
    private ProcMemory adapter, program;
    private long stack;

    @BeforeEach void start() throws Exception {
        sleeper = new ProcessBuilder("sleep", "600").start();
        int pid = (int) sleeper.pid();
        for (int i = 0; i < 100 && stack == 0; i++) {
            for (String line : Files.readAllLines(Path.of("/proc", Integer.toString(pid), "maps")))
                if (line.endsWith("[stack]")) stack = Long.parseUnsignedLong(line.substring(0, line.indexOf('-')), 16);
            if (stack == 0) Thread.sleep(10); // until sleep has exec'd
        }
        assertTrue(stack != 0, "sleep's stack not found");
        adapter = new ProcMemory(pid);
        program = new ProcMemory(pid); // never held: what the program itself sees
    }

    @AfterEach void stop() {
        adapter.close();
        program.close();
        sleeper.destroyForcibly();
    }

    private static byte[] filled(int n, int value) {
        byte[] b = new byte[n];
        Arrays.fill(b, (byte) value);
        return b;
    }

    private byte[] seen(HostMemory.Backing b, long offset, int n) {
        byte[] out = new byte[n];
        b.read(offset, out, 0, n);
        return out;
    }

    @Test void writesReachTheProgramWhenSettledAndTheAdapterReadsThemMeanwhile() {
        HostMemory.Backing dma = adapter.at(stack), mine = program.at(stack);
        mine.write(0, filled(8192, 0x11), 0, 8192);
        adapter.hold();
        dma.write(4000, filled(200, 0x22), 0, 200); // across the first page's end
        assertArrayEquals(filled(200, 0x11), seen(mine, 4000, 200), "the program saw a held write");
        byte[] back = seen(dma, 3990, 220);
        assertArrayEquals(filled(10, 0x11), Arrays.copyOfRange(back, 0, 10));
        assertArrayEquals(filled(200, 0x22), Arrays.copyOfRange(back, 10, 210), "the adapter lost its own write");
        assertArrayEquals(filled(10, 0x11), Arrays.copyOfRange(back, 210, 220));
        assertEquals(1, adapter.writes(), "a held write counts as it happens (a spinning program is let go on)");
        adapter.settle();
        byte[] after = seen(mine, 3990, 220);
        assertArrayEquals(back, after, "the program's memory after settling");
    }

    @Test void bytesTheAdapterDidNotWriteStayAsTheProgramLeftThem() {
        HostMemory.Backing dma = adapter.at(stack), mine = program.at(stack);
        mine.write(0, filled(64, 0x33), 0, 64);
        adapter.hold();
        dma.write(8, filled(8, 0x44), 0, 8);
        assertArrayEquals(filled(8, 0x33), seen(dma, 0, 8)); // the page is read now, the write kept over it
        dma.write(40, filled(8, 0x55), 0, 8);
        mine.write(24, filled(8, 0x66), 0, 8); // between the two writes, by the program, after its page was read
        adapter.settle();
        byte[] want = filled(64, 0x33);
        Arrays.fill(want, 8, 16, (byte) 0x44);
        Arrays.fill(want, 24, 32, (byte) 0x66);
        Arrays.fill(want, 40, 48, (byte) 0x55);
        assertArrayEquals(want, seen(mine, 0, 64));
    }

    @Test void memoryNotMappedReadsZerosAndTakesNoWritesWhileHeld() {
        HostMemory.Backing nowhere = adapter.at(0x1000); // below mmap_min_addr: never mapped
        adapter.hold();
        byte[] b = filled(16, 0x77);
        nowhere.read(0, b, 0, 16);
        assertArrayEquals(new byte[16], b);
        nowhere.write(64, filled(16, 0x77), 0, 16);
        adapter.settle();
        assertEquals(2, adapter.failures(), "each refused access is counted");
        assertNotNull(adapter.firstFailure());
        assertTrue(adapter.firstFailure().contains("DMA read of 16 bytes at 0x1000"), adapter.firstFailure());
    }

    @Test void aRefusedAccessIsReportedAtTheProgramsAddressWhateverTheBufferOffset() {
        byte[] b = filled(16, 0x77);
        adapter.at(0x1000).read(0, b, 4, 12); // not held: straight to the kernel
        assertArrayEquals(filled(4, 0x77), Arrays.copyOfRange(b, 0, 4));
        assertArrayEquals(new byte[12], Arrays.copyOfRange(b, 4, 16));
        assertTrue(adapter.firstFailure().contains("DMA read of 12 bytes at 0x1000:"), adapter.firstFailure());
    }
}
