package nicsim.adapter;

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
    private long[][] words = new long[64][];
    private long[] flags = new long[64];
    private long[] at = new long[64];
    private int head, size;

    /** A ring whose beats are in by {@code sim}'s time; {@link #wakeForNext} calls {@code wake} with a time. */
    BeatRing(Simulator sim, LongConsumer wake) {
        this.sim = sim;
        this.wake = wake;
    }

    void add(long[] w, long flag, long in) {
        if (size == words.length) {
            int m = words.length - 1;
            long[][] nw = new long[2 * size][];
            long[] nf = new long[2 * size], na = new long[2 * size];
            for (int i = 0; i < size; i++) {
                nw[i] = words[(head + i) & m];
                nf[i] = flags[(head + i) & m];
                na[i] = at[(head + i) & m];
            }
            words = nw; flags = nf; at = na; head = 0;
        }
        int k = (head + size++) & (words.length - 1);
        words[k] = w;
        flags[k] = flag;
        at[k] = in;
    }

    /** Whether the next beat is in. */
    boolean in() { return inAt(0, sim.now()); }

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
        for (int i = 0; i < n; i++) words[(head + i) & (words.length - 1)] = null;
        head = (head + n) & (words.length - 1);
        size -= n;
    }

    /** Wakes the channel when the next beat is in (once per time). */
    void wakeForNext() { if (size > 0) wake.accept(at[head]); }
}
