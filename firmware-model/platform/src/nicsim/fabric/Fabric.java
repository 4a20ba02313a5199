package nicsim.fabric;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.function.Consumer;
import java.util.function.LongConsumer;
import nicsim.profile.Profile;
import nicsim.profile.Require;
import nicsim.sim.Simulator;

/**
 * Adapters joined by links to one switch (docs/architecture.md#data-path, step 7). Each port has a link of
 * {@code link.rate} per direction: a packet serializes on its sender's uplink (queued behind earlier
 * packets), propagates ({@code link.propagation}), crosses the switch ({@code switch.latency}),
 * serializes on the destination's downlink, and propagates again. {@code switch.forwarding} says
 * when the switch may start the downlink: "cut-through" (wormhole, as Myrinet and InfiniBand
 * switches route) once the packet's head has arrived, "store-and-forward" once all of it has. Ports
 * are addressed by LID, from 1. A port hands a packet to its adapter once the headers are in, its
 * payload following as its {@link nicsim.sim.Arrival} says ({@code link.receive} "cut-through"), or
 * once all of it is in ("store-and-forward").
 *
 * <p>Flow control is InfiniBand's link-level credits: the switch's input buffer for each port holds
 * {@code switch.port.buffer} bytes, and a sender may start a packet only while it holds credits for
 * all of it. The switch frees a packet's bytes once the packet has left on its downlink, and the
 * credits travel back along the link, arriving one propagation later. So a sender knows of the far
 * side only what the link has told it, no sooner than a link latency: the fabric is lossless, an
 * incast shares the destination's link, and one port's packets wait behind a blocked one (head of
 * line). No port learns anything from another sooner than {@link #lookahead()}, which is what lets
 * ports run apart ({@link FabricSwitch}).
 *
 * <p>Faults ({@link Faults}) are drawn per packet as it leaves its port, from a generator seeded per
 * port, and applied at the switch: a run repeats exactly, and a port's draws depend on its own packets only.
 */
public final class Fabric {
    /** Fabric arrivals (packets, credits) run before everything else at their instant, in the switch's order. */
    public static final int PRIORITY = Simulator.Priority.DELIVERY - 1;

    final long bitsPerSecond, propagation, switchLatency, portBuffer;
    /** How long the switch's management port takes over one SMP (to answer it or pass it on), one at a time. */
    final long smaLatency;
    final boolean cutThrough, cutThroughRx;
    private final int mtu;
    final Faults faults;
    private final long seed;
    final List<PortState> ports = new ArrayList<>();
    final FabricSwitch sw;
    final SwitchAgent agent = new SwitchAgent(this);

    /** One port: its adapter, the simulator it lives in, its sender's side of the link, its downlink. */
    static final class PortState {
        final int lid;
        Consumer<Packet> rx; // its adapter's (a new one's once the adapter is reset: reattach)
        final Simulator sim;
        Simulator.Lane downlink; // its deliveries, which come in the order they leave the switch
        Simulator.Scope scope; // its adapter's: what the port does for it (a credit that wakes its sends) is that's
        final Random rnd;
        final ArrayDeque<Tx> txq = new ArrayDeque<>();
        long upFree; // when its uplink is free
        long credits; // bytes of the switch's input buffer it may still fill
        long blockedSince = -1;
        long sent; // packets it has put on the link: orders its arrivals at the switch
        long downFree; // when its downlink (switch to port) is free: the switch's, written as it takes packets
        final List<FabricSwitch.Arrival> outbox = new ArrayList<>(); // sent while ports run apart, till the exchange
        Inbox inbox; // while ports run apart: what the exchange schedules for the port (null: scheduled at once)
        /**
         * Credits on their way back while no packet waits at the port ({@link #creditLater}): each an event's place
         * (its instant and tie) kept but no event, in the order of those places, applied once the port next looks at
         * its credits.
         */
        long[] laterAt = new long[8], laterTie = new long[8];
        FabricSwitch.Arrival[] later = new FabricSwitch.Arrival[8];
        int laters;
        /** The place of the kept credit made an event to wake a waiting packet ({@link #wakeOnCredits}): -1 none. */
        long wakeAt, wakeTie = -1;
        /**
         * Whether its link is up ({@link #link}): changed only between the switch's steps (by whoever holds the
         * whole simulation), read by the switch as it takes packets.
         */
        volatile boolean up = true;
        /** Told when its link goes down (false) or comes up (true): its adapter's (a new one's after a reset). */
        Consumer<Boolean> onLink = up -> { };
        /** Sees what the port sends and what is delivered to it (null: nothing watches). */
        Tap tap;

        PortState(int lid, Consumer<Packet> rx, Simulator sim, long credits, long seed) {
            this.lid = lid; this.rx = rx; this.sim = sim; this.credits = credits;
            this.downlink = sim.lane();
            this.scope = sim.scope();
            this.rnd = new Random(seed ^ 0x5DEECE66DL ^ (long) lid * 0x9E3779B97F4A7C15L);
        }
    }

    record Tx(Packet p, long feedPicos, LongConsumer left, Gone gone) {}

    /**
     * Hears that a packet it sent has left the fabric, every copy of it delivered or dropped: told in the sender's
     * simulator once the packet's credits came back to its port, when no copy is on a link or in the switch any more
     * and the destination took each one no later (at that instant when they let a waiting packet go, else as the port
     * next sends, is handed a packet or hears credits, or as the run ends: {@link #creditsBackAtEnd}). What the
     * packet carries may be given to another from then on.
     */
    public interface Gone {
        void gone(Packet p);
    }

    /**
     * Watches a port's link (a test's view of the wire): each packet as the port is given it to send, each copy as
     * it is delivered to the port. Called in the port's simulator (on its thread when ports run apart).
     */
    public interface Tap {
        void sent(Packet p);

        void delivered(Packet p);
    }

    /**
     * The fabric's parameters, from the profile: {@code link.rate}, {@code link.propagation}, {@code switch.latency},
     * {@code switch.sma.latency}, {@code link.mtu}, {@code switch.port.buffer}, and whether {@code switch.forwarding}
     * and {@code link.receive} are cut-through.
     */
    public record Config(long bitsPerSecond, long propagationPs, long switchLatencyPs, long smaLatencyPs, int mtuBytes,
            long portBufferBytes, boolean cutThrough, boolean cutThroughRx) {
        public Config {
            Require.atLeast("link.rate", bitsPerSecond, 1, "b/s");
            Require.atLeast("link.propagation", propagationPs, 0, "ps");
            Require.atLeast("switch.latency", switchLatencyPs, 0, "ps");
            Require.atLeast("switch.sma.latency", smaLatencyPs, 0, "ps");
            Require.powerOfTwo("link.mtu", mtuBytes, 256, 4096, "B"); // an IBTA MTU
            if (portBufferBytes < mtuBytes + 64)
                throw Require.bad("switch.port.buffer", portBufferBytes + " B",
                        "at least one MTU packet (" + (mtuBytes + 64) + " B)");
        }

        public static Config from(Profile p) {
            return new Config(p.bitsPerSecond("link.rate"), p.picos("link.propagation"), p.picos("switch.latency"),
                    p.picos("switch.sma.latency"), p.bytesInt("link.mtu"), p.bytes("switch.port.buffer"),
                    Fabric.cutThrough(p, "switch.forwarding"), Fabric.cutThrough(p, "link.receive"));
        }
    }

    public Fabric(Simulator sim, Config cfg, Faults faults, long seed) {
        this.bitsPerSecond = cfg.bitsPerSecond();
        this.propagation = cfg.propagationPs();
        this.switchLatency = cfg.switchLatencyPs();
        this.smaLatency = cfg.smaLatencyPs();
        this.mtu = cfg.mtuBytes();
        this.portBuffer = cfg.portBufferBytes();
        this.cutThrough = cfg.cutThrough();
        this.cutThroughRx = cfg.cutThroughRx();
        this.faults = faults;
        this.seed = seed;
        this.sw = new FabricSwitch(this, sim);
    }

    /** Whether the profile's {@code key} says "cut-through" (else "store-and-forward"; anything else is refused). */
    public static boolean cutThrough(Profile profile, String key) {
        return Require.oneOf(key, profile.text(key), "store-and-forward", "cut-through") == 1;
    }

    /** Attaches a port whose adapter takes packets through {@code rx}; returns its LID. */
    public int attach(Consumer<Packet> rx) { return attach(rx, sw.sim()); }

    /** As {@link #attach(Consumer)} for an adapter that lives in simulator {@code sim} (a partition of its own). */
    public int attach(Consumer<Packet> rx, Simulator sim) {
        PortState s = new PortState(ports.size() + 1, rx, sim, portBuffer, seed);
        ports.add(s);
        return s.lid;
    }

    /**
     * Port {@code lid}'s adapter was reset: packets reach the new one's {@code rx} from now on, what was
     * on its way down to the old one is lost (its lane's events are the old adapter's, retired), and what
     * the old one queued but had not put on the link never leaves. Packets already on the link or in the
     * switch go on and give their credits back, so the port's credits stay whole. Call in the new
     * adapter's scope.
     */
    public void reattach(int lid, Consumer<Packet> rx) {
        if (lid < 1 || lid > ports.size()) throw new IllegalArgumentException("reattach of unknown LID " + lid);
        PortState s = ports.get(lid - 1);
        sw.settle(); // what came in by now goes down the old adapter's lane
        s.rx = rx;
        s.downlink = s.sim.lane();
        s.scope = s.sim.scope();
        s.txq.clear();
        s.blockedSince = -1;
    }

    /**
     * Port {@code lid}'s link goes down ({@code up} false: a cable pulled, the port disabled) or comes back up. While
     * it is down the switch drops every packet from or to the port (counted as {@code Fabric.link_down_drops}); what
     * the switch forwarded before is still delivered. The port's adapter hears of each change (its
     * {@link #onLink} listener), run in its scope, at the simulator's present; a change to the state it is already
     * in does nothing. Call between the switch's steps (serve's loop, a program's setup). Returns whether it changed.
     */
    public boolean link(int lid, boolean up) {
        PortState s = port(lid, "link");
        if (s.up == up) return false;
        sw.settle(); // the packets in by now were taken with the link as it was
        s.up = up;
        Simulator.Scope before = s.sim.enter(s.scope);
        try {
            s.onLink.accept(up);
        } finally {
            s.sim.leave(before);
        }
        return true;
    }

    /** Whether port {@code lid}'s link is up. */
    public boolean linkUp(int lid) { return port(lid, "linkUp").up; }

    /** {@code listener} hears each change of port {@code lid}'s link from now on (the adapter on it). */
    public void onLink(int lid, Consumer<Boolean> listener) { port(lid, "onLink").onLink = listener; }

    private PortState port(int lid, String what) {
        if (lid < 1 || lid > ports.size())
            throw new IllegalArgumentException(what + ": no port has LID " + lid + " (LIDs 1.." + ports.size() + ")");
        return ports.get(lid - 1);
    }

    public int ports() { return ports.size(); }
    /** The largest MTU the links carry. */
    public int maxMtu() { return mtu; }
    public Faults faults() { return faults; }
    /** The switch: what runs between ports. */
    public FabricSwitch fabricSwitch() { return sw; }
    /** The switch's management port: its SMA, as subnet tools and the SM see it. */
    public SwitchAgent switchAgent() { return agent; }

    /**
     * The least time in which anything one port does can reach another: a packet's head crosses the
     * link and the switch and then the other link; a credit is freed no sooner than a packet's head
     * arrived and crossed the switch, and then travels back.
     */
    public long lookahead() { return 2 * propagation + switchLatency; }

    /** Picoseconds to serialize {@code bytes} at the link rate (rounded up). */
    public long serialization(int bytes) {
        return -Math.floorDiv(-(long) bytes * 8 * 1_000_000_000_000L, bitsPerSecond);
    }

    /** From now on {@code tap} watches every port's link (null: none). */
    public void tap(Tap tap) {
        for (PortState s : ports) s.tap = tap;
    }

    /** Sends {@code p} from port {@code p.slid()}. */
    public void send(Packet p) { send(p, 0, left -> { }); }

    /** As {@link #send(Packet, long, LongConsumer)}, not asking when it left. */
    public void send(Packet p, long feedPicos) { send(p, feedPicos, left -> { }); }

    /**
     * Sends {@code p} from port {@code p.slid()}: it queues behind the port's earlier packets and
     * leaves once the uplink is free and the port holds credits for it; {@code left} hears when its
     * last bit left the sender. The sender feeds the link no faster than it serializes nor than
     * {@code feedPicos} for the whole packet allows (a send engine streaming out of a slower local
     * bus), so the packet takes the longer of the two to leave.
     */
    public void send(Packet p, long feedPicos, LongConsumer left) { send(p, feedPicos, left, null); }

    /** As {@link #send(Packet, long, LongConsumer)}; {@code gone} (null: no one) hears once it left the fabric. */
    public void send(Packet p, long feedPicos, LongConsumer left, Gone gone) {
        if (p.slid() < 1 || p.slid() > ports.size())
            throw new IllegalArgumentException("packet from unknown LID " + p.slid());
        PortState s = ports.get(p.slid() - 1);
        sw.takeAhead(s.sim);
        if (s.tap != null) s.tap.sent(p);
        if (s.laters > 0) creditsDue(s);
        if (s.txq.isEmpty() && s.credits >= p.wireBytes()) { // nothing ahead of it and room: on the link at once
            launch(s, p, feedPicos, left, gone, -1);
            return;
        }
        s.txq.add(new Tx(p, feedPicos, left, gone));
        if (s.txq.size() > 1) return;
        pump(s);
        if (s.laters > 0) wakeOnCredits(s); // a packet waits: the credit that lets it go wakes it
    }

    /**
     * Arrival {@code a}'s credits come back to port {@code s} at {@code at} ps, while no packet waits there: as an
     * event would (in its place, a tie taken now), but no event is made unless a packet comes to wait for them and
     * they let it go ({@link #wakeOnCredits}); else the port takes them as it next looks at its credits
     * ({@link #creditsDue}).
     */
    void creditLater(PortState s, long at, FabricSwitch.Arrival a) {
        int n = s.laters;
        if (n == s.later.length) {
            s.laterAt = Arrays.copyOf(s.laterAt, 2 * n);
            s.laterTie = Arrays.copyOf(s.laterTie, 2 * n);
            s.later = Arrays.copyOf(s.later, 2 * n);
        }
        int i = n; // its place among them: the tie taken now is the latest, so after all those at its instant or sooner
        for (; i > 0 && s.laterAt[i - 1] > at; i--) {
            s.laterAt[i] = s.laterAt[i - 1];
            s.laterTie[i] = s.laterTie[i - 1];
            s.later[i] = s.later[i - 1];
        }
        s.laterAt[i] = at;
        s.laterTie[i] = s.sim.reserveTie();
        s.later[i] = a;
        s.laters = n + 1;
    }

    /** Port {@code s} takes the credits its events would have brought back by now, in the order they were sent. */
    void creditsDue(PortState s) {
        int kept = 0, n = s.laters;
        for (int i = 0; i < n; i++) {
            FabricSwitch.Arrival a = s.later[i];
            if (s.sim.passed(s.laterAt[i], PRIORITY, s.laterTie[i])) creditBack(s, a);
            else {
                s.laterAt[kept] = s.laterAt[i];
                s.laterTie[kept] = s.laterTie[i];
                s.later[kept++] = a;
            }
        }
        Arrays.fill(s.later, kept, n, null);
        s.laters = kept;
    }

    /** Arrival {@code a}'s credits are back at port {@code s}, its event's or kept place passed: its sender hears. */
    private static void creditBack(PortState s, FabricSwitch.Arrival a) {
        if (a.gone() != null) a.gone().gone(a.p());
        s.credits += a.bytes();
    }

    /**
     * The packet at the head of port {@code s}'s queue waits for credits: of those kept, the one that brings enough
     * back with those before it becomes an event in its place, unless one made so comes no later. The others stay
     * kept, taken as that event comes ({@link #creditsDue}): an event of theirs would find the packet still waiting.
     * If the kept ones are not enough, an event brings the rest (the switch posts what it frees while a packet waits)
     * and looks again.
     */
    private void wakeOnCredits(PortState s) {
        long need = s.txq.peek().p().wireBytes() - s.credits;
        int k = 0;
        while (k < s.laters && (need -= s.later[k].bytes()) > 0) k++;
        if (k == s.laters) return;
        long at = s.laterAt[k], tie = s.laterTie[k];
        if (s.wakeTie >= 0 && (s.wakeAt < at || s.wakeAt == at && s.wakeTie < tie)) return; // one comes sooner
        FabricSwitch.Arrival a = s.later[k];
        int n = --s.laters;
        System.arraycopy(s.laterAt, k + 1, s.laterAt, k, n - k);
        System.arraycopy(s.laterTie, k + 1, s.laterTie, k, n - k);
        System.arraycopy(s.later, k + 1, s.later, k, n - k);
        s.later[n] = null;
        s.wakeAt = at;
        s.wakeTie = tie;
        Simulator.Scope before = s.sim.enter(null); // no adapter's, as the switch posts them
        try {
            s.sim.post(at, PRIORITY, tie, () -> credit(a, tie));
        } finally {
            s.sim.leave(before);
        }
    }

    /**
     * The run ends: each credit still kept comes back now, as its event would have by its instant, so every packet's
     * sender hears it left the fabric (what it carried goes back to its pool) though its port never sent nor was
     * handed a packet again. Nothing is sent after.
     */
    public void creditsBackAtEnd() {
        for (PortState s : ports) {
            for (int i = 0; i < s.laters; i++) {
                creditBack(s, s.later[i]);
                s.later[i] = null;
            }
            s.laters = 0;
        }
    }

    /** Puts the port's queued packets on the link while its credits last. */
    private void pump(PortState s) {
        long now = s.sim.now();
        while (!s.txq.isEmpty()) {
            Tx t = s.txq.peek();
            int bytes = t.p().wireBytes();
            if (s.credits < bytes) {
                if (s.blockedSince < 0) s.blockedSince = Math.max(now, s.upFree); // when it could have gone
                return; // the switch's buffer is full: the next credits to come back wake it
            }
            long waited = -1; // the switch counts it (ports may run on threads of their own)
            if (s.blockedSince >= 0) {
                waited = Math.max(0, now - s.blockedSince);
                s.blockedSince = -1;
            }
            s.txq.poll();
            launch(s, t.p(), t.feedPicos(), t.left(), t.gone(), waited);
        }
    }

    /**
     * Puts {@code p} on port {@code s}'s link now, holding credits for it: it leaves once the uplink is free; it
     * waited {@code waited} ps for credits (-1: it did not wait).
     */
    private void launch(PortState s, Packet p, long feedPicos, LongConsumer left, Gone gone, long waited) {
        int bytes = p.wireBytes();
        s.credits -= bytes;
        long start = Math.max(s.sim.now(), s.upFree), end = start + Math.max(serialization(bytes), feedPicos);
        s.upFree = end;
        sw.arrive(new FabricSwitch.Arrival(p, s.lid, s.sent++, start + propagation, end + propagation, bytes, fate(s),
                waited, gone, p.headerBytes()));
        left.accept(end);
    }

    /** What the switch will do with the port's next packet: drawn as it leaves, from the port's own generator. */
    private FabricSwitch.Fate fate(PortState s) {
        if (!faults.any()) return FabricSwitch.Fate.FORWARD;
        double x = s.rnd.nextDouble();
        if (x < faults.drop()) return FabricSwitch.Fate.DROP;
        x -= faults.drop();
        if (x < faults.corrupt()) return FabricSwitch.Fate.CORRUPT;
        x -= faults.corrupt();
        if (x < faults.duplicate()) return FabricSwitch.Fate.DUPLICATE;
        return x - faults.duplicate() < faults.reorder() ? FabricSwitch.Fate.REORDER : FabricSwitch.Fate.FORWARD;
    }

    /**
     * Packet {@code a}'s credits come back to its port (in its simulator, at its instant): it has left the fabric,
     * and whoever sent it hears so.
     */
    void credit(FabricSwitch.Arrival a) { credit(a, -1); }

    /** As {@link #credit(FabricSwitch.Arrival)}, for a kept credit made an event at tie {@code tie}. */
    private void credit(FabricSwitch.Arrival a, long tie) {
        PortState s = ports.get(a.srcLid() - 1);
        sw.takeAhead(s.sim);
        if (s.wakeTie == tie) s.wakeTie = -1;
        if (s.laters > 0) creditsDue(s); // kept ones before it are back first, in their places
        creditBack(s, a);
        if (s.txq.isEmpty()) return;
        Simulator.Scope before = s.sim.enter(s.scope); // the sends it wakes are its adapter's
        try {
            pump(s);
        } finally {
            s.sim.leave(before);
        }
        if (!s.txq.isEmpty() && s.laters > 0) wakeOnCredits(s);
    }
}
