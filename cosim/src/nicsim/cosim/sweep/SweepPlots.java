package nicsim.cosim.sweep;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;

/**
 * Plots of each figure named in the sweep's {@code plot} list against each numeric varied
 * parameter: one line per combination of the other parameters, seeds averaged.
 */
public final class SweepPlots {
    private SweepPlots() {}

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
                        if (!e.getKey().equals(x)) name.append(name.length() == 0 ? "" : ", ").append(e.getKey()).append('=').append(e.getValue());
                    double[] acc = series.computeIfAbsent(name.length() == 0 ? figure : name.toString(), k -> new TreeMap<>())
                            .computeIfAbsent(Double.parseDouble(o.point().params().get(x)), k -> new double[2]);
                    acc[0] += n.doubleValue();
                    acc[1]++;
                }
                if (series.isEmpty()) continue;
                XYChart chart = new XYChartBuilder().width(800).height(500).title(figure + " vs " + x + " (" + spec.workload() + ", " + spec.profile() + ")")
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
