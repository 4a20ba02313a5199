package nicsim.cosim.cli;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.Callable;
import nicsim.cosim.BlockPairs;
import nicsim.cosim.HwCost;
import nicsim.cosim.HwMutate;
import nicsim.cosim.RtlInLoop;
import nicsim.cosim.bench.AttachBench;
import nicsim.cosim.bench.AttachWriteBw;
import nicsim.cosim.bench.BlockSpeed;
import nicsim.cosim.bench.ConnectxCurves;
import nicsim.cosim.bench.MpiBench;
import nicsim.cosim.bench.ServeBench;
import nicsim.cosim.bench.SweepBench;
import nicsim.cosim.bench.ThreadBench;
import nicsim.cosim.bench.WorkBaseline;
import nicsim.cosim.bench.SpeedGoals;
import nicsim.cosim.bench.SpeedGoals.Sense;
import nicsim.cosim.bench.WorkPerMessage;
import nicsim.cosim.bench.WorkloadBench;
import nicsim.host.PcieEfficiency;
import nicsim.profile.Profile;
import nicsim.profile.Profiles;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

@Command(name = "bench", mixinStandardHelpOptions = true,
        description = "Measure simulation speed (Java twin vs Verilated RTL per block, JNI cost) and host-link "
                + "efficiency side by side in one run; print the tables and write bench-report/report.md "
                + "and .csv files.")
final class BenchCommand implements Callable<Integer> {
    @Option(names = "--cycles", defaultValue = "100000", description = "cycles per block (default: ${DEFAULT-VALUE})")
    long cycles;

    @Mixin
    ProfileOption profile = new ProfileOption();

    @Option(names = "--out", defaultValue = "bench-report", description = "report folder (default: ${DEFAULT-VALUE})")
    Path out;

    @Option(names = "--sections", defaultValue = "blocks,fidelity,speed,attach,sweep,serve", split = ",",
            description = "what to measure: blocks (each block, Java vs RTL), fidelity (against published figures, "
                    + "docs/sources.md), speed (whole runs, RTL in the loop), attach (a verb and a message through "
                    + "attach, either driver, against Java), sweep (a sweep's points per minute, one worker vs every "
                    + "core), serve (what serve keeps of 500 programs run one after another), mutation (each block's "
                    + "mutation score, as hw mutate: not in the default, it builds a Verilator model per mutant), "
                    + "work (events, clock edges, DMA beats and heap allocated per message in a fixed set of runs, "
                    + "checked against the committed baseline: not in the default, it fails the command when a figure "
                    + "moved), mpi (pairs_write_bw on 64 and 1,024 nodes in one process and on 2 ranks under mpirun, "
                    + "compared: not in the default), threads (speed's table of hosts apart on 1 and more threads and "
                    + "its goals alone: not in the default); default: ${DEFAULT-VALUE}")
    List<String> sections = List.of("blocks", "fidelity", "speed", "attach", "sweep", "serve");

    @Option(names = "--quick", description = "fewer iterations everywhere (a smoke run; figures are rougher)")
    boolean quick;

    @Option(names = "--update-baseline", description = "with --sections work: rewrite the baseline with this run's "
            + "figures instead of checking them")
    boolean updateBaseline;

    @Option(names = "--baseline", description = "the work-per-message baseline (default: "
            + WorkBaseline.PATH + " in this nicsim checkout)")
    Path baseline;

    @Override public Integer call() throws Exception {
        if (cycles < 1000) throw new IllegalArgumentException("--cycles " + cycles + " must be >= 1000");
        for (String sec : sections)
            if (!List.of("blocks", "fidelity", "speed", "attach", "sweep", "serve", "mutation", "work", "mpi",
                    "threads").contains(sec))
                throw new IllegalArgumentException("--sections '" + sec + "' unknown; accepted: blocks, fidelity, "
                        + "speed, attach, sweep, serve, mutation, work, mpi, threads");
        if (updateBaseline && !sections.contains("work"))
            throw new IllegalArgumentException(
                    "--update-baseline rewrites the work section's baseline: add --sections work");
        Profile p = profile.load();
        Files.createDirectories(out);
        StringBuilder md = new StringBuilder();
        md.append("# nicsim benchmark report\n\nMeasured side by side in one run on this machine. ")
                .append("Wall-clock figures are for comparing ratios, not absolutes; ")
                .append("simulated figures (fidelity) are exact and repeatable.\n\n");
        if (sections.contains("blocks")) blocks(p, md);
        if (sections.contains("fidelity")) fidelity(md);
        if (sections.contains("speed")) speed(md);
        if (sections.contains("attach")) attach(md);
        if (sections.contains("sweep")) sweep(md);
        if (sections.contains("serve")) serve(md);
        if (sections.contains("mutation")) mutation(p, md);
        if (sections.contains("mpi")) md.append(MpiBench.section(System.getenv("NICSIM_ROOT"), quick));
        if (sections.contains("threads") && !sections.contains("speed")) { // speed has the table already
            SpeedGoals goals = new SpeedGoals();
            threads(md, goals);
            md.append("\n### Goals (issue 56)\n\n").append(goals.markdown());
        }
        List<String> moved = sections.contains("work") ? work(md) : List.of();
        Files.writeString(out.resolve("report.md"), md.toString());
        System.out.print(md);
        System.out.println("\nreport: " + out.resolve("report.md").toAbsolutePath());
        for (String m : moved) System.err.println("bench: work per message: " + m);
        return moved.isEmpty() ? 0 : 1;
    }

    /**
     * The work-per-message table, each figure beside its change from the baseline; the baseline rewritten
     * instead with --update-baseline. Returns what moved beyond its tolerance (nothing after a rewrite).
     */
    private List<String> work(StringBuilder md) throws IOException {
        Path file = baseline != null ? baseline
                : Path.of(System.getenv().getOrDefault("NICSIM_ROOT", "."))
                        .resolve(WorkBaseline.PATH);
        var old = updateBaseline ? Map.<String, WorkBaseline.Row>of()
                : WorkBaseline.read(file);
        var measured = WorkPerMessage.measureAll();
        md.append("## Work per message (counted, not timed; each figure beside its change from ").append(file)
                .append(")\n\n| run | iterations | events | clock edges (through the wires) | coasted edges "
                        + "| DMA beats "
                        + "| Java heap allocated (bytes) |\n|---|---:|---:|---:|---:|---:|---:|\n");
        for (var r : WorkPerMessage.RUNS) {
            var f = measured.get(r.name());
            var was = old.get(r.name());
            md.append("| ").append(r.name()).append(" | ").append(r.iters()).append(" + ").append(2 * r.iters())
                    .append(" |");
            for (var fig : WorkPerMessage.Figure.values()) {
                double v = f.get(fig);
                md.append(String.format(" %,.2f", v));
                if (was != null && was.iters() == r.iters() && was.figures().get(fig) != 0)
                    md.append(String.format(" (%+.1f%%)", (v - was.figures().get(fig)) / was.figures().get(fig) * 100));
                md.append(" |");
            }
            md.append('\n');
        }
        md.append("\nEach figure per message: the difference of a run of 2n iterations and one of n, ")
                .append("after warm-up runs, ")
                .append("so setup drops out. Tolerance either way, percent:");
        for (var fig : WorkPerMessage.Figure.values())
            md.append(' ').append(fig.column).append(' ').append(WorkBaseline.plain(fig.tolerance));
        md.append(" (allocation varies with what the JIT's escape analysis removes; ")
                .append("docs/cli.md#work-per-message-guarded).\n\n");
        if (updateBaseline) {
            Files.createDirectories(file.toAbsolutePath().getParent());
            Files.writeString(file, WorkBaseline.format(measured));
            md.append("Baseline rewritten: ").append(file).append("\n\n");
            return List.of();
        }
        List<String> moved = WorkBaseline.compare(old, measured);
        md.append(moved.isEmpty() ? "Every figure within its tolerance of the baseline.\n\n"
                : "Moved beyond tolerance:\n\n");
        for (String m : moved) md.append("- ").append(m).append('\n');
        return moved;
    }

    /** A modern profile's whole curves beside the figures published for the adapter it models. */
    private void connectx(StringBuilder md, String profile, List<ConnectxCurves.Published> published,
                          String file) throws Exception {
        System.err.println("bench: " + profile + " curves ...");
        var cs = ConnectxCurves.run(Profiles.load(profile), published, quick);
        ConnectxCurves.plot(cs, profile, out.resolve(file + "-latency.png"),
                out.resolve(file + "-bandwidth.png"));
        md.append("\n### ").append(profile).append(": perftest's curves, each published point beside\n\n");
        if (!published.isEmpty())
            md.append("| test | bytes | nicsim | published | error | source |\n|---|---:|---:|---:|---:|---|\n");
        for (var c : cs.compared()) {
            var p = c.published();
            String unit = p.curve().latency() ? "us" : "Gb/s";
            md.append(String.format("| %s | %d | %.2f %s | %.2f %s | %+.1f%% | %s |%n", p.curve().label(), p.bytes(),
                    c.nicsim(), unit, p.value(), unit, c.errorPercent(), p.source()));
        }
        md.append("\nThe curves (latency: median one way, us; bandwidth: Gb/s). Plots: `").append(file)
                .append("-latency.png`, `").append(file).append("-bandwidth.png`.\n\n| bytes |");
        var curves = new ArrayList<>(cs.simulated().keySet());
        for (var c : curves) md.append(' ').append(c.label()).append(" |");
        md.append("\n|---:|").append("---:|".repeat(curves.size())).append('\n');
        TreeSet<Long> sizes = new TreeSet<>();
        cs.simulated().values().forEach(m -> sizes.addAll(m.keySet()));
        try (PrintWriter csv = new PrintWriter(Files.newBufferedWriter(out.resolve(file + "-curves.csv")))) {
            csv.println("bytes," + String.join(",", curves.stream().map(c -> c.label().replace(' ', '_')).toList()));
            for (long b : sizes) {
                md.append("| ").append(b).append(" |");
                StringBuilder line = new StringBuilder().append(b);
                for (var c : curves) {
                    Double v = cs.simulated().get(c).get(b);
                    md.append(v == null ? " |" : String.format(" %.2f |", v));
                    line.append(',').append(v == null ? "" : String.format("%.4f", v));
                }
                md.append('\n');
                csv.println(line);
            }
        }
    }

    private void fidelity(StringBuilder md) throws Exception {
        System.err.println("bench: fidelity ...");
        List<WorkloadBench.Point> pts = WorkloadBench.points(quick);
        md.append("## Fidelity (simulated time)\n\n| figure | nicsim | reference | error | source |\n")
                .append("|---|---:|---:|---:|---|\n");
        try (PrintWriter csv = new PrintWriter(Files.newBufferedWriter(out.resolve("fidelity.csv")))) {
            csv.println("figure,nicsim,reference,unit,error_percent,source");
            for (var q : pts) {
                md.append(String.format("| %s | %.2f %s | %.2f %s | %+.1f%% | %s |%n", q.what(), q.nicsim(), q.unit(),
                        q.reference(), q.unit(), q.errorPercent(), q.source()));
                csv.printf("\"%s\",%.4f,%.4f,%s,%.2f,\"%s\"%n", q.what(), q.nicsim(), q.reference(), q.unit(),
                        q.errorPercent(), q.source());
            }
        }
        connectx(md, "cx-gen3x16", ConnectxCurves.CONNECTX5_EDR, "connectx5");
        connectx(md, "cx6-gen4x16", List.of(), "connectx6"); // no perftest table is published for it (docs/sources.md)
        List<double[]> curve = WorkloadBench.curves(out, quick);
        md.append("\nRound trip and one-way bandwidth over message sizes (the KVIA paper's figures 3 and 4, ")
                .append("docs/sources.md#kvia-measurements: KVIA 17-30 us faster at ")
                .append("every size; its bandwidth gap grows with size). Plots: `latency.png`, `bandwidth.png`.\n\n")
                .append("| bytes | RTT lanai43 (us) | RTT lanai72 (us) | gap (us) ")
                .append("| BW lanai43 (Mb/s) | BW lanai72 (Mb/s) |\n")
                .append("|---:|---:|---:|---:|---:|---:|\n");
        try (PrintWriter csv = new PrintWriter(Files.newBufferedWriter(out.resolve("lanai-curves.csv")))) {
            csv.println("bytes,rtt_lanai43_us,rtt_lanai72_us,bw_lanai43_mbps,bw_lanai72_mbps");
            for (double[] r : curve) {
                md.append(String.format("| %.0f | %.1f | %.1f | %.1f | %.0f | %.0f |%n", r[0], r[1], r[2], r[1] - r[2],
                        r[3], r[4]));
                csv.printf("%.0f,%.3f,%.3f,%.1f,%.1f%n", r[0], r[1], r[2], r[3], r[4]);
            }
        }
        System.err.println("bench: translation ...");
        md.append("\n### Translation: bandwidth as MRs outgrow the caches (write_bw 4 KiB, cx-gen3x16, ")
                .append("every WR a different MR in turn; 512-entry MTT cache, ")
                .append("1024 mkey contexts in the MttWalker)\n\n")
                .append("| MRs per side | bandwidth (Gb/s) | translations | MTT cache misses | mkey context misses ")
                .append("| wall (s) | Java heap per MR (bytes) |\n|---:|---:|---:|---:|---:|---:|---:|\n");
        try (PrintWriter csv = new PrintWriter(Files.newBufferedWriter(out.resolve("translation.csv")))) {
            csv.println("mrs,bw_gbps,translations,mtt_misses,mkey_misses,wall_s,heap_bytes_per_mr");
            for (int m : quick ? new int[]{1, 100} : new int[]{1, 10, 100, 1000, 4000}) {
                var r = WorkloadBench.mrScale(m, quick ? 300 : 4000);
                md.append(String.format("| %d | %.1f | %,d | %,d | %,d | %.2f | %,.0f |%n", r.mrs(), r.bwGbps(),
                        r.translations(), r.mttMisses(), r.mkeyMisses(), r.wallSeconds(), r.heapBytesPerMr()));
                csv.printf("%d,%.3f,%d,%d,%d,%.3f,%.0f%n", r.mrs(), r.bwGbps(), r.translations(), r.mttMisses(),
                        r.mkeyMisses(), r.wallSeconds(), r.heapBytesPerMr());
            }
        }
        System.err.println("bench: scatter to CQE ...");
        md.append("\n### Scatter to CQE: send_lat on cx-gen3x16, small receives placed in the CQE ")
                .append("(cqe.scatter.max = 32 B) instead of the buffer\n\n")
                .append("| bytes | latency, typical (us) | with scatter to CQE (us) | node 1 PCI writes ")
                .append("| with scatter to CQE | receives scattered |\n")
                .append("|---:|---:|---:|---:|---:|---:|\n");
        try (PrintWriter csv = new PrintWriter(Files.newBufferedWriter(out.resolve("scatter-to-cqe.csv")))) {
            csv.println("bytes,lat_typical_us,lat_typical_scatter_us,pci_writes,pci_writes_scatter,scattered");
            for (var r : WorkloadBench.scatterToCqe(quick)) {
                md.append(String.format("| %d | %.3f | %.3f | %,d | %,d | %,d |%n", r.size(), r.latOffUs(), r.latOnUs(),
                        r.pciWritesOff(), r.pciWritesOn(), r.scattered()));
                csv.printf("%d,%.4f,%.4f,%d,%d,%d%n", r.size(), r.latOffUs(), r.latOnUs(), r.pciWritesOff(),
                        r.pciWritesOn(), r.scattered());
            }
        }
        System.err.println("bench: on-demand paging ...");
        md.append("\n### On-demand paging: one RDMA WRITE into a pinned MR (first, then again) and into an ")
                .append("on-demand MR (first touch, then again), cx-gen3x16: host.odp.fault.cost per page, ")
                .append("and the requester's RNR wait (min_rnr_timer 12: 0.64 ms)\n\n")
                .append("| bytes | pinned, cold (us) | pinned, warm (us) | on demand, first touch (us) ")
                .append("| on demand, warm (us) | pages faulted in | RNR NAKs |\n")
                .append("|---:|---:|---:|---:|---:|---:|---:|\n");
        try (PrintWriter csv = new PrintWriter(Files.newBufferedWriter(out.resolve("odp-touch.csv")))) {
            csv.println("bytes,pinned_cold_us,pinned_warm_us,first_touch_us,warm_us,pages_faulted,rnr_naks");
            for (var r : WorkloadBench.odpTouch(quick)) {
                String row = String.format("%d,%.2f,%.2f,%.2f,%.2f,%d,%d", r.size(), r.pinnedColdPs() / 1e6,
                        r.pinnedWarmPs() / 1e6, r.firstTouchPs() / 1e6, r.warmPs() / 1e6, r.pagesFaulted(),
                        r.rnrNaks());
                md.append("| ").append(row.replace(",", " | ")).append(" |\n");
                csv.println(row);
            }
        }
        System.err.println("bench: DCI pool ...");
        md.append("\n### DC: a pool of DCIs writing 64 B to ").append(WorkloadBench.DC_TARGETS)
                .append(" DC targets in turn, 8 writes in flight, on cx-gen3x16 ")
                .append("(least recently used DCI takes a new target)\n\n")
                .append("| DCIs | connects per write | latency avg, half handshake (us) | p99 (us) ")
                .append("| latency avg, full handshake (us) | p99 (us) |\n")
                .append("|---:|---:|---:|---:|---:|---:|\n");
        try (PrintWriter csv = new PrintWriter(Files.newBufferedWriter(out.resolve("dc-pool.csv")))) {
            csv.println("dcis,connects_per_write,lat_avg_half_us,lat_p99_half_us,lat_avg_full_us,lat_p99_full_us");
            for (var r : WorkloadBench.dcPool(quick)) {
                md.append(String.format("| %d | %.2f | %.3f | %.3f | %.3f | %.3f |%n", r.dcis(), r.connectsPerWrite(),
                        r.latHalfUs(), r.p99HalfUs(), r.latFullUs(), r.p99FullUs()));
                csv.printf("%d,%.4f,%.4f,%.4f,%.4f,%.4f%n", r.dcis(), r.connectsPerWrite(), r.latHalfUs(),
                        r.p99HalfUs(), r.latFullUs(), r.p99FullUs());
            }
        }
        System.err.println("bench: LANai gap study ...");
        List<WorkloadBench.GapRow> gap = WorkloadBench.gapStudy(quick);
        md.append("\n### Where the LANai gap comes from: lanai72 with one of lanai43's traits put back at a time\n\n")
                .append("| profile |");
        for (long s : WorkloadBench.GAP_SIZES) md.append(" RTT ").append(s).append(" B (us) |");
        md.append(" share of the 4 B gap | BW 64 KiB (Mb/s) |\n|---|");
        for (int i = 0; i <= WorkloadBench.GAP_SIZES.length + 1; i++) md.append("---:|");
        md.append("\n");
        double g43 = gap.get(0).rttUs()[0], g72 = gap.get(1).rttUs()[0];
        try (PrintWriter csv = new PrintWriter(Files.newBufferedWriter(out.resolve("lanai-gap.csv")))) {
            csv.print("profile");
            for (long s : WorkloadBench.GAP_SIZES) csv.print(",rtt_" + s + "_us");
            csv.println(",bw_64k_mbps");
            for (var g : gap) {
                md.append("| ").append(g.what()).append(" |");
                csv.print("\"" + g.what() + "\"");
                for (double r : g.rttUs()) { md.append(String.format(" %.1f |", r)); csv.printf(",%.3f", r); }
                md.append(String.format(" %+.0f%% | %.0f |%n", (g.rttUs()[0] - g72) / (g43 - g72) * 100, g.bwMbps()));
                csv.printf(",%.1f%n", g.bwMbps());
            }
        }
        md.append("\nThe LANai profiles' firmware cycles and host costs are calibrated on the 4-byte round trips ")
                .append("(see the profiles' sources); the table puts the gap on the traits ")
                .append("docs/sources.md#kvia-measurements names. At 4 B nicsim finds nearly all of it in the LANai ")
                .append("clock (fw.wqe.cycles and fw.packet.cycles take twice as long at 33 MHz), a little in the ")
                .append("polled doorbell (doorbell.poll.interval, an assumption), and none in the bus width, which ")
                .append("moves no time for 4 bytes; the paper credits the hardware doorbell and the 64-bit bus, ")
                .append("without a breakdown. With size, the local bus takes over: every payload byte crosses it ")
                .append("twice on each side (host engine into SRAM, send engine out; receive engine in, host engine ")
                .append("out), so lanai43's 32-bit bus at 33 MHz caps it near 528 Mb/s while lanai72's 64-bit bus ")
                .append("leaves the 32-bit PCI bus as the limit. That is the bandwidth gap the paper reports growing ")
                .append("with size. The send and receive engines stream into and out of the link (link.transmit and ")
                .append("link.receive cut-through), as a LANai's DMA engines feed the network directly, so a ")
                .append("one-packet message crosses the local bus at the wire's pace; the last row shows what ")
                .append("holding packets whole in SRAM would cost. The host engine likewise moves each beat between ")
                .append("PCI and SRAM as it crosses the PCI bus. The round-trip gap stays within the paper's 17-30 ")
                .append("us up to 1 KiB; at 4 KiB it is about 37 us, as lanai43's send engine feeds the link at its ")
                .append("bus's 132 MB/s, below Myrinet's 160 MB/s; once a message takes several packets it grows ")
                .append("with the bandwidth gap, where lanai43's bus is the bottleneck on both sides. The seed also ")
                .append("says KVIA's control program does not overlap its resources, which nicsim's does for both. ")
                .append("lanai72 fills translation misses by host interrupt, which costs it bandwidth (the row with ")
                .append("lanai43's DMA fill).\n\n");
    }

    /** Each block's mutation score: Yosys's single-point mutants run against the twin (hw mutate). */
    private void mutation(Profile p, StringBuilder md) throws Exception {
        int n = quick ? 3 : 10;
        md.append("## Mutation score (hw mutate: ").append(n)
                .append(" Yosys mutants per block, 20,000 lockstep cycles each)\n\n")
                .append("| block | mutants | killed | survived | score | build (s) | s a mutant | wall (s) |\n")
                .append("|---|---:|---:|---:|---:|---:|---:|---:|\n");
        for (String b : HwCost.blocks(p)) {
            System.err.println("bench: mutation, " + b + " ...");
            long t0 = System.nanoTime();
            var r = HwMutate.run(p, b, n, 1, 20_000, line -> { });
            md.append(String.format("| %s | %d | %d | %d | %.0f %% | %.0f | %.2f | %.0f |%n", b, r.mutants().size(),
                    r.killed(), r.survived(), 100 * r.score(), r.buildSeconds(), r.secondsPerMutant(),
                    (System.nanoTime() - t0) / 1e9));
        }
        md.append("\nA survivor is a gap in the block's stimulus or a mutant that changes nothing the block shows; "
                + "`./nicsim hw mutate BLOCK` lists them.\n\n");
    }

    private void sweep(StringBuilder md) throws Exception {
        System.err.println("bench: sweep throughput ...");
        var t = SweepBench.measure(quick);
        md.append("## Sweep throughput (write_bw, dma.channels x message size, as docs/examples/dma-channels.toml)\n\n")
                .append("| points | workers | wall (s) | points per minute | tables |\n|---:|---:|---:|---:|---|\n")
                .append(String.format("| %d | 1 | %.1f | %.1f | |%n", t.points(), t.oneWorkerSeconds(),
                        t.oneWorkerPerMinute()))
                .append(String.format("| %d | %d (every core) | %.1f | %.1f | %s |%n", t.points(), t.cores(),
                        t.allCoresSeconds(), t.allCoresPerMinute(), t.identical() ? "identical" : "DIFFERENT"))
                .append(String.format("%nEvery core / one worker: %.2fx points per minute.%n%n",
                        t.allCoresPerMinute() / t.oneWorkerPerMinute()));
    }

    private void serve(StringBuilder md) {
        System.err.println("bench: attach's start ...");
        md.append("## Starting a program through attach\n");
        try {
            double start = AttachBench.attachStartSeconds(quick ? 3 : 5);
            md.append(Double.isNaN(start)
                    ? "\nStarting a program through `./nicsim attach`: not measured "
                            + "(bench was not run through ./nicsim).\n"
                    : String.format("%nStarting a program through `./nicsim attach -- true`, start to exit against "
                            + "a running serve (median of %d): %.2f s (goal: under 1 s).%n", quick ? 3 : 5, start));
        } catch (Exception e) {
            throw new IllegalStateException("bench: attach start: " + e.getMessage(), e);
        }
        md.append("\n");
        System.err.println("bench: serve's memory over many programs ...");
        md.append("## What serve keeps of the programs it ran (one serve, nicsim-churn run one program after another: ")
                .append("a PD, CQ, SRQ, two connected RC QPs, a pinned and an on-demand 1 MiB MR, ")
                .append("a WRITE, a READ and an on-demand WRITE; ")
                .append("every other run exits without destroying anything)\n\n")
                .append("| programs | Java heap before (MB) | after (MB) | growth | simulated pages before | after ")
                .append("| wall (s) |\n")
                .append("|---:|---:|---:|---:|---:|---:|---:|\n");
        try {
            var c = ServeBench.churn(quick ? 50 : 500);
            md.append(String.format("| %d | %.1f | %.1f | %+.1f%% | %,d | %,d | %.1f |%n", c.programs(),
                    c.heapBefore() / 1e6, c.heapAfter() / 1e6, c.heapGrowthPercent(), c.pagesBefore(), c.pagesAfter(),
                    c.wallSeconds()));
            md.append("\n| random verbs from one program (nicsim-fuzz) | refused (errno) | Java heap before (MB) ")
                    .append("| after (MB) | growth | wall (s) |\n")
                    .append("|---:|---:|---:|---:|---:|---:|\n");
            var f = ServeBench.fuzz(quick ? 10_000 : 100_000);
            md.append(String.format("| %,d | %,d | %.1f | %.1f | %+.1f%% | %.1f |%n", f.verbs(), f.refused(),
                    f.heapBefore() / 1e6, f.heapAfter() / 1e6, f.heapGrowthPercent(), f.wallSeconds()));
        } catch (Exception e) {
            throw new IllegalStateException("bench: serve's memory: " + e.getMessage(), e);
        }
        md.append("\n");
    }

    /** What a verb and a message cost through attach, with either of the provider's drivers, against Java. */
    private void attach(StringBuilder md) {
        System.err.println("bench: verbs through attach ...");
        md.append("## Through attach\n\n### A verb (an unmodified C program's call, through nicsim's provider: "
                + "its Java driver, each verb a request on the simulator's socket, and its C driver, libnicsim's "
                + "rings in the program's memory; ns per call: the mean of a loop of calls, for the post and the "
                + "poll the median of calls timed one by one; through attach the least of " + (quick ? 1 : 3)
                + " runs, the two drivers taking turns)\n\n"
                + "| verb | calls | from Java (ns per call) | attach, Java driver (ns) "
                + "| attach / Java | attach, C driver (ns) |\n|---|---:|---:|---:|---:|---:|\n");
        try {
            for (var v : AttachBench.verbCost(quick ? 2000 : 20000, quick ? 1 : 3))
                md.append(String.format("| %s | %,d | %,.0f | %,.0f | %.1fx | %,.0f |%n", v.verb(), v.calls(),
                        v.javaNs(), v.attachNs(), v.ratio(), v.cDriverNs()));
        } catch (Exception e) {
            throw new IllegalStateException("bench: verbs through attach: " + e.getMessage(), e);
        }
        System.err.println("bench: ib_write_bw through attach ...");
        try {
            int rounds = quick ? 1 : 3;
            var f = AttachWriteBw.measure(quick ? 2000 : 20000, quick ? 10000 : 100000, rounds);
            md.append(String.format("%nDebian's `ib_write_bw -s 64` through attach against `write_bw --size 64` "
                    + "from Java, wall time per message (the difference of runs of %,d and %,d messages, so setup "
                    + "drops out; each the best of %d rounds, a round measuring the three side by side, as noise on "
                    + "this shared machine only adds time): %,.0f ns with the provider's C driver (%.1fx; "
                    + "round by round %.1f-%.1fx, median %.1fx; issue 34's goal: within 2x), %,.0f ns with its "
                    + "Java driver (%.1fx), against %,.0f ns from Java.%n", f.fewer(), f.more(), rounds, f.cDriverNs(),
                    f.cDriverRatio(), f.minRatio(), f.maxRatio(), f.medianRatio(), f.attachNs(), f.ratio(),
                    f.javaNs()));
        } catch (Exception e) {
            throw new IllegalStateException("bench: ib_write_bw through attach: " + e.getMessage(), e);
        }
    }

    private void speed(StringBuilder md) {
        SpeedGoals goals = new SpeedGoals();
        System.err.println("bench: speed of whole runs ...");
        md.append("## Speed of whole runs (wall clock)\n\n| run | simulated | wall | slowdown (wall / simulated) "
                + "| wall per message (us) | wall per payload byte (ns) | operations per wall second |\n")
                .append("|---|---:|---:|---:|---:|---:|---:|\n");
        for (var sp : WorkloadBench.speed(quick))
            md.append(String.format("| %s | %.1f us | %.2f s | %,.0fx | %,.2f | %,.3f | %,.0f |%n", sp.what(),
                    sp.simulatedUs(),
                    sp.wallSeconds(), sp.slowdown(), sp.wallUsPerOp(), sp.wallNsPerByte(), sp.opsPerSecond()));
        md.append("\nA slowdown that rose beside a wall time per message that did not is a faster simulated adapter, "
                + "not a "
                + "slower simulator: the same work covers less simulated time. `--sections work` counts that work.\n");

        System.err.println("bench: cost with message size ...");
        md.append("\n### Cost with message size (write_bw, cx-gen3x16; the DMA channels coasting, ")
                .append("then every edge through the wires with `--beat-by-beat`")
                .append(quick ? "" : "; coasting wall time the median of 3 runs, "
                        + "each compared with the beat-by-beat run")
                .append(")\n\n")
                .append("| bytes | messages | wall (s) | wall per message (us) | wall per payload byte (ns) "
                        + "| slowdown (wall / simulated) "
                        + "| beat by beat: wall (s) | beat by beat: slowdown "
                        + "| simulated figures, counters and end time |\n"
                        + "|---:|---:|---:|---:|---:|---:|---:|---:|---|\n");
        try (PrintWriter csv = new PrintWriter(Files.newBufferedWriter(out.resolve("size-cost.csv")))) {
            csv.println("bytes,messages,wall_s,wall_us_per_message,wall_ns_per_byte,slowdown,beat_by_beat_wall_s,"
                    + "beat_by_beat_slowdown,identical");
            for (long size : quick ? new long[]{64, 65536} : new long[]{64, 1024, 16384, 65536, 1 << 20}) {
                long bytes = quick ? 1L << 22 : 1L << 26; // 64 MiB a size
                int iters = (int) Math.max(quick ? 20 : 100, Math.min(quick ? 2000 : 50_000, bytes / size));
                var r = WorkloadBench.sizeCost(size, iters, quick ? 1 : 3);
                goals.slowdown("write_bw " + sizeLabel(size), size == 1024 ? 40 : 30, r.runSlowdowns());
                md.append(String.format("| %d | %,d | %.2f | %,.1f | %,.3f | %,.0fx | %.2f | %,.0fx | %s |%n",
                        r.size(), r.iters(),
                        r.wallSeconds(), r.wallUsPerMessage(), r.wallNsPerByte(), r.slowdown(),
                        r.beatByBeatWallSeconds(),
                        r.beatByBeatSlowdown(), r.identical() ? "identical" : "DIFFERENT"));
                csv.printf("%d,%d,%.3f,%.3f,%.4f,%.0f,%.3f,%.0f,%s%n", r.size(), r.iters(), r.wallSeconds(),
                        r.wallUsPerMessage(),
                        r.wallNsPerByte(), r.slowdown(), r.beatByBeatWallSeconds(), r.beatByBeatSlowdown(),
                        r.identical());
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        System.err.println("bench: scaling with QPs ...");
        md.append("\n### Scaling with QPs (write_bw 4 KiB, cx-gen3x16: the WqeFetcher holds 64 send-queue contexts, ")
                .append("the rest are loaded on demand)\n\n")
                .append("| QPs | bandwidth (Gb/s) | context misses | wall (s) | Java heap per QP (bytes) |\n")
                .append("|---:|---:|---:|---:|---:|\n");
        try (PrintWriter csv = new PrintWriter(Files.newBufferedWriter(out.resolve("qp-scaling.csv")))) {
            csv.println("qps,bw_gbps,context_misses,wall_s,heap_bytes_per_qp");
            for (int q : quick ? new int[]{1, 100} : new int[]{1, 10, 100, 1000, 10000}) {
                var r = WorkloadBench.qpScale(q, quick ? 400 : Math.max(2000, q));
                md.append(String.format("| %d | %.1f | %,d | %.2f | %,.0f |%n", r.qps(), r.bwGbps(), r.contextMisses(),
                        r.wallSeconds(), r.heapBytesPerQp()));
                csv.printf("%d,%.3f,%d,%.3f,%.0f%n", r.qps(), r.bwGbps(), r.contextMisses(), r.wallSeconds(),
                        r.heapBytesPerQp());
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        System.err.println("bench: scaling with nodes ...");
        int rounds = quick ? 1 : 3;
        md.append("\n### Scaling with nodes (pairs_write_bw: node 2k writes 64 KiB messages to node 2k+1, "
                + "every pair at once through one switch; hosts apart on one thread")
                .append(quick ? "" : "; " + rounds + " rounds, each running every count up to 64 nodes as many times "
                        + "as make 64 nodes (2 nodes: 32 runs back to back), so they are compared side by side over "
                        + "the same work as this shared machine's speed drifts; a count's wall time in a round is its "
                        + "runs' mean, and its figure the least of the rounds', as noise only adds time; 256 nodes "
                        + "once, after them").append(")\n\n")
                .append("| nodes | aggregate bandwidth (Gb/s) | wall (s) | wall per node (s) | per node / 2 nodes' "
                        + "| round by round | slowdown (wall / simulated) | Java heap per node (bytes) "
                        + "| Java allocation per message (KB, the cluster's construction included) |\n"
                        + "|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
        try (PrintWriter csv = new PrintWriter(Files.newBufferedWriter(out.resolve("node-scaling.csv")))) {
            csv.println("nodes,aggregate_gbps,wall_s,wall_s_per_node,per_node_vs_2,slowdown,heap_bytes_per_node,"
                    + "allocated_kb_per_message");
            int[] counts = quick ? new int[]{2, 4} : new int[]{2, 8, 32, 64, 256};
            var rows = WorkloadBench.nodeScaling(counts, quick ? 50 : 300, rounds, quick ? 4 : 64);
            var two = rows.get(0);
            for (var r : rows) {
                double ratio = r.perNode() / two.perNode();
                if (r.nodes() == 64 || r.nodes() == 256)
                    goals.add(r.nodes() + " nodes' wall per node / 2 nodes', one thread", Sense.AT_MOST,
                            r.nodes() == 64 ? 1.2 : 1.5, ratio, roundRatioArray(r, two), "x");
                md.append(String.format("| %d | %.1f | %.2f | %.3f | %.2fx | %s | %,.0fx | %,.0f | %,.0f |%n",
                        r.nodes(), r.aggregateGbps(), r.wallSeconds(), r.perNode(), ratio, roundRatios(r, two),
                        r.slowdown(), r.heapBytesPerNode(), r.allocatedPerMessage() / 1e3));
                csv.printf("%d,%.3f,%.3f,%.4f,%.3f,%.0f,%.0f,%.0f%n", r.nodes(), r.aggregateGbps(), r.wallSeconds(),
                        r.perNode(), ratio, r.slowdown(), r.heapBytesPerNode(), r.allocatedPerMessage() / 1e3);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        threads(md, goals);
        if (!quick) {
            System.err.println("bench: heap per 64 KiB message ...");
            double kb = WorkPerMessage.measure(WorkPerMessage.RUNS.get(1)).allocatedBytes() / 1e3;
            goals.add("Java heap per 64 KiB write_bw message", Sense.AT_MOST, 80, kb, new double[]{kb}, " KB");
        }
        md.append("\n### Goals (issue 56)\n\nEach goal beside this run's measure of it: slowdowns the median of "
                + "the size rows' runs, the rest the best of the rounds; the spread is the rounds' lowest and "
                + "highest, this machine's drift while the bench ran. The slowdown goals are set for a developer's "
                + "machine; a ratio against a reference of the same run (2 nodes, the ceiling) holds on any.\n\n")
                .append(goals.markdown());
        System.err.println("bench: RTL in the loop ...");
        var rtl = WorkloadBench.rtlInLoop(quick);
        md.append(String.format("%n### RTL in the loop%n%n%s, timed against the Java model alone on the same run:%n%n"
                        + "| | wall (s) | simulated adapter cycles per wall second "
                        + "| RTL edges per wall second (each block) |%n|---|---:|---:|---:|%n"
                        + "| Java model alone | %.2f | %,.0f | |%n| with RTL in the loop | %.2f | %,.0f | %,.0f |%n%n"
                        + "%,d adapter cycles simulated (%,d edges run and compared in each RTL block; "
                        + "the adapter's clock stops while no block has work). "
                        + "RTL in the loop costs %.0f%% over the model alone. "
                        + "Target (issue 7): >= 1,000,000 adapter cycles/s.%n%n",
                rtl.what(), rtl.modelWall(), rtl.adapterCycles() / rtl.modelWall(), rtl.rtlWall(),
                rtl.adapterCyclesPerSec(), rtl.edgesPerSec(), rtl.adapterCycles(), rtl.rtlEdges(),
                (rtl.rtlWall() / rtl.modelWall() - 1) * 100));
    }

    private static String sizeLabel(long size) {
        return size >= 1 << 20 ? (size >> 20) + " MiB" : size >= 1024 ? (size >> 10) + " KiB" : size + " B";
    }

    /** Each round's wall per node against that round's 2 nodes' (the best when run once). */
    private static double[] roundRatioArray(WorkloadBench.NodeScale r, WorkloadBench.NodeScale two) {
        double[] w = r.roundWalls(), t = two.roundWalls();
        if (w.length < 2 || w.length != t.length) return new double[]{r.perNode() / two.perNode()};
        double[] x = new double[w.length];
        for (int i = 0; i < w.length; i++) x[i] = (w[i] / r.nodes()) / (t[i] / two.nodes());
        return x;
    }

    /** Each round's wall per node against that round's 2 nodes', lowest-highest ("" when run once). */
    private static String roundRatios(WorkloadBench.NodeScale r,
            WorkloadBench.NodeScale two) {
        double[] w = r.roundWalls(), t = two.roundWalls();
        if (w.length < 2 || w.length != t.length) return "";
        double lo = Double.MAX_VALUE, hi = 0;
        for (int i = 0; i < w.length; i++) {
            double x = (w[i] / r.nodes()) / (t[i] / two.nodes());
            lo = Math.min(lo, x);
            hi = Math.max(hi, x);
        }
        return String.format("%.2f-%.2fx", lo, hi);
    }

    /**
     * Hosts apart on threads: pairs_write_bw on 1 thread and on every core, side by side, and the machine's ceiling.
     */
    private void threads(StringBuilder md, SpeedGoals goals) {
        int cores = Runtime.getRuntime().availableProcessors(), iters = quick ? 50 : 300;
        System.err.println("bench: hosts apart on threads ...");
        md.append("\n### Hosts apart on threads (pairs_write_bw, 64 KiB writes, ").append(iters)
                .append(quick ? "" : " a pair at 32 and 64 nodes, " + iters * 4 + " at 8 (a round as long as 32 "
                        + "nodes' on one thread: a fifth of a second was this machine's noise)")
                .append(quick ? " a pair" : "").append("; each host a simulator of its own, ")
                .append("run side by side in windows of one link latency; 3 rounds, each running every thread count "
                        + "once; wall time the best of the rounds')\n\n")
                .append("| nodes | threads | wall (s) | speedup over 1 thread | windows ")
                .append("| output, counters and end time |\n")
                .append("|---:|---:|---:|---:|---:|---|\n");
        int[] counts = new int[Math.max(2, cores)];
        for (int t = 0; t < counts.length; t++) counts[t] = t + 1;
        Map<Integer, ThreadBench.Rounds> byNodes = new LinkedHashMap<>();
        for (int nn : quick ? new int[]{8} : new int[]{8, 32, 64}) {
            var rounds = ThreadBench.rounds(nn, counts, !quick && nn == 8 ? iters * 4 : iters, 3);
            byNodes.put(nn, rounds);
            var one = rounds.best().get(0);
            for (var r : rounds.best())
                md.append(String.format("| %d | %d | %.2f | %.2fx | %,d | %s |%n", nn, r.threads(), r.wallSeconds(),
                        one.wallSeconds() / r.wallSeconds(), r.windows(),
                        r.fingerprint().equals(one.fingerprint()) ? "identical" : "DIFFERENT"));
        }
        int big = quick ? 8 : 32;
        double ceiling = ThreadBench.ceiling(big, iters, Math.max(2, cores));
        md.append(String.format("%nThe machine's ceiling: %d independent one-thread runs of %d nodes side by side give "
                + "%.2fx the throughput of one alone (%d cores reported); no partitioning can do better than that.%n",
                Math.max(2, cores), big, ceiling, cores));
        for (var e : byNodes.entrySet()) {
            double[] rounds = e.getValue().roundSpeedups();
            for (int i = 0; i < rounds.length; i++) rounds[i] /= ceiling;
            goals.add(counts.length + " threads over 1 at " + e.getKey() + " nodes, of the ceiling", Sense.AT_LEAST,
                    0.9, e.getValue().speedup() / ceiling, rounds, "x");
        }
    }

    private void blocks(Profile p, StringBuilder md) throws Exception {
        List<BlockSpeed.Row> rows = new ArrayList<>();
        for (String b : BlockPairs.all(p).keySet()) {
            System.err.println("bench: " + b + " ...");
            rows.add(BlockSpeed.measure(p, b, cycles, 1));
        }
        double[] jni = BlockSpeed.jniCost(p);
        double[] nat = BlockSpeed.nativeCost(p);
        md.append("## Simulated adapter cycles per second, per block\n\nProfile ").append(p.name()).append(", ")
                .append(cycles)
                .append(" cycles per block.\n\n");
        md.append("| block | Java twin (cycles/s) | Verilated RTL via SpinalSim's JNI (cycles/s) | Java / RTL ")
                .append("| RTL via nicsim's batched binding (cycles/s) | RTL ports poked / peeked per cycle |\n")
                .append("|---|---:|---:|---:|---:|---:|\n");
        try (PrintWriter csv = new PrintWriter(Files.newBufferedWriter(out.resolve("blocks.csv")))) {
            csv.println("block,cycles,java_cycles_per_s,rtl_cycles_per_s,ratio,rtl_batched_cycles_per_s,"
                    + "input_wires,output_wires");
            for (BlockSpeed.Row r : rows) {
                md.append(String.format("| %s | %,.0f | %,.0f | %.1fx | %,.0f | %d / %d |%n", r.block(),
                        r.javaCyclesPerSec(), r.rtlCyclesPerSec(), r.ratio(), r.nativeCyclesPerSec(), r.inputWires(),
                        r.outputWires()));
                csv.printf("%s,%d,%.0f,%.0f,%.2f,%.0f,%d,%d%n", r.block(), r.cycles(), r.javaCyclesPerSec(),
                        r.rtlCyclesPerSec(), r.ratio(), r.nativeCyclesPerSec(), r.inputWires(), r.outputWires());
            }
        }
        md.append(String.format("%nJNI crossing through SpinalSim: %.0f ns per poke, %.0f ns per peek of one signal. "
                + "Through nicsim's binding: %.0f ns per crossing (an empty batch), %.0f ns per DoorbellDecoder cycle "
                + "in batches of %d.%n", jni[0], jni[1], nat[0], nat[1], RtlInLoop.BATCH));
        md.append("\nTarget (issue 7): the Java model at >= 20x the cycles/s of the same block in Verilator ")
                .append("through JNI, a crossing per signal as SpinalSim does it (Java / RTL). Every column replays ")
                .append("the same recorded inputs, so none pays for the seeded stimulus. ")
                .append("nicsim's binding, which RTL in the loop uses, ")
                .append("runs a whole batch of cycles per crossing and keeps up with the Java twins; ")
                .append("that is why it was written.\n");
        md.append("\n## Host link DMA efficiency (simulated, exact)\n\n```\n");
        StringWriter sw = new StringWriter();
        PcieEfficiency.print(p, new PrintStream(new ByteArrayOutputStream()) {
            @Override public void println(String x) { sw.write(x + "\n"); }
            @Override public PrintStream printf(String f, Object... a) { sw.write(String.format(f, a)); return this; }
        });
        md.append(sw).append("```\n\n");
    }
}
