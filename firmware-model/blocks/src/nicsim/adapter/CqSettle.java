package nicsim.adapter;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Which completions of each CQ are on their way to host memory: posted to the CqeWriter and not
 * yet written (or refused). The writer answers every completion it accepts, in order, with a write
 * or an error, so the CQ of each write is the oldest accepted one's. Firmware waits on a CQ to
 * settle before it moves the CQ's ring (RESIZE_CQ).
 */
final class CqSettle {
    private final Map<Long, Integer> inFlight = new HashMap<>();
    private final ArrayDeque<Long> accepted = new ArrayDeque<>();
    private final Map<Long, List<Runnable>> waiters = new HashMap<>();

    /** A completion of {@code cqn} was posted. */
    void posted(long cqn) { inFlight.merge(cqn, 1, Integer::sum); }

    /** The writer took a completion of {@code cqn}. */
    void accepted(long cqn) { accepted.add(cqn); }

    /** The writer refused the oldest completion it took. */
    void refused() { done(accepted.poll()); }

    /** The writer wrote the oldest completion it took: its CQ, for {@link #written}. */
    long writing() { return accepted.poll(); }

    /** A completion of {@code cqn} is in host memory. */
    void written(long cqn) { done(cqn); }

    private void done(Long cqn) {
        if (cqn == null) return;
        int left = inFlight.merge(cqn, -1, Integer::sum);
        if (left > 0) return;
        inFlight.remove(cqn);
        List<Runnable> w = waiters.remove(cqn);
        if (w != null) w.forEach(Runnable::run);
    }

    /** Runs {@code then} once nothing of {@code cqn} is on its way (now if nothing is). */
    void whenSettled(long cqn, Runnable then) {
        if (!inFlight.containsKey(cqn)) then.run();
        else waiters.computeIfAbsent(cqn, k -> new ArrayList<>()).add(then);
    }
}
