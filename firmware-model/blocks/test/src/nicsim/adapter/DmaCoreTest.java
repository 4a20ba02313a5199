package nicsim.adapter;

import static org.junit.jupiter.api.Assertions.*;

import java.util.ArrayList;
import java.util.List;
import nicsim.adapter.DmaPorts.HostDesc;
import nicsim.adapter.DmaPorts.LinkDesc;
import nicsim.sim.Simulator;
import org.junit.jupiter.api.Test;

/** What a dry copy's edges write to SRAM is what the core holds once it adopts them. */
class DmaCoreTest {
    private static final int BEAT = 32, BEATS = 8;

    @Test
    void beatsOfOneWordArrayWrittenAheadAreInSramOnceAdopted() {
        Simulator sim = new Simulator();
        DmaEngine engine = new DmaEngine(sim.clockDomain("dma", 2_000), new DmaEngine.Config(8 * BEAT, 4096));
        DmaCore core = engine.core();
        long[] shared = {1, 2, 3, 4}, other = {5, 6, 7, 8}; // a channel's blank words, say; then another beat's
        // the host engine takes a read of 8 beats into SRAM at 0, and its first beat
        core.edge(new HostDesc(0, 0, 0, BEATS * BEAT, 1), null, null, null, 0, null, 0, false, false, false);
        core.edge(null, null, null, shared, 0, null, 0, true, false, false);
        // ahead of time: six edges alone writing beats 0-5, the beats in the same array but beat 4 (a run, a beat, a run)
        DmaCore dry = core.dryCopy(null);
        dry.inAlone(DmaEngine.HOST, 6, e -> e == 3 ? other : shared);
        core.adopt(dry);
        // the last beat, then the send engine reads all eight out of SRAM
        core.edge(null, null, null, shared, 0, null, 0, false, false, false);
        core.edge(null, null, null, null, 0, null, 0, false, false, false);
        core.edge(null, new LinkDesc(0, BEATS * BEAT, 2), null, null, 0, null, 0, false, false, false);
        List<long[]> out = new ArrayList<>();
        while (out.size() < BEATS) {
            long[] w = core.sendOutQ.peekWords();
            core.edge(null, null, null, null, 0, null, 0, false, false, w != null);
            if (w != null) out.add(w);
        }
        for (int b = 0; b < BEATS; b++)
            assertSame(b == 4 ? other : shared, out.get(b), "beat " + b + " of SRAM");
    }
}
