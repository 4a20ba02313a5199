package nicsim.sim;

import java.util.Arrays;

/**
 * The kernel's pending events, a 4-ary min-heap ordered by (time, priority, tie). The keys live in
 * one primitive array beside the events, two longs per slot (the time, then priority and tie packed
 * by {@link Simulator.Event#order}), so a comparison reads one place in memory rather than an object:
 * with many nodes the queue holds hundreds of events, and the comparisons were most of the kernel's
 * cost. Two events never share time, priority and tie unless both are edges of one clock, and then
 * at most one of them is live (see Simulator#scheduleEdge): their order does not matter.
 */
final class EventHeap {
    private long[] keys = new long[2 * 64]; // slot i: keys[2i] the time, keys[2i + 1] the order
    private Simulator.Event[] events = new Simulator.Event[64];
    private int size;
    // The root was taken (its event runs) and is not yet out: the next add takes its place and sifts
    // down once, rather than the last event sifting down and the new one sifting up. Most events
    // schedule one more (a clock's next edge, a lane's next arrival), so this halves the sifts.
    private boolean rootTaken;

    int size() { settle(); return size; }

    Simulator.Event peek() { settle(); return size == 0 ? null : events[0]; }

    /** The pending events in no particular order. */
    Simulator.Event[] toArray() { settle(); return Arrays.copyOf(events, size); }

    /**
     * The first event, which leaves the heap: as {@link #poll()}, but its place is given up only at
     * the next call, which an add makes cheaper.
     */
    Simulator.Event take() {
        settle();
        if (size == 0) return null;
        rootTaken = true;
        return events[0];
    }

    private void settle() {
        if (rootTaken) {
            rootTaken = false;
            poll();
        }
    }

    void add(Simulator.Event e) {
        long t = e.time, o = e.order;
        if (rootTaken) {
            rootTaken = false;
            siftDown(e, t, o);
            return;
        }
        if (size == events.length) grow();
        int i = size++;
        // sift up: move parents down while the new event sorts before them
        while (i > 0) {
            int parent = (i - 1) >>> 2;
            long pt = keys[2 * parent];
            if (t > pt || t == pt && o >= keys[2 * parent + 1]) break;
            move(parent, i);
            i = parent;
        }
        put(i, e, t, o);
    }

    /**
     * Whether keys {@code t} and {@code o} sort before every queued event (cancelled ones too), read without settling
     * a taken root: then the next add still takes the root's place.
     */
    boolean before(long t, long o) {
        int from = rootTaken ? 1 : 0, end = Math.min(rootTaken ? 5 : 1, size); // a taken root's children hold the min
        for (int i = from; i < end; i++) {
            long kt = keys[2 * i];
            if (kt < t || kt == t && keys[2 * i + 1] <= o) return false;
        }
        return true;
    }

    Simulator.Event poll() {
        settle();
        if (size == 0) return null;
        Simulator.Event head = events[0];
        int last = --size;
        Simulator.Event e = events[last];
        events[last] = null;
        if (last > 0) siftDown(e, keys[2 * last], keys[2 * last + 1]);
        return head;
    }

    /** Puts {@code e}, of keys {@code t} and {@code o}, in place of the root, sifting down from there. */
    private void siftDown(Simulator.Event e, long t, long o) {
        int i = 0;
        while (true) {
            int first = (i << 2) + 1;
            if (first >= size) break;
            int best = first;
            long bt = keys[2 * first], bo = keys[2 * first + 1];
            int end = Math.min(first + 4, size);
            for (int c = first + 1; c < end; c++) {
                long ct = keys[2 * c], co = keys[2 * c + 1];
                if (ct < bt || ct == bt && co < bo) { best = c; bt = ct; bo = co; }
            }
            if (bt > t || bt == t && bo >= o) break;
            move(best, i);
            i = best;
        }
        put(i, e, t, o);
    }

    private void move(int from, int to) {
        keys[2 * to] = keys[2 * from];
        keys[2 * to + 1] = keys[2 * from + 1];
        events[to] = events[from];
    }

    private void put(int i, Simulator.Event e, long t, long o) {
        keys[2 * i] = t;
        keys[2 * i + 1] = o;
        events[i] = e;
    }

    private void grow() {
        int n = events.length * 2;
        keys = Arrays.copyOf(keys, 2 * n);
        events = Arrays.copyOf(events, n);
    }
}
