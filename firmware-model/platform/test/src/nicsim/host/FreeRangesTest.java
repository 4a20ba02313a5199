package nicsim.host;

import static org.junit.jupiter.api.Assertions.*;

import org.junit.jupiter.api.Test;

class FreeRangesTest {
    @Test
    void takesFirstFitFromTheLowestAddressAndJoinsWhatIsGivenBack() {
        FreeRanges f = new FreeRanges(1024);
        assertEquals(0, f.take(256));
        assertEquals(256, f.take(256));
        assertEquals(512, f.take(256));
        assertEquals(768, f.take(256));
        assertEquals(-1, f.take(1)); // full
        f.give(256, 512);
        f.give(768, 1024);
        assertEquals(-1, f.take(512)); // two holes of 256, apart
        f.give(512, 768); // joins both neighbours: 256..1024
        assertEquals(256, f.take(768));
        f.give(0, 256);
        f.give(256, 1024); // joins the range before it: everything is free again
        assertEquals(0, f.take(1024));
    }

    @Test
    void manySmallHolesStayInAddressOrder() {
        FreeRanges f = new FreeRanges(64 * 32);
        for (int i = 0; i < 64; i++) assertEquals(32L * i, f.take(32));
        for (int i = 63; i >= 0; i -= 2) f.give(32L * i, 32L * i + 32); // 32 holes, given back from the top
        for (int i = 1; i < 64; i += 2) assertEquals(32L * i, f.take(32)); // first fit: lowest first
        assertEquals(-1, f.take(32));
    }

    @Test
    void alignedTakesLeaveTheGapsFreeAndAWholeRangeFits() {
        FreeRanges f = new FreeRanges(4096);
        assertEquals(0, f.take(4));
        assertEquals(64, f.takeAligned(100, 64), "the first multiple of 64 with room");
        assertEquals(4, f.takeAligned(60, 4), "the gap before it is still free");
        f.give(0, 4);
        f.give(4, 64);
        f.give(64, 164);
        assertEquals(0, f.takeAligned(4096, 4), "everything given back: all of it fits, aligned");
        assertEquals(-1, f.takeAligned(4, 4));
    }
}
