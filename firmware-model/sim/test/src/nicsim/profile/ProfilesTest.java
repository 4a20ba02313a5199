package nicsim.profile;

import static org.junit.jupiter.api.Assertions.*;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ProfilesTest {
    @Test
    void builtinProfilesLoadWithUnitsConverted() {
        Profile cx = Profiles.load("cx-gen3x16");
        assertEquals(4_000, cx.periodPicos("core.clock"));          // 250 MHz
        assertEquals(256, cx.bytes("pci.max.payload"));
        assertEquals(135_000, cx.picos("pci.link.latency"));
        assertEquals(8_000_000_000L, cx.bitsPerSecond("pci.lane.rate"));
        assertArrayEquals(new long[]{128, 130}, cx.ratio("pci.encoding"));
        assertEquals("pcie", cx.text("pci.kind"));
        assertEquals(0xFEE00000L, cx.count("host.msi.address"));

        Profile l43 = Profiles.load("lanai43"), l72 = Profiles.load("lanai72");
        assertEquals(32, l43.bits("core.datapath.width"));
        assertEquals(64, l72.bits("core.datapath.width"));               // KVIA's 64-bit LBUS and DMA
        assertEquals(l43.bits("pci.bus.width"), l72.bits("pci.bus.width")); // same hosts: inherited
        assertEquals(16L << 20, l72.bytes("pci.bar0.size"));
        assertEquals(30_303, l43.periodPicos("pci.clock"));              // 33 MHz, rounded to a whole ps
    }

    @Test
    void everyBuiltinParameterSaysWhatItIs() {
        for (String name : Profiles.BUILTIN) {
            Profile p = Profiles.load(name);
            assertFalse(p.description().isBlank(), name);
            p.params().values().forEach(x -> assertFalse(x.description().isBlank(), name + " " + x.name()));
        }
    }

    @Test
    void printShowsValuesMeaningsAndSources() {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        Profiles.load("lanai72").print(new PrintStream(b, true));
        String s = b.toString();
        assertTrue(s.contains("profile lanai72"), s);
        assertTrue(s.contains("core.clock") && s.contains("66 MHz (= 66000000 Hz)"), s);
        assertTrue(s.contains("docs/sources.md#kvia-measurements"), s);
    }

    @Test
    void wrongDimensionOrMissingNameIsAnErrorNamingTheParameter() {
        Profile p = Profiles.load("cx-gen3x16");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> p.picos("pci.max.payload"));
        assertTrue(e.getMessage().contains("pci.max.payload") && e.getMessage().contains("SIZE"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> p.picos("no.such.thing"));
        assertTrue(e.getMessage().contains("no.such.thing"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> Profiles.load("cx-gen9"));
        assertTrue(e.getMessage().contains("cx-gen9") && e.getMessage().contains("lanai43"), e.getMessage());
    }

    @Test
    void overridesKeepTheDimension() {
        Profile p = Profiles.load("cx-gen3x16").with("pci.max.payload", "128 B");
        assertEquals(128, p.bytes("pci.max.payload"));
        Profile fourNs = Profiles.load("cx-gen3x16").with("core.clock", "4 ns");
        assertEquals(250_000_000L, fourNs.periodPicos("core.clock") * 62_500L);
        IllegalArgumentException e =
                assertThrows(IllegalArgumentException.class, () -> p.with("pci.max.payload", "3 ns"));
        assertTrue(e.getMessage().contains("pci.max.payload"), e.getMessage());
    }

    @Test
    void filesParseAndReportTheLineOfAnError(@TempDir Path dir) throws Exception {
        Path f = dir.resolve("mine.profile");
        Files.writeString(f, "profile mine\nabout test\nextends lanai72\n"
                + "core.clock = 7.5 ns | faster core | made up\n");
        Profile p = Profiles.load(f.toString());
        assertEquals(7_500, p.periodPicos("core.clock"));
        assertEquals(64, p.bits("core.datapath.width"));
        Files.writeString(f, "profile bad\nx.y = 3 furlongs | distance\n");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Profiles.load(f.toString()));
        assertTrue(e.getMessage().contains(":2") && e.getMessage().contains("furlongs"), e.getMessage());
        Files.writeString(f, "profile bad\nx.y = 0.5 ps | half a picosecond\n");
        e = assertThrows(IllegalArgumentException.class, () -> Profiles.load(f.toString()));
        assertTrue(e.getMessage().contains("whole number"), e.getMessage());
        Files.writeString(f, "profile bad\nx.y = 5 ns\n");
        e = assertThrows(IllegalArgumentException.class, () -> Profiles.load(f.toString()));
        assertTrue(e.getMessage().contains("no description"), e.getMessage());
    }

    @Test
    void anIndentedLineContinuesTheItemAboveIt() {
        Profile p = Profiles.parse("""
                profile folded
                about  a profile whose long lines
                  go on below
                x.y = 5 ns  | a description that goes on
                              over two lines
                            | a source,
                              continued
                z = 1 | one line | its source
                """, "folded.profile");
        assertEquals("a profile whose long lines go on below", p.description());
        assertEquals(5_000, p.picos("x.y"));
        assertEquals("a description that goes on over two lines", p.param("x.y").description());
        assertEquals("a source, continued", p.param("x.y").source());
        assertEquals("its source", p.param("z").source());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> Profiles.parse("profile bad\n# a comment\n  | orphan\n", "bad.profile"));
        assertTrue(e.getMessage().contains("bad.profile:3") && e.getMessage().contains("orphan"), e.getMessage());
    }
}
