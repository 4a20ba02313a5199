package nicsim.sim;

import java.util.Arrays;

/**
 * The streams (or flows) of the domain in the order they were made, a slot each, and which of
 * them have something to check, count or trace on the next edge: an idle one has nothing to do
 * there, and most are idle on most edges.
 */
final class LiveSet {
    private ClockDomain.Sampled[] all = new ClockDomain.Sampled[16];
    private long[] live = new long[1];
    private int n;

    int add(ClockDomain.Sampled s) {
        if (n == all.length) all = Arrays.copyOf(all, 2 * n);
        if (n >>> 6 == live.length) live = Arrays.copyOf(live, live.length + 1);
        all[n] = s;
        return n++;
    }

    void live(int slot) { live[slot >>> 6] |= 1L << slot; }

    /** Runs edge {@code cycle} on each live one, in slot order; one with nothing to do next drops out. */
    void edge(long cycle) {
        for (int w = 0; w < live.length; w++)
            for (long bits = live[w]; bits != 0; bits &= bits - 1) {
                int slot = w << 6 | Long.numberOfTrailingZeros(bits);
                if (!all[slot].edge(cycle)) live[w] &= ~(1L << slot);
            }
    }

    void coasted() {
        for (int w = 0; w < live.length; w++)
            for (long bits = live[w]; bits != 0; bits &= bits - 1)
                all[w << 6 | Long.numberOfTrailingZeros(bits)].coasted();
    }
}
