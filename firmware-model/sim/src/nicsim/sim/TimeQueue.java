package nicsim.sim;

/**
 * Times to come, ascending and distinct, taken from the front: a sorted array whose head moves on as
 * times are taken, for a block that is told many times ahead and wants only the earliest at a time
 * ({@link Alarm}'s later times, {@link ClockDomain#wakeAt}'s). Adding a time already held does nothing.
 */
final class TimeQueue {
    private long[] times = new long[16];
    private int head, size;

    boolean isEmpty() { return size == 0; }

    /** The earliest time held; only when not empty. */
    long first() { return times[head]; }

    /** Takes the earliest time held; only when not empty. */
    long takeFirst() {
        long t = times[head++];
        if (--size == 0) head = 0;
        return t;
    }

    /** Holds {@code t} as well, in its place (once, however often added). */
    void add(long t) {
        if (size == 0 || t > times[head + size - 1]) { // after all held (a beat expected after the last): the end
            if (head + size == times.length) room();
            times[head + size++] = t;
            return;
        }
        int lo = firstAbove(t - 1); // t's place: the first time held not before it (times are never Long.MIN_VALUE)
        if (times[lo] == t) return; // lo < head + size: the last is not before t
        if (head + size == times.length) {
            lo -= head;
            room();
        }
        System.arraycopy(times, lo, times, lo + 1, head + size - lo);
        times[lo] = t;
        size++;
    }

    /** The earliest time held after {@code t} (Long.MAX_VALUE: none). */
    long firstAfter(long t) {
        int i = firstAbove(t);
        return i < head + size ? times[i] : Long.MAX_VALUE;
    }

    /** The index of the first time held after {@code t} (head + size: none), by binary search. */
    private int firstAbove(long t) {
        int lo = head, hi = head + size;
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (times[mid] <= t) lo = mid + 1; else hi = mid;
        }
        return lo;
    }

    /** Room after the last: the times move to the front, or to an array twice as long if over half full. */
    private void room() {
        long[] to = size * 2 > times.length ? new long[2 * times.length] : times;
        System.arraycopy(times, head, to, 0, size);
        times = to;
        head = 0;
    }
}
