package nicsim.adapter;

import java.util.Arrays;

/** A set of non-negative longs without boxing: open addressing, linear probing, deletion by shifting back. */
final class LongSet {
    private long[] keys = new long[256];
    private int size;

    LongSet() { Arrays.fill(keys, -1); }

    int size() { return size; }

    private static int hash(long k) {
        long h = k * 0x9E3779B97F4A7C15L;
        return (int) (h ^ (h >>> 32));
    }

    /** Adds {@code k} (at least 0); false if it was there. */
    boolean add(long k) {
        if (2 * (size + 1) > keys.length) grow();
        int mask = keys.length - 1;
        for (int i = hash(k) & mask; ; i = (i + 1) & mask) {
            if (keys[i] == k) return false;
            if (keys[i] < 0) {
                keys[i] = k;
                size++;
                return true;
            }
        }
    }

    /** Removes {@code k}; false if it was not there. */
    boolean remove(long k) {
        int mask = keys.length - 1;
        int i = hash(k) & mask;
        while (keys[i] != k) {
            if (keys[i] < 0) return false;
            i = (i + 1) & mask;
        }
        // shift back the keys behind the hole that would no longer be found past it
        for (int j = (i + 1) & mask; keys[j] >= 0; j = (j + 1) & mask) {
            int home = hash(keys[j]) & mask;
            // keys[j] may move to i when i lies cyclically in [home, j)
            if (((j - home) & mask) >= ((j - i) & mask)) {
                keys[i] = keys[j];
                i = j;
            }
        }
        keys[i] = -1;
        size--;
        return true;
    }

    private void grow() {
        long[] old = keys;
        keys = new long[old.length * 2];
        Arrays.fill(keys, -1);
        size = 0;
        for (long k : old) if (k >= 0) add(k);
    }
}
