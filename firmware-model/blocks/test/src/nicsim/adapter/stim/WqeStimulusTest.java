package nicsim.adapter.stim;

import static org.junit.jupiter.api.Assertions.*;

import nicsim.adapter.WqeFetcher;
import nicsim.adapter.WqePorts.WqeError;
import nicsim.profile.Profiles;
import nicsim.sim.ClockDomain;
import nicsim.sim.Clocked;
import nicsim.sim.Simulator;
import org.junit.jupiter.api.Test;

/**
 * The lockstep and coverage can only reach what the stimulus shows: over one coverage or mutation run's length
 * (20000 edges, seed 1, cx-gen3x16's 64 send-queue slots), the queue in every slot of the table must be stopped by a
 * failed DMA read of its ring at least once (each slot has its own arm for that in the RTL), and the malformed WQEs
 * and the doorbells for no queue must still show.
 */
class WqeStimulusTest {
    static final int EDGES = 20_000;

    @Test
    void everySlotsQueueStopsOnAFailedFetch() {
        Simulator sim = new Simulator();
        ClockDomain core = sim.clockDomain("core", 4_000);
        WqeFetcher f = new WqeFetcher(core, WqeFetcher.Config.from(Profiles.load("cx-gen3x16")));
        int slots = f.config().sqEntries();
        core.add(new WqeStimulus(f, 1));
        int[] dmaErrors = new int[slots];
        int[] malformed = new int[1], dropped = new int[1];
        core.add(new Clocked() {
            @Override public void drive() {}
            @Override public void update() {
                if (f.error().valid()) {
                    WqeError e = f.error().payload();
                    if (e.code() == WqeError.Code.DMA_ERROR.ordinal()) dmaErrors[(int) (e.qpn() & (slots - 1))]++;
                    else malformed[0]++;
                }
                if (f.dropped().valid()) dropped[0]++;
            }
            @Override public boolean active() { return true; }
        });
        for (long c = 0; c < EDGES; c++) {
            core.wake();
            sim.runUntil(core.picosOfCycle(c));
        }
        assertEquals(64, slots);
        for (int s = 0; s < slots; s++) assertTrue(dmaErrors[s] > 0, "slot " + s + ": no queue stopped on a failed fetch");
        assertTrue(malformed[0] > 100 && dropped[0] > 50, malformed[0] + " malformed WQEs, " + dropped[0] + " dropped");
    }
}
