package nicsim.firmware;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.SplittableRandom;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/** The unissued payloads: a completion waits for the smallest number still present, whatever order they leave in. */
class UnissuedTest {
    @Test void firstIsTheOldestStillPresentWhateverTheOrderOfRemoval() {
        Unissued u = new Unissued();
        TreeSet<Long> model = new TreeSet<>();
        SplittableRandom rnd = new SplittableRandom(7);
        long next = 1;
        for (int step = 0; step < 20_000; step++) {
            // up to 100 in flight at once: the ring grows past its first 16 flags
            if (model.size() < 100 && (model.isEmpty() || rnd.nextInt(3) > 0)) {
                u.add(next);
                model.add(next++);
            } else {
                long span = model.last() - model.first() + 1;
                long gone = model.first() + rnd.nextInt((int) span); // some already gone: no change
                u.remove(gone);
                model.remove(gone);
            }
            assertEquals(model.isEmpty(), u.isEmpty(), "empty at step " + step);
            if (!model.isEmpty()) assertEquals(model.first(), u.first(), "first at step " + step);
        }
    }

    @Test void aClearForgetsEverythingAndTheNumbersGoOn() {
        Unissued u = new Unissued();
        u.add(5);
        u.add(6);
        u.clear();
        assertTrue(u.isEmpty());
        u.remove(6); // a payload of the QP's previous life leaves: nothing changes
        u.add(9);
        assertEquals(9, u.first());
        assertThrows(IllegalArgumentException.class, () -> u.add(11), "numbers come in turn");
        u.remove(9);
        assertThrows(IllegalStateException.class, u::first);
    }
}
