package nicsim.sim;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Random;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

class TimeQueueTest {
    /** Against a sorted set: the same earliest time after every add, the same time taken each time, once each. */
    @Test
    void givesTimesBackAscendingAndOnceEachWhateverTheOrderAdded() {
        TimeQueue q = new TimeQueue();
        TreeSet<Long> want = new TreeSet<>();
        Random r = new Random(7);
        int taken = 0;
        for (int round = 0; round < 200; round++) { // adds and takes interleaved: the head moves, the array grows
            int adds = 1 + r.nextInt(40), takes = r.nextInt(40);
            for (int i = 0; i < adds; i++) {
                long t = 1000 + r.nextInt(300);
                q.add(t);
                want.add(t);
                assertEquals(want.first(), q.first(), "the earliest after adding " + t);
            }
            for (int i = 0; i < takes && !want.isEmpty(); i++, taken++) {
                assertTrue(!q.isEmpty());
                assertEquals(want.pollFirst(), q.takeFirst(), "take " + taken);
            }
            assertEquals(want.isEmpty(), q.isEmpty());
        }
        assertTrue(taken > 1000, "the run took many times: " + taken);
    }

    /** Times mostly added in order (beats expected one after another), some again, some before: as a sorted set. */
    @Test
    void timesAddedInOrderComeBackInOrder() {
        TimeQueue q = new TimeQueue();
        TreeSet<Long> want = new TreeSet<>();
        Random r = new Random(9);
        long last = 0;
        for (int i = 0; i < 20_000; i++) {
            long t = r.nextInt(10) == 0 ? last - r.nextInt(50) : (last += r.nextInt(3));
            q.add(t);
            want.add(t);
            if (r.nextInt(3) == 0) assertEquals(want.pollFirst(), q.takeFirst(), "take after adding " + t);
        }
        while (!want.isEmpty()) assertEquals(want.pollFirst(), q.takeFirst());
        assertTrue(q.isEmpty());
    }
}
