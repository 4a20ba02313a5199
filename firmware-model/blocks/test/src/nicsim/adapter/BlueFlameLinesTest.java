package nicsim.adapter;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.SplittableRandom;
import nicsim.sim.Recent;
import org.junit.jupiter.api.Test;

/** The BlueFlame buffer's lines keep what a map of the latest entries keeps, whatever the order of use. */
class BlueFlameLinesTest {
    @Test void keepsTheLatestLinesAsAMapOfTheLatestEntriesDoes() {
        for (int capacity : new int[]{1, 3, 8, 64}) {
            BlueFlameLines lines = new BlueFlameLines(capacity);
            Recent<Long, byte[]> model = new Recent<>(capacity);
            SplittableRandom rnd = new SplittableRandom(capacity);
            for (int step = 0; step < 20_000; step++) {
                long a = 64L * rnd.nextInt(2 * capacity + 2); // addresses come back: kept again, taken, missing
                String at = "capacity " + capacity + ", step " + step + ", address " + a;
                int op = rnd.nextInt(3);
                if (op == 0) {
                    byte[] b = {(byte) step};
                    lines.keep(a, b);
                    model.keep(a, b);
                } else if (op == 1) assertSame(model.remove(a), lines.remove(a), at);
                else assertEquals(model.containsKey(a), lines.contains(a), at);
                assertEquals(model.size(), lines.size(), at);
                assertEquals(model.isEmpty(), lines.isEmpty(), at);
            }
        }
    }

    @Test void aFullBufferDropsItsOldestAndAKeptLineIsNewestAgain() {
        BlueFlameLines lines = new BlueFlameLines(2);
        lines.keep(0, new byte[]{0});
        lines.keep(64, new byte[]{1});
        lines.keep(0, new byte[]{2}); // 0 again: now the newest, 64 the oldest
        lines.keep(128, new byte[]{3});
        assertNull(lines.remove(64));
        assertArrayEquals(new byte[]{2}, lines.remove(0));
        assertArrayEquals(new byte[]{3}, lines.remove(128));
        assertEquals(0, lines.size());
        assertThrows(IllegalArgumentException.class, () -> new BlueFlameLines(0));
    }
}
