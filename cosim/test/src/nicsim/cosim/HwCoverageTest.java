package nicsim.cosim;

import static org.junit.jupiter.api.Assertions.*;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import nicsim.cosim.cli.Main;
import nicsim.profile.Profile;
import nicsim.profile.Profiles;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** nicsim hw coverage: Verilator's coverage of a block's RTL over a short lockstep stimulus. */
class HwCoverageTest {
    private static final long CYCLES = 150; // short: some of the DoorbellDecoder's lines are not reached yet

    @Test
    void aShortStimulusCoversSomeButNotAllAndTheReportFilesAgree(@TempDir Path out) throws Exception {
        Profile p = Profiles.load("cx-gen3x16");
        HwCoverage.Report r = HwCoverage.run(p, "doorbell", null, CYCLES, List.of(1L), out, l -> {});
        assertEquals("DoorbellDecoder", r.module());
        double lines = r.percent(HwCoverage.LINE), toggles = r.percent(HwCoverage.TOGGLE);
        assertTrue(lines > 0 && lines < 100, "line coverage " + lines);
        assertTrue(toggles > 0 && toggles < 100, "toggle coverage " + toggles);
        List<String> verilog = Files.readAllLines(r.dir().resolve("DoorbellDecoder.v"));
        for (HwCoverage.Point m : r.missed()) {
            assertEquals("DoorbellDecoder.v", m.file());
            assertTrue(m.line() >= 1 && m.line() <= verilog.size(), "a point on a line of the Verilog: " + m);
        }
        assertTrue(r.missed().stream().anyMatch(m -> m.kind().equals(HwCoverage.LINE)), "an unreached line is named");
        assertTrue(r.missed().stream().anyMatch(m -> m.kind().equals(HwCoverage.TOGGLE) && m.what().startsWith("io_")),
                "an unflipped port bit is named: " + r.missed());

        // lcov's data says the same: a line it counts 0 carries a missed point; a line with every point missed counts 0
        Map<Integer, Long> da = new HashMap<>();
        for (String l : Files.readAllLines(r.info()))
            if (l.startsWith("DA:")) {
                String[] f = l.substring(3).split(",");
                da.put(Integer.parseInt(f[0]), Long.parseLong(f[1]));
            }
        Set<Integer> missedLines = r.missed().stream().map(HwCoverage.Point::line).collect(Collectors.toSet());
        Set<Integer> hitLines = r.points().stream().filter(x -> x.count() > 0).map(HwCoverage.Point::line)
                .collect(Collectors.toSet());
        Set<Integer> pointLines = r.points().stream().map(HwCoverage.Point::line).collect(Collectors.toSet());
        assertTrue(da.keySet().containsAll(pointLines), "lcov has every point's line (and the lines a block spans)");
        da.forEach((line, n) -> {
            if (n == 0 && pointLines.contains(line)) assertTrue(missedLines.contains(line), "line " + line);
            if (pointLines.contains(line) && !hitLines.contains(line))
                assertEquals(0L, n, "line " + line + " has no point hit");
        });
        assertTrue(da.containsValue(0L), "some line is never reached: " + r.missed());
        String html = Files.readString(r.html());
        assertTrue(html.contains("DoorbellDecoder") && html.contains("io_mmio_valid"),
                "the HTML report shows the Verilog: " + r.html());

        // a second run with another seed is merged with the first: it covers at least as much
        HwCoverage.Report both = HwCoverage.run(p, "doorbell", null, CYCLES, List.of(2L), out, l -> {});
        assertEquals(2, both.runs());
        assertTrue(both.hit(HwCoverage.TOGGLE) >= r.hit(HwCoverage.TOGGLE) && both.hit(HwCoverage.LINE) >= r.hit(
                HwCoverage.LINE), r.hit(HwCoverage.TOGGLE) + " then " + both.hit(HwCoverage.TOGGLE));
    }

    @Test
    void theTableListsTheNeverHitPoints(@TempDir Path out) throws Exception {
        PrintStream old = System.out;
        ByteArrayOutputStream buf = new ByteArrayOutputStream();
        int code;
        try {
            System.setOut(new PrintStream(buf, true));
            code = Main.run("hw", "coverage", "doorbell", "--cycles", Long.toString(CYCLES), "--runs",
                    "1", "--out", out.toString());
        } finally {
            System.setOut(old);
        }
        String text = buf.toString();
        assertEquals(0, code, text);
        assertTrue(text.matches("(?s).*doorbell\\s+DoorbellDecoder\\s+1\\s+.*"), text);
        List<String> missed = Files.readAllLines(out.resolve("doorbell").resolve("missed.txt"));
        assertFalse(missed.isEmpty());
        assertTrue(text.contains("  " + missed.stream().filter(m -> m.contains(" line ")).findFirst().orElseThrow()),
                "the first unreached line is printed: " + text);
    }

    @Test
    void aUsersOwnModuleIsCoveredTheSameWay(@TempDir Path dir) throws Exception {
        Path own = dir.resolve("doorbell_decoder_hand.v");
        try (var in = HwCoverageTest.class.getResourceAsStream("/nicsim/rtl/doorbell_decoder_hand.v")) {
            Files.copy(in, own);
        }
        Profile p = Profiles.load("cx-gen3x16");
        HwCoverage.Report r = HwCoverage.run(p, "doorbell", new RtlInLoop.Own(List.of(own), "doorbell_decoder_hand"),
                CYCLES, List.of(1L), dir.resolve("out"), l -> {});
        assertEquals("doorbell_decoder_hand", r.module());
        assertTrue(r.total(HwCoverage.LINE) > 0 && r.hit(HwCoverage.TOGGLE) > 0, r.toString());
        assertTrue(r.points().stream().allMatch(x -> x.file().equals("doorbell_decoder_hand.v")), "its own source");
        assertTrue(r.html().getFileName().toString().equals("doorbell_decoder_hand.v.gcov.html"), r.html().toString());
    }

    @Test
    void anUnknownBlockIsOneLineAndExitTwo() {
        assertEquals(2, Main.run("hw", "coverage", "nope"));
    }
}
