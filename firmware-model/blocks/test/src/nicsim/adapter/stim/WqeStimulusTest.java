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
 * failed DMA read of its ring at least once (each slot has its own arm for that in the RTL) and hand out a WQE of
 * over 8 WQEBBs (bit 3 of the slot's count of WQEBBs left set), its fetches must see each of its producer's bits 4
 * to 15 set and clear, a doorbell for a QP destroyed there must be refused, and the malformed WQEs and the doorbells
 * for no queue must still show.
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
        int[] dmaErrors = new int[slots], big = new int[slots], refused = new int[slots];
        long[] producer = new long[slots], qpnOf = new long[slots], ones = new long[slots], zeros = new long[slots];
        boolean[] valid = new boolean[slots];
        int[] malformed = new int[1], dropped = new int[1];
        core.add(new Clocked() {
            @Override public void drive() {}
            @Override public void update() {
                // each producer bit of a slot's queue, as the fetcher holds it, when a fetch of the slot is taken
                if (f.dmaReq().fire()) {
                    int s = (int) f.dmaReq().payload().tag();
                    ones[s] |= producer[s];
                    zeros[s] |= ~producer[s] & 0xFFFF;
                }
                if (f.doorbell().fire()) {
                    var d = f.doorbell().payload();
                    int s = (int) (d.qpn() & (slots - 1));
                    if (valid[s] && qpnOf[s] == d.qpn()) producer[s] = d.index() & 0xFFFF;
                }
                if (f.sqConfig().valid()) { // a configuration wins over a doorbell on the same edge
                    var c = f.sqConfig().payload();
                    int s = (int) (c.qpn() & (slots - 1));
                    valid[s] = c.valid() == 1;
                    qpnOf[s] = c.qpn();
                    producer[s] = c.producer();
                }
                if (f.error().valid()) {
                    WqeError e = f.error().payload();
                    if (e.code() == WqeError.Code.DMA_ERROR.ordinal()) dmaErrors[(int) (e.qpn() & (slots - 1))]++;
                    else malformed[0]++;
                }
                if (f.dropped().valid()) dropped[0]++;
                if (f.dropped().valid() && f.dropped().payload().qpn() != 0x1FF)
                    refused[(int) (f.dropped().payload().qpn() & (slots - 1))]++;
                // a WQE of over 8 WQEBBs handed out: DS (bits 61 to 56 of the control segment's first word) over 32
                if (f.wqe().fire() && f.wqe().payload().first() == 1 && (f.wqe().payload().data()[0] >>> 56 & 63) > 32)
                    big[(int) (f.wqe().payload().qpn() & (slots - 1))]++;
            }
            @Override public boolean active() { return true; }
        });
        for (long c = 0; c < EDGES; c++) {
            core.wake();
            sim.runUntil(core.picosOfCycle(c));
        }
        assertEquals(64, slots);
        for (int s = 0; s < slots; s++) {
            assertTrue(dmaErrors[s] > 0, "slot " + s + ": no queue stopped on a failed fetch");
            assertTrue(big[s] > 0, "slot " + s + ": no WQE of over 8 WQEBBs");
            assertTrue(refused[s] > 0, "slot " + s + ": no doorbell refused for a QP destroyed there");
            // bits 4 to 15: the posts of a QP move the low ones, a slot's few QPs' starts the rest
            assertEquals(0xFFF0, ones[s] & zeros[s] & 0xFFF0, "slot " + s + ": producer bits both ways in fetches");
        }
        assertTrue(malformed[0] > 100 && dropped[0] > 50, malformed[0] + " malformed WQEs, " + dropped[0] + " dropped");
    }
}
