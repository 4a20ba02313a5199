package nicsim.cosim.cli;

import static org.junit.jupiter.api.Assertions.*;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import nicsim.profile.Profiles;
import nicsim.wave.VcdReader;
import nicsim.wave.Waveform;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

class PlatformDemoTest {
    @Test
    void everyProfileDeliversEveryWqeByteForByte() throws Exception {
        for (String name : Profiles.BUILTIN) {
            PlatformDemo.Result r = PlatformDemo.run(Profiles.load(name), 40, null, null);
            assertEquals(40 + PlatformDemo.NOPS, r.posted(), name);
            assertEquals(40 + PlatformDemo.NOPS, r.verified(), name);
            assertEquals(PlatformDemo.NOPS, r.completions(), name);
            assertEquals(1, r.interrupts(), name);
            assertTrue(r.errors().isEmpty(), name + ": " + r.errors());
            for (long s : r.stageMeanPicos()) assertTrue(s > 0, name + ": every stage takes time");
        }
    }

    @Test
    void sameInputsGiveIdenticalCyclesAndCounters() throws Exception {
        PlatformDemo.Result a = PlatformDemo.run(Profiles.load("lanai72"), 20, null, null);
        PlatformDemo.Result b = PlatformDemo.run(Profiles.load("lanai72"), 20, null, null);
        assertEquals(a.cycles(), b.cycles());
        assertEquals(a.counters(), b.counters());
        assertArrayEquals(a.stageMeanPicos(), b.stageMeanPicos());
    }

    @Test
    void theModernLinkFetchesFasterThanThe1999Bus() throws Exception {
        long cx = PlatformDemo.run(Profiles.load("cx-gen3x16"), 16, null, null).stageMeanPicos()[2];
        long l43 = PlatformDemo.run(Profiles.load("lanai43"), 16, null, null).stageMeanPicos()[2];
        assertTrue(cx < l43, "fetch on cx " + cx + " ps vs lanai43 " + l43 + " ps");
    }

    @Test
    void waveformAndTimelineAreWritten(@TempDir Path dir) throws Exception {
        Path wave = dir.resolve("demo.vcd.gz"), timeline = dir.resolve("t.json");
        PlatformDemo.run(Profiles.load("cx-gen3x16"), 16, wave, timeline);
        Waveform w = VcdReader.read(wave);
        assertTrue(w.signals().containsKey("TOP.WqeFetcher.io_dmaReq_payload_addr"), w.signals().keySet().toString());
        assertTrue(w.signal("TOP.DoorbellDecoder.io_mmio_valid").changes().size() >= 2);
        assertTrue(Files.readString(timeline).contains("\"fetch_issued\""));
    }

    @Test
    void badArgumentsGetOneLineNamingTheFlag() {
        assertEquals(2, Main.run("demo", "--profile", "cx-gen9"));
        assertEquals(2, Main.run("demo", "--wqes", "0"));
        StringWriter err = new StringWriter();
        CommandLine cl = new CommandLine(new Main());
        cl.setErr(new PrintWriter(err, true));
        assertEquals(2, cl.execute("demo", "--wqes", "many"));
        assertTrue(err.toString().contains("--wqes"), err.toString());
    }
}
