package nicsim.cosim.cli;

import java.io.PrintStream;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import nicsim.cosim.sweep.LocalSweep;
import nicsim.cosim.sweep.PointRun;
import nicsim.cosim.sweep.SweepPlots;
import nicsim.cosim.sweep.SweepReport;
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
        description = "Run a design-space sweep (a TOML file: profile, workload, options, the parameters to vary, "
                + "seeds, figures to plot) on every core of this machine; resumable. Writes points.jsonl, results.csv "
                + "and plots/ into the results folder.")
final class SweepCommand implements Callable<Integer> {
    @Parameters(index = "0", paramLabel = "<sweep.toml>", description = "the sweep file")
    Path file;

    @Option(names = "--jobs", description = "worker threads (default: this machine's cores, ${DEFAULT-VALUE})")
    int jobs = Runtime.getRuntime().availableProcessors();

    @Option(names = "--out", description = "results folder (default: the sweep file's name with -results, beside it); "
            + "a folder already holding some of this sweep's points resumes it")
    Path out;

    @Option(names = "--spark", paramLabel = "MASTER",
            description = "run the points as a Spark job on this master (e.g. local[*]; ./nicsim then puts Spark on "
                    + "the classpath); the table is the same, and a Parquet copy is written too")
    String spark;

    @Override public Integer call() throws Exception {
        if (jobs < 1 || jobs > 1024) throw new IllegalArgumentException("--jobs " + jobs + " must be 1..1024");
        SweepSpec spec = SweepSpec.read(file);
        Path dir = out != null ? out : SweepReport.defaultOut(file);
        SweepResults results = new SweepResults(dir, spec);
        int points = spec.points().size();
        List<String> varied = spec.vary().entrySet().stream().map(e -> e.getValue().size() + " " + e.getKey()).toList();
        System.out.printf("sweep %s: %s on %s, %d points (%s), %s%n", file, spec.workload(), spec.profile(), points,
                String.join(" x ", varied) + (spec.seeds().size() > 1 ? " x " + spec.seeds().size() + " seeds" : ""),
                spark != null ? "on Spark " + spark : jobs + " worker" + (jobs == 1 ? "" : "s"));
        LocalSweep.Summary s = spark != null ? onSpark(spec, results, spark)
                : LocalSweep.run(spec, results, jobs, System.err);
        System.out.print(SweepReport.finish(spec, results, s, spark != null));
        // a figure asked for and found nowhere is as much a failure as a point that failed: no plot came of it
        List<String> absent = SweepPlots.absent(spec, results.inOrder(spec));
        for (String a : absent) System.err.println("nicsim: " + file + ": " + a);
        return results.inOrder(spec).stream().allMatch(PointRun.Outcome::ok) && absent.isEmpty() ? 0 : 1;
    }

    /**
     * Runs the points through the sweep module's Spark job. Spark is on the classpath only when
     * ./nicsim was given --spark (sweep.withSpark): without it, SparkSweep cannot be loaded, and
     * it is called by reflection so that this class compiles and loads without Spark.
     */
    private static LocalSweep.Summary onSpark(SweepSpec spec, SweepResults results, String master) throws Exception {
        try {
            Class.forName("org.apache.spark.sql.SparkSession", false, SweepCommand.class.getClassLoader());
        } catch (ClassNotFoundException e) {
            throw new IllegalArgumentException("--spark " + master
                    + ": Spark is not on this command's classpath (./nicsim adds it when --spark is given)");
        }
        Method run = Class.forName("nicsim.cosim.sweep.spark.SparkSweep")
                .getMethod("run", SweepSpec.class, SweepResults.class, String.class, PrintStream.class);
        try {
            return (LocalSweep.Summary) run.invoke(null, spec, results, master, System.err);
        } catch (InvocationTargetException e) {
            if (e.getCause() instanceof Exception x) throw x;
            throw e;
        }
    }
}
