package nicsim.cosim.cli;

import static org.junit.jupiter.api.Assertions.*;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import nicsim.wave.VcdReader;
import nicsim.wave.Waveform;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class RunCommandTest {
    private static String capture(Runnable r) {
        PrintStream old = System.out;
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        System.setOut(new PrintStream(b));
        try { r.run(); } finally { System.setOut(old); }
        return b.toString();
    }

    @Test
    void aWorkloadRunsAndPrintsFiguresBreakdownCountersAndWaveform(@TempDir Path dir) throws Exception {
        Path wave = dir.resolve("w.vcd.gz"), tl = dir.resolve("t.json");
        int[] rc = {-1};
        String out = capture(() -> rc[0] = Main.run("run", "write_bw", "--iters", "40", "--size", "4096",
                "--profile", "lanai72", "--wave", wave.toString(), "--timeline", tl.toString()));
        assertEquals(0, rc[0], out);
        assertTrue(out.contains("BW average[Gb/sec]"), out);
        assertTrue(out.contains("-> on_wire") && out.contains("on_wire ->"), out);
        assertTrue(out.contains("Fabric.packets"), out);
        assertTrue(out.contains("write_bw: data and completions checked: OK"), out);
        Waveform w = VcdReader.read(wave);
        var signals = w.signals().keySet();
        assertTrue(signals.stream().anyMatch(s -> s.contains("MttWalker") && s.contains("io_req_valid")),
                signals.toString());
        assertTrue(Files.readString(tl).contains("on_wire"));
    }

    @Test
    void setOverridesAProfileParameterForTheRun() {
        String base = capture(() -> Main.run("run", "send_lat", "--iters", "20"));
        String slower = capture(() -> Main.run("run", "send_lat", "--iters", "20", "--set", "pci.link.latency=800 ns"));
        Pattern simulated = Pattern.compile("simulated ([0-9.]+) us");
        Matcher a = simulated.matcher(base), b = simulated.matcher(slower);
        assertTrue(a.find() && b.find(), base + slower);
        // two more PCIe crossings per message at 400 ns more each: at least 0.8 us per iteration
        assertTrue(Double.parseDouble(b.group(1)) - Double.parseDouble(a.group(1)) > 20 * 0.8, base + slower);
        assertEquals(2, Main.run("run", "send_lat", "--set", "pci.link.latency=8 MHz" + "x"));
        assertEquals(2, Main.run("run", "send_lat", "--set", "no.such.key=1"));
        assertEquals(2, Main.run("run", "send_lat", "--set", "dma.channels"));
    }

    @Test
    void badArgumentsGetAOneLineErrorNamingTheFlag() {
        assertEquals(2, Main.run("run", "write_bw", "--mtu", "3000"));
        assertEquals(2, Main.run("run", "nope_bw"));
        assertEquals(2, Main.run("run", "write_bw", "--rtl", "fpu"));
        assertEquals(2, Main.run("run", "write_bw", "--faults", "drop=2"));
    }

    @Test
    void rtlInTheLoopRunsTwiceAndComparesSideBySide() {
        int[] rc = {-1};
        String out = capture(() -> rc[0] = Main.run("run", "rc_pingpong", "--iters", "3", "--size", "512",
                "--rtl", "doorbell,wqe"));
        assertEquals(0, rc[0], out);
        assertTrue(out.contains("model vs RTL in the loop"), out);
        assertTrue(out.contains("identical bytes, completions and cycle counts with and without RTL"), out);
        assertTrue(out.contains("doorbell="), out);
    }

    @Test
    void theDmaEnginesRunFromRtlInTheLoop() {
        int[] rc = {-1};
        String out = capture(() -> rc[0] = Main.run("run", "rc_pingpong", "--iters", "3", "--size", "5000",
                "--profile", "lanai72", "--rtl", "dma"));
        assertEquals(0, rc[0], out);
        assertTrue(out.contains("identical bytes, completions and cycle counts with and without RTL"), out);
        assertTrue(out.contains("dma="), out);
    }

    /** The per-stage table comes from numbers kept without a timeline: the same table as from a timeline's stages. */
    @Test
    void theStageTableIsTheSameWithOrWithoutATimeline(@TempDir Path dir) {
        String[] run = {"run", "write_bw", "read_bw", "--iters", "300", "--size", "2048", "--faults", "dup=0.02"};
        String without = capture(() -> Main.run(run));
        String[] traced = Arrays.copyOf(run, run.length + 2);
        traced[run.length] = "--timeline";
        traced[run.length + 1] = dir.resolve("t.json").toString();
        String with = capture(() -> Main.run(traced));
        assertTrue(without.contains("payload_read -> acked"), without);
        assertEquals(stageTables(with), stageTables(without));
    }

    private static String stageTables(String out) {
        return String.join("\n", out.lines().dropWhile(l -> !l.startsWith("per-stage"))
                .filter(l -> l.startsWith("per-stage") || l.contains(" -> ") || l.contains("timeline kept")).toList());
    }

    @Test
    void lossIsRecoveredAndReported() {
        int[] rc = {-1};
        String out = capture(() -> rc[0] = Main.run("run", "write_bw", "--iters", "60", "--size", "16384",
                "--faults", "drop=0.02", "--seed", "3"));
        assertEquals(0, rc[0], out);
        assertTrue(out.contains("Fabric.dropped"), out);
        assertTrue(out.contains("Firmware.retransmits"), out);
    }

    /**
     * Each node's counters beside the total: the writer reads the payload from its host, the target writes it to its
     * own.
     */
    @Test
    void countersAreShownPerNode() {
        int[] rc = {-1};
        String out = capture(() -> rc[0] = Main.run("run", "write_bw", "--iters", "20", "--size", "8192"));
        assertEquals(0, rc[0], out);
        assertTrue(out.contains("all nodes       node0       node1"), out);
        long bytes = 20 * 8192;
        String n = String.format("%,d", bytes);
        assertTrue(out.lines().anyMatch(l -> l.matches("\\s+Firmware\\.dma_read_bytes\\s+" + n + "\\s+" + n + "\\s+0")),
                out);
        assertTrue(out.lines().anyMatch(l -> l.matches("\\s+Firmware\\.dma_write_bytes\\s+" + n + "\\s+0\\s+" + n)),
                out);
        assertTrue(out.lines().anyMatch(l -> l.matches("\\s+Fabric\\.packets\\s+[0-9,]+")),
                "the fabric's counters have no node: " + out);
    }
}
