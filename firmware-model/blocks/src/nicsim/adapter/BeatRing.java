package nicsim.adapter;

import java.util.Arrays;
import java.util.function.LongConsumer;
import nicsim.adapter.DmaPorts.Beat;
import nicsim.sim.Simulator;

/**
 * Beats on their way to an engine, each with the time it is in; the engine takes none sooner.
 * A ring of a power-of-two size, of each beat's words and flag: a beat is made a {@link Beat}
 * only when it goes on a wire (the engine's input queues hold words and flag too).
 */
final class BeatRing {
    private final Simulator sim;
    private final LongConsumer wake;
    private final long[] blank; // the words of a beat that carries nothing
    private int carried; // beats in the ring whose words are not blank
    private long[][] words = new long[64][];
    private long[] flags = new long[64];
    private long[] at = new long[64];
    private int head, size;
    private long taken; // beats taken since the ring was made: the head's number
    private final LongQueue flagged = new LongQueue(); // the numbers of the flagged beats the ring holds, in order
    private long lastIn = Long.MIN_VALUE;
    private boolean ordered = true; // each beat is in no sooner than the one before it

    /**
     * A ring whose beats are in by {@code sim}'s time; {@link #wakeForNext} calls {@code wake} with a time. A beat
     * of words {@code blank} carries nothing (see {@link #allBlank}).
     */
    BeatRing(Simulator sim, LongConsumer wake, long[] blank) {
        this.sim = sim;
        this.wake = wake;
        this.blank = blank;
    }

    /** Whether every beat the ring holds is blank: then their words need not be read one by one. */
    boolean allBlank() { return carried == 0; }

    /** Twice the room, the beats held from the front. */
    private void grow() {
        int m = words.length - 1;
        long[][] nw = new long[2 * words.length][];
        long[] nf = new long[nw.length], na = new long[nw.length];
        for (int i = 0; i < size; i++) {
            nw[i] = words[(head + i) & m];
            nf[i] = flags[(head + i) & m];
            na[i] = at[(head + i) & m];
        }
        words = nw; flags = nf; at = na; head = 0;
    }

    /**
     * {@code n} beats in a row, all of flag {@code flag}: the words of the i-th are {@code w[i]} (w null: all
     * blank), and it is in at {@code in[i]}. What n calls of {@link #add(long[], long, long)} do, by the run.
     */
    void add(long[][] w, long flag, long[] in, int n) {
        while (words.length - size < n) grow();
        int from = (head + size) & (words.length - 1), first = Math.min(n, words.length - from), rest = n - first;
        if (w == null) {
            Arrays.fill(words, from, from + first, blank);
            Arrays.fill(words, 0, rest, blank);
        } else {
            System.arraycopy(w, 0, words, from, first);
            System.arraycopy(w, first, words, 0, rest);
            for (int i = 0; i < n; i++) if (w[i] != blank) carried++;
        }
        Arrays.fill(flags, from, from + first, flag);
        Arrays.fill(flags, 0, rest, flag);
        System.arraycopy(in, 0, at, from, first);
        System.arraycopy(in, first, at, 0, rest);
        if (flag != 0) for (int i = 0; i < n; i++) flagged.add(taken + size + i);
        long last = lastIn;
        for (int i = 0; i < n; i++) {
            if (in[i] < last) ordered = false;
            last = in[i];
        }
        lastIn = last;
        size += n;
    }

    void add(long[] w, long flag, long in) {
        if (size == words.length) grow();
        if (w != blank) carried++;
        if (flag != 0) flagged.add(taken + size);
        if (in < lastIn) ordered = false;
        lastIn = in;
        int k = (head + size++) & (words.length - 1);
        words[k] = w;
        flags[k] = flag;
        at[k] = in;
    }

    /** Whether the next beat is in. */
    boolean in() { return inAt(0, sim.now()); }

    /**
     * How many of the beats from the {@code i}-th on, at most {@code max}, come in on edges {@code period} apart from
     * time {@code t}, one an edge: each is in by its edge and not flagged.
     */
    int inOnEdges(int i, long t, long period, int max) {
        int m = unflagged(i, max);
        if (m <= 0) return 0;
        int mask = words.length - 1;
        if (ordered && at[(head + i + m - 1) & mask] <= t) return m; // the last in by the first edge: all are
        int k = 0;
        for (; k < m && at[(head + i + k) & mask] <= t; k++) t += period;
        return k;
    }

    /** How many of the beats from the {@code i}-th on, at most {@code max}, the ring holds before a flagged one. */
    int unflagged(int i, int max) {
        int m = Math.min(max, size - i);
        for (int f = 0; f < flagged.size(); f++) { // the first flagged beat from the i-th on ends them
            long from = flagged.get(f) - taken - i;
            if (from >= 0) return (int) Math.min(m, from);
        }
        return m;
    }

    /** Whether the {@code i}-th beat from the head is in at time {@code t}. */
    boolean inAt(int i, long t) { return i < size && at[(head + i) & (words.length - 1)] <= t; }

    private Beat last; // the beat head() made last: a wire offered the same beat edge after edge gets the same object

    /** The next beat, as the wires carry it. */
    Beat head() {
        if (last == null || last.data() != words[head] || last.flag() != flags[head])
            last = new Beat(words[head], flags[head]);
        return last;
    }

    /** The words of the {@code i}-th beat from the head. */
    long[] wordsAt(int i) { return words[(head + i) & (words.length - 1)]; }

    /** Whether the ring holds an {@code i}-th beat from the head. */
    boolean has(int i) { return i < size; }

    /** When the {@code i}-th beat from the head is in. */
    long atOf(int i) { return at[(head + i) & (words.length - 1)]; }

    /** The flag of the {@code i}-th beat from the head (a failed read's, a packet's last). */
    long flagAt(int i) { return flags[(head + i) & (words.length - 1)]; }

    void take() { take(1); }

    /** The engine took the next {@code n} beats. */
    void take(int n) {
        if (n > size) throw new IllegalStateException("taking " + n + " beats of " + size);
        if (carried > 0) { // let go of the beats' words (blank ones are shared: nothing to let go)
            for (int i = 0; i < n && carried > 0; i++) if (words[(head + i) & (words.length - 1)] != blank) carried--;
            for (int i = 0; i < n; i++) words[(head + i) & (words.length - 1)] = null;
        }
        head = (head + n) & (words.length - 1);
        size -= n;
        taken += n;
        while (!flagged.isEmpty() && flagged.get(0) < taken) flagged.poll();
    }

    /** Wakes the channel when the next beat is in (once per time). */
    void wakeForNext() { if (size > 0) wake.accept(at[head]); }
}
