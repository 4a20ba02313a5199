package nicsim.cosim.sweep;

import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.math.BigDecimal;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import nicsim.adapter.StageLog;
import nicsim.cosim.HwCost;
import nicsim.cosim.Stages;
import nicsim.driver.World;
import nicsim.fabric.Faults;
import nicsim.profile.Profile;
import nicsim.profile.Profiles;
import nicsim.verbs.Mtu;
import nicsim.workloads.Options;
import nicsim.workloads.Result;
import nicsim.workloads.Workloads;

/**
 * Runs one point: the spec's profile with the point's parameters set, its workload with the
 * options, in a world of its own. Deterministic: the figures depend only on the spec and the
 * point, never on the thread, process or machine that ran it.
 */
public final class PointRun {
    private PointRun() {}

    /**
     * The figures every successful point gives, in the table's order; besides them a point gives
     * {@code cycles STAGE} (node 0's stage means), every block counter that moved ({@code Block.what})
     * and, for each block of the sweep's {@code cost}, {@link #COST_FIGURES} followed by the block.
     */
    public static final List<String> FIGURES = List.of("bytes", "iters", "bw_avg_gbps", "bw_peak_gbps", "msg_rate_mpps",
            "lat_min_us", "lat_typical_us", "lat_avg_us", "lat_p99_us", "lat_max_us", "sim_us");
    /** The hardware cost figures of a block named in {@code cost}, each written "FIGURE BLOCK" ("luts mtt"). */
    public static final List<String> COST_FIGURES =
            List.of("luts", "cells", "flip_flops", "memory_bits", "logic_depth");

    /** What one point gave: its figures (by column name), or the error that stopped it. */
    public record Outcome(Point point, String error, Map<String, Object> figures) {
        public boolean ok() { return error == null; }
    }

    public static Outcome run(SweepSpec spec, Point point) {
        try {
            return new Outcome(point, null, figures(spec, point));
        } catch (RuntimeException | StackOverflowError e) {
            String m = e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
            return new Outcome(point, m.lines().findFirst().orElse(m), Map.of());
        }
    }

    private static Map<String, Object> figures(SweepSpec spec, Point point) {
        Map<String, String> all = new LinkedHashMap<>(spec.options());
        all.putAll(point.params());
        Profile p = Profiles.load(spec.profile());
        Options o = Options.defaults();
        int nodes = 2;
        Faults faults = Faults.NONE;
        for (Map.Entry<String, String> e : all.entrySet()) {
            String k = e.getKey(), v = e.getValue();
            switch (k) {
                case "size" -> o = o.with(set -> set.size(number(k, v, 1, 8L << 20)));
                case "iters" -> o = o.with(set -> set.iters((int) number(k, v, 1, 10_000_000)));
                case "qps" -> o = o.with(set -> set.qps((int) number(k, v, 1, 10_000)));
                case "tx_depth" -> o = o.with(set -> set.txDepth((int) number(k, v, 1, 4096)));
                case "mrs" -> o = o.with(set -> set.mrs((int) number(k, v, 1, 100_000)));
                case "mtu" -> o = o.with(set -> set.mtu(mtu(v)));
                case "nodes" -> nodes = (int) number(k, v, 2, 64);
                case "faults" -> faults = Faults.parse(v);
                default -> p = p.with(k, v);
            }
        }
        World world = new World(nodes, p, point.seed(), faults);
        StageLog stages = Stages.log(world, world.sim); // the stage table's times as numbers, not a trace
        Result r = Workloads.run(spec.workload(), world, o, new PrintStream(OutputStream.nullOutputStream()));
        if (!r.ok()) throw new IllegalStateException(spec.workload() + " failed: " + r.errors().get(0));
        Map<String, Object> f = new LinkedHashMap<>();
        Result.Row row = r.rows().get(r.rows().size() - 1);
        f.put("bytes", row.bytes());
        f.put("iters", row.iters());
        f.put("bw_avg_gbps", row.bwAvgGbps());
        f.put("bw_peak_gbps", row.bwPeakGbps());
        f.put("msg_rate_mpps", row.msgRateMpps());
        f.put("lat_min_us", row.latMinUs());
        f.put("lat_typical_us", row.latTypicalUs());
        f.put("lat_avg_us", row.latAvgUs());
        f.put("lat_p99_us", row.latP99Us());
        f.put("lat_max_us", row.latMaxUs());
        f.put("sim_us", row.simPicos() / 1e6);
        for (Stages.Step s : Stages.steps(stages, p, "node0/")) f.put("cycles " + s.name(), s.meanCycles());
        for (Map.Entry<String, Long> c : world.sim.counters().snapshot().entrySet())
            if (c.getValue() != 0 && !c.getKey().startsWith("host.cpu")) f.put(c.getKey(), c.getValue());
        for (String block : spec.cost()) { // the point's RTL of the block, synthesized (cached by its Verilog)
            HwCost.Cost c;
            try {
                c = HwCost.cached(p, block);
            } catch (IOException e) {
                throw new IllegalStateException("hw cost of " + block + ": " + e.getMessage(), e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
            f.put("luts " + block, c.luts());
            f.put("cells " + block, c.cells());
            f.put("flip_flops " + block, c.flipFlops());
            f.put("memory_bits " + block, c.memoryBits());
            f.put("logic_depth " + block, c.depth());
            f.put("lut_levels " + block, c.lutLevels());
            f.put("fmax_mhz " + block, Math.round(c.fmaxMhz()));
        }
        return f;
    }

    private static long number(String key, String v, long min, long max) {
        long x;
        try {
            x = new BigDecimal(v).longValueExact();
        } catch (NumberFormatException | ArithmeticException e) {
            throw new IllegalArgumentException(key + " '" + v + "' must be a whole number " + min + ".." + max);
        }
        if (x < min || x > max) throw new IllegalArgumentException(key + " " + x + " must be " + min + ".." + max);
        return x;
    }

    private static Mtu mtu(String v) {
        return switch (v) {
            case "256" -> Mtu.MTU_256; case "512" -> Mtu.MTU_512; case "1024" -> Mtu.MTU_1024;
            case "2048" -> Mtu.MTU_2048; case "4096" -> Mtu.MTU_4096;
            default -> throw new IllegalArgumentException("mtu " + v + " must be one of 256, 512, 1024, 2048, 4096");
        };
    }
}
