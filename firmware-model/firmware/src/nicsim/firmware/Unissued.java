package nicsim.firmware;

/**
 * The payloads whose PCI writes have not all left the adapter (see {@link Qp}'s completions after data): numbers
 * handed out one after another and removed in any order. A ring of flags from the oldest still present, so a
 * payload costs no boxed number and no tree entry (it was a {@code TreeSet<Long>}).
 */
final class Unissued {
    private boolean[] present = new boolean[16]; // a power of two; number n at n & (length - 1)
    private long first, end; // present numbers lie in [first, end); first is present unless the set is empty

    boolean isEmpty() { return first == end; }

    /** The smallest number present; the set must not be empty. */
    long first() {
        if (isEmpty()) throw new IllegalStateException("no payload is unissued");
        return first;
    }

    /** Adds {@code n}, the next number after every one added before (after a clear, any number). */
    void add(long n) {
        if (isEmpty()) first = end = n;
        else if (n != end) throw new IllegalArgumentException("payload " + n + " out of turn: " + end + " expected");
        if (end - first == present.length) grow();
        present[slot(end)] = true;
        end++;
    }

    /** Removes {@code n} if present (a number from before a clear is not). */
    void remove(long n) {
        if (n < first || n >= end || !present[slot(n)]) return;
        present[slot(n)] = false;
        while (first < end && !present[slot(first)]) first++;
    }

    void clear() {
        for (long n = first; n < end; n++) present[slot(n)] = false;
        first = end;
    }

    private int slot(long n) { return (int) n & (present.length - 1); }

    private void grow() {
        boolean[] bigger = new boolean[2 * present.length];
        for (long n = first; n < end; n++) bigger[(int) n & (bigger.length - 1)] = present[slot(n)];
        present = bigger;
    }
}
