package nicsim.fabric;

import java.util.Arrays;
import nicsim.sim.Simulator;
import nicsim.sim.Windows;

/**
 * What the switch's exchange left for the ports of one partition while ports run apart: deliveries and credits,
 * in the order the switch made them, scheduled in the partition's simulator by the thread that runs it, just
 * before it runs ({@link nicsim.sim.Windows.Exchange#inbox}). So the thread between windows writes a few lines of
 * this inbox and none of another core's event queue, and the partition's events are scheduled in the same order
 * (with the same ties) as if the exchange had scheduled them itself. The inbox keeps what each event needs, and
 * the partition's thread makes the event from it (the packet as delivered, the action), so what they allocate is
 * allocated on the core that runs them, not on the one between windows.
 */
final class Inbox implements Windows.Inbox {
    private final Simulator sim;
    private final FabricSwitch sw;
    private Fabric.PortState[] ports = new Fabric.PortState[16]; // the delivery's port; null: a credit
    private Object[] items = new Object[16]; // the packet delivered, or the arrival whose credits come back
    private long[] times = new long[16], headersIn = new long[16], payloadIn = new long[16];
    private int n;
    private long first = Long.MAX_VALUE; // the least of times[0, n)

    Inbox(Simulator sim, FabricSwitch sw) {
        this.sim = sim;
        this.sw = sw;
    }

    /** Packet {@code p} delivered to port {@code dst} at {@code at} ps (see {@link FabricSwitch#delivery}). */
    void deliver(Fabric.PortState dst, long at, Packet p, long headersIn, long payloadIn) {
        add(dst, at, p);
        this.headersIn[n - 1] = headersIn;
        this.payloadIn[n - 1] = payloadIn;
    }

    /** Arrival {@code a}'s credits come back to its port at {@code at} ps. */
    void credit(long at, FabricSwitch.Arrival a) { add(null, at, a); }

    private void add(Fabric.PortState port, long at, Object item) {
        if (n == times.length) {
            ports = Arrays.copyOf(ports, 2 * n);
            items = Arrays.copyOf(items, 2 * n);
            times = Arrays.copyOf(times, 2 * n);
            headersIn = Arrays.copyOf(headersIn, 2 * n);
            payloadIn = Arrays.copyOf(payloadIn, 2 * n);
        }
        ports[n] = port;
        times[n] = at;
        first = Math.min(first, at);
        items[n] = item;
        n++;
    }

    /** Schedules what is in, in order, and empties it. */
    @Override public void run() {
        for (int i = 0; i < n; i++) {
            Fabric.PortState dst = ports[i];
            if (dst == null) {
                FabricSwitch.Arrival a = (FabricSwitch.Arrival) items[i];
                // no adapter's: the credit comes back even to a port whose adapter was reset meanwhile
                sim.scheduleFor(null, times[i], Fabric.PRIORITY, () -> sw.credit(a));
            } else {
                Packet p = (Packet) items[i];
                dst.downlink.schedule(times[i], Fabric.PRIORITY, sw.delivery(dst, p, headersIn[i], payloadIn[i]));
            }
            ports[i] = null;
            items[i] = null;
        }
        n = 0;
        first = Long.MAX_VALUE;
    }

    @Override public long firstAt() { return first; }
}
