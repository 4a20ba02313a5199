package nicsim.cosim.cli;

import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import java.util.function.DoubleConsumer;
import nicsim.adapter.Adapter;
import nicsim.adapter.StageLog;
import nicsim.cosim.Cluster;
import nicsim.cosim.Stages;
import nicsim.driver.World;
import nicsim.fabric.Faults;
import nicsim.profile.Profile;
import nicsim.sim.ClockDomain;
import nicsim.sim.Peers;
import nicsim.sim.Simulator;
import nicsim.sim.TimedPeers;
import nicsim.sim.Trace;
import nicsim.verbs.Mtu;
import nicsim.wave.GtkwSave;
import nicsim.wave.VcdWriter;
import nicsim.workloads.Options;
import nicsim.workloads.Result;
import nicsim.workloads.Workloads;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code ./nicsim run <workload>...}: runs example programs between node 0 and node 1 of a
 * simulated cluster, prints their figures (simulated time), the per-stage breakdown of node 0's
 * send WQEs and the block counters, and exits non-zero if any byte or completion was wrong.
 */
@Command(name = "run", mixinStandardHelpOptions = true,
        description = "Run a workload (rc_pingpong, ud_pingpong, write_bw, write_lat, send_bw, send_lat, read_bw, "
                + "read_lat, atomic_bw) between two simulated nodes; prints its figures, the per-stage cycle "
                + "breakdown and the block counters.")
final class RunCommand implements Callable<Integer> {
    @Parameters(arity = "1..*", paramLabel = "<workload>", description = "one or more of: ${COMPLETION-CANDIDATES}",
            completionCandidates = Names.class)
    List<String> workloads = new ArrayList<>();

    @Mixin
    ProfileOption profile = new ProfileOption();

    @Option(names = "--nodes", defaultValue = "2",
            description = "hosts in the cluster (the workload runs between nodes 0 and 1; default: ${DEFAULT-VALUE})")
    int nodes = 2;

    // boxed: null is "not given" (the test's own default); 0 is a value given, and refused like any other out of range
    @Option(names = "--size",
            description = "message size in bytes, 1..8388608 (default: the test's own, as perftest/rdma-core)")
    Long size;

    @Option(names = "--all-sizes", description = "every size from 2 B to 8 MiB (perftest -a)")
    boolean allSizes;

    @Option(names = "--iters", description = "iterations, 1..10000000 (default: the test's own, as perftest/rdma-core)")
    Integer iters;

    @Option(names = "--qps", defaultValue = "1",
            description = "queue pairs for the bandwidth tests (default: ${DEFAULT-VALUE})")
    int qps = 1;

    @Option(names = "--mrs", defaultValue = "1", description = "MRs each side registers over its buffer and uses "
            + "in turn, for translation-cache studies (default: ${DEFAULT-VALUE})")
    int mrs = 1;

    @Option(names = "--mtu", defaultValue = "4096",
            description = "path MTU: 256, 512, 1024, 2048 or 4096 (default: ${DEFAULT-VALUE})")
    int mtu = 4096;

    @Option(names = "--scatter-to-cqe", description = "the QPs let small receives come in their CQE instead of the "
            + "buffer (cqe.scatter.max bytes; cx-gen3x16: 32 B)")
    boolean scatterToCqe;

    @Option(names = {"-c", "--connection"}, description = "connection type of the perftest tests: RC (default) or UD "
            + "(send_lat and send_bw, as perftest's -c UD)")
    String connection = "RC";

    @Option(names = "--tx-depth", defaultValue = "128",
            description = "outstanding sends in the bandwidth tests (default: ${DEFAULT-VALUE})")
    int txDepth = 128;

    @Option(names = "--rtl", description = "node 0's blocks run as Verilated RTL in the loop: doorbell, wqe, mtt, "
            + "dma (every DMA channel), cqe, or all; BLOCK=FILE[+FILE...] runs your own Verilog module in that "
            + "block's place (docs/blocks.md); "
            + "the run is made twice (model, then RTL) and compared")
    String rtl;

    @Option(names = "--threads", description = "threads for workloads whose hosts run apart (pairs_write_bw): "
            + "each host a simulator of its own, run side by side in windows of one link latency; the same results "
            + "for any number (default: the machine's cores; waveforms, timelines and RTL in the loop keep one "
            + "simulator)")
    Integer threads;

    @Option(names = "--mpi", description = "spread the hosts over the processes of the mpirun that started this one "
            + "(pairs_write_bw): each rank runs a block of the nodes apart on --threads threads, the windows' packets "
            + "exchanged through Open MPI; "
            + "rank 0 prints what one process would (docs/architecture.md#across-processes)")
    boolean mpi;

    @Option(names = "--seed", defaultValue = "1",
            description = "seed of every random choice (data, faults; default: ${DEFAULT-VALUE})")
    long seed = 1;

    @Option(names = "--faults", defaultValue = "none",
            description = "fault injection on the links, e.g. drop=0.01,dup=0.001,reorder=0.01,corrupt=0.001")
    String faults = "none";

    @Option(names = "--wave", description = "waveform of node 0's blocks' ports (.vcd, .vcd.gz, .vcd.xz)")
    Path wave;

    @Option(names = "--timeline",
            description = "timeline of the send WQEs as Perfetto/Chrome JSON: a track per block per node, "
                    + "a flow per WQE")
    Path timeline;

    @Option(names = "--beat-by-beat", description = "run every edge of the DMA channels' clocks through the blocks' "
            + "wires, instead of coasting over edges that only move beats inside a channel: the same simulated "
            + "result, slower")
    boolean beatByBeat;

    static final class Names extends ArrayList<String> {
        Names() { super(Workloads.NAMES); }
    }

    @Override public Integer call() throws Exception {
        for (String w : workloads)
            if (!Workloads.NAMES.contains(w))
                throw new IllegalArgumentException("workload '" + w + "' unknown; accepted: "
                        + String.join(", ", Workloads.NAMES));
        if (nodes < 2 || nodes > 1024) throw new IllegalArgumentException("--nodes " + nodes + " must be 2..1024");
        if (threads != null && (threads < 1 || threads > 1024))
            throw new IllegalArgumentException("--threads " + threads + " must be 1..1024");
        if (qps < 1 || qps > 10_000) throw new IllegalArgumentException("--qps " + qps + " must be 1..10000");
        if (size != null && (size < 1 || size > (8 << 20)))
            throw new IllegalArgumentException("--size " + size + " must be 1..8388608");
        if (iters != null && (iters < 1 || iters > 10_000_000))
            throw new IllegalArgumentException("--iters " + iters + " must be 1..10000000");
        if (mrs < 1 || mrs > 100_000) throw new IllegalArgumentException("--mrs " + mrs + " must be 1..100000");
        if (txDepth < 1 || txDepth > 4096)
            throw new IllegalArgumentException("--tx-depth " + txDepth + " must be 1..4096");
        Mtu m = switch (mtu) {
            case 256 -> Mtu.MTU_256; case 512 -> Mtu.MTU_512; case 1024 -> Mtu.MTU_1024;
            case 2048 -> Mtu.MTU_2048; case 4096 -> Mtu.MTU_4096;
            default -> throw new IllegalArgumentException("--mtu " + mtu
                    + " must be one of 256, 512, 1024, 2048, 4096");
        };
        Set<String> rtlBlocks = Observe.rtlBlocks(rtl);
        Faults f = Faults.parse(faults);
        Profile p = profile.load();
        if (!connection.equals("RC") && !connection.equals("UD"))
            throw new IllegalArgumentException("--connection " + connection + " must be RC or UD");
        if (connection.equals("UD") && !workloads.stream().allMatch(x -> x.equals("send_lat") || x.equals("send_bw")))
            throw new IllegalArgumentException("--connection UD: only send_lat and send_bw run over UD (workloads: "
                    + String.join(", ", workloads) + ")");
        Options o = Options.defaults().with(set -> set.size(size != null ? size : 0).allSizes(allSizes)
                .iters(iters != null ? iters : 0).qps(qps).mtu(m)
                .txDepth(txDepth).mrs(mrs).scatterToCqe(scatterToCqe).ud(connection.equals("UD")));
        if (!rtlBlocks.isEmpty()) Cluster.builder()
                .rtl(rtlBlocks); // refuses blocks that cannot run in a system before any work
        Peers peers = mpi ? Ranks.start(workloads, rtlBlocks, wave, timeline) : null;
        ranks = peers;
        int failures = 0;
        try {
            failures = runAll(p, o, f, rtlBlocks);
        } finally {
            if (peers != null) failures = Ranks.finish(peers, failures);
        }
        return failures == 0 ? 0 : 1;
    }

    private Peers ranks; // --mpi: the processes the hosts are spread over

    private int runAll(Profile p, Options o, Faults f, Set<String> rtlBlocks) throws Exception {
        int failures = 0;
        for (String name : workloads) {
            if (rtlBlocks.isEmpty()) { failures += runOne(name, p, o, f, rtlBlocks).ok() ? 0 : 1; continue; }
            // the pure model first, then the same run with RTL in the loop; both must agree
            System.out.println("\n##### " + name + ": the Java model alone");
            Result model = runOne(name, p, o, f, Set.of());
            Map<String, Double> modelStages = lastStages;
            System.out.println("\n##### " + name + ": with RTL in the loop for node 0's "
                    + String.join(", ", rtlBlocks));
            Result rtlRun = runOne(name, p, o, f, rtlBlocks);
            failures += sideBySide(name, model, rtlRun, modelStages, lastStages) ? 0 : 1;
        }
        return failures;
    }

    private Map<String, Double> lastStages = Map.of();

    /** Prints the two runs' figures and stage times side by side; true if bytes, completions and cycles agree. */
    private boolean sideBySide(String name, Result model, Result rtlRun, Map<String, Double> a, Map<String, Double> b) {
        PrintStream out = System.out;
        out.printf("%n%s: model vs RTL in the loop%n", name);
        out.printf("  %-44s %16s %16s %10s%n", "", "model", "RTL in loop", "diff");
        for (int i = 0; i < Math.min(model.rows().size(), rtlRun.rows().size()); i++) {
            Result.Row x = model.rows().get(i), y = rtlRun.rows().get(i);
            out.printf("  %-44s %16d %16d %10d%n", x.bytes() + " B: simulated time (ps)", x.simPicos(), y.simPicos(),
                    y.simPicos() - x.simPicos());
        }
        for (String k : a.keySet()) {
            double withRtl = b.getOrDefault(k, Double.NaN);
            out.printf("  %-44s %16.1f %16.1f %10.1f%n", k + " (core cycles)", a.get(k), withRtl, withRtl - a.get(k));
        }
        boolean same = model.ok() && rtlRun.ok() && model.rows().equals(rtlRun.rows());
        out.println(same ? name + ": identical bytes, completions and cycle counts with and without RTL"
                : name + ": FAILED: the runs differ (" + model.errors() + " / " + rtlRun.errors() + ")");
        return same;
    }

    private Result runOne(String name, Profile p, Options o, Faults f, Set<String> rtlBlocks) throws Exception {
        int apart = name.equals("pairs_write_bw") && rtlBlocks.isEmpty() && wave == null && timeline == null
                ? (threads != null ? threads : Runtime.getRuntime().availableProcessors()) : 0;
        try (Cluster cluster = Cluster.builder().nodes(nodes).profile(p).seed(seed).faults(f).rtl(rtlBlocks)
                .threads(apart).peers(ranks)
                .ownRtl(rtlBlocks.isEmpty() ? Map.of() : Observe.ownRtl(rtl)).build()) {
            return runOne(name, p, o, f, cluster);
        }
    }

    private Result runOne(String name, Profile p, Options o, Faults f, Cluster cluster) throws Exception {
        World world = cluster.world();
        for (Simulator s : world.partitions()) s.coasting(!beatByBeat);
        PrintStream out = System.out;
        Trace trace = world.sim.trace();
        // the stage table alone needs only the stages' times: kept as numbers unless a timeline is written
        StageLog stages = timeline != null ? null : Stages.log(world, world.sim);
        if (stages == null) Observe.recordTimeline(trace);
        Adapter a0 = world.host(0).adapter;
        VcdWriter vcd = wave != null ? Observe.wave(a0, wave) : null;
        out.printf("%n=== %s on %s (%d nodes, seed %d, faults %s) ===%n", name, p.name(), nodes, seed, f);
        Progress bar = new Progress(name);
        long wall0 = System.nanoTime();
        Result r;
        try {
            r = Workloads.run(name, world, o, out, bar);
        } finally {
            bar.done();
            if (vcd != null) { vcd.advanceTo(world.now()); vcd.close(); }
        }
        double wall = (System.nanoTime() - wall0) / 1e9;
        lastStages = stages != null
                ? breakdown(out, Stages.steps(stages, p, "node0/"), stages.kept(), stages.dropped())
                : breakdown(out, Stages.steps(trace, p, "node0/"), trace.entries().size(), trace.dropped());
        if (!cluster.rtl().isEmpty())
            out.printf("RTL in the loop (node 0): %s edges exchanged, every output wire equal to the Java twin's%n",
                    cluster.rtlEdges());
        counters(out, world);
        long edges = 0, coasted = 0;
        for (Simulator s : world.localPartitions())
            for (ClockDomain d : s.clockDomains()) { edges += d.edgesRun(); coasted += d.edgesCoasted(); }
        if (ranks != null) {
            edges = ranks.sum(edges);
            coasted = ranks.sum(coasted);
        }
        long simulated = world.now();
        if (ranks != null) {
            TimedPeers timed = (TimedPeers) ranks;
            long windows = Math.max(1, world.windows());
            out.printf("hosts ran apart in %,d windows of %.0f ns on %d ranks x %d threads (rank 0: %.2f s in %,d "
                    + "collectives, %.1f us a window, waits for the other ranks included)%n", world.windows(),
                    world.fabric.lookahead() / 1e3,
                    ranks.size(), world.threads(), timed.nanos() / 1e9, timed.calls(), timed.nanos() / 1e3 / windows);
        }
        else if (world.isApart())
            out.printf("hosts ran apart in %,d windows of %.0f ns on %d threads%n", world.windows(),
                    world.fabric.lookahead() / 1e3, world.threads());
        out.printf("simulated %.3f us in %.2f s of wall time (slowdown %.0fx; %,d clock edges, %,d of them coasted)%n",
                simulated / 1e6, wall, wall / Math.max(1e-12, simulated / 1e12), edges, coasted);
        if (vcd != null) out.println("waveform of node 0's " + Observe.WAVE_BLOCKS + " ports: " + wave.toAbsolutePath()
                + "\n  open it with: gtkwave " + GtkwSave.beside(wave));
        if (timeline != null) {
            Observe.writeTimeline(trace, timeline);
            out.println("timeline (open it in ui.perfetto.dev): " + timeline.toAbsolutePath());
        }
        List<String> reported = new ArrayList<>();
        for (var h : world.hosts())
            if (world.isLocal(h.index))
                for (Object e : h.adapter.errors()) reported.add("adapter " + h.index + " reported: " + e);
        for (String e : ranks != null ? ranks.gather(reported) : reported) out.println(e);
        if (!r.ok()) {
            r.errors().stream().limit(20).forEach(e -> out.println("ERROR: " + e));
            out.println(name + ": FAILED (" + r.errors().size() + " problems)");
            return r;
        }
        out.println(name + ": data and completions checked: OK");
        return r;
    }

    /**
     * Prints the mean time between consecutive stages of node 0's send WQEs, from the first {@code kept} stages of a
     * timeline that did not keep {@code dropped} more; returns them in core cycles by step.
     */
    static Map<String, Double> breakdown(PrintStream out, List<Stages.Step> steps, long kept, long dropped) {
        Map<String, Double> means = new LinkedHashMap<>();
        if (steps.isEmpty()) return means;
        out.println("per-stage breakdown of node 0's send WQEs (mean):");
        for (Stages.Step s : steps) {
            means.put(s.name(), s.meanCycles());
            out.printf("  %-34s %10.3f us %12.1f core cycles  (%d WQEs)%n", s.name(), s.meanPicos() / 1e6,
                    s.meanCycles(), s.wqes());
        }
        if (dropped > 0) out.printf("  (timeline kept the first %d stages; %d more not kept)%n", kept, dropped);
        return means;
    }

    /** Most nodes whose counters get a column of their own beside the total. */
    static final int COUNTER_COLUMNS = 4;

    /** The counters that moved: their total over all nodes, and each node's when there are few. */
    static void counters(PrintStream out, World world) {
        var all = world.peers() != null ? Ranks.counters(world) : world.sim.counters();
        Map<String, Long> c = new TreeMap<>(all.snapshot());
        c.entrySet().removeIf(e -> e.getValue() == 0 || e.getKey().startsWith("host.cpu"));
        List<String> nodes = all.scopes().stream().filter(s -> !s.isEmpty()).toList();
        if (nodes.size() > COUNTER_COLUMNS) nodes = List.of();
        List<Map<String, Long>> per = nodes.stream().map(n -> all.scope(n).snapshot()).toList();
        List<String> head = new ArrayList<>(List.of("all nodes"));
        head.addAll(nodes);
        int w = Math.max("counters".length(), c.keySet().stream().mapToInt(String::length).max().orElse(10));
        int cw = Math.max(12, c.values().stream().mapToInt(v -> String.format("%,d", v).length()).max().orElse(1) + 2);
        StringBuilder h = new StringBuilder(String.format("%-" + (w + 2) + "s", "counters"));
        for (String x : head) h.append(String.format("%" + cw + "s", x));
        out.println(h);
        for (Map.Entry<String, Long> e : c.entrySet()) {
            String total = String.format("%,d", e.getValue());
            StringBuilder line = new StringBuilder(String.format("  %-" + w + "s%" + cw + "s", e.getKey(), total));
            // a counter of no node (the fabric's) has only its total
            if (per.stream().anyMatch(m -> m.containsKey(e.getKey())))
                for (Map<String, Long> m : per)
                    line.append(String.format("%" + cw + "s", String.format("%,d", m.getOrDefault(e.getKey(), 0L))));
            out.println(line);
        }
    }

    /** A progress bar on stderr for anything longer than two seconds of wall time. */
    static final class Progress implements DoubleConsumer {
        private final String name;
        private final long start = System.nanoTime();
        private final boolean interactive = System.console() != null;
        private long lastPrint;
        private boolean shown;

        Progress(String name) { this.name = name; }

        @Override public void accept(double f) {
            if (f < 0) { // the workload is about to print: clear the bar's line
                if (shown) System.err.print("\r" + " ".repeat(name.length() + 45) + "\r");
                System.err.flush();
                return;
            }
            long now = System.nanoTime();
            if (!interactive || now - start < 2_000_000_000L || now - lastPrint < 250_000_000L) return;
            lastPrint = now;
            shown = true;
            int n = (int) Math.round(Math.max(0, Math.min(1, f)) * 30);
            System.err.printf("\r%s [%s%s] %3.0f%%  %.0f s", name, "#".repeat(n), " ".repeat(30 - n), f * 100,
                    (now - start) / 1e9);
        }

        void done() { accept(-1); }
    }
}
