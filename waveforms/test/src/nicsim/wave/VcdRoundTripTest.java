package nicsim.wave;

import static org.junit.jupiter.api.Assertions.*;

import java.math.BigInteger;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class VcdRoundTripTest {
    @TempDir Path dir;

    /** Writes a seeded random trace of 1-, 7-, 64- and 100-bit wires in two nested scopes. */
    private static void writeSample(VcdWriter w, long seed) {
        Random r = new Random(seed);
        VcdWriter.Wire valid = w.wire("top.WqeFetcher", "io_req_valid", 1);
        VcdWriter.Wire qpn = w.wire("top.WqeFetcher", "io_req_payload_qpn", 7);
        VcdWriter.Wire addr = w.wire("top.WqeFetcher.ring", "addr", 64);
        VcdWriter.Wire wide = w.wire("top", "line", 100);
        for (long t = 0; t < 5000; t += 1 + r.nextInt(4000)) {
            w.set(t, valid, r.nextInt(2));
            w.set(t, qpn, r.nextInt(128));
            w.set(t, addr, r.nextLong());
            w.set(t, wide, new BigInteger(100, r));
        }
        w.advanceTo(100_000);
    }

    @ParameterizedTest
    @ValueSource(strings = {"t.vcd", "t.vcd.gz", "t.vcd.xz"})
    void writtenCompressedAndReadBackIdentical(String name) throws Exception {
        Path plain = dir.resolve("ref.vcd");
        try (VcdWriter w = VcdWriter.open(plain, "1ps")) { writeSample(w, 42); }
        Path file = dir.resolve(name);
        try (VcdWriter w = VcdWriter.open(file, "1ps")) { writeSample(w, 42); }

        Waveform ref = VcdReader.read(plain);
        Waveform got = VcdReader.read(file);
        assertEquals("1ps", got.timescale());
        assertEquals(ref.signals().keySet(), got.signals().keySet());
        assertTrue(got.signals().containsKey("top.WqeFetcher.ring.addr"), got.signals().keySet().toString());
        for (String s : ref.signals().keySet())
            assertEquals(ref.signal(s).changes(), got.signal(s).changes(), s);
        assertEquals(Optional.empty(), WaveDiff.firstDifference(ref, got));
        assertEquals(100_000, got.endTime());
        if (!name.endsWith(".vcd")) {
            // compression must actually shrink a repetitive trace and the bytes must not be plain text
            long packed = Files.size(file), text = Files.size(plain);
            assertTrue(packed < text, "compressed " + packed + " vs " + text);
            assertNotEquals('$', (char) Files.readAllBytes(file)[0]);
        }
    }

    @Test
    void valuesReadBackExactly() throws Exception {
        Path f = dir.resolve("v.vcd.xz");
        try (VcdWriter w = VcdWriter.open(f, "1ps")) {
            VcdWriter.Wire a = w.wire("top", "a", 64);
            w.set(10, a, -1L);           // all 64 bits set
            w.set(20, a, 5);
            w.set(30, a, 5);             // no change: not written
        }
        Waveform wf = VcdReader.read(f);
        Waveform.Signal a = wf.signal("top.a");
        assertEquals(2, a.changes().size());
        assertEquals(new BigInteger("ffffffffffffffff", 16), a.numberAt(15).orElseThrow());
        assertEquals(BigInteger.valueOf(5), a.numberAt(1000).orElseThrow());
        assertEquals("x", a.valueAt(5));
    }

    @Test
    void diffFindsTheFirstDifferingSignalAndTime() throws Exception {
        Path a = dir.resolve("a.vcd"), b = dir.resolve("b.vcd");
        try (VcdWriter w = VcdWriter.open(a, "1ps")) {
            VcdWriter.Wire x = w.wire("top", "x", 8), y = w.wire("top", "y", 1);
            w.set(0, x, 1); w.set(0, y, 0); w.set(100, x, 2); w.set(200, y, 1);
        }
        try (VcdWriter w = VcdWriter.open(b, "1ps")) {
            VcdWriter.Wire x = w.wire("top", "x", 8), y = w.wire("top", "y", 1);
            w.set(0, x, 1); w.set(0, y, 0); w.set(100, x, 2); w.set(150, y, 1);
        }
        WaveDiff.Difference d = WaveDiff.firstDifference(VcdReader.read(a), VcdReader.read(b)).orElseThrow();
        assertEquals(150, d.time());
        assertEquals("top.y", d.signal());
        assertEquals("0", d.left());
        assertEquals("1", d.right());
    }

    @Test
    void readsVerilatorStyleDeclarations() throws Exception {
        String vcd = "$date today $end\n$timescale 1ps $end\n$scope module TOP $end\n$scope module Fifo $end\n"
                + "$var wire 1 # clk $end\n$var wire 8 $ io_push_payload [7:0] $end\n$upscope $end\n$upscope $end\n"
                + "$enddefinitions $end\n#0\n$dumpvars\n0#\nb00000000 $\n$end\n#5\n1#\nb00001010 $\n";
        Path f = dir.resolve("v.vcd");
        Files.writeString(f, vcd);
        Waveform w = VcdReader.read(f);
        assertEquals("1010", w.signal("TOP.Fifo.io_push_payload").valueAt(5));
        assertEquals("1", w.signal("TOP.Fifo.clk").valueAt(7));
    }

    @Test
    void badUseIsRefusedWithTheNameOfTheThing() throws Exception {
        try (VcdWriter w = VcdWriter.open(dir.resolve("e.vcd"), "1ps")) {
            VcdWriter.Wire x = w.wire("top", "x", 4);
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> w.set(0, x, 16));
            assertTrue(e.getMessage().contains("top.x"), e.getMessage());
            w.set(10, x, 1);
            e = assertThrows(IllegalArgumentException.class, () -> w.set(5, x, 2));
            assertTrue(e.getMessage().contains("before"), e.getMessage());
            assertThrows(IllegalStateException.class, () -> w.wire("top", "late", 1));
        }
        assertThrows(IllegalArgumentException.class, () -> VcdWriter.open(dir.resolve("e.txt"), "1ps"));
        try (VcdWriter a = VcdWriter.open(dir.resolve("a.vcd"), "1ps");
                VcdWriter b = VcdWriter.open(dir.resolve("b.vcd"), "1ps")) {
            VcdWriter.Wire x = a.wire("top", "x", 4);
            a.set(0, x, 3);
            // the value unchanged, the wire still not b's
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> b.set(1, x, 3));
            assertTrue(e.getMessage().contains("top.x") && e.getMessage().contains("another writer"), e.getMessage());
        }
    }

    /** A value change is written once, whichever way the value is given; the same value again writes nothing. */
    @Test
    void onlyChangesAreWritten() throws Exception {
        Path f = dir.resolve("c.vcd");
        try (VcdWriter w = VcdWriter.open(f, "1ps")) {
            VcdWriter.Wire x = w.wire("top", "x", 8);
            long[] expected = {1, 1, 2, 3, 3, 4};
            w.set(0, x, 5);
            assertEquals(expected[0], w.changes());
            w.set(1, x, BigInteger.valueOf(5));
            assertEquals(expected[1], w.changes());
            w.setUnknown(2, x);
            assertEquals(expected[2], w.changes());
            w.set(3, x, 5);
            assertEquals(expected[3], w.changes());
            w.set(4, x, 5);
            assertEquals(expected[4], w.changes());
            w.set(5, x, BigInteger.valueOf(6));
            assertEquals(expected[5], w.changes());
        }
        Waveform got = VcdReader.read(f);
        assertEquals("101", got.signal("top.x").valueAt(3));
        assertEquals("110", got.signal("top.x").valueAt(5));
    }
}
