package nicsim.cosim.bench;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import nicsim.driver.World;
import nicsim.fabric.Faults;
import nicsim.profile.Profile;
import nicsim.workloads.Options;
import nicsim.workloads.Result;
import nicsim.workloads.Workloads;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.XYSeries;
import org.knowm.xchart.style.markers.SeriesMarkers;

/**
 * Whole curves of a modern profile against the perftest figures published for the adapter it
 * models: ib_send_lat (RC and UD), ib_write_lat and ib_read_lat from 2 B to 64 KiB, ib_write_bw and
 * ib_send_bw from 2 B to 8 MiB (ib_send_bw over UD to 4 KiB, one MTU), each published point beside
 * the simulated one with its error.
 */
public final class ConnectxCurves {
    private ConnectxCurves() {}

    /** A perftest test over UD or RC, as nicsim runs it. */
    public record Curve(String test, boolean ud) {
        public String label() { return test + (ud ? " UD" : " RC"); }
        public boolean latency() { return test.endsWith("_lat"); }
    }

    /** A published figure: the test, the message size, the median latency (us) or bandwidth (Gb/s). */
    public record Published(Curve curve, long bytes, double value, String source) {}

    /** A published figure and what the profile gives at the same point. */
    public record Compared(Published published, double nicsim) {
        public double errorPercent() { return (nicsim - published.value()) / published.value() * 100; }
    }

    /** Every curve: its simulated figure at each size, and the published points compared. */
    public record Curves(Map<Curve, Map<Long, Double>> simulated, List<Compared> compared) {}

    static final String POTTER = "docs/sources.md#connectx-figures (D. Potter, MTU 4096)";
    static final String FORUM = "docs/sources.md#connectx-figures (NVIDIA forum, EDR)";
    public static final Curve SEND_LAT = new Curve("send_lat", false), SEND_LAT_UD = new Curve("send_lat", true),
            WRITE_LAT = new Curve("write_lat", false), READ_LAT = new Curve("read_lat", false),
            WRITE_BW = new Curve("write_bw", false), SEND_BW = new Curve("send_bw", false),
            SEND_BW_UD = new Curve("send_bw", true);

    /** What is published for a ConnectX-5 on EDR, PCIe Gen3 x16 (cx-gen3x16). */
    public static final List<Published> CONNECTX5_EDR = List.of(
            new Published(SEND_LAT, 32, 0.83, POTTER), new Published(SEND_LAT, 1024, 1.61, POTTER),
            new Published(SEND_LAT, 4096, 2.28, POTTER), new Published(SEND_LAT, 32768, 4.57, POTTER),
            new Published(SEND_LAT_UD, 32, 0.86, POTTER), new Published(SEND_LAT_UD, 1024, 1.45, POTTER),
            new Published(SEND_LAT_UD, 4096, 2.22, POTTER),
            new Published(WRITE_LAT, 2L << 20, 176, FORUM), new Published(WRITE_BW, 65536, 96.6, FORUM));

    /** Sizes: powers of two, to 64 KiB for latency (4 KiB, one MTU, over UD), to 8 MiB (quick: 1 MiB) for bandwidth. */
    static List<Long> sizes(Curve c, boolean quick) {
        long top = c.ud() ? 4096 : c.latency() ? 65536 : quick ? 1L << 20 : 8L << 20;
        List<Long> out = new ArrayList<>();
        for (long s = 2; s <= top; s *= 2)
            if (!quick || s == 2 || s == top || Long.numberOfTrailingZeros(s) % 4 == 0) out.add(s);
        return out;
    }

    /** Runs every curve on {@code profile} and compares it with {@code published}. */
    public static Curves run(Profile profile, List<Published> published, boolean quick) {
        Map<Curve, Map<Long, Double>> sim = new LinkedHashMap<>();
        for (Curve c : List.of(SEND_LAT, SEND_LAT_UD, WRITE_LAT, READ_LAT, WRITE_BW, SEND_BW, SEND_BW_UD)) {
            Map<Long, Double> m = new TreeMap<>();
            for (long s : sizes(c, quick)) m.put(s, figure(profile, c, s, quick));
            sim.put(c, m);
        }
        List<Compared> compared = new ArrayList<>();
        for (Published p : published) { // a published size off the curve joins it, so the plot shows both there
            Double v = sim.get(p.curve()).computeIfAbsent(p.bytes(), b -> figure(profile, p.curve(), b, quick));
            compared.add(new Compared(p, v));
        }
        return new Curves(sim, compared);
    }

    /** The median one-way latency (us) or the average bandwidth (Gb/s) of one test at one size. */
    static double figure(Profile profile, Curve c, long size, boolean quick) {
        // quick: a few iterations (simulated figures barely move with more), a few MiB moved at the most
        long budget = quick ? 4L << 20 : c.latency() ? 64L << 20 : 512L << 20; // bytes one point moves at the most
        int iters = c.latency() ? (int) Math.max(quick ? 2 : 5, Math.min(quick ? 10 : 100, budget / size))
                : (int) Math.max(quick ? 10 : 100, Math.min(quick ? 200 : 2000, budget / size));
        Options o = Options.defaults().with(set -> set.size(size).iters(iters).ud(c.ud()));
        PrintStream quiet = new PrintStream(new ByteArrayOutputStream());
        Result r = Workloads.run(c.test(), new World(2, profile, 1, Faults.NONE), o, quiet);
        if (!r.ok())
            throw new IllegalStateException(c.label() + " " + size + " B on " + profile.name() + ": " + r.errors());
        Result.Row row = r.rows().get(0);
        return c.latency() ? row.latTypicalUs() : row.bwAvgGbps();
    }

    /** Two plots, latency and bandwidth against size, each published point a marker beside its curve. */
    public static void plot(Curves cs, String profile, Path latencyPng, Path bandwidthPng) throws IOException {
        for (boolean lat : new boolean[]{true, false}) {
            XYChart ch = new XYChartBuilder().width(900).height(560)
                    .title(profile + ": " + (lat ? "one-way latency (perftest median)" : "bandwidth")
                            + " vs message size")
                    .xAxisTitle("message size (bytes)").yAxisTitle(lat ? "latency (us)" : "bandwidth (Gb/s)").build();
            ch.getStyler().setXAxisLogarithmic(true);
            if (lat) ch.getStyler().setYAxisLogarithmic(true);
            for (var e : cs.simulated().entrySet()) {
                if (e.getKey().latency() != lat) continue;
                double[] x = e.getValue().keySet().stream().mapToDouble(Long::doubleValue).toArray();
                double[] y = e.getValue().values().stream().mapToDouble(Double::doubleValue).toArray();
                ch.addSeries("nicsim " + e.getKey().label(), x, y).setMarker(SeriesMarkers.CIRCLE);
            }
            Map<Curve, List<Published>> byCurve = new LinkedHashMap<>();
            for (Compared c : cs.compared())
                if (c.published().curve().latency() == lat)
                    byCurve.computeIfAbsent(c.published().curve(), k -> new ArrayList<>()).add(c.published());
            for (var e : byCurve.entrySet()) {
                XYSeries s = ch.addSeries("published " + e.getKey().label(),
                        e.getValue().stream().mapToDouble(p -> p.bytes()).toArray(),
                        e.getValue().stream().mapToDouble(Published::value).toArray());
                s.setMarker(SeriesMarkers.DIAMOND);
                s.setXYSeriesRenderStyle(XYSeries.XYSeriesRenderStyle.Scatter);
            }
            BitmapEncoder.saveBitmap(ch, (lat ? latencyPng : bandwidthPng).toString(), BitmapEncoder.BitmapFormat.PNG);
        }
    }
}
