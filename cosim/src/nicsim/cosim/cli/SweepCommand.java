package nicsim.cosim.cli;

import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import nicsim.cosim.sweep.LocalSweep;
import nicsim.cosim.sweep.PointRun;
import nicsim.cosim.sweep.SweepPlots;
import nicsim.cosim.sweep.SweepResults;
import nicsim.cosim.sweep.SweepSpec;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code ./nicsim sweep sweep.toml}: runs every point of a design-space sweep on this machine's
 * cores, resumably, and writes the table and the plots.
 */
@Command(name = "sweep", mixinStandardHelpOptions = true,
        description = "Run a design-space sweep (a TOML file: profile, workload, options, the parameters to vary, seeds, figures to plot) "
                + "on every core of this machine; resumable. Writes points.jsonl, results.csv and plots/ into the results folder.")
final class SweepCommand implements Callable<Integer> {
    @Parameters(index = "0", paramLabel = "<sweep.toml>", description = "the sweep file")
    Path file;

    @Option(names = "--jobs", description = "worker threads (default: this machine's cores, ${DEFAULT-VALUE})")
    int jobs = Runtime.getRuntime().availableProcessors();

    @Option(names = "--out", description = "results folder (default: the sweep file's name with -results, beside it); "
            + "a folder already holding some of this sweep's points resumes it")
    Path out;

    @Override public Integer call() throws Exception {
        if (jobs < 1 || jobs > 1024) throw new IllegalArgumentException("--jobs " + jobs + " must be 1..1024");
        SweepSpec spec = SweepSpec.read(file);
        Path dir = out != null ? out : defaultOut(file);
        SweepResults results = new SweepResults(dir, spec);
        int points = spec.points().size();
        System.out.printf("sweep %s: %s on %s, %d points (%s), %d worker%s%n", file, spec.workload(), spec.profile(), points,
                String.join(" x ", spec.vary().entrySet().stream().map(e -> e.getValue().size() + " " + e.getKey()).toList())
                        + (spec.seeds().size() > 1 ? " x " + spec.seeds().size() + " seeds" : ""), jobs, jobs == 1 ? "" : "s");
        LocalSweep.Summary s = LocalSweep.run(spec, results, jobs, System.err);
        List<PointRun.Outcome> rows = results.inOrder(spec);
        Path csv = results.writeCsv(spec);
        List<Path> plots = SweepPlots.write(spec, rows, dir.resolve("plots"));
        print(spec, rows);
        System.out.printf("%d points run now in %.1f s (%.1f points/min), %d already done, %d failed%n", s.ran(), s.wallSeconds(),
                s.ran() == 0 ? 0 : s.ran() / s.wallSeconds() * 60, s.skipped(), rows.stream().filter(o -> !o.ok()).count());
        System.out.println("table: " + csv.toAbsolutePath());
        for (Path p : plots) System.out.println("plot:  " + p.toAbsolutePath());
        return rows.stream().allMatch(PointRun.Outcome::ok) ? 0 : 1;
    }

    static Path defaultOut(Path file) {
        String name = file.getFileName().toString().replaceFirst("\\.toml$", "");
        Path parent = file.toAbsolutePath().getParent();
        return parent.resolve(name + "-results");
    }

    /** The varied parameters and the plotted figures of every point, as a table. */
    private static void print(SweepSpec spec, List<PointRun.Outcome> rows) {
        List<String> cols = new java.util.ArrayList<>(spec.vary().keySet());
        if (spec.seeds().size() > 1) cols.add("seed");
        cols.addAll(spec.plot());
        StringBuilder head = new StringBuilder();
        for (String c : cols) head.append(String.format("%16s", c));
        System.out.println(head);
        for (PointRun.Outcome o : rows) {
            StringBuilder line = new StringBuilder();
            List<String> cells = SweepResults.row(o, cols);
            for (int i = 0; i < cells.size(); i++) {
                String c = cells.get(i);
                if (spec.plot().contains(cols.get(i)) && !c.isEmpty()) c = String.format("%.3f", Double.parseDouble(c));
                line.append(String.format("%16s", o.ok() || !spec.plot().contains(cols.get(i)) ? c : "failed"));
            }
            System.out.println(line);
        }
    }
}
