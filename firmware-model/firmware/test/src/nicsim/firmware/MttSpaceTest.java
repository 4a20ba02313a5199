package nicsim.firmware;

import static org.junit.jupiter.api.Assertions.*;

import org.junit.jupiter.api.Test;

class MttSpaceTest {
    @Test
    void rowsComeBackAfterSettlingAndIndicesNeverRepeat() {
        MttSpace s = new MttSpace();
        s.reset(100);
        long a = s.take(60), b = s.take(40);
        assertEquals(0, a);
        assertEquals(60, b);
        assertEquals(-1, s.take(1), "every row is used");
        assertEquals(60, s.row(b));
        assertEquals(99, s.row(b + 39));
        assertEquals(-1, s.row(b + 40), "past the last index given");
        s.give(a);
        assertEquals(-1, s.row(a), "a given-back index translates to no row");
        assertEquals(-1, s.take(10), "given-back rows wait until no fill can read them");
        s.settle();
        long c = s.take(10);
        assertEquals(100, c, "a new index, never one given before");
        assertEquals(0, s.row(c), "on a reused row");
        assertFalse(s.fits(51));
        assertTrue(s.fits(50));
    }
}
