package nicsim.cosim.bench;

import com.sun.management.ThreadMXBean;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import nicsim.cosim.Cluster;
import nicsim.driver.World;
import nicsim.fabric.Faults;
import nicsim.profile.Profile;
import nicsim.profile.Profiles;
import nicsim.workloads.DcPool;
import nicsim.workloads.OdpTouch;
import nicsim.workloads.Options;
import nicsim.workloads.Result;
import nicsim.workloads.Workloads;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.style.markers.SeriesMarkers;

/**
 * Whole-workload benchmarks: fidelity (simulated figures against published ones, docs/sources.md) and
 * speed (wall clock of the simulator itself). Fidelity figures are simulated time, so they are
 * exact; speed figures are wall clock on a shared machine, so compare the ratios.
 */
public final class WorkloadBench {
    private WorkloadBench() {}

    /** One comparison: what nicsim gives, the reference figure, where it comes from. */
    public record Point(String what, double nicsim, double reference, String unit, String source) {
        public double errorPercent() { return (nicsim - reference) / reference * 100; }
    }

    private static Result.Row row(String workload, Profile profile, Options o) {
        World w = new World(2, profile, 1, Faults.NONE);
        Result r = Workloads.run(workload, w, o, new PrintStream(new ByteArrayOutputStream()));
        if (!r.ok()) throw new IllegalStateException(workload + " on " + profile.name() + " failed: " + r.errors());
        return r.rows().get(0);
    }

    private static Result.Row row(String workload, String profile, Options o) {
        return row(workload, Profiles.load(profile), o);
    }

    /** Round trip (rc_pingpong usec/iter) at {@code size} bytes. */
    public static double rttUs(String profile, long size, int iters) {
        return rttUs(Profiles.load(profile), size, iters);
    }

    public static double rttUs(Profile profile, long size, int iters) {
        Result.Row r = row("rc_pingpong", profile, Options.defaults().with(set -> set.size(size).iters(iters)));
        return r.simPicos() / 1e6 / iters;
    }

    public static double writeBwGbps(String profile, long size, int iters) {
        return writeBwGbps(Profiles.load(profile), size, iters);
    }

    public static double writeBwGbps(Profile profile, long size, int iters) {
        return row("write_bw", profile, Options.defaults().with(set -> set.size(size).iters(iters))).bwAvgGbps();
    }

    /**
     * One row of the LANai gap study: a profile, its round trips at {@link #GAP_SIZES}, its one-way bandwidth at
     * 64 KiB.
     */
    public record GapRow(String what, double[] rttUs, double bwMbps) {}

    /** Message sizes of the gap study's round trips. */
    public static final long[] GAP_SIZES = {4, 1024, 4096};

    /**
     * Where the lanai43-lanai72 gap comes from (docs/sources.md#kvia-measurements names the hardware doorbell and
     * the 64-bit local bus and DMA): lanai43, lanai72, then lanai72 with one of lanai43's traits
     * put back at a time, and lanai72 with the double-rate SRAM that docs/sources.md#myrinet-figures hints at.
     */
    public static List<GapRow> gapStudy(boolean quick) {
        Profile l43 = Profiles.load("lanai43"), l72 = Profiles.load("lanai72");
        record Variant(String what, Profile profile) {}
        List<Variant> variants = List.of(
                new Variant("lanai43 (Berkeley VIA)", l43),
                new Variant("lanai72 (KVIA)", l72),
                new Variant("lanai72, doorbells polled in SRAM (doorbell.poll.interval "
                        + l43.param("doorbell.poll.interval").written() + ")",
                        withValuesOf(l72, l43, "doorbell.poll.interval")),
                new Variant("lanai72, 32-bit local bus and DMA (core.datapath.width 32 bit)",
                        withValuesOf(l72, l43, "core.datapath.width")),
                new Variant("lanai72, LANai 4.3's clock (core.clock, dma.clock 33 MHz)",
                        withValuesOf(l72, l43, "core.clock", "dma.clock")),
                new Variant("lanai72, translations fetched by DMA into 2 entries (mtt.fill, mtt.cache.entries)",
                        withValuesOf(l72, l43, "mtt.fill", "mtt.cache.entries")),
                new Variant("lanai72, SRAM at twice the clock (dma.clock 132 MHz)", l72.with("dma.clock", "132 MHz")),
                new Variant("lanai72, packets held whole in SRAM before and after the link (link.transmit, "
                        + "link.receive store-and-forward)",
                        l72.with("link.transmit", "\"store-and-forward\"")
                                .with("link.receive", "\"store-and-forward\"")));
        List<GapRow> rows = new ArrayList<>();
        for (Variant v : variants) {
            double[] rtt = new double[GAP_SIZES.length];
            for (int i = 0; i < GAP_SIZES.length; i++) rtt[i] = rttUs(v.profile(), GAP_SIZES[i], quick ? 10 : 50);
            rows.add(new GapRow(v.what(), rtt, writeBwGbps(v.profile(), 65536, quick ? 20 : 100) * 1000));
        }
        return rows;
    }

    /** {@code base} with {@code from}'s values of {@code keys}. */
    private static Profile withValuesOf(Profile base, Profile from, String... keys) {
        Profile p = base;
        for (String k : keys) p = p.with(k, from.param(k).written());
        return p;
    }

    /** The fixed comparison points. */
    public static List<Point> points(boolean quick) {
        int it = quick ? 30 : 200;
        List<Point> p = new ArrayList<>();
        String kvia = "docs/sources.md#kvia-measurements";
        p.add(new Point("4 B round trip, lanai43 (Berkeley VIA)", rttUs("lanai43", 4, it), 77, "us", kvia));
        p.add(new Point("4 B round trip, lanai72 (KVIA)", rttUs("lanai72", 4, it), 59, "us", kvia));
        double peak = writeBwGbps("lanai72", 65536, quick ? 20 : 200) * 1000;
        p.add(new Point("peak one-way bandwidth, lanai72 (KVIA), 64 KiB", peak, 950, "Mb/s",
                "docs/sources.md#myrinet-figures (KVIA 950 Mbit/s)"));
        return p; // the ConnectX points are in their curves' section (ConnectxCurves)
    }

    /** Round trip and bandwidth against message size on the two LANai profiles; writes two PNG plots. */
    public static List<double[]> curves(Path dir, boolean quick) throws IOException {
        long[] sizes = quick ? new long[]{4, 1024, 16384} : new long[]{4, 64, 256, 1024, 4096, 16384, 65536};
        List<double[]> rows = new ArrayList<>(); // size, rtt43, rtt72, bw43, bw72 (Mb/s)
        for (long s : sizes) {
            int it = quick ? 10 : (s >= 16384 ? 50 : 100);
            rows.add(new double[]{s, rttUs("lanai43", s, it), rttUs("lanai72", s, it),
                    writeBwGbps("lanai43", s, it * 2) * 1000, writeBwGbps("lanai72", s, it * 2) * 1000});
        }
        double[] x = rows.stream().mapToDouble(r -> r[0]).toArray();
        XYChart lat = new XYChartBuilder().width(800).height(500).title("Round trip vs message size (rc_pingpong)")
                .xAxisTitle("message size (bytes)").yAxisTitle("round trip (us)").build();
        lat.getStyler().setXAxisLogarithmic(true);
        lat.addSeries("nicsim lanai43 (Berkeley VIA)", x, rows.stream().mapToDouble(r -> r[1]).toArray());
        lat.addSeries("nicsim lanai72 (KVIA)", x, rows.stream().mapToDouble(r -> r[2]).toArray());
        lat.addSeries("paper: Berkeley VIA 4 B", new double[]{4}, new double[]{77}).setMarker(SeriesMarkers.DIAMOND);
        lat.addSeries("paper: KVIA 4 B", new double[]{4}, new double[]{59}).setMarker(SeriesMarkers.DIAMOND);
        BitmapEncoder.saveBitmap(lat, dir.resolve("latency.png").toString(), BitmapEncoder.BitmapFormat.PNG);
        XYChart bw = new XYChartBuilder().width(800).height(500).title("One-way bandwidth vs message size (write_bw)")
                .xAxisTitle("message size (bytes)").yAxisTitle("bandwidth (Mb/s)").build();
        bw.getStyler().setXAxisLogarithmic(true);
        bw.addSeries("nicsim lanai43 (Berkeley VIA)", x, rows.stream().mapToDouble(r -> r[3]).toArray());
        bw.addSeries("nicsim lanai72 (KVIA)", x, rows.stream().mapToDouble(r -> r[4]).toArray());
        bw.addSeries("paper: KVIA peak 950 Mb/s", new double[]{x[0], x[x.length - 1]}, new double[]{950, 950})
                .setMarker(SeriesMarkers.NONE);
        BitmapEncoder.saveBitmap(bw, dir.resolve("bandwidth.png").toString(), BitmapEncoder.BitmapFormat.PNG);
        return rows;
    }

    /**
     * Wall-clock speed of whole runs, with what each message costs: a faster simulated adapter packs the
     * same wall time into less simulated time, so the slowdown alone can rise while the simulator is no slower.
     */
    public record Speed(String what, double simulatedUs, double wallSeconds, double opsPerSecond, long bytesPerOp) {
        public double slowdown() { return wallSeconds / (simulatedUs / 1e6); }
        /** Wall time per operation (a message), in microseconds. */
        public double wallUsPerOp() { return 1e6 / opsPerSecond; }
        /** Wall time per payload byte, in nanoseconds. */
        public double wallNsPerByte() { return 1e9 / (opsPerSecond * bytesPerOp); }
    }

    public static List<Speed> speed(boolean quick) {
        int bwIters = quick ? 2000 : 1_000_000; // issue 7: a 2-node write_bw of 1,000,000 messages in under a minute
        int bigIters = quick ? 200 : 5000, ppIters = quick ? 200 : 5000;
        return List.of(
                speed("write_bw 64 B x " + bwIters, "write_bw",
                        Options.defaults().with(set -> set.size(64).iters(bwIters)), 1, 64),
                speed("write_bw 64 KiB x " + bigIters, "write_bw",
                        Options.defaults().with(set -> set.size(65536).iters(bigIters)), 1, 65536),
                speed("rc_pingpong 4096 B x " + ppIters, "rc_pingpong",
                        Options.defaults().with(set -> set.iters(ppIters)), 2, 4096)); // a ping and a pong each
    }

    /**
     * One timed 2-node run on cx-gen3x16; {@code opsPerIter} operations per iteration, of {@code bytesPerOp}
     * payload bytes each.
     */
    private static Speed speed(String what, String workload, Options o, int opsPerIter, long bytesPerOp) {
        Measured m = measure(2, workload, o, what);
        return new Speed(what + " (cx-gen3x16)", m.result().rows().get(0).simPicos() / 1e6, m.wallSeconds(),
                (double) opsPerIter * m.result().rows().get(0).iters() / m.wallSeconds(), bytesPerOp);
    }

    /**
     * A workload run on a fresh cluster: its result, the cluster (still reachable), wall time, heap the cluster
     * holds.
     */
    private record Measured(World world, Result result, double wallSeconds, long heapBytes, long allocatedBytes) {}

    private static Measured measure(int nodes, String workload, Options o, String what) {
        return measure(nodes, workload, o, what, true);
    }

    private static Measured measure(int nodes, String workload, Options o, String what, boolean coasting) {
        return measure(nodes, workload, o, what, coasting, 0);
    }

    /** As above; {@code threads} > 0 runs the hosts apart on that many threads (World.apart). */
    private static Measured measure(int nodes, String workload, Options o, String what, boolean coasting, int threads) {
        Runtime rt = Runtime.getRuntime();
        System.gc();
        long used0 = rt.totalMemory() - rt.freeMemory();
        long a0 = allocated(), t0 = System.nanoTime();
        var p = Profiles.load("cx-gen3x16");
        World w = threads > 0 ? World.apart(nodes, p, 1, Faults.NONE, threads) : new World(nodes, p, 1, Faults.NONE);
        for (var s : w.partitions()) s.coasting(coasting);
        Result r = Workloads.run(workload, w, o, new PrintStream(new ByteArrayOutputStream()));
        double wall = (System.nanoTime() - t0) / 1e9;
        long allocated = allocated() - a0;
        if (!r.ok()) throw new IllegalStateException(workload + " over " + what + " failed: " + r.errors());
        System.gc();
        long used1 = rt.totalMemory() - rt.freeMemory();
        return new Measured(w, r, wall, Math.max(0, used1 - used0), allocated);
    }

    /** Bytes every thread of this JVM has allocated on the heap so far (the threads ended included). */
    private static long allocated() {
        var mx = (ThreadMXBean) ManagementFactory.getThreadMXBean();
        return mx.getTotalThreadAllocatedBytes();
    }

    /** One point of the QP-scaling study. */
    public record QpScale(int qps, double bwGbps, long contextMisses, double wallSeconds, double heapBytesPerQp) {}

    /**
     * write_bw 4 KiB over {@code qps} QPs: bandwidth, send-queue context misses (the fetcher holds
     * wqe.sq.entries contexts), wall time, and the Java heap the cluster holds per QP.
     */
    public static QpScale qpScale(int qps, int iters) {
        Options o = Options.defaults().with(set -> set.size(4096).iters(iters).qps(qps));
        Measured m = measure(2, "write_bw", o, qps + " QPs");
        long misses = m.world().sim.counters().get("Firmware.sq_context_misses");
        return new QpScale(qps, m.result().rows().get(0).bwAvgGbps(), misses, m.wallSeconds(),
                m.heapBytes() / (2.0 * qps)); // QPs on both nodes
    }

    /** One point of the translation study: bandwidth as MRs outgrow the translation and mkey caches. */
    public record MrScale(int mrs, double bwGbps, long mttMisses, long mkeyMisses, long translations,
                          double wallSeconds, double heapBytesPerMr) {}

    public static MrScale mrScale(int mrs, int iters) {
        Options o = Options.defaults().with(set -> set.size(4096).iters(iters).mrs(mrs));
        Measured m = measure(2, "write_bw", o, mrs + " MRs");
        var c = m.world().sim.counters();
        return new MrScale(mrs, m.result().rows().get(0).bwAvgGbps(), c.get("MttWalker.cache_misses"),
                c.get("Firmware.mkey_context_misses"), c.get("MttWalker.requests"), m.wallSeconds(),
                m.heapBytes() / (2.0 * mrs));
    }

    /**
     * One row of the scatter-to-CQE study: send_lat's typical latency, and node 1's PCI writes, without and with
     * it.
     */
    public record ScatterRow(long size, double latOffUs, double latOnUs, long pciWritesOff, long pciWritesOn,
                             long scattered) {}

    /** send_lat on cx-gen3x16 at small sizes, its QPs without and with scatter to CQE (seed: inline receive). */
    public static List<ScatterRow> scatterToCqe(boolean quick) {
        List<ScatterRow> rows = new ArrayList<>();
        for (long size : new long[]{8, 32, 64}) {
            Options o = Options.defaults().with(set -> set.size(size).iters(quick ? 100 : 1000));
            Measured off = measure(2, "send_lat", o, size + " B");
            Measured on = measure(2, "send_lat", o.with(set -> set.scatterToCqe(true)), size + " B, scatter to CQE");
            var c0 = off.world().sim.counters().scope("node1");
            var c1 = on.world().sim.counters().scope("node1");
            rows.add(new ScatterRow(size, off.result().rows().get(0).latTypicalUs(),
                    on.result().rows().get(0).latTypicalUs(), c0.get("pci.dma_writes"), c1.get("pci.dma_writes"),
                    c1.get("Firmware.cqe_scatters")));
        }
        return rows;
    }

    /** The on-demand paging study's sizes: a page, perftest's default message, and a megabyte. */
    public static List<OdpTouch.Outcome> odpTouch(boolean quick) {
        List<OdpTouch.Outcome> rows = new ArrayList<>();
        for (int size : quick ? new int[]{4096, 65536} : new int[]{4096, 65536, 1 << 20})
            rows.add(OdpTouch.run(new World(2, Profiles.load("cx-gen3x16"), 1, Faults.NONE), size));
        return rows;
    }

    /** One row of the DCI-pool study: connect packets per write and write latency, half and full handshake. */
    public record DcRow(int dcis, double connectsPerWrite, double latHalfUs, double p99HalfUs, double latFullUs,
                        double p99FullUs) {}

    /** Targets of the DCI-pool study. */
    public static final int DC_TARGETS = 8;

    /**
     * A pool of 1 to 8 DCIs on node 0 writing 64 B to the DC targets of 8 other nodes in turn, 8
     * writes in flight, each on the DCI connected to its target or else the least recently used one
     * (nicsim.workloads.DcPool), with half and with full handshakes.
     */
    public static List<DcRow> dcPool(boolean quick) {
        int messages = quick ? 80 : 800;
        Profile half = Profiles.load("cx-gen3x16"), full = half.with("dc.handshake", "\"full\"");
        List<DcRow> rows = new ArrayList<>();
        for (int dcis : new int[]{1, 2, 4, 8}) {
            var h = DcPool.run(new World(1 + DC_TARGETS, half, 1, Faults.NONE), dcis, 8, messages, 64);
            var f = DcPool.run(new World(1 + DC_TARGETS, full, 1, Faults.NONE), dcis, 8, messages, 64);
            if (!h.errors().isEmpty() || !f.errors().isEmpty())
                throw new IllegalStateException("DC pool study: " + h.errors() + f.errors());
            rows.add(new DcRow(dcis, h.connectsPerWrite(), h.latAvgUs(), h.latP99Us(), f.latAvgUs(), f.latP99Us()));
        }
        return rows;
    }

    /**
     * One row of the cost-with-size study: wall time with the DMA channels coasting and with every
     * edge run through the wires, and whether the two runs' simulated figures were identical.
     */
    public record SizeCost(long size, int iters, double wallSeconds, double simulatedUs, double beatByBeatWallSeconds,
                           boolean identical, double[] runWalls) {
        public double wallUsPerMessage() { return wallSeconds * 1e6 / iters; }
        /** Wall time per payload byte, in nanoseconds: a copy's cost is a fraction of one. */
        public double wallNsPerByte() { return wallSeconds * 1e9 / ((double) iters * size); }
        public double slowdown() { return wallSeconds / (simulatedUs / 1e6); }
        public double beatByBeatSlowdown() { return beatByBeatWallSeconds / (simulatedUs / 1e6); }
        /** Each coasting run's slowdown, the machine's drift across them. */
        public double[] runSlowdowns() {
            double[] s = runWalls.clone();
            for (int i = 0; i < s.length; i++) s[i] /= simulatedUs / 1e6;
            return s;
        }
    }

    /**
     * write_bw on cx-gen3x16 at {@code size}: what one message costs in wall time, coasting, then
     * beat by beat through the DmaEngines' wires; their figures, counters and end times are compared.
     */
    public static SizeCost sizeCost(long size, int iters) { return sizeCost(size, iters, 1); }

    /**
     * As {@link #sizeCost(long, int)}, with the coasting run made {@code runs} times: its wall time is
     * their median (a shared machine's noise moves one run by a tenth), and every run must give the
     * same figures, counters and end time as the beat-by-beat one.
     */
    public static SizeCost sizeCost(long size, int iters, int runs) {
        Options o = Options.defaults().with(set -> set.size(size).iters(iters));
        List<Measured> coasting = new ArrayList<>();
        coasting.add(measure(2, "write_bw", o, size + " B", true));
        Measured b = measure(2, "write_bw", o, size + " B", false);
        while (coasting.size() < runs) coasting.add(measure(2, "write_bw", o, size + " B", true));
        boolean same = true;
        for (Measured m : coasting)
            same &= m.result().rows().equals(b.result().rows()) && m.world().now() == b.world().now()
                    && m.world().sim.counters().snapshot().equals(b.world().sim.counters().snapshot());
        double[] walls = coasting.stream().mapToDouble(Measured::wallSeconds).toArray();
        return new SizeCost(size, iters, median(walls), b.world().now() / 1e6, b.wallSeconds(), same, walls);
    }

    /** The median of {@code xs} (the mean of the middle two when there is an even number). */
    static double median(double[] xs) {
        double[] s = xs.clone();
        Arrays.sort(s);
        int n = s.length;
        return n % 2 == 1 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
    }

    /**
     * One point of the node-scaling study: its wall time the least of its rounds' ({@code roundWalls}), and
     * the Java heap allocated for each message a pair writes.
     */
    public record NodeScale(int nodes, double aggregateGbps, double wallSeconds, double slowdown,
            double heapBytesPerNode, double[] roundWalls, double allocatedPerMessage) {
        /** Wall time per node. */
        public double perNode() { return wallSeconds / nodes; }
    }

    /** pairs_write_bw over {@code nodes} nodes (every pair at once through one switch), once. */
    public static NodeScale nodeScale(int nodes, int iters) {
        return nodeScaling(new int[]{nodes}, iters, 1, nodes).get(0);
    }

    /**
     * pairs_write_bw over each count of {@code nodes} (every pair at once through one switch; hosts apart on
     * one thread), in {@code rounds} rounds that each run every count up to {@code roundsUpTo} nodes: the counts
     * are compared side by side while this shared machine's speed drifts. In a round a count runs as many times
     * as make {@code roundsUpTo} nodes, back to back, and its wall time there is their mean: every count's figure
     * covers the same work and as long a stretch of the machine's time (the best of 32 short runs of 2 nodes
     * would catch a fast moment that one long run of 64 cannot). Each count's wall time is the least of its
     * rounds' (noise only adds time). Larger counts run once in each of the last two rounds (the first run of the
     * largest grows the JVM's heap, page by page, which a longer run would not pay again), their least kept too.
     */
    public static List<NodeScale> nodeScaling(int[] nodes, int iters, int rounds, int roundsUpTo) {
        double[][] walls = new double[nodes.length][];
        Figures[] figures = new Figures[nodes.length]; // of each count's last run
        int lastRuns = Math.min(2, rounds); // rounds in which the larger counts run
        for (int r = 0; r < rounds; r++)
            for (int i = 0; i < nodes.length; i++) {
                boolean inRounds = nodes[i] <= roundsUpTo;
                if (!inRounds && r < rounds - lastRuns) continue;
                Options o = Options.defaults().with(set -> set.iters(iters));
                int runs = inRounds ? Math.max(1, roundsUpTo / nodes[i]) : 1;
                double sum = 0;
                for (int k = 0; k < runs; k++) {
                    Measured m = measure(nodes[i], "pairs_write_bw", o, nodes[i] + " nodes", true, 1);
                    sum += m.wallSeconds();
                    figures[i] = new Figures(m.result().rows().get(0).bwAvgGbps(), m.world().now() / 1e12,
                            m.heapBytes() / (double) nodes[i], m.allocatedBytes() / (nodes[i] / 2.0 * iters));
                    m.world().close();
                }
                if (walls[i] == null) walls[i] = new double[inRounds ? rounds : lastRuns];
                walls[i][inRounds ? r : r - (rounds - lastRuns)] = sum / runs;
            }
        List<NodeScale> out = new ArrayList<>();
        for (int i = 0; i < nodes.length; i++) {
            Figures f = figures[i];
            double wall = Arrays.stream(walls[i]).min().orElseThrow();
            out.add(new NodeScale(nodes[i], f.gbps(), wall, wall / f.simulatedSeconds(), f.heapPerNode(), walls[i],
                    f.allocatedPerMessage()));
        }
        return out;
    }

    /** What a node-scaling run gives besides its wall time: the same on every run of a count. */
    private record Figures(double gbps, double simulatedSeconds, double heapPerNode, double allocatedPerMessage) {}

    /** RTL in the loop against the model alone, on the same run. */
    public record RtlSpeed(String what, long adapterCycles, long rtlEdges, double modelWall, double rtlWall) {
        /** Simulated adapter cycles (simulated time x core clock) per wall second with the RTL in the loop. */
        public double adapterCyclesPerSec() { return adapterCycles / rtlWall; }

        /**
         * Edges each RTL block actually ran (the adapter's clock is stopped while no block has work) per wall
         * second.
         */
        public double edgesPerSec() { return rtlEdges / rtlWall; }
    }

    /**
     * The doorbell + WQE fetch path from Verilated RTL in a doorbell-heavy run (write_bw, 64-byte
     * messages, 128 outstanding), timed side by side with the Java model alone on the same run.
     */
    public static RtlSpeed rtlInLoop(boolean quick) {
        int iters = quick ? 5_000 : 200_000;
        Options o = Options.defaults().with(set -> set.size(64).iters(iters));
        double[] wall = new double[2]; // model alone, with RTL
        long edges = 0, cycles = 0;
        for (int warm = 0; warm < 2; warm++)
            for (int withRtl = 0; withRtl < 2; withRtl++) {
                Set<String> rtl = withRtl == 1 ? Set.of("doorbell", "wqe") : Set.of();
                try (Cluster c = Cluster.builder().nodes(2).profile("cx-gen3x16").rtl(rtl).build()) {
                    // the first round warms the JIT and loads the RTL
                    Options run = warm == 0 ? o.with(set -> set.iters(Math.min(iters, 2000))) : o;
                    long t0 = System.nanoTime();
                    Result r = Workloads.run("write_bw", c.world(), run, new PrintStream(new ByteArrayOutputStream()));
                    // runs the last batch too
                    long e = c.rtlEdges().values().stream().mapToLong(Long::longValue).max().orElse(0);
                    wall[withRtl] = (System.nanoTime() - t0) / 1e9;
                    if (!r.ok()) throw new IllegalStateException("write_bw with RTL " + rtl + " failed: " + r.errors());
                    if (withRtl == 1) edges = e;
                    cycles = c.world().now() / c.world().host(0).adapter.core().periodPicos();
                }
            }
        return new RtlSpeed("write_bw 64 B x " + iters + " (cx-gen3x16), DoorbellDecoder and WqeFetcher from RTL",
                cycles, edges, wall[0], wall[1]);
    }
}
