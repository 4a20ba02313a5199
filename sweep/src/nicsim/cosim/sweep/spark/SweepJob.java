package nicsim.cosim.sweep.spark;

import java.nio.file.Path;
import nicsim.cosim.sweep.LocalSweep;
import nicsim.cosim.sweep.SweepReport;
import nicsim.cosim.sweep.SweepResults;
import nicsim.cosim.sweep.SweepSpec;

/**
 * The sweep as a Spark application: {@code spark-submit --class nicsim.cosim.sweep.spark.SweepJob
 * nicsim-sweep.jar sweep.toml [--out DIR]}. The master is spark-submit's; the results folder is
 * on the driver.
 */
public final class SweepJob {
    private SweepJob() {}

    public static void main(String[] args) throws Exception {
        Path file = null, out = null;
        for (int i = 0; i < args.length; i++) {
            if (args[i].equals("--out") && i + 1 < args.length) out = Path.of(args[++i]);
            else if (file == null && !args[i].startsWith("--")) file = Path.of(args[i]);
            else usage("argument '" + args[i] + "' unknown");
        }
        if (file == null) usage("no sweep file given");
        SweepSpec spec;
        SweepResults results;
        try {
            spec = SweepSpec.read(file);
            results = new SweepResults(out != null ? out : SweepReport.defaultOut(file), spec);
        } catch (IllegalArgumentException e) {
            System.err.println("nicsim sweep: " + e.getMessage());
            System.exit(2);
            return;
        }
        LocalSweep.Summary s = SparkSweep.run(spec, results, null, System.err);
        System.out.println(SweepReport.finish(spec, results, s, true));
        // as the local sweep: every point of the table ok
        System.exit(results.inOrder(spec).stream().allMatch(o -> o.ok()) ? 0 : 1);
    }

    private static void usage(String why) {
        System.err.println("nicsim sweep: " + why + "; usage: SweepJob <sweep.toml> [--out DIR]");
        System.exit(2);
    }
}
