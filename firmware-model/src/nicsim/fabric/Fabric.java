package nicsim.fabric;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.function.Consumer;
import nicsim.profile.Profile;
import nicsim.sim.Arrival;
import nicsim.sim.Counters;
import nicsim.sim.Simulator;

/**
 * Adapters joined by links to one switch (docs/architecture.md#data-path, step 7). Each port has a link of
 * {@code link.rate} per direction: a packet serializes on its sender's uplink (queued behind earlier
 * packets), propagates ({@code link.propagation}), crosses the switch ({@code switch.latency}),
 * serializes on the destination's downlink, and propagates again. {@code switch.forwarding} says
 * when the switch may start the downlink: "cut-through" (wormhole, as Myrinet and InfiniBand
 * switches route) once the packet's head has arrived, "store-and-forward" once all of it has. Ports
 * are addressed by LID, from 1. Each switch output port queues at most {@code switch.port.buffer}
 * bytes: as with InfiniBand's credits, a sender holds a packet until it will fit, so the fabric is
 * lossless and an incast shares the destination's link. A port hands a packet to its adapter once
 * the headers are in, its payload following as its {@link Arrival} says ({@code link.receive}
 * "cut-through"), or once all of it is in ("store-and-forward"). Faults ({@link Faults}) apply
 * per packet at the switch, drawn from one seeded generator, so a run repeats exactly.
 */
public final class Fabric {
    private final Simulator sim;
    private final long bitsPerSecond, propagation, switchLatency, portBuffer;
    private final boolean cutThrough, cutThroughRx;
    private final int mtu;
    private final Faults faults;
    private final Random rnd;
    private final Counters counters;
    private final Counters.Ref packetsSent, bytesSent; // counted per packet, so held
    private final List<Consumer<Packet>> ports = new ArrayList<>();
    private final List<long[]> busyUntil = new ArrayList<>(); // per port: {uplink free at, downlink free at}
    private final List<Simulator.Lane> downlinks = new ArrayList<>(); // per port: its deliveries, which come in the order they leave the switch

    public Fabric(Simulator sim, Profile profile, Faults faults, long seed) {
        this.sim = sim;
        this.bitsPerSecond = profile.bitsPerSecond("link.rate");
        this.propagation = profile.picos("link.propagation");
        this.switchLatency = profile.picos("switch.latency");
        this.mtu = profile.bytesInt("link.mtu");
        this.portBuffer = profile.bytes("switch.port.buffer");
        this.cutThrough = cutThrough(profile, "switch.forwarding");
        this.cutThroughRx = cutThrough(profile, "link.receive");
        if (portBuffer < mtu + 64) throw new IllegalArgumentException("switch.port.buffer " + portBuffer + " B must hold at least one MTU packet ("
                + (mtu + 64) + " B)");
        this.faults = faults;
        this.rnd = new Random(seed ^ 0x5DEECE66DL);
        this.counters = sim.counters();
        this.packetsSent = counters.ref("Fabric.packets");
        this.bytesSent = counters.ref("Fabric.bytes");
    }

    /** Whether the profile's {@code key} says "cut-through" (else "store-and-forward"; anything else is refused). */
    public static boolean cutThrough(Profile profile, String key) {
        String v = profile.text(key);
        if (!v.equals("cut-through") && !v.equals("store-and-forward"))
            throw new IllegalArgumentException(key + " '" + v + "' must be \"cut-through\" or \"store-and-forward\"");
        return v.equals("cut-through");
    }

    /** Attaches a port whose adapter takes packets through {@code rx}; returns its LID. */
    public int attach(Consumer<Packet> rx) {
        ports.add(rx);
        busyUntil.add(new long[]{0, 0});
        downlinks.add(sim.lane());
        return ports.size();
    }

    public int ports() { return ports.size(); }
    /** The largest MTU the links carry. */
    public int maxMtu() { return mtu; }
    public Faults faults() { return faults; }

    /** Picoseconds to serialize {@code bytes} at the link rate (rounded up). */
    public long serialization(int bytes) { return -Math.floorDiv(-(long) bytes * 8 * 1_000_000_000_000L, bitsPerSecond); }

    /** Sends {@code p} from port {@code p.slid()}; returns when its last bit left the sender. */
    public long send(Packet p) { return send(p, 0); }

    /**
     * Sends {@code p} from port {@code p.slid()}, its head leaving now; returns when its last bit
     * left the sender. The sender feeds the link no faster than it serializes nor than
     * {@code feedPicos} for the whole packet allows (a send engine streaming out of a slower local
     * bus), so the packet takes the longer of the two to leave.
     */
    public long send(Packet p, long feedPicos) {
        if (p.slid() < 1 || p.slid() > ports.size()) throw new IllegalArgumentException("packet from unknown LID " + p.slid());
        int bytes = p.wireBytes();
        long[] up = busyUntil.get(p.slid() - 1);
        long start = Math.max(sim.now(), up[0]);
        long onWire = Math.max(serialization(bytes), feedPicos);
        if (p.dlid() >= 1 && p.dlid() <= ports.size()) {
            // credit-based flow control: the packet may leave only when the switch's output queue towards its
            // destination will have room for it on arrival (links never drop for want of buffer)
            long[] down = busyUntil.get(p.dlid() - 1);
            long arrive = start + onWire + propagation + switchLatency;
            long backlog = down[1] - arrive - serialization((int) (portBuffer - bytes));
            if (backlog > 0) {
                start += backlog;
                counters.counter("Fabric.flow_control_waits").inc();
                counters.counter("Fabric.flow_control_wait_ps").add(backlog);
            }
        }
        long end = start + onWire;
        up[0] = end;
        packetsSent.inc();
        bytesSent.add(bytes);
        long tailAtSwitch = end + propagation + switchLatency;
        long atSwitch = cutThrough ? start + propagation + switchLatency : tailAtSwitch; // when the downlink may start
        if (p.dlid() < 1 || p.dlid() > ports.size()) {
            counters.counter("Fabric.unroutable").inc();
            return end;
        }
        if (faults.any()) {
            double x = rnd.nextDouble();
            if (x < faults.drop()) { counters.counter("Fabric.dropped").inc(); return end; }
            x -= faults.drop();
            if (x < faults.corrupt()) { counters.counter("Fabric.corrupted").inc(); return end; }
            x -= faults.corrupt();
            if (x < faults.duplicate()) { counters.counter("Fabric.duplicated").inc(); forward(p, atSwitch, tailAtSwitch, bytes); }
            else if (x - faults.duplicate() < faults.reorder()) {
                // held in the switch long enough for a few later packets to pass it
                counters.counter("Fabric.reordered").inc();
                long hold = 4 * serialization(bytes) + switchLatency;
                atSwitch += hold;
                tailAtSwitch += hold;
            }
        }
        forward(p, atSwitch, tailAtSwitch, bytes);
        return end;
    }

    /**
     * Reserves the destination's downlink from the packet's arrival at the switch (in send order); its
     * tail cannot leave before it reached the switch. The port hands the packet over once its headers
     * are in, with the {@link Arrival} of its payload.
     */
    private void forward(Packet p, long atSwitch, long tailAtSwitch, int bytes) {
        long[] down = busyUntil.get(p.dlid() - 1);
        long start = Math.max(atSwitch, down[1]), end = Math.max(start + serialization(bytes), tailAtSwitch);
        down[1] = end;
        long headersIn = start + serialization(p.headerBytes()) + propagation;
        long payloadIn = Math.max(headersIn, end - serialization(Packet.trailerBytes()) + propagation);
        // link.receive: cut-through ports take the packet once its headers are in, store-and-forward ones once it is whole
        Packet delivered = cutThroughRx ? p.arriving(new Arrival(headersIn, payloadIn, p.payload().length)) : p;
        downlinks.get(p.dlid() - 1).schedule(cutThroughRx ? headersIn : end + propagation, Simulator.Priority.DELIVERY, () -> ports.get(p.dlid() - 1).accept(delivered));
    }
}
