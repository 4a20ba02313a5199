package nicsim.sim;

import java.util.Arrays;

/**
 * The kernel's pending events, a 4-ary min-heap ordered by (time, priority, tie, sequence). The
 * keys live in primitive arrays beside the events, so sifting reads contiguous memory rather than
 * one object per comparison: with many nodes the queue holds thousands of events, and the
 * comparisons were most of the kernel's cost.
 */
final class EventHeap {
    private long[] time = new long[64];
    private int[] priority = new int[64];
    private long[] tie = new long[64];
    private long[] seq = new long[64];
    private Simulator.Event[] events = new Simulator.Event[64];
    private int size;

    int size() { return size; }

    Simulator.Event peek() { return size == 0 ? null : events[0]; }

    /** The pending events in no particular order. */
    Simulator.Event[] toArray() { return Arrays.copyOf(events, size); }

    void add(Simulator.Event e) {
        if (size == events.length) grow();
        int i = size++;
        // sift up: move parents down while the new event sorts before them
        while (i > 0) {
            int parent = (i - 1) >>> 2;
            if (!before(e.time, e.priority, e.tie, e.seq, parent)) break;
            move(parent, i);
            i = parent;
        }
        put(i, e);
    }

    Simulator.Event poll() {
        if (size == 0) return null;
        Simulator.Event head = events[0];
        int last = --size;
        if (last > 0) siftDown(last);
        events[last] = null;
        return head;
    }

    /** Puts the event at {@code from} (the last slot) in place, starting at the root. */
    private void siftDown(int from) {
        long t = time[from], ti = tie[from], s = seq[from];
        int p = priority[from];
        Simulator.Event e = events[from];
        int i = 0;
        while (true) {
            int first = (i << 2) + 1;
            if (first >= size) break;
            int best = first;
            int end = Math.min(first + 4, size);
            for (int c = first + 1; c < end; c++)
                if (before(time[c], priority[c], tie[c], seq[c], best)) best = c;
            if (!before(time[best], priority[best], tie[best], seq[best], t, p, ti, s)) break;
            move(best, i);
            i = best;
        }
        put(i, e);
    }

    /** Whether the key (t, p, ti, s) sorts before the event at slot {@code j}. */
    private boolean before(long t, int p, long ti, long s, int j) {
        return before(t, p, ti, s, time[j], priority[j], tie[j], seq[j]);
    }

    private static boolean before(long t, int p, long ti, long s, long t2, int p2, long ti2, long s2) {
        if (t != t2) return t < t2;
        if (p != p2) return p < p2;
        if (ti != ti2) return ti < ti2;
        return s < s2;
    }

    private void move(int from, int to) {
        time[to] = time[from]; priority[to] = priority[from]; tie[to] = tie[from]; seq[to] = seq[from];
        events[to] = events[from];
    }

    private void put(int i, Simulator.Event e) {
        time[i] = e.time; priority[i] = e.priority; tie[i] = e.tie; seq[i] = e.seq;
        events[i] = e;
    }

    private void grow() {
        int n = events.length * 2;
        time = Arrays.copyOf(time, n);
        priority = Arrays.copyOf(priority, n);
        tie = Arrays.copyOf(tie, n);
        seq = Arrays.copyOf(seq, n);
        events = Arrays.copyOf(events, n);
    }
}
