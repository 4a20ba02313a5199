package nicsim.fabric;

import java.util.Comparator;
import java.util.PriorityQueue;
import nicsim.sim.Counters;
import nicsim.sim.Simulator;

/**
 * The fabric's switch: takes the packets ports put on their links, in the order their heads reach it
 * (time, then sending port, then that port's order), queues each on its destination's downlink, hands
 * it to the destination port, and sends the sender its credits back once the packet has left.
 *
 * <p>Its outputs come no sooner than {@link Fabric#lookahead()} after the packet left its sender, so
 * it can run in either of two ways with the same results: at each head's instant in one simulator
 * ({@link #immediate}, every port in that simulator), or in steps ({@link #exchange}) between windows
 * of simulated time in which each port's simulator ran apart from the others.
 */
public final class FabricSwitch implements nicsim.sim.Windows.Exchange {
    /** What the switch does with a packet (faults are drawn as it leaves its port). */
    enum Fate { FORWARD, DROP, CORRUPT, DUPLICATE, REORDER }

    /**
     * A packet on its way in: its head reaches the switch at {@code headAt}, its tail at {@code tailAt};
     * it waited {@code waited} ps for credits at its port (-1: it did not wait).
     */
    record Arrival(Packet p, int srcLid, long seq, long headAt, long tailAt, int bytes, Fate fate, long waited) {}

    private static final Comparator<Arrival> ORDER = Comparator.comparingLong(Arrival::headAt)
            .thenComparingInt(Arrival::srcLid).thenComparingLong(Arrival::seq);

    private final Fabric f;
    private final Simulator sim;
    private final PriorityQueue<Arrival> pending = new PriorityQueue<>(ORDER);
    private final Counters.Ref packets, bytes, waits, waitPicos, unroutable, dropped, corrupted, duplicated, reordered;
    private boolean apart;

    FabricSwitch(Fabric f, Simulator sim) {
        this.f = f;
        this.sim = sim;
        Counters c = sim.counters();
        packets = c.ref("Fabric.packets");
        bytes = c.ref("Fabric.bytes");
        waits = c.ref("Fabric.flow_control_waits");
        waitPicos = c.ref("Fabric.flow_control_wait_ps");
        unroutable = c.ref("Fabric.unroutable");
        dropped = c.ref("Fabric.dropped");
        corrupted = c.ref("Fabric.corrupted");
        duplicated = c.ref("Fabric.duplicated");
        reordered = c.ref("Fabric.reordered");
    }

    /** The simulator the switch counts in (and, run at once, runs in). */
    public Simulator sim() { return sim; }

    /** Whether ports run apart, their packets taken in {@link #exchange} steps. */
    public boolean apart() { return apart; }

    /** From now on ports run apart in windows; {@link #exchange} moves packets between them. */
    public void runApart() { apart = true; }

    void arrive(Arrival a) {
        if (apart) {
            f.ports.get(a.srcLid() - 1).outbox.add(a); // only the sender's own thread touches its outbox
            return;
        }
        pending.add(a);
        // the switch's own: it runs whatever becomes of the sender (reset adapters included)
        sim.scheduleFor(null, a.headAt(), Fabric.PRIORITY, () -> takeUntil(sim.now() + 1));
    }

    /**
     * Between windows, every port's simulator stopped at {@code windowStart}: takes every packet ports
     * sent, and acts on those whose heads reach the switch within one propagation of it (no packet sent
     * from now on can reach it sooner), scheduling deliveries and credits in the ports' simulators, no
     * sooner than a window later.
     */
    @Override public void exchange(long windowStart) {
        for (Fabric.PortState port : f.ports) {
            pending.addAll(port.outbox);
            port.outbox.clear();
        }
        takeUntil(windowStart + f.propagation);
    }

    /** The first window start whose exchange has a packet to act on. */
    @Override public long nextStart() {
        long t = pending.isEmpty() ? Long.MAX_VALUE : pending.peek().headAt();
        for (Fabric.PortState port : f.ports) for (Arrival a : port.outbox) t = Math.min(t, a.headAt());
        return t == Long.MAX_VALUE ? t : t - f.propagation + 1;
    }

    private void takeUntil(long horizon) {
        while (!pending.isEmpty() && pending.peek().headAt() < horizon) take(pending.poll());
    }

    private void take(Arrival a) {
        Packet p = a.p();
        packets.inc();
        bytes.add(a.bytes());
        if (a.waited() >= 0) {
            waits.inc();
            waitPicos.add(a.waited());
        }
        long atSwitch = (f.cutThrough ? a.headAt() : a.tailAt()) + f.switchLatency;
        long tailAtSwitch = a.tailAt() + f.switchLatency;
        long freed; // when its bytes leave the switch's input buffer
        if (p.dlid() < 1 || p.dlid() > f.ports.size()) {
            unroutable.inc();
            freed = tailAtSwitch;
        } else if (a.fate() == Fate.DROP || a.fate() == Fate.CORRUPT) {
            (a.fate() == Fate.DROP ? dropped : corrupted).inc();
            freed = tailAtSwitch;
        } else {
            if (a.fate() == Fate.REORDER) {
                // held in the switch long enough for a few later packets to pass it
                reordered.inc();
                long hold = 4 * f.serialization(a.bytes()) + f.switchLatency;
                atSwitch += hold;
                tailAtSwitch += hold;
            }
            freed = forward(p, atSwitch, tailAtSwitch, a.bytes());
            if (a.fate() == Fate.DUPLICATE) {
                duplicated.inc();
                freed = forward(p, atSwitch, tailAtSwitch, a.bytes());
            }
        }
        Fabric.PortState src = f.ports.get(a.srcLid() - 1);
        int lid = a.srcLid(), bytes = a.bytes();
        // no adapter's: the credit comes back even to a port whose adapter was reset meanwhile
        src.sim.scheduleFor(null, freed + f.propagation, Fabric.PRIORITY, () -> f.credit(lid, bytes));
    }

    /**
     * Queues the packet on its destination's downlink from its arrival at the switch (in the switch's
     * order); its tail cannot leave before it reached the switch. The port hands the packet over once
     * its headers are in, with the {@link Arrival} of its payload. Returns when its tail left.
     */
    private long forward(Packet p, long atSwitch, long tailAtSwitch, int bytes) {
        Fabric.PortState dst = f.ports.get(p.dlid() - 1);
        long start = Math.max(atSwitch, dst.downFree), end = Math.max(start + f.serialization(bytes), tailAtSwitch);
        dst.downFree = end;
        long headersIn = start + f.serialization(p.headerBytes()) + f.propagation;
        long payloadIn = Math.max(headersIn, end - f.serialization(Packet.trailerBytes()) + f.propagation);
        // link.receive: cut-through ports take the packet once its headers are in, store-and-forward ones once whole
        Packet delivered = f.cutThroughRx ? p.arriving(new nicsim.sim.Arrival(headersIn, payloadIn, p.payload().length))
                : p;
        dst.downlink.schedule(f.cutThroughRx ? headersIn : end + f.propagation, Fabric.PRIORITY,
                () -> dst.rx.accept(delivered));
        return end;
    }
}
