package nicsim.cosim.sweep;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * What a finished sweep prints and writes, whether its points ran on this machine's cores
 * ({@code ./nicsim sweep}) or as a Spark job ({@code SweepJob}): the table, the plots, a summary.
 */
public final class SweepReport {
    private SweepReport() {}

    /** The results folder when none is given: the sweep file's name with -results, beside it. */
    public static Path defaultOut(Path file) {
        String name = file.getFileName().toString().replaceFirst("\\.toml$", "");
        Path parent = file.toAbsolutePath().getParent();
        return parent.resolve(name + "-results");
    }

    /**
     * Writes the table (the Parquet copy is Spark's) and the plots; returns what to print: the
     * table's main columns, the summary, the files.
     */
    public static String finish(SweepSpec spec, SweepResults results, LocalSweep.Summary s, boolean parquet)
            throws IOException {
        List<PointRun.Outcome> rows = results.inOrder(spec);
        Path csv = results.writeCsv(spec);
        List<Path> plots = SweepPlots.write(spec, rows, results.dir().resolve("plots"));
        StringBuilder out = new StringBuilder(table(spec, rows));
        out.append(String.format("%d points run now in %.1f s (%.1f points/min), %d already done, %d failed%n",
                s.ran(), s.wallSeconds(), s.ran() == 0 ? 0 : s.ran() / s.wallSeconds() * 60, s.skipped(),
                rows.stream().filter(o -> !o.ok()).count()));
        out.append("table: ").append(csv.toAbsolutePath()).append('\n');
        if (parquet)
            out.append("table: ").append(results.dir().resolve("results.parquet").toAbsolutePath())
                    .append(" (Parquet)\n");
        for (Path p : plots) out.append("plot:  ").append(p.toAbsolutePath()).append('\n');
        return out.toString();
    }

    /** The varied parameters and the plotted figures of every point, as a table. */
    private static String table(SweepSpec spec, List<PointRun.Outcome> rows) {
        StringBuilder out = new StringBuilder();
        List<String> cols = new ArrayList<>(spec.vary().keySet());
        if (spec.seeds().size() > 1) cols.add("seed");
        cols.addAll(spec.plot());
        for (String b : spec.cost()) cols.add("luts " + b);
        StringBuilder head = new StringBuilder();
        for (String c : cols) head.append(String.format("%16s", c));
        out.append(head).append('\n');
        for (PointRun.Outcome o : rows) {
            StringBuilder line = new StringBuilder();
            List<String> cells = SweepResults.row(o, cols);
            for (int i = 0; i < cells.size(); i++) {
                String c = cells.get(i);
                boolean plotted = spec.plot().contains(cols.get(i));
                if (plotted && !c.isEmpty()) c = String.format("%.3f", Double.parseDouble(c));
                line.append(String.format("%16s", o.ok() || !plotted ? c : "failed"));
            }
            out.append(line).append('\n');
        }
        return out.toString();
    }
}
