package nicsim.adapter;

import java.util.NoSuchElementException;

/** A first-in first-out queue of longs, unboxed: a ring that doubles when full. */
final class LongQueue {
    private long[] ring = new long[16];
    private int head, size;

    boolean isEmpty() { return size == 0; }

    void add(long v) {
        if (size == ring.length) {
            long[] bigger = new long[2 * size];
            for (int i = 0; i < size; i++) bigger[i] = ring[(head + i) & (ring.length - 1)];
            ring = bigger;
            head = 0;
        }
        ring[(head + size++) & (ring.length - 1)] = v;
    }

    int size() { return size; }

    /** The {@code i}-th oldest (0: the oldest); {@code i} must be below {@link #size}. */
    long get(int i) { return ring[(head + i) & (ring.length - 1)]; }

    /** Takes the oldest; the queue must not be empty. */
    long poll() {
        if (size == 0) throw new NoSuchElementException("empty queue");
        long v = ring[head];
        head = (head + 1) & (ring.length - 1);
        size--;
        return v;
    }
}
