package nicsim.firmware;

import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Map;
import java.util.function.Consumer;

/**
 * The adapter's atomic unit: one atomic at a time per 8-byte host address, whatever QP it came on,
 * so atomics are atomic with respect to each other (IBV_ATOMIC_HCA).
 */
final class AtomicUnit {
    /** Atomics under way, by host address; each holds the ones waiting for that address, in arrival order. */
    private final Map<Long, ArrayDeque<Consumer<Runnable>>> at = new HashMap<>();

    /**
     * Starts {@code op} when address {@code pa} is free, with a release to run once its write is
     * issued (a read issued after a posted write sees it: PCI does not let a read pass a posted write).
     */
    void run(long pa, Consumer<Runnable> op) {
        ArrayDeque<Consumer<Runnable>> waiting = at.get(pa);
        if (waiting != null) { waiting.add(op); return; }
        at.put(pa, new ArrayDeque<>());
        op.accept(() -> release(pa));
    }

    private void release(long pa) {
        Consumer<Runnable> next = at.get(pa).poll();
        if (next == null) at.remove(pa);
        else next.accept(() -> release(pa));
    }
}
