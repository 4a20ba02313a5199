package nicsim.cosim.sweep.spark;

import static org.junit.jupiter.api.Assertions.*;

import java.io.File;
import java.io.OutputStream;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Collectors;
import java.util.zip.ZipFile;
import nicsim.cosim.sweep.LocalSweep;
import nicsim.cosim.sweep.SweepResults;
import nicsim.cosim.sweep.SweepSpec;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.functions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SparkSweepTest {
    static final String SWEEP = """
            workload = "write_bw"
            seeds = [1, 2]
            [options]
            iters = 20
            [vary]
            "dma.channels" = [1, 4, 0]
            size = [1024, 4096]
            """;
    private static final PrintStream QUIET = new PrintStream(OutputStream.nullOutputStream());

    @Test
    void sparkGivesTheLocalTableAndItsParquetCopy(@TempDir Path dir) throws Exception {
        SweepSpec spec = SweepSpec.parse(SWEEP, "test");
        SweepResults local = new SweepResults(dir.resolve("local"), spec);
        SweepResults spark = new SweepResults(dir.resolve("spark"), spec);
        LocalSweep.run(spec, local, 2, QUIET);
        SparkSession s = SparkSession.builder().master("local[2]").appName("test")
                .config("spark.ui.enabled", "false").getOrCreate();
        try {
            LocalSweep.Summary sum = SparkSweep.run(s, spec, spark, QUIET);
            assertEquals(12, sum.ran());
            assertEquals(4, sum.failed()); // dma.channels = 0: recorded, and the rest ran
            String csv = Files.readString(local.writeCsv(spec));
            assertEquals(csv, Files.readString(spark.writeCsv(spec)));

            Dataset<Row> pq = s.read().parquet(dir.resolve("spark/results.parquet").toString())
                    .orderBy(functions.col("`dma.channels`"), functions.col("size"), functions.col("seed"));
            List<Row> rows = pq.collectAsList();
            assertEquals(12, rows.size());
            List<String> header = Arrays.asList(csv.lines().findFirst().orElseThrow().split(","));
            assertEquals(header, Arrays.asList(pq.columns()));
            // a figure read back from Parquet equals the CSV's: first ok row is channels=1, size=1024, seed=1
            Row r = rows.stream().filter(x -> x.getAs("dma.channels").equals("1")).findFirst().orElseThrow();
            String[] line = csv.lines().skip(1).findFirst().orElseThrow().split(",");
            assertEquals(Double.parseDouble(line[header.indexOf("bw_avg_gbps")]), (double) r.getAs("bw_avg_gbps"));
            assertEquals(Long.parseLong(line[header.indexOf("Fabric.bytes")]), (long) r.getAs("Fabric.bytes"));
            Row none = rows.stream().filter(x -> x.getAs("dma.channels").equals("0")).findFirst().orElseThrow();
            assertEquals("failed", none.getAs("status"));
        } finally {
            s.stop();
        }
    }

    /**
     * The jar spark-submit takes, run as spark-submit runs it (the master a system property, Spark's jars beside
     * it).
     */
    @Test
    void theSweepJarRunsAsASparkApplication(@TempDir Path dir) throws Exception {
        Path jar = Path.of(System.getProperty("nicsim.sweepJar"));
        assertTrue(Files.size(jar) > 1_000_000, jar.toString());
        try (var z = new ZipFile(jar.toFile())) {
            assertNotNull(z.getEntry("nicsim/cosim/sweep/spark/SweepJob.class"));
            assertNull(z.getEntry("org/apache/spark/SparkContext.class"), "Spark is the cluster's, not the jar's");
        }
        Path file = dir.resolve("s.toml");
        Files.writeString(file, SWEEP.replace(", 0]", "]"));
        // Spark's own jars: this test's classpath without nicsim's classes (those come from the jar)
        String sparkJars = Arrays.stream(System.getProperty("java.class.path").split(File.pathSeparator))
                .filter(e -> !e.contains(File.separator + "out" + File.separator))
                .collect(Collectors.joining(File.pathSeparator));
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<String> cmd = new ArrayList<>(List.of(java, "-Dspark.master=local[2]", "-Dspark.ui.enabled=false"));
        cmd.addAll(ManagementFactory.getRuntimeMXBean().getInputArguments().stream()
                .filter(a -> a.startsWith("--add-opens")).toList());
        cmd.addAll(List.of("-cp", jar + File.pathSeparator + sparkJars, "nicsim.cosim.sweep.spark.SweepJob",
                file.toString(), "--out", dir.resolve("r").toString()));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        assertEquals(0, p.waitFor(), out);
        assertTrue(out.contains("8 points run now"), out);
        SweepSpec spec = SweepSpec.read(file);
        SweepResults local = new SweepResults(dir.resolve("local"), spec);
        LocalSweep.run(spec, local, 2, QUIET);
        assertEquals(Files.readString(local.writeCsv(spec)), Files.readString(dir.resolve("r/results.csv")));
        assertTrue(Files.list(dir.resolve("r/results.parquet")).anyMatch(f -> f.toString().endsWith(".parquet")));
    }
}
