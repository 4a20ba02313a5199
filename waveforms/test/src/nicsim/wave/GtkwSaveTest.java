package nicsim.wave;

import static org.junit.jupiter.api.Assertions.*;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every waveform written to a file gets a GTKWave save file beside it, which names it and groups its wires by
 * block.
 */
class GtkwSaveTest {
    @TempDir Path dir;

    @Test
    void aWrittenWaveformHasASaveFileThatOpensItWithItsPortsGroupedByBlock() throws Exception {
        Path dump = dir.resolve("run.vcd.gz");
        try (VcdWriter w = VcdWriter.open(dump, "1ps")) {
            VcdWriter.Wire v = w.wire("TOP.DoorbellDecoder", "io_doorbell_valid", 1);
            VcdWriter.Wire q = w.wire("TOP.DoorbellDecoder", "io_doorbell_payload_qpn", 24);
            VcdWriter.Wire r = w.wire("TOP.WqeFetcher", "io_dmaReq_ready", 1);
            w.set(0, v, 1);
            w.set(0, q, 0x12);
            w.set(10, r, 1);
        }
        Path save = dir.resolve("run.gtkw");
        assertTrue(Files.exists(save), "no save file beside " + dump);
        List<String> lines = Files.readAllLines(save);
        assertTrue(lines.contains("[dumpfile] \"" + dump.toAbsolutePath() + "\""), lines.toString());
        // each block a group holding its ports in declaration order; a vector by the name GTKWave gives it
        List<String> shown = new ArrayList<>();
        for (String l : lines) if (!l.startsWith("[") && !l.startsWith("@")) shown.add(l);
        assertEquals(List.of("-DoorbellDecoder", "TOP.DoorbellDecoder.io_doorbell_valid",
                "TOP.DoorbellDecoder.io_doorbell_payload_qpn[23:0]", "-DoorbellDecoder",
                "-WqeFetcher", "TOP.WqeFetcher.io_dmaReq_ready", "-WqeFetcher"), shown);
        // the range GTKWave shows is the one the dump declares
        String vcd = new String(WaveFiles.openInput(dump).readAllBytes());
        assertTrue(vcd.contains(" io_doorbell_payload_qpn [23:0] $end"), vcd);
    }

    @Test
    void theSaveFileIsNamedForTheDumpWhateverItsCompression() {
        assertEquals(dir.resolve("a.gtkw"), GtkwSave.beside(dir.resolve("a.vcd")));
        assertEquals(dir.resolve("a.gtkw"), GtkwSave.beside(dir.resolve("a.vcd.xz")));
        assertEquals(dir.resolve("b.c.gtkw"), GtkwSave.beside(dir.resolve("b.c.vcd.gz")));
    }
}
