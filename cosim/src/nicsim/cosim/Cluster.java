package nicsim.cosim;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.BooleanSupplier;
import nicsim.driver.World;
import nicsim.fabric.Faults;
import nicsim.profile.Profile;
import nicsim.profile.Profiles;
import nicsim.sim.Peers;

/**
 * A simulated world of nodes, each a host with one adapter, joined by a fabric (docs/verbs.md).
 * Build it with {@link #builder()}; close it when done.
 */
public final class Cluster implements AutoCloseable {
    /** Block names that can be taken from RTL. */
    public static final List<String> RTL_BLOCKS = RtlInLoop.IN_SYSTEM;

    private final World world;
    private final List<Node> nodes = new ArrayList<>();
    private final Set<String> rtl;

    private final List<RtlInLoop> rtlLoops = new ArrayList<>();

    private Cluster(World world, Set<String> rtl, boolean rtlOnEveryNode, Map<String, RtlInLoop.Own> own) {
        this.world = world;
        this.rtl = Set.copyOf(rtl);
        for (int i = 0; i < world.hosts().size(); i++) nodes.add(new Node(world.host(i)));
        if (!rtl.isEmpty())
            for (int i = 0; i < (rtlOnEveryNode ? world.hosts().size() : 1); i++)
                rtlLoops.add(new RtlInLoop(world.host(i).adapter, world.profile, rtl, RtlInLoop.BATCH, own));
    }

    /**
     * Edges each RTL block of node 0 has run and matched (empty without RTL); every node's pending
     * edges are checked first.
     */
    public Map<String, Long> rtlEdges() {
        checkRtl();
        return rtlLoops.isEmpty() ? Map.of() : rtlLoops.get(0).edges();
    }

    /**
     * Runs the RTL's pending edges on every node and compares them; throws
     * {@link RtlInLoop.Divergence} at the first mismatch.
     */
    public void checkRtl() { for (RtlInLoop r : rtlLoops) r.check(); }

    public static Builder builder() { return new Builder(); }

    public Node node(int i) {
        if (i < 0 || i >= nodes.size()) throw new IndexOutOfBoundsException("node " + i + " of " + nodes.size());
        return nodes.get(i);
    }

    public List<Node> nodes() { return List.copyOf(nodes); }
    public Profile profile() { return world.profile; }
    public World world() { return world; }
    public Set<String> rtl() { return rtl; }
    public long nowPicos() { return world.now(); }
    public void runFor(long picos) { world.runFor(picos); }
    public void runUntil(BooleanSupplier cond, long limitPicos) { world.runUntil(cond, limitPicos); }

    /** Closes the nodes and frees the RTL, after checking its pending edges (a divergence found then is thrown). */
    @Override public void close() {
        RuntimeException failure = null;
        for (RtlInLoop r : rtlLoops)
            try {
                r.close();
            } catch (RuntimeException e) {
                if (failure == null) failure = e;
            }
        for (Node n : nodes) n.close();
        world.close();
        if (failure != null) throw failure;
    }

    public static final class Builder {
        private int nodes = 2;
        private Profile profile = Profiles.load("cx-gen3x16");
        private Set<String> rtl = Set.of();
        private long seed = 1;
        private Faults faults = Faults.NONE;

        public Builder nodes(int n) {
            if (n < 1) throw new IllegalArgumentException("nodes " + n + " must be >= 1");
            nodes = n;
            return this;
        }

        public Builder profile(String name) { profile = Profiles.load(name); return this; }
        public Builder profile(Profile p) { profile = p; return this; }
        public Builder seed(long s) { seed = s; return this; }
        public Builder faults(Faults f) { faults = f; return this; }

        private int threads;

        /**
         * Hosts in simulators of their own, run apart on {@code n} threads (World.apart); 0 (the default)
         * keeps every host in one simulator, as RTL in the loop, waveforms and timelines need.
         */
        public Builder threads(int n) {
            if (n < 0) throw new IllegalArgumentException("threads " + n + " must be >= 0 (0: one simulator)");
            threads = n;
            return this;
        }

        private Peers peers;

        /** Hosts spread over the processes of {@code p} (World.across), each running its share apart on threads. */
        public Builder peers(Peers p) {
            peers = p;
            return this;
        }

        private boolean rtlOnEveryNode;

        /**
         * Blocks of node 0's adapter to run as Verilated RTL in the loop ({@link RtlInLoop}): "doorbell",
         * "wqe", "mtt", "dma" (every channel's engines), "cqe".
         */
        public Builder rtl(Set<String> blocks) {
            RtlInLoop.requireKnown(blocks);
            rtl = blocks;
            return this;
        }

        private Map<String, RtlInLoop.Own> own = Map.of();

        /** Blocks of {@link #rtl} to run from the user's own Verilog (docs/blocks.md's port contract). */
        public Builder ownRtl(Map<String, RtlInLoop.Own> blocks) {
            own = Map.copyOf(blocks);
            return this;
        }

        /** Runs the RTL blocks on every node's adapter, not only node 0's. */
        public Builder rtlOnEveryNode(boolean v) { rtlOnEveryNode = v; return this; }

        public Cluster build() {
            if (threads > 0 && !rtl.isEmpty())
                throw new IllegalArgumentException("RTL in the loop runs every host in one simulator (no --threads)");
            if (peers != null && (threads < 1 || !rtl.isEmpty()))
                throw new IllegalArgumentException(
                        "a run across processes runs hosts apart (threads >= 1, no RTL in the loop)");
            World w = peers != null ? World.across(nodes, profile, seed, faults, threads, peers)
                    : threads > 0 ? World.apart(nodes, profile, seed, faults, threads)
                    : new World(nodes, profile, seed, faults);
            return new Cluster(w, rtl, rtlOnEveryNode, own);
        }
    }
}
