package nicsim.sim;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.Random;
import org.junit.jupiter.api.Test;

class ArrivalTest {
    /**
     * Stepped forward, the times of a run of counts are those asked one by one: before the first byte, through the
     * payload (rounded up to the picosecond) and past its end, for lengths and steps that do and do not divide.
     */
    @Test
    void eachCountSteppedIsInWhenItsOwnQuestionSays() {
        Random r = new Random(11);
        for (int round = 0; round < 2000; round++) {
            long head = r.nextInt(1_000_000), tail = head + (r.nextBoolean() ? r.nextInt(50_000) : r.nextInt(3));
            int length = r.nextInt(10) == 0 ? 0 : 1 + r.nextInt(5000);
            long first = r.nextInt(200) - 100, step = 1 + r.nextInt(300);
            int count = r.nextInt(60), at = r.nextInt(4);
            long[] want = new long[at + count + 1], got = new long[at + count + 1];
            for (int i = 0; i < count; i++) want[at + i] = Arrival.by(head, tail, length, first + i * step);
            Arrival.byEach(head, tail, length, first, step, got, at, count);
            assertArrayEquals(want, got, "head " + head + " tail " + tail + " length " + length + " first " + first
                    + " step " + step);
        }
        // a 256 B completion read in 32 B beats over 16,257 ps: each beat once its last byte is, rounded up
        long[] beats = new long[8];
        new Arrival(1_000, 17_257, 256).byEach(32, 32, beats, 0, 8);
        assertArrayEquals(new long[]{3_033, 5_065, 7_097, 9_129, 11_161, 13_193, 15_225, 17_257}, beats);
    }

    @Test
    void aStepThatDoesNotMoveOnIsRefusedNamingIt() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> Arrival.byEach(0, 10, 10, 1, 0, new long[1], 0, 1));
        assertEquals("step 0 B must be > 0", e.getMessage());
    }
}
