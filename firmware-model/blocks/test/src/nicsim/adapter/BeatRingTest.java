package nicsim.adapter;

import static org.junit.jupiter.api.Assertions.*;

import nicsim.sim.Simulator;
import org.junit.jupiter.api.Test;

class BeatRingTest {
    private static final long[] BLANK = new long[4];

    /** What a ring holds from its head: each beat's words, flag and time, and how runs of them come in. */
    private static String held(BeatRing r, int n) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < n; i++)
            b.append(r.wordsAt(i) == BLANK ? "-" : Long.toString(r.wordsAt(i)[0])).append('/').append(r.flagAt(i))
                    .append('@').append(r.atOf(i)).append(' ');
        b.append(r.has(n)).append(' ').append(r.allBlank());
        for (int i = 0; i < n; i += 7) b.append(' ').append(r.inOnEdges(i, r.atOf(i), 10, n - i));
        // seven from each run's first, the seventh in by the first edge: all seven only if none is later
        for (int i = 0; i + 7 <= n; i += 12) b.append(' ').append(r.inOnEdges(i, r.atOf(i + 6), 10, 7));
        return b.toString();
    }

    /**
     * A ring with {@code taken} beats added and taken, then runs of {@code run} beats added by the run or one by one
     * (flag 1 on the third run; words blank on the second, one of each other run blank).
     */
    private static BeatRing ring(boolean byRun, int taken, int runs, int run) {
        BeatRing r = new BeatRing(new Simulator(), t -> {}, BLANK);
        for (int i = 0; i < taken; i++) r.add(BLANK, 0, i);
        r.take(taken);
        for (int k = 0; k < runs; k++) {
            long[][] w = k == 1 ? null : new long[run][];
            long[] in = new long[run + 3]; // longer than the run, as a reused one is
            for (int i = 0; i < run; i++) {
                if (w != null) w[i] = i == 2 ? BLANK : new long[]{100L * k + i, 0, 0, 0};
                in[i] = 1_000L * k + (i == 4 ? 500 : 10L * i); // one in after those behind it
            }
            long flag = k == 2 ? 1 : 0;
            if (byRun) r.add(w, flag, in, run);
            else for (int i = 0; i < run; i++) r.add(w == null ? BLANK : w[i], flag, in[i]);
        }
        return r;
    }

    @Test
    void aRunAddedAtOnceIsHeldAsItsBeatsAddedOneByOne() {
        // runs that wrap past the ring's end (60 taken of 64 slots), and that make it grow
        for (int taken : new int[]{0, 60}) {
            BeatRing one = ring(false, taken, 6, 12), run = ring(true, taken, 6, 12);
            assertEquals(held(one, 72), held(run, 72), taken + " taken first");
        }
        BeatRing blank = ring(true, 60, 2, 12);
        blank.take(12);
        assertTrue(blank.allBlank(), "the blank run left alone");
    }

    @Test
    void beatsEachInByItsEdgeAreCountedUpToTheFirstNotIn() {
        // in order, across the ring's end (60 taken of 64 slots): 0, 10, 20, ... 190
        BeatRing r = new BeatRing(new Simulator(), t -> {}, BLANK);
        for (int i = 0; i < 60; i++) r.add(BLANK, 0, 0);
        r.take(60);
        for (int i = 0; i < 20; i++) r.add(BLANK, 0, 10L * i);
        assertEquals(0, r.inOnEdges(3, 29, 10, 10), "the first not in");
        assertEquals(10, r.inOnEdges(3, 30, 10, 10), "one an edge as they come: at most max");
        assertEquals(1, r.inOnEdges(3, 30, 5, 10), "edges faster than the beats");
        assertEquals(7, r.inOnEdges(3, 60, 5, 17), "up to the one at 100, after the edge at 95");
        assertEquals(17, r.inOnEdges(3, 190, 1, 17), "the last held");
        // one sooner than the one before it: each looked at by its own edge
        BeatRing late = new BeatRing(new Simulator(), t -> {}, BLANK);
        for (long at : new long[]{0, 50, 10, 20}) late.add(BLANK, 0, at);
        assertEquals(4, late.inOnEdges(0, 40, 10, 4));
        assertEquals(1, late.inOnEdges(0, 40, 5, 4), "the beat at 50 is not in by the edge at 45");
    }
}
