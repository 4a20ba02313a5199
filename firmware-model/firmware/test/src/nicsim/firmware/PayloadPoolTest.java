package nicsim.firmware;

import static org.junit.jupiter.api.Assertions.*;

import org.junit.jupiter.api.Test;

/**
 * The pool keeps arrays of every length a message's packets take: an MTU's, and a few others (a message's last
 * packet, a short message's only one), each given to the next packet of its length.
 */
class PayloadPoolTest {
    @Test
    void anOddLengthGivenBackGoesToTheNextPacketOfThatLength() {
        PayloadPool pool = new PayloadPool();
        byte[] last = pool.take(1_000), full = pool.take(4_096);
        pool.give(last);
        pool.give(full);
        assertTrue(last == pool.take(1_000), "a 1000 B last packet's array reused");
        assertTrue(full == pool.take(4_096), "an MTU packet's array reused");
        assertTrue(last != pool.take(999), "another length gets its own");
        assertEquals(5, pool.taken());
        assertEquals(2, pool.reused());
    }

    @Test
    void aFewOddLengthsAreKeptTheOldestGivingWay() {
        PayloadPool pool = new PayloadPool();
        byte[][] b = new byte[PayloadPool.ODD_LENGTHS + 1][];
        for (int i = 0; i < b.length; i++) b[i] = new byte[100 + i];
        for (byte[] a : b) pool.give(a); // one length more than kept: the first one's place goes to the last
        assertTrue(b[0] != pool.take(100), "the first length was given up");
        for (int i = 1; i < b.length; i++) assertTrue(b[i] == pool.take(100 + i), "length " + (100 + i) + " kept");
    }

    @Test
    void anOddLengthKeepsNoMoreThanItsShare() {
        PayloadPool pool = new PayloadPool();
        int len = 3_000, fits = PayloadPool.ODD_KEEP_BYTES / len;
        for (int i = 0; i < fits + 5; i++) pool.give(new byte[len]);
        for (int i = 0; i < fits + 5; i++) pool.take(len);
        assertEquals(fits, pool.reused(), "arrays kept of " + len + " B");
    }
}
