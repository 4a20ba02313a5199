package nicsim.cosim.sweep;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.dataformat.toml.TomlMapper;
import java.io.IOException;
import java.io.Serializable;
import java.math.BigDecimal;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import nicsim.cosim.HwCost;
import nicsim.profile.Profile;
import nicsim.profile.Profiles;
import nicsim.workloads.Workloads;

/**
 * A sweep file: a base profile, a workload and its options, the parameters to vary (every
 * combination is a point), the seeds, and the figures to plot.
 *
 * <pre>
 * profile  = "cx-gen3x16"
 * workload = "write_bw"
 * seeds    = [1]
 * plot     = ["bw_avg_gbps"]
 * [options]                      # the same for every point
 * iters = 200
 * [vary]                         # a profile parameter or a workload option; a list or a range
 * "dma.channels" = [1, 2, 4, 8, 16]
 * size = { from = 4096, to = 65536, times = 4 }
 * </pre>
 */
public record SweepSpec(String profile, String workload, List<Long> seeds, Map<String, String> options,
                        Map<String, List<String>> vary, List<String> plot, List<String> cost, List<String> pareto)
        implements Serializable {

    /** A sweep without hardware cost columns. */
    public SweepSpec(String profile, String workload, List<Long> seeds, Map<String, String> options,
                     Map<String, List<String>> vary, List<String> plot) {
        this(profile, workload, seeds, options, vary, plot, List.of(), List.of());
    }

    /** Workload options a sweep may set or vary (beside any profile parameter). */
    public static final Set<String> OPTIONS =
            Set.of("size", "iters", "qps", "mtu", "tx_depth", "mrs", "nodes", "faults");
    private static final Set<String> TOP = Set.of("profile", "workload", "seeds", "plot", "options", "vary", "cost",
            "pareto");
    private static final int MAX_POINTS = 1_000_000;

    /** A bad sweep file: the message names the key and what it accepts. */
    public static final class BadSweep extends IllegalArgumentException {
        public BadSweep(String m) { super(m); }
    }

    public static SweepSpec read(Path file) throws IOException {
        String text;
        try {
            text = Files.readString(file);
        } catch (NoSuchFileException e) {
            throw new BadSweep(file + ": no such sweep file");
        }
        return parse(text, file.toString());
    }

    public static SweepSpec parse(String toml, String where) {
        JsonNode root;
        try {
            root = new TomlMapper().readTree(toml);
        } catch (IOException e) {
            throw new BadSweep(where + ": not TOML: " + e.getMessage().lines().findFirst().orElse(""));
        }
        for (Iterator<String> it = root.fieldNames(); it.hasNext(); ) {
            String k = it.next();
            if (!TOP.contains(k))
                throw new BadSweep(where + ": key '" + k + "' unknown; accepted: " + String.join(", ", sorted(TOP)));
        }
        String profile = text(root, "profile", Profiles.DEFAULT, where);
        Profile base;
        try {
            base = Profiles.load(profile);
        } catch (IllegalArgumentException e) {
            throw new BadSweep(where + ": profile '" + profile + "': " + e.getMessage());
        }
        String workload = text(root, "workload", null, where);
        String accepted = "; accepted: " + String.join(", ", Workloads.NAMES);
        if (workload == null) throw new BadSweep(where + ": key 'workload' missing" + accepted);
        if (!Workloads.NAMES.contains(workload))
            throw new BadSweep(where + ": workload '" + workload + "' unknown" + accepted);
        List<Long> seeds = new ArrayList<>();
        JsonNode s = root.get("seeds");
        if (s == null) seeds.add(1L);
        else for (JsonNode n : s.isArray() ? s : List.of(s)) {
            if (!n.isIntegralNumber())
                throw new BadSweep(where + ": seeds: '" + n + "' is not an integer; accepted: a list of integers");
            seeds.add(n.asLong());
        }
        Map<String, String> options = new LinkedHashMap<>();
        JsonNode o = root.get("options");
        if (o != null) {
            if (!o.isObject())
                throw new BadSweep(where + ": options must be a table of workload options ("
                        + String.join(", ", sorted(OPTIONS)) + ")");
            for (Iterator<Map.Entry<String, JsonNode>> it = o.fields(); it.hasNext(); ) {
                var e = it.next();
                checkName(e.getKey(), base, where + ": options");
                options.put(e.getKey(), scalar(e.getValue(), "options." + e.getKey(), where));
            }
        }
        Map<String, List<String>> vary = new LinkedHashMap<>();
        JsonNode v = root.get("vary");
        if (v == null || !v.isObject() || v.size() == 0)
            throw new BadSweep(where + ": key 'vary' missing or empty; accepted: a table of parameters, "
                    + "each a list or a range {from, to, step|times}");
        long points = seeds.size();
        for (Iterator<Map.Entry<String, JsonNode>> it = v.fields(); it.hasNext(); ) {
            var e = it.next();
            checkName(e.getKey(), base, where + ": vary");
            List<String> values = values(e.getValue(), "vary." + e.getKey(), where);
            if (values.isEmpty()) throw new BadSweep(where + ": vary." + e.getKey() + " has no values");
            vary.put(e.getKey(), values);
            points *= values.size();
            if (points > MAX_POINTS) throw new BadSweep(where + ": more than " + MAX_POINTS + " points");
        }
        List<String> cost = new ArrayList<>();
        JsonNode c = root.get("cost");
        if (c != null) for (JsonNode n : c.isArray() ? c : List.of(c)) {
            List<String> blocks = HwCost.blocks(base);
            if (!blocks.contains(n.asText()))
                throw new BadSweep(where + ": cost: block '" + n.asText() + "' unknown; accepted: "
                        + String.join(", ", blocks));
            cost.add(n.asText());
        }
        List<String> plot = new ArrayList<>();
        JsonNode p = root.get("plot");
        if (p != null)
            for (JsonNode n : p.isArray() ? p : List.of(p)) plot.add(checkFigure(n.asText(), cost, where + ": plot"));
        else plot.add("bw_avg_gbps");
        List<String> pareto = new ArrayList<>();
        JsonNode pa = root.get("pareto");
        if (pa != null) {
            for (JsonNode n : pa.isArray() ? pa : List.of(pa)) pareto.add(n.asText());
            if (pareto.size() != 2)
                throw new BadSweep(where + ": pareto must name two figures: a cost to keep low, then a figure "
                        + "to keep high "
                        + "(e.g. [\"luts dma\", \"bw_avg_gbps\"])");
            for (String f : pareto) checkFigure(f, cost, where + ": pareto");
        }
        return new SweepSpec(profile, workload, List.copyOf(seeds), options, vary, List.copyOf(plot), List.copyOf(cost),
                List.copyOf(pareto));
    }

    /** Every point, in a fixed order: the first varied parameter changes slowest, seeds fastest. */
    public List<Point> points() {
        List<Map<String, String>> combos = new ArrayList<>();
        combos.add(new LinkedHashMap<>());
        for (Map.Entry<String, List<String>> e : vary.entrySet()) {
            List<Map<String, String>> next = new ArrayList<>();
            for (Map<String, String> c : combos)
                for (String value : e.getValue()) {
                    Map<String, String> m = new LinkedHashMap<>(c);
                    m.put(e.getKey(), value);
                    next.add(m);
                }
            combos = next;
        }
        List<Point> out = new ArrayList<>();
        for (Map<String, String> c : combos) for (long seed : seeds) out.add(new Point(c, seed));
        return out;
    }

    private static void checkName(String key, Profile base, String where) {
        if (OPTIONS.contains(key) || base.has(key)) return;
        throw new BadSweep(where + ": '" + key + "' is neither a workload option ("
                + String.join(", ", sorted(OPTIONS)) + ") nor a parameter of profile " + base.name()
                + " (./nicsim profiles " + base.name() + " lists them)");
    }

    /**
     * A figure a point can give, or a one-line error listing those it can. Stage and counter names
     * depend on the run: they are checked by their form here, and against the points' figures after
     * the run ({@link SweepPlots#absent}).
     */
    private static String checkFigure(String f, List<String> cost, String where) {
        if (PointRun.FIGURES.contains(f) || f.startsWith("cycles ")) return f;
        if (f.matches("[A-Za-z][A-Za-z0-9_]*\\.[A-Za-z0-9_.]+")) return f; // a block counter, Block.what
        int space = f.indexOf(' ');
        if (space > 0 && PointRun.COST_FIGURES.contains(f.substring(0, space))) {
            String block = f.substring(space + 1);
            if (cost.contains(block)) return f;
            throw new BadSweep(where + ": figure '" + f + "' needs block '" + block + "' in cost (cost: " + cost + ")");
        }
        throw new BadSweep(where + ": figure '" + f + "' unknown; accepted: " + String.join(", ", PointRun.FIGURES)
                + ", 'cycles STAGE' (node 0's stages), a block counter (Block.what, e.g. Fabric.bytes), or for a block "
                + "in cost one of " + String.join(", ", PointRun.COST_FIGURES) + " and the block (e.g. 'luts mtt')");
    }

    private static String text(JsonNode root, String key, String dflt, String where) {
        JsonNode n = root.get(key);
        if (n == null) return dflt;
        if (!n.isTextual()) throw new BadSweep(where + ": " + key + " must be a string");
        return n.asText();
    }

    private static String scalar(JsonNode n, String key, String where) {
        if (n.isTextual()) return n.asText();
        if (n.isIntegralNumber()) return Long.toString(n.asLong());
        if (n.isNumber()) return n.decimalValue().stripTrailingZeros().toPlainString();
        if (n.isBoolean()) return Boolean.toString(n.asBoolean());
        throw new BadSweep(where + ": " + key + " '" + n + "' must be a number or a string");
    }

    /** A list, or a range {from, to, step} (arithmetic) or {from, to, times} (geometric), both inclusive. */
    private static List<String> values(JsonNode n, String key, String where) {
        List<String> out = new ArrayList<>();
        if (n.isArray()) {
            for (JsonNode x : n) out.add(scalar(x, key, where));
            return out;
        }
        if (!n.isObject()) {
            out.add(scalar(n, key, where));
            return out;
        }
        for (Iterator<String> it = n.fieldNames(); it.hasNext(); ) {
            String f = it.next();
            if (!Set.of("from", "to", "step", "times").contains(f))
                throw new BadSweep(where + ": " + key + "." + f + " unknown; accepted: from, to, step or times");
        }
        if (!n.has("from") || !n.has("to") || n.has("step") == n.has("times"))
            throw new BadSweep(where + ": " + key + ": a range needs from, to, and one of step or times");
        BigDecimal from = number(n.get("from"), key + ".from", where), to = number(n.get("to"), key + ".to", where);
        if (n.has("step")) {
            BigDecimal step = number(n.get("step"), key + ".step", where);
            if (step.signum() <= 0) throw new BadSweep(where + ": " + key + ".step " + step + " must be > 0");
            for (BigDecimal x = from; x.compareTo(to) <= 0 && out.size() <= MAX_POINTS; x = x.add(step))
                out.add(x.stripTrailingZeros().toPlainString());
        } else {
            BigDecimal times = number(n.get("times"), key + ".times", where);
            if (times.compareTo(BigDecimal.ONE) <= 0 || from.signum() <= 0)
                throw new BadSweep(where + ": " + key + ": times " + times + " must be > 1 and from " + from + " > 0");
            for (BigDecimal x = from; x.compareTo(to) <= 0 && out.size() <= MAX_POINTS; x = x.multiply(times))
                out.add(x.stripTrailingZeros().toPlainString());
        }
        if (out.size() > MAX_POINTS)
            throw new BadSweep(where + ": " + key + " has more than " + MAX_POINTS + " values");
        return out;
    }

    private static BigDecimal number(JsonNode n, String key, String where) {
        if (!n.isNumber()) throw new BadSweep(where + ": " + key + " '" + n + "' must be a number");
        return n.decimalValue();
    }

    private static List<String> sorted(Set<String> s) { return s.stream().sorted().toList(); }
}
