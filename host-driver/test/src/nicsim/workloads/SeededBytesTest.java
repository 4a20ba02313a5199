package nicsim.workloads;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;

import java.util.Random;
import org.junit.jupiter.api.Test;

/** The workloads' payload stays what java.util.Random gave it: the same seed, the same bytes, call after call. */
class SeededBytesTest {
    @Test
    void givesRandomsBytesCallAfterCall() {
        for (long seed : new long[]{0, 1, 42, -7, Long.MAX_VALUE}) {
            Random want = new Random(seed);
            SeededBytes got = new SeededBytes(seed);
            // lengths off a word both ways, so each call's tail leaves the next to start where Random's would
            for (int len : new int[]{0, 1, 3, 4, 5, 7, 8, 9, 13, 16, 31, 1000, 65536, 7}) {
                byte[] a = new byte[len], b = new byte[len];
                want.nextBytes(a);
                got.nextBytes(b);
                assertArrayEquals(a, b, "seed " + seed + ", " + len + " bytes");
            }
        }
    }
}
