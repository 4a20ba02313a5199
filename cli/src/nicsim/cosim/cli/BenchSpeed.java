package nicsim.cosim.cli;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import nicsim.cosim.bench.SpeedGoals;
import nicsim.cosim.bench.SpeedGoals.Sense;
import nicsim.cosim.bench.ThreadBench;
import nicsim.cosim.bench.WorkPerMessage;
import nicsim.cosim.bench.WorkloadBench;

/**
 * bench's speed section (wall clock): whole runs, the cost with message size (coasting against beat by beat),
 * scaling with QPs and with nodes, hosts apart on threads (also the threads section alone), each against the goals
 * of issue 56, and RTL in the loop against the Java model alone; each table also as a CSV file in the report folder.
 */
final class BenchSpeed {
    private final Path out;
    private final boolean quick;

    BenchSpeed(Path out, boolean quick) {
        this.out = out;
        this.quick = quick;
    }

    /** The speed section: whole runs, cost with size, scaling with QPs and nodes, threads, goals, RTL in the loop. */
    void write(StringBuilder md) {
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
                        + "once in each of the last two rounds, after the others, the least of the two kept (the "
                        + "first run of 256 grows the JVM's heap)").append(")\n\n")
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

    /**
     * Each round's wall per node against that round's 2 nodes'; for a count run only in the last rounds, each of its
     * runs against 2 nodes' best.
     */
    private static double[] roundRatioArray(WorkloadBench.NodeScale r, WorkloadBench.NodeScale two) {
        double[] w = r.roundWalls(), t = two.roundWalls();
        double[] x = new double[w.length];
        // a count run in every round against that round's 2 nodes; one run only in the last rounds against 2 nodes'
        // best, as its own figure is
        for (int i = 0; i < w.length; i++)
            x[i] = (w[i] / r.nodes()) / (w.length == t.length ? t[i] / two.nodes() : two.perNode());
        return x;
    }

    /** Each run's ratio of {@link #roundRatioArray}, lowest-highest ("" when run once). */
    private static String roundRatios(WorkloadBench.NodeScale r,
            WorkloadBench.NodeScale two) {
        double[] x = roundRatioArray(r, two);
        if (x.length < 2) return "";
        return String.format("%.2f-%.2fx", Arrays.stream(x).min().orElseThrow(), Arrays.stream(x).max().orElseThrow());
    }

    /**
     * Hosts apart on threads: pairs_write_bw on 1 thread and on every core, side by side, and the machine's ceiling.
     */
    void threads(StringBuilder md, SpeedGoals goals) {
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
}
