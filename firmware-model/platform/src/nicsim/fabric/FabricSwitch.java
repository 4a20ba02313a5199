package nicsim.fabric;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.IntPredicate;
import nicsim.sim.Counters;
import nicsim.sim.Peers;
import nicsim.sim.Simulator;
import nicsim.sim.Windows;

/**
 * The fabric's switch: takes the packets ports put on their links, in the order their heads reach it
 * (time, then sending port, then that port's order), queues each on its destination's downlink, hands
 * it to the destination port, and sends the sender its credits back once the packet has left.
 *
 * <p>Its outputs come no sooner than {@link Fabric#lookahead()} after the packet left its sender, so
 * it can run in either of two ways with the same results: in one simulator, on the fabric's events once each head
 * is in ({@link #arrive}, every port in that simulator), or in steps ({@link #exchange}) between windows
 * of simulated time in which each port's simulator ran apart from the others.
 *
 * <p>Across processes ({@link #runAcross}) every process runs a copy of the switch: between windows the
 * processes gather every port's new packets ({@link ArrivalCodec}), so each copy takes the same packets
 * in the same order and keeps the same downlink state, and each schedules only what is due to its own
 * ports and counts only its own ports' packets (so the processes' counters add up to one process's).
 */
public final class FabricSwitch implements Windows.Exchange {
    /** What the switch does with a packet (faults are drawn as it leaves its port). */
    enum Fate { FORWARD, DROP, CORRUPT, DUPLICATE, REORDER }

    /**
     * A packet on its way in: its head reaches the switch at {@code headAt}, its tail at {@code tailAt};
     * it waited {@code waited} ps for credits at its port (-1: it did not wait); {@code gone} hears once it left the
     * fabric (null: no one; never across processes, where only the sender's own copy returns its credits);
     * {@code headerBytes} are its bytes before the payload, counted on the sender's thread rather than between
     * windows (-1: not counted, the switch asks the packet).
     */
    record Arrival(Packet p, int srcLid, long seq, long headAt, long tailAt, int bytes, Fate fate, long waited,
                   Fabric.Gone gone, int headerBytes) {
        Arrival(Packet p, int srcLid, long seq, long headAt, long tailAt, int bytes, Fate fate, long waited) {
            this(p, srcLid, seq, headAt, tailAt, bytes, fate, waited, null, -1);
        }

        int header() { return headerBytes >= 0 ? headerBytes : p.headerBytes(); }
    }

    // (head time, sending port, that port's order), compared in one method: the composed comparator's three
    // calls through key extractors were a visible share of the switch's time with many ports
    private static final Comparator<Arrival> ORDER = (a, b) -> {
        if (a.headAt != b.headAt) return a.headAt < b.headAt ? -1 : 1;
        if (a.srcLid != b.srcLid) return a.srcLid < b.srcLid ? -1 : 1;
        return Long.compare(a.seq, b.seq);
    };

    private final Fabric f;
    private final Simulator sim;
    /** From a head's instant to its {@link #due} one; the serialization of a packet's trailer (ICRC and VCRC). */
    private final long dueAfterHead, trailerPicos;
    private final PriorityQueue<Arrival> pending = new PriorityQueue<>(ORDER);
    private final Counters.Ref packets, bytes, waits, waitPicos, unroutable, dropped, corrupted, duplicated, reordered,
            multicast, multicastCopies, mads, madsDropped, linkDownDrops;
    /** When the management port is done with the SMPs it took so far: it takes one at a time. */
    private long managementFree;
    /**
     * Each port's traffic, as the switch's PMA reads it: octets and packets sent out of it, received into it.
     * Across processes each copy counts what its own ports sent and received. By port (null: no traffic yet), in an
     * array rather than a map, as every packet counts.
     */
    private long[][] traffic = new long[0][];
    @SuppressWarnings("unchecked")
    private List<Integer>[] toPort = new List[0]; // by LID: the unicast destination lists (null: none made yet)
    /**
     * The multicast forwarding table, as the subnet manager programs a switch's MFT: for each multicast LID,
     * the ports (by LID) with a member that receives. Sorted, so copies leave in the same order every run.
     * Changed only by the SM between the switch's steps (in the SM node's simulator, whose windows the
     * exchange waits for), read only as the switch takes packets.
     */
    private final Map<Integer, TreeSet<Integer>> mft = new TreeMap<>();
    private boolean apart;
    private Peers peers; // across processes: the others (null: every port in this process)
    private boolean[] local; // across processes: by LID - 1, whether this process runs the port

    FabricSwitch(Fabric f, Simulator sim) {
        this.f = f;
        this.sim = sim;
        dueAfterHead = f.switchLatency + f.propagation + f.serialization(Packet.LRH + Packet.BTH) - 1;
        trailerPicos = f.serialization(Packet.trailerBytes());
        Counters c = sim.counters();
        packets = c.ref(FabricStat.PACKETS);
        bytes = c.ref(FabricStat.BYTES);
        waits = c.ref(FabricStat.FLOW_CONTROL_WAITS);
        waitPicos = c.ref(FabricStat.FLOW_CONTROL_WAIT_PS);
        unroutable = c.ref(FabricStat.UNROUTABLE);
        dropped = c.ref(FabricStat.DROPPED);
        corrupted = c.ref(FabricStat.CORRUPTED);
        duplicated = c.ref(FabricStat.DUPLICATED);
        reordered = c.ref(FabricStat.REORDERED);
        multicast = c.ref(FabricStat.MULTICAST_PACKETS);
        multicastCopies = c.ref(FabricStat.MULTICAST_COPIES);
        mads = c.ref(FabricStat.SWITCH_MADS);
        madsDropped = c.ref(FabricStat.SWITCH_MADS_DROPPED);
        linkDownDrops = c.ref(FabricStat.LINK_DOWN_DROPS);
    }

    /**
     * Port {@code lid} receives packets to multicast LID {@code mlid} from now on ({@code member}), or no
     * longer; an MLID outside 0xC000..0xFFFE or a port that does not exist is refused.
     */
    public void multicastMember(int mlid, int lid, boolean member) {
        if (!Packet.multicastLid(mlid))
            throw new IllegalArgumentException(String.format("MLID 0x%x is not a multicast LID (0xc000..0xfffe)",
                    mlid));
        if (lid < 1 || lid > f.ports.size())
            throw new IllegalArgumentException("multicast member: no port has LID " + lid);
        settle();
        if (member) mft.computeIfAbsent(mlid, k -> new TreeSet<>()).add(lid);
        else {
            TreeSet<Integer> s = mft.get(mlid);
            if (s != null && s.remove(lid) && s.isEmpty()) mft.remove(mlid);
        }
    }

    /** The ports that receive multicast LID {@code mlid}, in LID order (empty: none). */
    public List<Integer> multicastPorts(int mlid) {
        TreeSet<Integer> s = mft.get(mlid);
        return s == null ? List.of() : List.copyOf(s);
    }

    /** The highest multicast LID some port receives, or 0xBFFF with none (SwitchInfo.MulticastFDBTop's "empty"). */
    public int multicastTop() {
        return mft.isEmpty() ? Packet.MULTICAST_LID_FIRST - 1 : ((TreeMap<Integer, ?>) mft).lastKey();
    }

    /** Port {@code port}'s traffic so far: octets sent, received, packets sent, received (the PMA's order). */
    public long[] portTraffic(int port) {
        long[] t = port >= 0 && port < traffic.length ? traffic[port] : null;
        return t == null ? new long[4] : t.clone();
    }

    private void count(int port, int bytes, boolean sent) {
        if (port >= traffic.length) traffic = Arrays.copyOf(traffic, Math.max(port + 1, 2 * traffic.length));
        long[] t = traffic[port];
        if (t == null) t = traffic[port] = new long[4];
        t[sent ? 0 : 1] += bytes;
        t[sent ? 2 : 3]++;
    }

    /** The simulator the switch counts in (and, run at once, runs in). */
    public Simulator sim() { return sim; }

    /** Whether ports run apart, their packets taken in {@link #exchange} steps. */
    public boolean apart() { return apart; }

    /** From now on ports run apart in windows; {@link #exchange} moves packets between them. */
    public void runApart() { apart = true; }

    /**
     * As {@link #runApart()}, this process running only the ports {@code local} says (by LID), the others'
     * ports run by {@code peers}, each with a copy of this switch.
     */
    public void runAcross(Peers peers, IntPredicate local) {
        runApart();
        this.peers = peers;
        this.local = new boolean[f.ports.size()];
        for (int lid = 1; lid <= this.local.length; lid++) this.local[lid - 1] = local.test(lid);
    }

    private boolean up(int lid) { return f.ports.get(lid - 1).up; }

    /** How many of the ports {@code to} have their links up (no allocation: every packet asks). */
    private int ups(List<Integer> to) {
        int n = 0;
        for (int i = 0; i < to.size(); i++) if (up(to.get(i))) n++;
        return n;
    }

    private boolean mine(int lid) { return local == null || local[lid - 1]; }

    void arrive(Arrival a) {
        if (apart) {
            f.ports.get(a.srcLid() - 1).outbox.add(a); // only the sender's own thread touches its outbox
            return;
        }
        pending.add(a);
        if (!lazy()) {
            // the switch's own: it runs whatever becomes of the sender (reset adapters included)
            sim.scheduleFor(null, a.headAt(), Fabric.PRIORITY, () -> takeUntil(sim.now() + 1));
            return;
        }
        arm();
    }

    /**
     * Run in one simulator with a propagation and a switch latency, the switch takes a packet not at the instant its
     * head comes in but at the first fabric event of the simulator from then (a send, a delivery, a credit): a packet
     * sent at {@code t} comes in no sooner than {@code t + propagation}, so at {@code t} no packet still to be sent can
     * come in ahead of one already in. Nothing a packet makes is due before its {@link #due} instant, by when a timer
     * ({@link #takeDue}) takes it if no event did: the same takes in the same order, each before anything it makes,
     * mostly without an event of their own. What changes the switch from outside its steps (a link, the MFT, a port's
     * adapter) first has it take what came in by then ({@link #settle}).
     */
    private boolean lazy() { return !apart && f.propagation > 0 && f.switchLatency > 0; }

    /**
     * The last instant {@code a} may be taken at: before the first thing it can make, a delivery once a head crossed
     * the switch and the downlink (every packet has at least an LRH and a BTH), or its credit, after its tail.
     * Monotone in the head's instant, so the earliest head's is the earliest due.
     */
    private long due(Arrival a) { return a.headAt() + dueAfterHead; }

    private Simulator.Event timer; // the pending packets' timer (null: none scheduled)
    private long timerAt;
    private final Runnable takeDue = this::takeDue;
    /** The latest instant a credit is due at in the switch's simulator: a fabric event that is sure to come. */
    private long creditAhead = Long.MIN_VALUE;

    private void takeDue() {
        timer = null;
        takeUntil(sim.now() + 1);
        if (lazy()) arm(); // (ports gone apart since: the exchange takes the rest)
    }

    /**
     * Has a fabric event sure to come by the first pending packet's {@link #due} instant, and after its head came
     * in: a credit the switch sent, or else the timer.
     */
    private void arm() {
        long due = pending.isEmpty() ? -1 : due(pending.peek());
        boolean covered = due < 0 || creditAhead >= pending.peek().headAt() && creditAhead <= due;
        if (timer != null && (covered || timerAt != due)) {
            timer.cancel();
            timer = null;
        }
        if (covered || timer != null) return;
        timerAt = due; // the switch's own: it runs whatever becomes of the senders (reset adapters included)
        timer = sim.scheduleFor(null, due, Fabric.PRIORITY, takeDue);
    }

    /** In a fabric event of simulator {@code in}: takes what came in by now, if that is the switch's simulator. */
    void takeAhead(Simulator in) {
        if (pending.isEmpty() || in != sim || pending.peek().headAt() > sim.now()) return;
        settle();
    }

    /** Takes what came in by now (before the switch's state is changed or read from outside its steps). */
    void settle() {
        if (!lazy()) return;
        takeUntil(sim.now() + 1);
        arm();
    }

    /**
     * Between windows, every port's simulator stopped at {@code windowStart}: takes every packet ports
     * sent, and acts on those whose heads reach the switch within one propagation of it (no packet sent
     * from now on can reach it sooner), scheduling deliveries and credits in the ports' simulators, no
     * sooner than a window later.
     */
    @Override public void exchange(long windowStart) {
        if (peers == null) collect();
        else for (Fabric.PortState port : f.ports)
            if (!port.outbox.isEmpty()) throw new IllegalStateException("port " + port.lid + " sent "
                    + port.outbox.size() + " packets after the window's start was agreed (across processes)");
        takeUntil(windowStart + f.propagation);
    }

    /**
     * While ports run apart, what the exchange schedules for the ports in {@code part} waits in an inbox, scheduled by
     * the thread that runs the partition (null: none of its ports in it, or ports not apart).
     */
    @Override public Runnable inbox(Simulator part) {
        if (!apart) return null;
        Inbox box = null;
        for (Fabric.PortState port : f.ports)
            if (port.sim == part) {
                if (box == null) box = new Inbox(part, this);
                port.inbox = box;
            }
        return box;
    }

    /** The first window start whose exchange has a packet to act on (across processes: as this copy knows it). */
    @Override public long nextStart() {
        collect();
        long t = pending.isEmpty() ? Long.MAX_VALUE : pending.peek().headAt();
        return t == Long.MAX_VALUE ? t : t - f.propagation + 1;
    }

    /**
     * Takes what the ports sent since the last look into the switch's queue. Across processes it is
     * collective: every process sends its ports' packets to every other. Both callers run between windows,
     * and a window's start is always asked for ({@link #nextStart}) before the window, so the exchange
     * itself finds nothing new to send (and across processes gathers nothing: one collective a window).
     */
    private void collect() {
        if (peers == null) {
            // an empty outbox is only read: clearing it would write its line, which the port's core then takes back
            for (Fabric.PortState port : f.ports)
                if (!port.outbox.isEmpty()) {
                    pending.addAll(port.outbox);
                    port.outbox.clear();
                }
            return;
        }
        List<Arrival> mine = new ArrayList<>();
        for (Fabric.PortState port : f.ports) {
            // another process's port sends here only in the setup every process repeats: its owner sends it
            if (mine(port.lid)) mine.addAll(port.outbox);
            port.outbox.clear();
        }
        byte[][] all = peers.allGather(ArrivalCodec.encode(mine));
        for (int r = 0; r < all.length; r++)
            pending.addAll(r == peers.rank() ? mine : ArrivalCodec.decode(all[r]));
    }

    private void takeUntil(long horizon) {
        while (!pending.isEmpty() && pending.peek().headAt() < horizon) take(pending.poll());
    }

    private void take(Arrival a) {
        Packet p = a.p();
        boolean counts = mine(a.srcLid());
        if (counts) {
            packets.inc();
            bytes.add(a.bytes());
            count(a.srcLid(), a.bytes(), false);
            if (a.waited() >= 0) {
                waits.inc();
                waitPicos.add(a.waited());
            }
        }
        long atSwitch = (f.cutThrough ? a.headAt() : a.tailAt()) + f.switchLatency;
        long tailAtSwitch = a.tailAt() + f.switchLatency;
        long freed; // when its bytes leave the switch's input buffer
        List<Integer> to = destinations(p, a.srcLid(), counts);
        boolean lost = a.fate() == Fate.DROP || a.fate() == Fate.CORRUPT;
        int ups = to.isEmpty() ? 0 : ups(to); // (links change only between the switch's steps)
        if (!f.ports.get(a.srcLid() - 1).up || !to.isEmpty() && ups == 0) {
            // its port's link is down, or every port it goes to: the packet is lost where the link is cut
            if (counts) linkDownDrops.inc();
            freed = tailAtSwitch;
        } else if (f.agent.takes(p) && !lost) {
            manage(a, counts);
            freed = tailAtSwitch; // taken whole into the management port
        } else if (to.isEmpty()) {
            if (counts) unroutable.inc();
            freed = tailAtSwitch;
        } else if (a.fate() == Fate.DROP || a.fate() == Fate.CORRUPT) {
            if (counts) (a.fate() == Fate.DROP ? dropped : corrupted).inc();
            freed = tailAtSwitch;
        } else {
            if (ups < to.size()) to = to.stream().filter(this::up).toList(); // a copy to a down port is lost
            if (a.fate() == Fate.REORDER) {
                // held in the switch long enough for a few later packets to pass it
                if (counts) reordered.inc();
                long hold = 4 * f.serialization(a.bytes()) + f.switchLatency;
                atSwitch += hold;
                tailAtSwitch += hold;
            }
            freed = forwardAll(p, to, atSwitch, tailAtSwitch, a.bytes(), a.header());
            if (a.fate() == Fate.DUPLICATE) {
                if (counts) duplicated.inc();
                freed = forwardAll(p, to, atSwitch, tailAtSwitch, a.bytes(), a.header());
            }
        }
        if (!counts) return; // its credits are due to a port another process runs
        Fabric.PortState src = f.ports.get(a.srcLid() - 1);
        // no adapter's: the credit comes back even to a port whose adapter was reset meanwhile
        if (src.inbox != null) src.inbox.credit(freed + f.propagation, a);
        else if (src.txq.isEmpty()) f.creditLater(src, freed + f.propagation, a); // no packet waits for it
        else {
            Simulator.Scope before = src.sim.enter(null); // posted: no one cancels a credit, so its event is a spare
            try {
                src.sim.post(freed + f.propagation, Fabric.PRIORITY, () -> f.credit(a));
            } finally {
                src.sim.leave(before);
            }
            if (src.sim == sim) creditAhead = Math.max(creditAhead, freed + f.propagation);
        }
    }

    /**
     * A MAD for the switch's management port (its SMA, or its SMI to pass a directed-route SMP on): taken once its
     * tail is in, after the SMPs before it, {@code switch.sma.latency} each; what it sends leaves from the port then.
     */
    private void manage(Arrival a, boolean counts) {
        SwitchAgent.Out out = f.agent.take(a.p(), a.srcLid());
        if (counts) (out == null ? madsDropped : mads).inc();
        managementFree = Math.max(managementFree, a.tailAt() + f.switchLatency) + f.smaLatency;
        if (out != null) forward(out.p(), out.port(), managementFree, managementFree, out.p().wireBytes(),
                out.p().headerBytes());
    }

    /**
     * The ports a packet leaves on: its DLID's, or for a multicast LID every port the MFT lists but the
     * one it came in on (IBA 18.2.4.3.3: a switch never sends a multicast packet back out its in-port; the
     * sender's adapter delivers to its own members itself). Empty: no route, the packet is dropped.
     */
    private List<Integer> destinations(Packet p, int srcLid, boolean counts) {
        if (Packet.multicastLid(p.dlid())) {
            List<Integer> out = new ArrayList<>(multicastPorts(p.dlid()));
            out.remove(Integer.valueOf(srcLid));
            if (counts) {
                multicast.inc();
                multicastCopies.add(out.size());
            }
            return out;
        }
        return p.dlid() < 1 || p.dlid() > f.ports.size() ? List.of() : toPort(p.dlid());
    }

    /** The list of port {@code lid} alone, made once: every unicast packet asks. */
    private List<Integer> toPort(int lid) {
        if (lid >= toPort.length) toPort = Arrays.copyOf(toPort, Math.max(lid + 1, 2 * toPort.length));
        List<Integer> l = toPort[lid];
        return l != null ? l : (toPort[lid] = List.of(lid));
    }

    /** Forwards a copy to each port of {@code to}, in order; returns when the last copy's tail left. */
    private long forwardAll(Packet p, List<Integer> to, long atSwitch, long tailAtSwitch, int bytes, int header) {
        long freed = 0;
        for (int lid : to) freed = Math.max(freed, forward(p, lid, atSwitch, tailAtSwitch, bytes, header));
        return freed;
    }

    /**
     * Queues the packet on its destination's downlink from its arrival at the switch (in the switch's
     * order); its tail cannot leave before it reached the switch. The port hands the packet over once
     * its {@code header} bytes before the payload are in, with the {@link Arrival} of its payload. Returns when its
     * tail left.
     */
    private long forward(Packet p, int lid, long atSwitch, long tailAtSwitch, int bytes, int header) {
        Fabric.PortState dst = f.ports.get(lid - 1);
        long start = Math.max(atSwitch, dst.downFree), end = Math.max(start + f.serialization(bytes), tailAtSwitch);
        dst.downFree = end;
        if (!mine(dst.lid)) return end; // delivered by the process that runs the port
        count(lid, bytes, true);
        long headersIn = start + f.serialization(header) + f.propagation;
        long payloadIn = Math.max(headersIn, end - trailerPicos + f.propagation);
        long at = f.cutThroughRx ? headersIn : end + f.propagation;
        // apart, the port's own thread makes the delivery (and what it allocates) as it empties its inbox
        if (dst.inbox != null) dst.inbox.deliver(dst, at, p, headersIn, payloadIn);
        else dst.downlink.post(at, Fabric.PRIORITY, delivery(dst, p, headersIn, payloadIn)); // no one cancels it
        return end;
    }

    /** Arrival {@code a}'s credits come back to its port (in its simulator, at its instant). */
    void credit(Arrival a) { f.credit(a); }

    /**
     * Packet {@code p}'s delivery to port {@code dst}: its headers in at {@code headersIn}, its payload by
     * {@code payloadIn}. link.receive: cut-through ports take the packet once its headers are in, store-and-forward
     * ones once whole.
     */
    Runnable delivery(Fabric.PortState dst, Packet p, long headersIn, long payloadIn) {
        // an acknowledgement carries no payload and no one asks when it came in: handed on as it was sent
        Packet delivered = f.cutThroughRx && !p.op().isAck()
                ? p.arriving(new nicsim.sim.Arrival(headersIn, payloadIn, p.payload().length)) : p;
        return () -> {
            takeAhead(dst.sim);
            if (dst.laters > 0) f.creditsDue(dst); // what the port sent comes back as soon as its credits would
            if (dst.tap != null) dst.tap.delivered(delivered);
            dst.rx.accept(delivered);
        };
    }
}
