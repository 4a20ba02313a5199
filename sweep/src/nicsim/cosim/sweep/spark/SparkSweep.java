package nicsim.cosim.sweep.spark;

import java.io.IOException;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import nicsim.cosim.sweep.LocalSweep;
import nicsim.cosim.sweep.Point;
import nicsim.cosim.sweep.PointRun;
import nicsim.cosim.sweep.SweepResults;
import nicsim.cosim.sweep.SweepSpec;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

/**
 * A sweep as a Spark job: each point a task, run where Spark puts it. The points and their
 * results are those of {@link LocalSweep} (the same code runs each point), so the table is the
 * same; the driver records the points as batches of tasks finish, so a stopped job resumes.
 */
public final class SparkSweep {
    private SparkSweep() {}

    /**
     * Runs the points not yet in {@code results} on Spark ({@code master} as spark-submit's, or
     * null to take it from the job's configuration), then writes the table as CSV and Parquet.
     */
    public static LocalSweep.Summary run(SweepSpec spec, SweepResults results, String master, PrintStream progress)
            throws IOException {
        SparkSession.Builder b = SparkSession.builder().appName("nicsim sweep").config("spark.ui.enabled", "false");
        if (master != null) b = b.master(master);
        SparkSession spark = b.getOrCreate();
        spark.sparkContext().setLogLevel("WARN");
        try {
            return run(spark, spec, results, progress);
        } finally {
            spark.stop();
        }
    }

    static LocalSweep.Summary run(SparkSession spark, SweepSpec spec, SweepResults results, PrintStream progress)
            throws IOException {
        List<Point> all = spec.points();
        List<Point> todo = new ArrayList<>();
        for (Point p : all) if (!results.has(p)) todo.add(p);
        int skipped = all.size() - todo.size();
        if (skipped > 0)
            progress.printf("sweep: %d of %d points already in %s: not run again%n", skipped, all.size(),
                    results.dir());
        JavaSparkContext jsc = JavaSparkContext.fromSparkContext(spark.sparkContext());
        int slots = Math.max(1, jsc.defaultParallelism());
        String id = results.specId();
        long t0 = System.nanoTime();
        int failed = 0;
        // batches of a few tasks per slot: results reach points.jsonl as each batch ends
        int batch = slots * 4;
        for (int from = 0; from < todo.size(); from += batch) {
            List<Point> part = todo.subList(from, Math.min(todo.size(), from + batch));
            List<String> lines = jsc.parallelize(new ArrayList<>(part), part.size())
                    .map(p -> SweepResults.line(id, PointRun.run(spec, p)))
                    .collect();
            for (String l : lines) {
                PointRun.Outcome o = results.addLine(l);
                if (o.ok()) continue;
                failed++;
                progress.printf("sweep: point %s failed: %s%n", o.point(), o.error());
            }
            int done = from + part.size();
            double elapsed = (System.nanoTime() - t0) / 1e9;
            progress.printf("sweep (Spark, %d slots): %d/%d points, %.0f s elapsed, ETA %.0f s%n", slots, done,
                    todo.size(), elapsed, elapsed / done * (todo.size() - done));
        }
        writeParquet(spark, spec, results);
        return new LocalSweep.Summary(all.size(), skipped, todo.size(), failed, (System.nanoTime() - t0) / 1e9);
    }

    /**
     * The table as Parquet ({@code results.parquet}, one file): the CSV's columns, the parameters
     * and error as text, the seed and whole-number figures as longs, the rest as doubles.
     */
    public static void writeParquet(SparkSession spark, SweepSpec spec, SweepResults results) {
        List<PointRun.Outcome> rows = results.inOrder(spec);
        List<String> cols = SweepResults.columns(spec, rows);
        List<StructField> fields = new ArrayList<>();
        for (String c : cols) fields.add(DataTypes.createStructField(c, type(spec, rows, c), true));
        StructType schema = DataTypes.createStructType(fields);
        List<Row> data = new ArrayList<>();
        for (PointRun.Outcome o : rows) {
            Object[] v = new Object[cols.size()];
            for (int i = 0; i < cols.size(); i++) v[i] = value(o, cols.get(i), schema.fields()[i].dataType());
            data.add(RowFactory.create(v));
        }
        Dataset<Row> df = spark.createDataFrame(data, schema);
        df.coalesce(1).write().mode("overwrite").parquet(results.dir().resolve("results.parquet").toString());
    }

    private static DataType type(SweepSpec spec, List<PointRun.Outcome> rows, String c) {
        if (c.equals("seed")) return DataTypes.LongType;
        if (spec.vary().containsKey(c) || c.equals("status") || c.equals("error")) return DataTypes.StringType;
        boolean whole = true;
        for (PointRun.Outcome o : rows) {
            Object x = o.figures().get(c);
            if (x != null && !(x instanceof Long)) whole = false;
        }
        return whole ? DataTypes.LongType : DataTypes.DoubleType;
    }

    private static Object value(PointRun.Outcome o, String c, DataType t) {
        Map<String, Object> f = o.figures();
        switch (c) {
            case "seed": return o.point().seed();
            case "status": return o.ok() ? "ok" : "failed";
            case "error": return o.error();
            default:
                if (o.point().params().containsKey(c)) return o.point().params().get(c);
                Object x = f.get(c);
                if (x == null) return null;
                return t == DataTypes.LongType ? (Object) ((Number) x).longValue()
                        : (Object) ((Number) x).doubleValue();
        }
    }
}
