package nicsim.cosim.bench;

import static org.junit.jupiter.api.Assertions.*;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import nicsim.cosim.bench.WorkPerMessage.Figures;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The work the simulator does per message, against the committed baseline: counts, never a duration.
 * A figure that rose beyond its tolerance fails here with the run, the figure, old and new value; one
 * that fell fails too, asking for the baseline to be rewritten in the same commit.
 */
class WorkPerMessageTest {
    private static final Path ROOT = Path.of(System.getProperty("nicsim.root", ".")).toAbsolutePath();

    @Test
    void everyRunDoesNoMoreWorkPerMessageThanTheBaseline() throws Exception {
        var baseline = WorkBaseline.read(ROOT.resolve(WorkBaseline.PATH));
        var measured = WorkPerMessage.measureAll();
        System.err.print(WorkBaseline.format(measured)); // today's figures in the test's log, to compare by eye
        List<String> moved = WorkBaseline.compare(baseline, measured);
        assertEquals(List.of(), moved, "work per message moved beyond its tolerance:\n" + String.join("\n", moved));
    }

    @Test
    void deterministicCountsRepeatExactly() {
        var run = WorkPerMessage.RUNS.get(0); // write_bw 64 B: the cheapest
        Figures a = WorkPerMessage.measure(run), b = WorkPerMessage.measure(run);
        assertEquals(a.events(), b.events());
        assertEquals(a.edges(), b.edges());
        assertEquals(a.coastedEdges(), b.coastedEdges());
        // 64 bytes cross a local bus four times (host to SRAM, to the link; from the link, to the host),
        // 2 beats of 32 bytes each
        assertEquals(8.0, a.beats());
        assertTrue(a.events() > 0 && a.allocatedBytes() > 0, a.toString());
    }

    /** {@code base}'s figures, {@code run}'s events and allocation scaled by the factors given. */
    private static Map<String, Figures> scaled(Map<String, WorkBaseline.Row> base, String run, double events,
            double alloc) {
        Map<String, Figures> m = new LinkedHashMap<>();
        base.forEach((k, r) -> {
            Figures f = r.figures();
            m.put(k, !k.equals(run) ? f
                    : new Figures(f.events() * events, f.edges(), f.coastedEdges(), f.beats(),
                            f.allocatedBytes() * alloc));
        });
        return m;
    }

    @Test
    void aRiseFailsNamingTheFigureAndAFallAsksForANewBaseline(@TempDir Path dir) throws Exception {
        Map<String, Figures> same = new LinkedHashMap<>();
        for (var r : WorkPerMessage.RUNS) same.put(r.name(), new Figures(100, 50, 10, 8, 10_000));
        Path file = dir.resolve("work.tsv");
        Files.writeString(file, WorkBaseline.format(same));
        var base = WorkBaseline.read(file);
        String run = WorkPerMessage.RUNS.get(1).name();
        assertEquals(List.of(), WorkBaseline.compare(base, same));
        assertEquals(List.of(), WorkBaseline.compare(base, scaled(base, run, 1.004, 1.14)), "within 0.5 % and 15 %");

        List<String> rose = WorkBaseline.compare(base, scaled(base, run, 1.01, 1));
        assertEquals(1, rose.size(), rose.toString());
        assertTrue(rose.get(0).startsWith(run + ": events rose from 100.00 to 101.00 per message (+1.0 %"),
                rose.get(0));

        List<String> fell = WorkBaseline.compare(base, scaled(base, run, 1, 0.8));
        assertEquals(1, fell.size(), fell.toString());
        assertTrue(fell.get(0).contains("allocated_bytes fell from 10,000.00 to 8,000.00")
                        && fell.get(0).endsWith(WorkBaseline.UPDATE),
                fell.get(0));

        var missing = new LinkedHashMap<>(base);
        missing.remove(run);
        assertTrue(WorkBaseline.compare(missing, same).get(0).contains(run + ": not in the baseline"));
    }

    @Test
    void aMalformedBaselineNamesTheLineAndField(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("work.tsv");
        Files.writeString(file, "run\titers\tevents\tedges\tcoasted_edges\tdma_beats\tallocated_bytes\n"
                + "write_bw 64 B\t4000\tmany\t1\t1\t1\t1\n");
        var e = assertThrows(IllegalArgumentException.class, () -> WorkBaseline.read(file));
        assertTrue(e.getMessage().contains("line 2: events 'many' is not a number"), e.getMessage());
        var none = assertThrows(IllegalArgumentException.class, () -> WorkBaseline.read(dir.resolve("absent.tsv")));
        assertTrue(none.getMessage().contains(WorkBaseline.UPDATE), none.getMessage());
    }
}
