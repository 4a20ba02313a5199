package nicsim.cosim.bench;

import static org.junit.jupiter.api.Assertions.*;

import nicsim.cosim.bench.SpeedGoals.Sense;
import org.junit.jupiter.api.Test;

/** The bench's goal table: a verdict a reader can trust, and the rounds' spread beside it. */
class SpeedGoalsTest {
    @Test
    void aSlowdownOverItsTargetShowsTheGapFromTheMedian() {
        SpeedGoals g = new SpeedGoals();
        g.slowdown("write_bw 64 KiB", 30, new double[]{120, 90, 105});
        String md = g.markdown();
        assertTrue(md.contains("| write_bw 64 KiB slowdown | <= 30.00x | 105x | gap 3.50x | 90.00x to 120x |"), md);
        assertTrue(md.contains("0 of 1 goals met"), md);
    }

    @Test
    void atLeastGoalsAreMetFromBelowAndMissedAbove() {
        SpeedGoals g = new SpeedGoals();
        g.add("2 threads, 64 nodes, of the ceiling", Sense.AT_LEAST, 0.9, 0.95, new double[]{0.95, 0.8}, "x");
        g.add("2 threads, 8 nodes, of the ceiling", Sense.AT_LEAST, 0.9, 0.6, new double[]{0.6}, "x");
        var goals = g.goals();
        assertTrue(goals.get(0).met());
        assertFalse(goals.get(1).met());
        assertEquals(1.5, goals.get(1).gap(), 1e-9);
        String md = g.markdown();
        assertTrue(md.contains("| >= 0.90x | 0.60x | gap 1.50x | one run |"), md);
        assertTrue(md.contains("1 of 2 goals met"), md);
    }

    @Test
    void aFigureOnItsTargetIsMet() {
        SpeedGoals g = new SpeedGoals();
        g.add("heap per 64 KiB message", Sense.AT_MOST, 80, 80, new double[]{80}, " KB");
        assertTrue(g.goals().get(0).met());
        assertTrue(g.markdown().contains("| <= 80.00 KB | 80.00 KB | met |"), g.markdown());
    }

    @Test
    void aTargetOfZeroIsRefusedNamingIt() {
        var e = assertThrows(IllegalArgumentException.class,
                () -> new SpeedGoals().add("x", Sense.AT_MOST, 0, 1, new double[]{1}, "x"));
        assertEquals("target = 0.0: must be above 0", e.getMessage());
    }
}
