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

    @Option(names = "--spark", paramLabel = "MASTER", description = "run the points as a Spark job on this master (e.g. local[*]; "
            + "./nicsim then puts Spark on the classpath); the table is the same, and a Parquet copy is written too")
    String spark;

    @Override public Integer call() throws Exception {
        if (jobs < 1 || jobs > 1024) throw new IllegalArgumentException("--jobs " + jobs + " must be 1..1024");
        SweepSpec spec = SweepSpec.read(file);
        Path dir = out != null ? out : defaultOut(file);
        SweepResults results = new SweepResults(dir, spec);
        int points = spec.points().size();
        System.out.printf("sweep %s: %s on %s, %d points (%s), %s%n", file, spec.workload(), spec.profile(), points,
                String.join(" x ", spec.vary().entrySet().stream().map(e -> e.getValue().size() + " " + e.getKey()).toList())
                        + (spec.seeds().size() > 1 ? " x " + spec.seeds().size() + " seeds" : ""),
                spark != null ? "on Spark " + spark : jobs + " worker" + (jobs == 1 ? "" : "s"));
        LocalSweep.Summary s = spark != null ? onSpark(spec, results, spark) : LocalSweep.run(spec, results, jobs, System.err);
        System.out.print(finish(spec, results, s, spark != null));
        // a figure asked for and found nowhere is as much a failure as a point that failed: no plot came of it
        List<String> absent = SweepPlots.absent(spec, results.inOrder(spec));
        for (String a : absent) System.err.println("nicsim: " + file + ": " + a);
        return results.inOrder(spec).stream().allMatch(PointRun.Outcome::ok) && absent.isEmpty() ? 0 : 1;
    }

    /** Runs the points through the sweep module's Spark job, which is on the classpath only when Spark is. */
    private static LocalSweep.Summary onSpark(SweepSpec spec, SweepResults results, String master) throws Exception {
        Class<?> job;
        try {
            job = Class.forName("nicsim.cosim.sweep.spark.SparkSweep");
        } catch (ClassNotFoundException e) {
            throw new IllegalArgumentException("--spark " + master + ": Spark is not on this command's classpath (./nicsim adds it when --spark is given)");
        }
        try {
            return (LocalSweep.Summary) job.getMethod("run", SweepSpec.class, SweepResults.class, String.class, java.io.PrintStream.class)
                    .invoke(null, spec, results, master, System.err);
        } catch (java.lang.reflect.InvocationTargetException e) {
            if (e.getCause() instanceof Exception x) throw x;
            throw e;
        }
    }

    /** Writes the table (the Parquet copy is Spark's) and the plots; returns what to print: the table's main columns, the summary, the files. */
    static String finish(SweepSpec spec, SweepResults results, LocalSweep.Summary s, boolean parquet) throws java.io.IOException {
        List<PointRun.Outcome> rows = results.inOrder(spec);
        Path csv = results.writeCsv(spec);
        List<Path> plots = SweepPlots.write(spec, rows, results.dir().resolve("plots"));
        StringBuilder out = new StringBuilder(table(spec, rows));
        out.append(String.format("%d points run now in %.1f s (%.1f points/min), %d already done, %d failed%n", s.ran(), s.wallSeconds(),
                s.ran() == 0 ? 0 : s.ran() / s.wallSeconds() * 60, s.skipped(), rows.stream().filter(o -> !o.ok()).count()));
        out.append("table: ").append(csv.toAbsolutePath()).append('\n');
        if (parquet) out.append("table: ").append(results.dir().resolve("results.parquet").toAbsolutePath()).append(" (Parquet)\n");
        for (Path p : plots) out.append("plot:  ").append(p.toAbsolutePath()).append('\n');
        return out.toString();
    }

    static Path defaultOut(Path file) {
        String name = file.getFileName().toString().replaceFirst("\\.toml$", "");
        Path parent = file.toAbsolutePath().getParent();
        return parent.resolve(name + "-results");
    }

    /** The varied parameters and the plotted figures of every point, as a table. */
    private static String table(SweepSpec spec, List<PointRun.Outcome> rows) {
        StringBuilder out = new StringBuilder();
        List<String> cols = new java.util.ArrayList<>(spec.vary().keySet());
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
                if (spec.plot().contains(cols.get(i)) && !c.isEmpty()) c = String.format("%.3f", Double.parseDouble(c));
                line.append(String.format("%16s", o.ok() || !spec.plot().contains(cols.get(i)) ? c : "failed"));
            }
            out.append(line).append('\n');
        }
        return out.toString();
    }
}
