package nicsim.driver;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.function.BooleanSupplier;
import java.util.function.IntFunction;
import nicsim.fabric.Fabric;
import nicsim.fabric.Faults;
import nicsim.profile.Profile;
import nicsim.sim.Counters;
import nicsim.sim.Peers;
import nicsim.sim.Simulator;
import nicsim.sim.Windows;

/**
 * A simulated cluster: a fabric and {@code n} hosts each with an adapter, on one clock of
 * picoseconds. Deterministic: the same profile, seed and program give the same bytes and the same
 * cycle counts.
 *
 * <p>Either every host lives in one simulator ({@link #sim}), or ({@link #apart}) each host has a
 * simulator of its own and they run side by side in windows ({@link Windows}) on several threads,
 * with the same results for any number of threads. Apart, a program looks at the hosts only between
 * windows, so programs that react to each completion run on each host ({@link #onMemoryWrite}).
 *
 * <p>Across processes ({@link #across}) every process builds every host (a program's setup runs on each
 * host's own simulator, the same in every process), but runs in windows only its own share of them
 * ({@link #isLocal}): a contiguous block of nodes per rank. What a program learns of the run must then
 * come from the hosts it runs, combined through {@link #peers()}.
 */
public final class World implements AutoCloseable {
    /** The simulator of every host, or apart the switch's; its counters are every host's. */
    public final Simulator sim;
    public final Profile profile;
    public final Fabric fabric;
    private final List<Host> hosts = new ArrayList<>();
    private final boolean[] watched; // per host: a write to its memory makes the running wait look again
    private boolean written; // a watched host's memory was written since the wait's last look (one simulator)
    private boolean waiting; // a wait on memory is running
    private final Runnable[] writeHooks; // per host: told of every write to its memory
    private final List<Simulator> partitions = new ArrayList<>();
    private final Windows windows; // null: one simulator
    private final Peers peers; // across processes: the others (null: every host in this process)
    private final List<Simulator> local = new ArrayList<>(); // the partitions this process runs
    public final long seed;

    public World(int nodes, Profile profile, long seed, Faults faults) {
        this(nodes, profile, seed, faults, i -> profile);
    }

    /**
     * As above with adapters that differ from node to node, as when two generations of card share a
     * fabric: node {@code i} gets {@code nodeProfile.apply(i)}; the fabric (links, switch) and the
     * workloads' host costs come from {@code profile}.
     */
    public World(int nodes, Profile profile, long seed, Faults faults,
            IntFunction<Profile> nodeProfile) {
        this(nodes, profile, seed, faults, nodeProfile, 0);
    }

    /** Hosts in simulators of their own, run apart in windows on {@code threads} threads (see the class comment). */
    public static World apart(int nodes, Profile profile, long seed, Faults faults, int threads) {
        if (threads < 1) throw new IllegalArgumentException("--threads " + threads + " must be >= 1");
        return new World(nodes, profile, seed, faults, i -> profile, threads, null);
    }

    /**
     * As {@link #apart}, the hosts spread over the processes of {@code peers} (rank r runs the nodes
     * i with i * size / nodes = r, a contiguous block), each process on {@code threads} threads.
     */
    public static World across(int nodes, Profile profile, long seed, Faults faults, int threads,
            Peers peers) {
        if (threads < 1) throw new IllegalArgumentException("--threads " + threads + " must be >= 1");
        if (peers.size() > nodes) throw new IllegalArgumentException("ranks " + peers.size() + " must be at most the "
                + nodes + " nodes (each rank runs at least one host)");
        return new World(nodes, profile, seed, faults, i -> profile, threads, peers);
    }

    private World(int nodes, Profile profile, long seed, Faults faults,
            IntFunction<Profile> nodeProfile, int threads) {
        this(nodes, profile, seed, faults, nodeProfile, threads, null);
    }

    private World(int nodes, Profile profile, long seed, Faults faults,
            IntFunction<Profile> nodeProfile, int threads, Peers peers) {
        if (nodes < 1) throw new IllegalArgumentException("nodes " + nodes + " must be >= 1");
        this.peers = peers;
        this.profile = profile;
        this.seed = seed;
        this.sim = new Simulator(new Counters());
        this.fabric = new Fabric(sim, Fabric.Config.from(profile), faults, seed);
        this.writeHooks = new Runnable[nodes];
        this.watched = new boolean[nodes];
        for (int i = 0; i < nodes; i++) {
            Simulator own = threads == 0 ? sim : new Simulator(sim.counters());
            Host h = new Host(i, own, nodeProfile.apply(i), fabric);
            watchWrites(h);
            hosts.add(h);
            partitions.add(own);
        }
        if (threads == 0) {
            windows = null;
            partitions.subList(1, partitions.size()).clear();
            local.addAll(partitions);
        } else if (peers == null) {
            fabric.fabricSwitch().runApart();
            local.addAll(partitions);
            windows = new Windows(partitions, fabric.fabricSwitch(), fabric.lookahead(), threads);
        } else {
            for (int i = 0; i < nodes; i++) if (isLocal(i)) local.add(partitions.get(i));
            fabric.fabricSwitch().runAcross(peers, lid -> isLocal(lid - 1));
            windows = new Windows(local, fabric.fabricSwitch(), fabric.lookahead(), threads, peers);
        }
    }

    /** Whether this process runs node {@code node} (always, but across processes). */
    public boolean isLocal(int node) {
        if (peers == null) return true;
        return (int) ((long) node * peers.size() / hosts.size()) == peers.rank();
    }

    /** The other processes of a run across processes; null when every host runs in this one. */
    public Peers peers() { return peers; }

    /** The simulators this process runs (every one, but across processes). */
    public List<Simulator> localPartitions() { return List.copyOf(local); }

    /**
     * In one simulator a write to a host's memory raises the wait's flag, then runs the program's hook. Apart,
     * programs look between windows (no flag shared between threads): the memory runs the hook itself, or nothing,
     * with no lambda and no array of this world's to read on each of the host's DMA writes (cold lines once many
     * nodes are resident).
     */
    private void watchWrites(Host h) {
        int node = h.index;
        if (h.sim != sim) {
            h.memory.onWrite(writeHooks[node]);
            return;
        }
        h.memory.onWrite(() -> {
            if (watched[node]) written = true;
            Runnable hook = writeHooks[node];
            if (hook != null) hook.run();
        });
    }

    /**
     * Resets node {@code node} after a fault: the host is replaced by a fresh one (empty memory, a fresh
     * adapter and firmware on the same fabric port, no driver yet), and the old one's scope is retired, so
     * none of its events (clock edges, DMA, packets on their way to it) runs again. Whoever still holds the
     * old {@link Host} must touch it no more. Returns the new host.
     */
    public Host reset(int node) {
        Host old = hosts.get(node);
        old.sim.retire(old.scope);
        Host h = new Host(node, old.sim, old.profile, old.config, fabric, old.firmware.lid());
        watchWrites(h);
        hosts.set(node, h);
        return h;
    }

    /** The node whose event threw the fault {@code f} (null if it was no node's, as the fabric's). */
    public Host hostOf(Simulator.Fault f) {
        for (Host h : hosts) if (f.scope() == h.scope) return h;
        return null;
    }

    /** Whether hosts run apart, each in a simulator of its own. */
    public boolean isApart() { return windows != null; }

    /** The simulators the hosts live in: one, or one per host. */
    public List<Simulator> partitions() { return List.copyOf(partitions); }

    /** Threads hosts running apart run on (0 in one simulator). */
    public int threads() { return windows == null ? 0 : windows.threads(); }

    /** Windows run so far between hosts running apart (0 in one simulator). */
    public long windows() { return windows == null ? 0 : windows.windows(); }

    /**
     * Runs {@code hook} on every write to host {@code node}'s memory, on that host's thread at the
     * write's instant: where a program that reacts to its host's completions runs when hosts run apart.
     */
    public void onMemoryWrite(int node, Runnable hook) {
        writeHooks[node] = hook;
        Host h = hosts.get(node);
        if (h.sim != sim) h.memory.onWrite(hook); // apart: the memory runs it itself (see watchWrites)
    }

    /** The run ends: the threads stop, and every packet's sender hears it left the fabric. */
    @Override public void close() {
        if (windows != null) windows.close();
        fabric.creditsBackAtEnd();
    }

    public Host host(int i) { return hosts.get(i); }
    public List<Host> hosts() { return List.copyOf(hosts); }

    /** The time: apart, the latest any host has reached (a program's setup runs each host ahead on its own). */
    public long now() {
        if (windows == null) return sim.now();
        long t = windows.now();
        for (Simulator s : local) t = Math.max(t, s.now());
        return peers == null ? t : peers.max(t); // across processes: a collective call
    }

    public void runFor(long picos) {
        if (windows == null) sim.runUntil(Math.addExact(sim.now(), picos));
        else windows.runUntil(Math.addExact(now(), picos));
    }

    /** Apart: brings every host to the latest time any has reached (so a measurement starts on one clock). */
    public void sync() { if (windows != null) windows.runUntil(now()); }

    /** Runs until nothing is left to happen; IllegalStateException if that takes more than {@code limitPicos}. */
    public long runUntilIdle(long limitPicos) {
        return windows == null ? sim.runUntilIdle(limitPicos) : windows.runUntilIdle(limitPicos);
    }

    /**
     * Runs until {@code cond} holds, looking at it again only after some host's memory was written:
     * for a program that only polls memory (completion queues, flags), where looking when nothing
     * changed finds nothing and costs nothing in simulated time. Same results as {@link #runUntil},
     * with far fewer looks.
     */
    public void runUntilMemoryHolds(BooleanSupplier cond, long limitPicos) {
        lookOnWrites(cond, limitPicos, null);
    }

    /**
     * As {@link #runUntilMemoryHolds(BooleanSupplier, long)} for a program whose condition reads
     * only the memory of hosts {@code nodes}: it looks again only after one of those was written.
     */
    public void runUntilMemoryHolds(int[] nodes, BooleanSupplier cond, long limitPicos) {
        for (int n : nodes) Objects.checkIndex(n, hosts.size());
        lookOnWrites(cond, limitPicos, nodes);
    }

    /**
     * The waits above, watching hosts {@code nodes} (null: every host). A write to a watched host's memory raises
     * a flag that the loop reads after each event, so an event costs the wait one field read, however many hosts
     * it watches. A wait inside a condition's look watches its own hosts, then the outer wait's again.
     */
    private void lookOnWrites(BooleanSupplier cond, long limitPicos, int[] nodes) {
        if (windows != null) {
            windows.runUntil(cond, limitPicos);
            return;
        }
        long deadline = Math.addExact(sim.now(), limitPicos);
        boolean[] outer = waiting ? watched.clone() : null;
        waiting = true;
        Arrays.fill(watched, nodes == null);
        if (nodes != null) for (int n : nodes) watched[n] = true;
        written = true; // the first look
        try {
            while (true) {
                if (written) {
                    if (cond.getAsBoolean()) return;
                    written = false; // after the look, which may itself write (a consumer index)
                }
                step(deadline, limitPicos);
            }
        } finally {
            if (outer != null) System.arraycopy(outer, 0, watched, 0, watched.length);
            else {
                Arrays.fill(watched, false);
                waiting = false;
            }
        }
    }

    /** One event more, unless the deadline has passed or nothing is left to happen. */
    private void step(long deadline, long limitPicos) {
        if (sim.now() >= deadline)
            throw new IllegalStateException("condition did not hold within " + limitPicos + " ps (now " + sim.now()
                    + " ps)");
        // nothing left to happen: time may still pass (a program waiting on a timer of its own)
        if (!sim.step()) throw new IllegalStateException("simulation went idle at " + sim.now()
                + " ps before the condition held");
    }

    /** Runs until {@code cond} holds; IllegalStateException if {@code limitPicos} pass first. */
    public void runUntil(BooleanSupplier cond, long limitPicos) {
        if (windows != null) {
            windows.runUntil(cond, limitPicos);
            return;
        }
        long deadline = Math.addExact(sim.now(), limitPicos);
        while (!cond.getAsBoolean()) step(deadline, limitPicos);
    }
}
