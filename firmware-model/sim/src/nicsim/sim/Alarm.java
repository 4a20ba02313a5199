package nicsim.sim;

import java.util.ArrayDeque;

/**
 * Rings at each of a set of coming times, with one event in the kernel's queue at a time: the
 * earliest. For a block that asks to be woken at many times ahead (each beat it expects in), most
 * of which turn out to need nothing: the queue holds one entry for it rather than one per time, so
 * every other event costs less to place. It rings once per distinct time, at the priority given.
 */
public final class Alarm {
    private final Simulator sim;
    private final int priority;
    private final Runnable ring;
    private final Runnable fire = this::fire;
    private final TimeQueue later = new TimeQueue(); // the times after the earliest
    private Simulator.Event next; // the earliest time's event, in the kernel's queue
    private long nextAt;

    public Alarm(Simulator sim, int priority, Runnable ring) {
        this.sim = sim;
        this.priority = priority;
        this.ring = ring;
    }

    /** Rings at {@code when} as well (once, however often asked before it rings then). */
    public void at(long when) {
        if (next != null) {
            if (when == nextAt) return;
            if (when > nextAt) {
                later.add(when);
                return;
            }
            next.cancel(); // a sooner time: the one queued waits with the rest
            if (cancelled.size() < 64) cancelled.addLast(next);
            later.add(nextAt);
        }
        schedule(when);
    }

    private void schedule(long when) {
        nextAt = when;
        Simulator.Event spent = rang;
        if (spent == null && !cancelled.isEmpty() && cancelled.peekFirst().ran) spent = cancelled.pollFirst();
        next = sim.schedule(spent, when, priority, fire);
        rang = null;
    }

    private Simulator.Event rang; // the event that rang last, queued again for the next time (the kernel checks it ran)
    // events cancelled for a sooner time, oldest first: each one is queued again once the kernel has dropped it
    private final ArrayDeque<Simulator.Event> cancelled = new ArrayDeque<>();

    private void fire() {
        rang = next;
        next = null;
        if (!later.isEmpty()) schedule(later.takeFirst());
        ring.run();
    }
}
