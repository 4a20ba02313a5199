package nicsim.cosim.sweep;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.XYSeries;

/**
 * Plots of each figure named in the sweep's {@code plot} list against each numeric varied
 * parameter: one line per combination of the other parameters, seeds averaged.
 */
public final class SweepPlots {
    private SweepPlots() {}

    /**
     * One line for each figure of {@code plot} or {@code pareto} that no successful point gave (a
     * stage or counter name the run does not have, or a counter that never moved), naming what
     * the points did give; empty if every figure was found or no point succeeded.
     */
    public static List<String> absent(SweepSpec spec, List<PointRun.Outcome> outcomes) {
        Set<String> given = new TreeSet<>();
        for (PointRun.Outcome o : outcomes) if (o.ok()) given.addAll(o.figures().keySet());
        List<String> out = new ArrayList<>();
        if (given.isEmpty()) return out;
        for (String f : new LinkedHashSet<>(concat(spec.plot(), spec.pareto())))
            if (!given.contains(f))
                out.add("figure '" + f + "' is in no point's results, so it has no plot (a counter that never moved is "
                        + "left out); the points gave: " + String.join(", ", given));
        return out;
    }

    private static List<String> concat(List<String> a, List<String> b) {
        List<String> all = new ArrayList<>(a);
        all.addAll(b);
        return all;
    }

    public static List<Path> write(SweepSpec spec, List<PointRun.Outcome> outcomes, Path dir) throws IOException {
        Files.createDirectories(dir);
        List<Path> out = new ArrayList<>();
        for (String figure : spec.plot())
            for (String x : spec.vary().keySet()) {
                if (!spec.vary().get(x).stream().allMatch(SweepPlots::numeric)) continue;
                // series name (the other parameters' values) -> x value -> figure values over seeds
                Map<String, TreeMap<Double, double[]>> series = new LinkedHashMap<>();
                for (PointRun.Outcome o : outcomes) {
                    Object y = o.figures().get(figure);
                    if (!(y instanceof Number n)) continue;
                    StringBuilder name = new StringBuilder();
                    for (Map.Entry<String, String> e : o.point().params().entrySet())
                        if (!e.getKey().equals(x))
                            name.append(name.length() == 0 ? "" : ", ").append(e.getKey()).append('=')
                                    .append(e.getValue());
                    String line = name.length() == 0 ? figure : name.toString();
                    double[] acc = series.computeIfAbsent(line, k -> new TreeMap<>())
                            .computeIfAbsent(Double.parseDouble(o.point().params().get(x)), k -> new double[2]);
                    acc[0] += n.doubleValue();
                    acc[1]++;
                }
                if (series.isEmpty()) continue;
                String title = figure + " vs " + x + " (" + spec.workload() + ", " + spec.profile() + ")";
                XYChart chart = new XYChartBuilder().width(800).height(500).title(title)
                        .xAxisTitle(x).yAxisTitle(figure).build();
                if (geometric(spec.vary().get(x))) chart.getStyler().setXAxisLogarithmic(true);
                for (Map.Entry<String, TreeMap<Double, double[]>> s : series.entrySet()) {
                    double[] xs = s.getValue().keySet().stream().mapToDouble(Double::doubleValue).toArray();
                    double[] ys = s.getValue().values().stream().mapToDouble(a -> a[0] / a[1]).toArray();
                    chart.addSeries(s.getKey(), xs, ys);
                }
                Path png = dir.resolve(safe(figure) + "-vs-" + safe(x) + ".png");
                BitmapEncoder.saveBitmap(chart, png.toString(), BitmapEncoder.BitmapFormat.PNG);
                out.add(png);
            }
        if (spec.pareto().size() == 2) out.add(pareto(spec, outcomes, dir));
        return out;
    }

    /**
     * The sweep's points as cost (pareto[0], keep low) against performance (pareto[1], keep high),
     * seeds averaged, with the Pareto front: the points no other point beats on both.
     */
    static Path pareto(SweepSpec spec, List<PointRun.Outcome> outcomes, Path dir) throws IOException {
        String cx = spec.pareto().get(0), py = spec.pareto().get(1);
        Map<Map<String, String>, double[]> points = new LinkedHashMap<>(); // params -> cost, performance, count
        for (PointRun.Outcome o : outcomes) {
            if (!(o.figures().get(cx) instanceof Number c) || !(o.figures().get(py) instanceof Number y)) continue;
            double[] acc = points.computeIfAbsent(o.point().params(), k -> new double[3]);
            acc[0] += c.doubleValue();
            acc[1] += y.doubleValue();
            acc[2]++;
        }
        List<double[]> all = new ArrayList<>();
        for (double[] a : points.values()) all.add(new double[]{a[0] / a[2], a[1] / a[2]});
        List<double[]> front = front(all);
        XYChart chart = new XYChartBuilder().width(800).height(500).title(py + " against " + cx + ": the Pareto front ("
                + spec.workload() + ", " + spec.profile() + ")").xAxisTitle(cx).yAxisTitle(py).build();
        if (!all.isEmpty()) {
            var pts = chart.addSeries("points", all.stream().mapToDouble(a -> a[0]).toArray(),
                    all.stream().mapToDouble(a -> a[1]).toArray());
            pts.setXYSeriesRenderStyle(XYSeries.XYSeriesRenderStyle.Scatter);
            chart.addSeries("Pareto front", front.stream().mapToDouble(a -> a[0]).toArray(),
                    front.stream().mapToDouble(a -> a[1]).toArray());
        }
        Path png = dir.resolve("pareto-" + safe(py) + "-vs-" + safe(cx) + ".png");
        BitmapEncoder.saveBitmap(chart, png.toString(), BitmapEncoder.BitmapFormat.PNG);
        return png;
    }

    /** The points (cost, performance) no other point beats: cheaper and at least as good, or as cheap and better. */
    static List<double[]> front(List<double[]> points) {
        List<double[]> sorted = new ArrayList<>(points);
        sorted.sort((a, b) -> a[0] != b[0] ? Double.compare(a[0], b[0]) : Double.compare(b[1], a[1]));
        List<double[]> out = new ArrayList<>();
        double best = Double.NEGATIVE_INFINITY;
        for (double[] p : sorted)
            if (p[1] > best) {
                out.add(p);
                best = p[1];
            }
        return out;
    }

    private static boolean numeric(String v) {
        try {
            Double.parseDouble(v);
            return true;
        } catch (NumberFormatException e) {
            return false;
        }
    }

    /** Values spread over more than a decade, all positive: a log axis reads them better. */
    private static boolean geometric(List<String> values) {
        double lo = Double.MAX_VALUE, hi = 0;
        for (String v : values) {
            double d = Double.parseDouble(v);
            if (d <= 0) return false;
            lo = Math.min(lo, d);
            hi = Math.max(hi, d);
        }
        return hi / lo >= 10;
    }

    private static String safe(String s) { return s.replaceAll("[^A-Za-z0-9_.-]+", "_"); }
}
