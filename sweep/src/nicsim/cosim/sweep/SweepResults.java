package nicsim.cosim.sweep;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.BufferedWriter;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A sweep's results folder. {@code points.jsonl} holds one line per finished point, appended as
 * each ends, so a stopped sweep resumes where it was; {@code results.csv} is the table made from
 * it, one row per point in the sweep's own order (the same table whatever ran the points, in
 * whatever order).
 */
public final class SweepResults {
    private static final ObjectMapper JSON = new ObjectMapper();
    private final Path dir;
    private final Path log;
    private final String specId;
    private final Map<String, PointRun.Outcome> done = new HashMap<>();

    /** Opens (or creates) the folder; refuses one holding the results of a different sweep. */
    public SweepResults(Path dir, SweepSpec spec) throws IOException {
        this.dir = dir;
        this.log = dir.resolve("points.jsonl");
        this.specId = id(spec);
        Files.createDirectories(dir);
        if (!Files.exists(log)) return;
        for (String line : Files.readAllLines(log, StandardCharsets.UTF_8)) {
            JsonNode n;
            try {
                n = JSON.readTree(line);
            } catch (JsonProcessingException e) {
                continue; // the last line of a sweep killed while writing it: that point runs again
            }
            if (n == null || !n.has("point")) continue;
            if (!specId.equals(n.path("sweep").asText()))
                throw new SweepSpec.BadSweep(log + " holds the results of another sweep (profile, workload or "
                        + "options differ): give this one its own --out folder");
            done.put(n.get("point").asText(), outcome(n));
        }
    }

    /** What the points' figures depend on besides the point itself. */
    static String id(SweepSpec s) {
        return Integer.toHexString((s.profile() + "|" + s.workload() + "|" + s.options()).hashCode());
    }

    public boolean has(Point p) { return done.containsKey(p.key()); }

    public int size() { return done.size(); }

    /** Records a finished point (appends its line at once). */
    public void add(PointRun.Outcome o) throws IOException { addLine(line(specId, o)); }

    /** Records a finished point given as its line (as {@link #line} made it, wherever it ran); returns its outcome. */
    public synchronized PointRun.Outcome addLine(String line) throws IOException {
        JsonNode n = JSON.readTree(line);
        if (!specId.equals(n.path("sweep").asText()))
            throw new IllegalArgumentException("a point of another sweep: " + line);
        try (BufferedWriter w = Files.newBufferedWriter(log, StandardCharsets.UTF_8, StandardOpenOption.CREATE,
                StandardOpenOption.APPEND)) {
            w.write(line);
            w.write('\n');
        }
        PointRun.Outcome o = outcome(n);
        done.put(o.point().key(), o);
        return o;
    }

    /** The sweep's id, as {@link #line} needs it. */
    public String specId() { return specId; }

    /** A finished point as one line of JSON. */
    public static String line(String specId, PointRun.Outcome o) {
        ObjectNode n = JSON.createObjectNode();
        n.put("sweep", specId);
        n.put("point", o.point().key());
        ObjectNode params = n.putObject("params");
        o.point().params().forEach(params::put);
        n.put("seed", o.point().seed());
        if (o.error() != null) n.put("error", o.error());
        ObjectNode f = n.putObject("figures");
        o.figures().forEach((k, v) -> {
            if (v instanceof Long l) f.put(k, l);
            else if (v instanceof Integer i) f.put(k, i);
            else f.put(k, ((Number) v).doubleValue());
        });
        try {
            return JSON.writeValueAsString(n);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    private static PointRun.Outcome outcome(JsonNode n) {
        Map<String, String> params = new LinkedHashMap<>();
        n.path("params").fields().forEachRemaining(e -> params.put(e.getKey(), e.getValue().asText()));
        Map<String, Object> f = new LinkedHashMap<>();
        n.path("figures").fields().forEachRemaining(e -> f.put(e.getKey(),
                e.getValue().isIntegralNumber() ? (Object) e.getValue().asLong() : e.getValue().asDouble()));
        String error = n.has("error") ? n.get("error").asText() : null;
        return new PointRun.Outcome(new Point(params, n.path("seed").asLong()), error, f);
    }

    /** The outcomes of the spec's points that have run, in the spec's order. */
    public List<PointRun.Outcome> inOrder(SweepSpec spec) {
        List<PointRun.Outcome> out = new ArrayList<>();
        for (Point p : spec.points()) {
            PointRun.Outcome o = done.get(p.key());
            if (o != null) out.add(o);
        }
        return out;
    }

    /** The table's columns: the varied parameters, seed, status, error, then every figure any point has. */
    public static List<String> columns(SweepSpec spec, List<PointRun.Outcome> rows) {
        Set<String> cols = new LinkedHashSet<>(spec.vary().keySet());
        cols.add("seed");
        cols.add("status");
        cols.add("error");
        for (PointRun.Outcome o : rows) cols.addAll(o.figures().keySet());
        return new ArrayList<>(cols);
    }

    /** One row of the table, as text, in the order of {@code columns}. */
    public static List<String> row(PointRun.Outcome o, List<String> columns) {
        List<String> r = new ArrayList<>();
        for (String c : columns) {
            String v;
            if (c.equals("seed")) v = Long.toString(o.point().seed());
            else if (c.equals("status")) v = o.ok() ? "ok" : "failed";
            else if (c.equals("error")) v = o.error() == null ? "" : o.error();
            else if (o.point().params().containsKey(c)) v = o.point().params().get(c);
            else {
                Object x = o.figures().get(c);
                v = x == null ? "" : x instanceof Double d ? Double.toString(d) : x.toString();
            }
            r.add(v);
        }
        return r;
    }

    /** Writes {@code results.csv} (RFC 4180 quoting); returns its path. */
    public Path writeCsv(SweepSpec spec) throws IOException {
        List<PointRun.Outcome> rows = inOrder(spec);
        List<String> cols = columns(spec, rows);
        StringBuilder sb = new StringBuilder();
        sb.append(csvLine(cols));
        for (PointRun.Outcome o : rows) sb.append(csvLine(row(o, cols)));
        Path csv = dir.resolve("results.csv");
        Files.writeString(csv, sb.toString(), StandardCharsets.UTF_8);
        return csv;
    }

    private static String csvLine(List<String> cells) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < cells.size(); i++) {
            if (i > 0) sb.append(',');
            String c = cells.get(i);
            if (c.contains(",") || c.contains("\"") || c.contains("\n"))
                sb.append('"').append(c.replace("\"", "\"\"")).append('"');
            else sb.append(c);
        }
        return sb.append('\n').toString();
    }

    public Path dir() { return dir; }
}
