package nicsim.driver;

import java.util.ArrayList;
import java.util.List;
import java.util.function.BooleanSupplier;
import nicsim.fabric.Fabric;
import nicsim.fabric.Faults;
import nicsim.profile.Profile;
import nicsim.sim.Simulator;

/**
 * A simulated cluster: one simulator (one clock of picoseconds for everything), a fabric, and
 * {@code n} hosts each with an adapter. Deterministic: the same profile, seed and program give the
 * same bytes and the same cycle counts.
 */
public final class World {
    public final Simulator sim = new Simulator();
    public final Profile profile;
    public final Fabric fabric;
    private final List<Host> hosts = new ArrayList<>();
    private long memoryWrites; // writes to every host's memory
    private final List<MemoryWatch> watches = new ArrayList<>();
    public final long seed;

    public World(int nodes, Profile profile, long seed, Faults faults) { this(nodes, profile, seed, faults, i -> profile); }

    /**
     * As above with adapters that differ from node to node, as when two generations of card share a
     * fabric: node {@code i} gets {@code nodeProfile.apply(i)}; the fabric (links, switch) and the
     * workloads' host costs come from {@code profile}.
     */
    public World(int nodes, Profile profile, long seed, Faults faults, java.util.function.IntFunction<Profile> nodeProfile) {
        if (nodes < 1) throw new IllegalArgumentException("nodes " + nodes + " must be >= 1");
        this.profile = profile;
        this.seed = seed;
        this.fabric = new Fabric(sim, profile, faults, seed);
        for (int i = 0; i < nodes; i++) {
            Host h = new Host(i, sim, nodeProfile.apply(i), fabric);
            int node = i;
            h.memory.onWrite(() -> {
                memoryWrites++;
                for (MemoryWatch m : watches) m.written.set(node);
            });
            hosts.add(h);
        }
    }

    public Host host(int i) { return hosts.get(i); }
    public List<Host> hosts() { return List.copyOf(hosts); }
    public long now() { return sim.now(); }
    public void runFor(long picos) { sim.runUntil(Math.addExact(sim.now(), picos)); }

    /**
     * Runs until {@code cond} holds, looking at it again only after some host's memory was written:
     * for a program that only polls memory (completion queues, flags), where looking when nothing
     * changed finds nothing and costs nothing in simulated time. Same results as {@link #runUntil},
     * with far fewer looks.
     */
    public void runUntilMemoryHolds(BooleanSupplier cond, long limitPicos) { lookOnWrites(cond, limitPicos, this::memoryVersion); }

    /**
     * As {@link #runUntilMemoryHolds(BooleanSupplier, long)} for a program whose condition reads
     * only the memory of hosts {@code nodes}: it looks again only after one of those was written.
     */
    public void runUntilMemoryHolds(int[] nodes, BooleanSupplier cond, long limitPicos) {
        nicsim.host.HostMemory[] memories = new nicsim.host.HostMemory[nodes.length];
        for (int i = 0; i < nodes.length; i++) memories[i] = hosts.get(nodes[i]).memory;
        lookOnWrites(cond, limitPicos, () -> {
            long v = 0; // writes to those hosts' memory
            for (nicsim.host.HostMemory m : memories) v += m.version();
            return v;
        });
    }

    private void lookOnWrites(BooleanSupplier cond, long limitPicos, java.util.function.LongSupplier version) {
        long deadline = Math.addExact(sim.now(), limitPicos);
        long seen = -1;
        while (true) {
            if (version.getAsLong() != seen) {
                if (cond.getAsBoolean()) return;
                seen = version.getAsLong(); // after the look, which may itself write (a consumer index)
            }
            step(deadline, limitPicos);
        }
    }

    /** One event more, unless the deadline has passed or nothing is left to happen. */
    private void step(long deadline, long limitPicos) {
        if (sim.now() >= deadline)
            throw new IllegalStateException("condition did not hold within " + limitPicos + " ps (now " + sim.now() + " ps)");
        // nothing left to happen: time may still pass (a program waiting on a timer of its own)
        if (!sim.step()) throw new IllegalStateException("simulation went idle at " + sim.now() + " ps before the condition held");
    }

    /** Writes to every host's memory (one tally, so a look costs the same with 2 nodes or 64). */
    private long memoryVersion() { return memoryWrites; }

    /**
     * Which hosts' memory was written since a program last looked, so that a program polling many
     * hosts looks only at those written (a look costs the same with 2 nodes or 64). A new watch
     * counts every host as written: it has looked at none.
     */
    public MemoryWatch watchMemory() {
        MemoryWatch m = new MemoryWatch();
        m.written.set(0, hosts.size());
        watches.add(m);
        return m;
    }

    /** See {@link #watchMemory()}. */
    public static final class MemoryWatch {
        private final java.util.BitSet written = new java.util.BitSet();

        /** The first host from {@code node} on whose memory was written since {@link #looked} at it; -1 if none. */
        public int nextWritten(int node) { return written.nextSetBit(node); }

        /** The program has seen {@code node}'s memory as it is now. */
        public void looked(int node) { written.clear(node); }
    }

    /** Runs until {@code cond} holds; IllegalStateException if {@code limitPicos} pass first. */
    public void runUntil(BooleanSupplier cond, long limitPicos) {
        long deadline = Math.addExact(sim.now(), limitPicos);
        while (!cond.getAsBoolean()) step(deadline, limitPicos);
    }
}
