package nicsim.fabric;

import java.util.Arrays;
import nicsim.sim.Simulator;

/**
 * What the switch's exchange left for the ports of one partition while ports run apart: deliveries and credits,
 * in the order the switch made them, scheduled in the partition's simulator by the thread that runs it, just
 * before it runs ({@link nicsim.sim.Windows.Exchange#inbox}). So the thread between windows writes a few lines of
 * this inbox and none of another core's event queue, and the partition's events are scheduled in the same order
 * (with the same ties) as if the exchange had scheduled them itself.
 */
final class Inbox implements Runnable {
    private final Simulator sim;
    private Simulator.Lane[] lanes = new Simulator.Lane[16]; // null: an event of no one's on the simulator (a credit)
    private long[] times = new long[16];
    private Runnable[] actions = new Runnable[16];
    private int n;

    Inbox(Simulator sim) { this.sim = sim; }

    /** An event at {@code at} ps, on {@code lane} (null: on the simulator, no adapter's). */
    void add(Simulator.Lane lane, long at, Runnable action) {
        if (n == times.length) {
            lanes = Arrays.copyOf(lanes, 2 * n);
            times = Arrays.copyOf(times, 2 * n);
            actions = Arrays.copyOf(actions, 2 * n);
        }
        lanes[n] = lane;
        times[n] = at;
        actions[n] = action;
        n++;
    }

    /** Schedules what is in, in order, and empties it. */
    @Override public void run() {
        for (int i = 0; i < n; i++) {
            if (lanes[i] == null) sim.scheduleFor(null, times[i], Fabric.PRIORITY, actions[i]);
            else lanes[i].schedule(times[i], Fabric.PRIORITY, actions[i]);
            lanes[i] = null;
            actions[i] = null;
        }
        n = 0;
    }
}
