package nicsim.cosim;

import static org.junit.jupiter.api.Assertions.*;

import java.nio.file.Path;
import nicsim.adapter.DmaPorts;
import nicsim.adapter.DoorbellDecoder;
import nicsim.adapter.MttPorts;
import nicsim.adapter.WqePorts;
import nicsim.profile.Profile;
import nicsim.profile.Profiles;
import nicsim.wave.VcdReader;
import nicsim.wave.WaveDiff;
import nicsim.wave.Waveform;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The co-simulation runner against real Verilated RTL. */
class LockstepTest {
    static final Profile CX = Profiles.load("cx-gen3x16");

    @Test
    void doorbellDecoderAgreesWithItsRtlFor100kCycles() {
        Lockstep.Result r = CosimRun.run(CX, "doorbell", 100_000, 3, null);
        assertEquals(0, r.divergences(), () -> r.divergence().orElseThrow().toString());
        assertEquals(100_000, r.cycles());
        // the stimulus must have moved real traffic through every port
        assertTrue(r.transfers().get("io_doorbell") > 10_000, r.transfers().toString());
        assertTrue(r.transfers().get("io_error") > 5_000, r.transfers().toString());
        assertTrue(r.transfers().get("io_tableWrite") > 1_000, r.transfers().toString());
    }

    @Test
    void wqeFetcherAgreesWithItsRtlFor100kCycles() {
        Lockstep.Result r = CosimRun.run(CX, "wqe", 100_000, 4, null);
        assertEquals(0, r.divergences(), () -> r.divergence().orElseThrow().toString());
        // about 20,000 WQEBBs: the stimulus spends much of its time moving QPs round the table and stopping them on
        // errors
        assertTrue(r.transfers().get("io_wqe") > 15_000, r.transfers().toString());
        assertTrue(r.transfers().get("io_dropped") > 100, r.transfers().toString());
        // every way a WQE or a fetch can fail happened, and still the twins agreed
        for (WqePorts.WqeError.Code c : WqePorts.WqeError.Code.values()) {
            if (c == WqePorts.WqeError.Code.NONE) continue;
            String counter = "WqeFetcher.errors_" + c.name().toLowerCase();
            assertTrue(r.counters().getOrDefault(counter, 0L) > 3, c + ": " + r.counters());
        }
    }

    @Test
    void mttWalkerAgreesWithItsRtlThroughEveryCheckAndCacheMisses() {
        // lanai43's two-entry translation cache: nearly every page is a miss served by io_fill
        Lockstep.Result r = CosimRun.run(Profiles.load("lanai43"), "mtt", 100_000, 2, null);
        assertEquals(0, r.divergences(), () -> r.divergence().orElseThrow().toString());
        assertTrue(r.transfers().get("io_fill") > 3_000, r.transfers().toString());
        for (MttPorts.Status s : MttPorts.Status.values()) {
            if (s == MttPorts.Status.OK) continue;
            String counter = "MttWalker.failed_" + s.name().toLowerCase();
            assertTrue(r.counters().getOrDefault(counter, 0L) > 3, s + ": " + r.counters());
        }
    }

    @Test
    void cqeWriterAgreesWithItsRtlThroughLapsArmsAndOverflows() {
        Lockstep.Result r = CosimRun.run(CX, "cqe", 100_000, 2, null);
        assertEquals(0, r.divergences(), () -> r.divergence().orElseThrow().toString());
        var t = r.transfers();
        assertTrue(t.get("io_write") > 20_000 && t.get("io_event") > 500, t.toString());
        assertTrue(t.get("io_error") > 100 && t.get("io_dropped") > 5, t.toString());
    }

    @Test
    void dmaEngineAgreesWithItsRtlWithAllThreeEnginesContending() {
        Lockstep.Result r = CosimRun.run(CX, "dma", 100_000, 1, null);
        assertEquals(0, r.divergences(), () -> r.divergence().orElseThrow().toString());
        var t = r.transfers();
        assertTrue(t.get("io_linkTx") > 20_000 && t.get("io_linkRx") > 20_000, t.toString());
        assertTrue(r.counters().get("DmaEngine.local_bus_contention_cycles") > 10_000, r.counters().toString());
        for (DmaPorts.Done.Status s : DmaPorts.Done.Status.values()) {
            String counter = "DmaEngine.done_" + s.name().toLowerCase();
            assertTrue(r.counters().getOrDefault(counter, 0L) > 3, s + ": " + r.counters());
        }
    }

    @Test
    void injectedTwinBugIsCaughtWithCycleWireAndAWaveformWindow(@TempDir Path dir) throws Exception {
        DoorbellDecoder.Config good = DoorbellDecoder.Config.from(CX);
        DoorbellDecoder.Config buggy = new DoorbellDecoder.Config(good.windowBase(), good.windowSize(), good.pageSize(),
                good.bfRegSize(), good.fifoDepth() - 1, good.tableEntries());
        BlockPairs.Pair real = BlockPairs.get(CX, "doorbell");
        BlockPairs.Pair bug = new BlockPairs.Pair("doorbell", real.rtlName(), real.rtl(),
                d -> new DoorbellDecoder(d, buggy), real.stimulus());
        Lockstep.Result r = CosimRun.run(bug, CX, 100_000, 3, dir);
        Lockstep.Divergence d = r.divergence()
                .orElseThrow(() -> new AssertionError("a FIFO one entry short went unnoticed"));
        assertTrue(d.wire().startsWith("io_"), d.toString());
        assertEquals(d.cycle() + 1, r.cycles(), "the run stops at the first divergence");
        assertTrue(d.toString().contains("cycle " + d.cycle()) && d.toString().contains("seed 3"), d.toString());
        // the same seed reproduces the same divergence
        assertEquals(d, CosimRun.run(bug, CX, 100_000, 3, null).divergence().orElseThrow());
        // both windows name the same wires; they first differ on the reported wire at the reported cycle
        Waveform model = VcdReader.read(r.windowFiles().get(0)), rtl = VcdReader.read(r.windowFiles().get(1));
        assertEquals(model.signals().keySet(), rtl.signals().keySet());
        long t = d.cycle() * CX.periodPicos("core.clock");
        assertEquals(t, WaveDiff.firstDifference(model, rtl).orElseThrow().time());
        String wire = "TOP.DoorbellDecoder." + d.wire();
        assertEquals(Long.toBinaryString(d.expected()), model.signal(wire).valueAt(t));
        assertEquals(Long.toBinaryString(d.actual()), rtl.signal(wire).valueAt(t));
    }

    @Test
    void unknownBlocksAreNamed() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> BlockPairs.get(CX, "fpu"));
        assertTrue(e.getMessage().contains("unknown") && e.getMessage().contains("doorbell"), e.getMessage());
    }
}
