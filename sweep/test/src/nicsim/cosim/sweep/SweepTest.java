package nicsim.cosim.sweep;

import static org.junit.jupiter.api.Assertions.*;

import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import nicsim.cosim.cli.Main;
import nicsim.driver.World;
import nicsim.fabric.Faults;
import nicsim.profile.Profiles;
import nicsim.workloads.Options;
import nicsim.workloads.Result;
import nicsim.workloads.Workloads;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SweepTest {
    static final String SWEEP = """
            profile  = "cx-gen3x16"
            workload = "write_bw"
            seeds    = [1, 2]
            [options]
            iters = 20
            [vary]
            "dma.channels" = [1, 4]
            size = { from = 1024, to = 4096, times = 4 }
            """;

    private static final PrintStream QUIET = new PrintStream(OutputStream.nullOutputStream());

    @Test
    void pointsAreEveryCombinationAndTheirFiguresAreThoseOfASingleRun(@TempDir Path dir) throws Exception {
        SweepSpec spec = SweepSpec.parse(SWEEP, "test");
        List<Point> points = spec.points();
        assertEquals(8, points.size());
        assertEquals("dma.channels=1 size=1024 seed=1", points.get(0).key());
        assertEquals("dma.channels=4 size=4096 seed=2", points.get(7).key());

        SweepResults results = new SweepResults(dir, spec);
        LocalSweep.Summary s = LocalSweep.run(spec, results, 2, QUIET);
        assertEquals(8, s.ran());
        assertEquals(0, s.failed());
        // one point by hand: the same world, profile and options the sweep made
        World w = new World(2, Profiles.load("cx-gen3x16").with("dma.channels", "4"), 2, Faults.NONE);
        Result r = Workloads.run("write_bw", w, Options.defaults().with(set -> set.size(4096).iters(20)), QUIET);
        PointRun.Outcome o = results.inOrder(spec).get(7);
        assertEquals(r.rows().get(0).bwAvgGbps(), (double) o.figures().get("bw_avg_gbps"));
        assertEquals(r.rows().get(0).simPicos() / 1e6, (double) o.figures().get("sim_us"));
        assertEquals(w.sim.counters().get("Fabric.bytes"), o.figures().get("Fabric.bytes"));
        // more channels, more bandwidth at 4 KiB: the parameter reached the model
        double one = (double) results.inOrder(spec).get(6 - 4).figures().get("bw_avg_gbps"); // channels=1, 4096, seed 1
        double four = (double) results.inOrder(spec).get(6).figures().get("bw_avg_gbps");
        assertTrue(four > one * 1.2, one + " -> " + four);
    }

    @Test
    void oneWorkerOrTwoGiveTheSameTable(@TempDir Path dir) throws Exception {
        SweepSpec spec = SweepSpec.parse(SWEEP, "test");
        SweepResults a = new SweepResults(dir.resolve("a"), spec), b = new SweepResults(dir.resolve("b"), spec);
        LocalSweep.run(spec, a, 1, QUIET);
        LocalSweep.run(spec, b, 2, QUIET);
        String csv = Files.readString(a.writeCsv(spec));
        assertEquals(csv, Files.readString(b.writeCsv(spec)));
        assertEquals(9, csv.lines().count());
        String header = csv.lines().findFirst().orElseThrow();
        assertTrue(header.startsWith("dma.channels,size,seed,status,error,bytes,iters,bw_avg_gbps"), header);
    }

    @Test
    void aStoppedSweepResumesWithoutRunningItsPointsAgain(@TempDir Path dir) throws Exception {
        SweepSpec spec = SweepSpec.parse(SWEEP, "test");
        LocalSweep.run(spec, new SweepResults(dir, spec), 2, QUIET);
        String full = Files.readString(new SweepResults(dir, spec).writeCsv(spec));
        // as if killed: three points never written, the last of the rest cut in the middle of its line
        Path log = dir.resolve("points.jsonl");
        List<String> lines = Files.readAllLines(log);
        String cut = lines.get(4).substring(0, lines.get(4).length() / 2);
        Files.write(log, List.of(lines.get(0), lines.get(1), lines.get(2), lines.get(3), cut));
        SweepResults resumed = new SweepResults(dir, spec);
        assertEquals(4, resumed.size());
        LocalSweep.Summary s = LocalSweep.run(spec, resumed, 2, QUIET);
        assertEquals(4, s.skipped());
        assertEquals(4, s.ran());
        assertEquals(full, Files.readString(resumed.writeCsv(spec)));
        // nothing left: a third run runs nothing
        assertEquals(0, LocalSweep.run(spec, new SweepResults(dir, spec), 2, QUIET).ran());
    }

    @Test
    void aFailingPointIsRecordedAndTheSweepGoesOn(@TempDir Path dir) throws Exception {
        SweepSpec spec = SweepSpec.parse("""
                workload = "write_bw"
                [options]
                iters = 10
                [vary]
                "dma.channels" = [2, 0]
                """, "test");
        SweepResults results = new SweepResults(dir, spec);
        ByteArrayOutputStream log = new ByteArrayOutputStream();
        LocalSweep.Summary s = LocalSweep.run(spec, results, 1, new PrintStream(log));
        assertEquals(1, s.failed());
        List<PointRun.Outcome> rows = results.inOrder(spec);
        assertTrue(rows.get(0).ok());
        assertFalse(rows.get(1).ok());
        assertTrue(rows.get(1).error().contains("dma.channels"), rows.get(1).error());
        assertTrue(log.toString().contains("dma.channels=0 seed=1 failed"), log.toString());
        String csv = Files.readString(results.writeCsv(spec));
        assertTrue(csv.lines().skip(2).findFirst().orElseThrow().startsWith("0,1,failed,"), csv);
    }

    @Test
    void badSweepFilesNameTheKeyAndWhatItAccepts() {
        Map<String, String> cases = Map.of(
                "workload = \"write_bw\"\ncolour = 3\n[vary]\nsize = [1]", 
                        "key 'colour' unknown; accepted: cost, options, pareto, plot, profile, seeds, vary, workload",
                "workload = \"write_bw\"\ncost = [\"gpu\"]\n[vary]\nsize = [1]",
                        "cost: block 'gpu' unknown; accepted: ",
                "workload = \"write_bw\"\npareto = [\"luts dma\"]\n[vary]\nsize = [1]", "pareto must name two figures",
                "workload = \"write_bandwidth\"\n[vary]\nsize = [1]", "workload 'write_bandwidth' unknown; accepted: ",
                "workload = \"write_bw\"\n[vary]\n\"dma.chanels\" = [1]", "'dma.chanels' is neither a workload option",
                "workload = \"write_bw\"\n[vary]\nsize = { from = 1, to = 8 }",
                        "size: a range needs from, to, and one of step or times",
                "workload = \"write_bw\"\n[vary]\nsize = { from = 1, to = 8, by = 2 }",
                        "vary.size.by unknown; accepted: from, to, step or times",
                "workload = \"write_bw\"", "key 'vary' missing or empty",
                "workload = \"write_bw\"\nprofile = \"cx-gen9\"\n[vary]\nsize = [1]", "profile 'cx-gen9'");
        cases.forEach((toml, expected) -> {
            SweepSpec.BadSweep e = assertThrows(SweepSpec.BadSweep.class, () -> SweepSpec.parse(toml, "s.toml"));
            assertTrue(e.getMessage().startsWith("s.toml: ") && e.getMessage().contains(expected), e.getMessage());
        });
    }

    @Test
    void aResultsFolderOfAnotherSweepIsRefused(@TempDir Path dir) throws Exception {
        SweepSpec spec = SweepSpec.parse(SWEEP, "test");
        SweepResults r = new SweepResults(dir, spec);
        r.add(PointRun.run(spec, spec.points().get(0)));
        SweepSpec other = SweepSpec.parse(SWEEP.replace("iters = 20", "iters = 30"), "test");
        SweepSpec.BadSweep e = assertThrows(SweepSpec.BadSweep.class, () -> new SweepResults(dir, other));
        assertTrue(e.getMessage().contains("another sweep"), e.getMessage());
    }

    @Test
    void theCommandWritesTableAndPlotsAndRefusesABadFileInOneLine(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("s.toml");
        Files.writeString(file, SWEEP);
        assertEquals(0, Main.run("sweep", file.toString(), "--jobs", "2"));
        Path out = dir.resolve("s-results");
        assertEquals(9, Files.readAllLines(out.resolve("results.csv")).size());
        for (String png : List.of("bw_avg_gbps-vs-dma.channels.png", "bw_avg_gbps-vs-size.png"))
            assertTrue(Files.size(out.resolve("plots").resolve(png)) > 5000, png);
        PrintStream old = System.err;
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        System.setErr(new PrintStream(err));
        int rc;
        try { rc = Main.run("sweep", dir.resolve("nothing.toml").toString()); } finally { System.setErr(old); }
        assertEquals(2, rc);
        assertEquals("nicsim: " + dir.resolve("nothing.toml") + ": no such sweep file", err.toString().strip());
    }

    /**
     * Cost columns: each point's block synthesized for the point's profile (one Yosys run per distinct
     * RTL), and the Pareto plot of cost against performance with the points no other beats.
     */
    @Test
    void costColumnsFollowTheRtlAndTheParetoFrontKeepsTheUnbeaten(@TempDir Path dir) throws Exception {
        SweepSpec spec = SweepSpec.parse("workload = \"write_bw\"\ncost = [\"mtt\"]\n"
                + "pareto = [\"memory_bits mtt\", \"bw_avg_gbps\"]\n[options]\niters = 20\nsize = 4096\n"
                + "[vary]\n\"mtt.mkey.entries\" = [64, 1024]\n", "cost.toml");
        List<PointRun.Outcome> runs = new ArrayList<>();
        for (var pt : spec.points()) runs.add(PointRun.run(spec, pt));
        for (var o : runs) assertTrue(o.ok(), o.error());
        long small = ((Number) runs.get(0).figures().get("memory_bits mtt")).longValue();
        long big = ((Number) runs.get(1).figures().get("memory_bits mtt")).longValue();
        assertTrue(big > small, "16 times the mkey entries, more memory: " + small + " / " + big);
        assertTrue(((Number) runs.get(0).figures().get("luts mtt")).longValue() > 100);
        Path png = SweepPlots.pareto(spec, runs, dir);
        assertTrue(Files.size(png) > 5000, png.toString());
        List<double[]> front = SweepPlots.front(List.of(new double[]{1, 10}, new double[]{2, 9}, new double[]{2, 12},
                new double[]{3, 12}, new double[]{4, 20}));
        assertEquals(List.of("1.0 10.0", "2.0 12.0", "4.0 20.0"), front.stream().map(a -> a[0] + " " + a[1]).toList());
    }

    @Test
    void rangesStepAndMultiply() {
        SweepSpec spec = SweepSpec.parse("workload = \"write_bw\"\n[vary]\nsize = { from = 64, to = 1000, times = 4 }\n"
                + "\"link.propagation\" = { from = 0.5, to = 1.5, step = 0.5 }", "t");
        assertEquals(List.of("64", "256"), spec.vary().get("size"));
        assertEquals(List.of("0.5", "1", "1.5"), spec.vary().get("link.propagation"));
    }
}
