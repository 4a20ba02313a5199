package nicsim.cosim.sweep;

import static org.junit.jupiter.api.Assertions.*;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import nicsim.cosim.cli.Main;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The figures a sweep may plot: a name no point can give is refused before any run, one no point
 * gave is reported after it.
 */
class SweepFiguresTest {
    private static final String BASE =
            "workload = \"write_bw\"\n%s\n[options]\niters = 10\n[vary]\nsize = [1024, 4096]\n";

    private static String refusal(String top) {
        return assertThrows(SweepSpec.BadSweep.class, () -> SweepSpec.parse(BASE.formatted(top), "s.toml"))
                .getMessage();
    }

    @Test
    void aMisspelledFigureIsNamedWithTheFiguresAccepted() {
        String m = refusal("plot = [\"bw_avg_gbpz\"]");
        assertTrue(m.startsWith("s.toml: plot: figure 'bw_avg_gbpz' unknown; accepted: bytes, iters, bw_avg_gbps, "),
                m);
        assertTrue(m.contains("sim_us") && m.contains("'cycles STAGE'") && m.contains("luts"), m);
        assertTrue(refusal("pareto = [\"luts mtt\", \"bw_avg_gbz\"]\ncost = [\"mtt\"]")
                .contains("pareto: figure 'bw_avg_gbz' unknown"));
        assertTrue(refusal("pareto = [\"luts dma\", \"bw_avg_gbps\"]")
                .contains("pareto: figure 'luts dma' needs block 'dma' in cost"));
        assertTrue(refusal("plot = [\"luts dma\"]\ncost = [\"mtt\"]")
                .contains("plot: figure 'luts dma' needs block 'dma' in cost"));
    }

    @Test
    void everyFigureARunGivesMayBePlottedAndOneItDidNotGiveIsReported() {
        SweepSpec spec = SweepSpec.parse(BASE.formatted("plot = [\"Fabric.bytez\", \"bw_avg_gbps\"]"), "s.toml");
        List<PointRun.Outcome> runs = new ArrayList<>();
        for (Point p : spec.points()) runs.add(PointRun.run(spec, p));
        for (PointRun.Outcome o : runs) assertTrue(o.ok(), o.error());
        List<String> figures = new ArrayList<>(runs.get(0).figures().keySet());
        assertTrue(figures.containsAll(PointRun.FIGURES), figures.toString());
        // no false refusal: a sweep may plot every figure a point gives (stages, counters and all)
        String all = String.join("\", \"", figures);
        assertEquals(figures, SweepSpec.parse(BASE.formatted("plot = [\"" + all + "\"]"), "s.toml").plot());
        List<String> absent = SweepPlots.absent(spec, runs);
        assertEquals(1, absent.size(), absent.toString());
        assertTrue(absent.get(0).startsWith("figure 'Fabric.bytez' is in no point's results"), absent.get(0));
        assertTrue(absent.get(0).contains("Fabric.bytes") && absent.get(0).contains("bw_avg_gbps"), absent.get(0));
    }

    @Test
    void theCommandRefusesATypoInOneLineBeforeRunningAnything(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("s.toml");
        Files.writeString(file, BASE.formatted("plot = [\"bw_avg_gbpz\"]"));
        PrintStream old = System.err;
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        System.setErr(new PrintStream(err, true));
        int rc;
        try { rc = Main.run("sweep", file.toString(), "--jobs", "1"); } finally { System.setErr(old); }
        assertEquals(2, rc, err.toString());
        assertTrue(err.toString().strip().startsWith("nicsim: " + file + ": plot: figure 'bw_avg_gbpz' unknown"),
                err.toString());
        assertFalse(Files.exists(dir.resolve("s-results").resolve("points.jsonl")), "no point ran");
        // a counter's form passes the file's check; found in no point, the run names it and exits 1, not 0
        Files.writeString(file, BASE.formatted("plot = [\"Fabric.bytez\"]"));
        err.reset();
        System.setErr(new PrintStream(err, true));
        try { rc = Main.run("sweep", file.toString(), "--jobs", "1"); } finally { System.setErr(old); }
        assertEquals(1, rc, err.toString());
        assertTrue(err.toString().contains("nicsim: " + file + ": figure 'Fabric.bytez' is in no point's results"),
                err.toString());
    }
}
