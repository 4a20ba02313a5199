package nicsim.adapter.stim;

import static org.junit.jupiter.api.Assertions.*;

import java.util.ArrayList;
import java.util.List;
import nicsim.adapter.CqePorts.CqError;
import nicsim.adapter.CqeWriter;
import nicsim.sim.ClockDomain;
import nicsim.sim.Clocked;
import nicsim.sim.Simulator;
import org.junit.jupiter.api.Test;

/**
 * The lockstep can only catch what its stimulus shows: over one mutation run's length (20000 edges, seed 1, the
 * writer's 64 slots of cx-gen3x16), every slot of the table must have an arm that raises its event at once,
 * a completion and an arm for a CQ it does not hold, and events and CQE writes in which each bit of the vector and
 * of the ring's base is seen both 0 and 1, so that a mutant of any one slot's arming memory, validity, vector or
 * ring base is seen on the ports.
 */
class CqeStimulusTest {
    static final int SLOTS = 64, EDGES = 20_000;

    /** What each slot showed: events an arm raised, bits of the vectors and written rings' bases set and clear. */
    static final class Seen implements Clocked {
        final CqeWriter w;
        final int[] armEvents = new int[SLOTS];
        final long[] vectorOnes = new long[SLOTS], vectorZeros = new long[SLOTS];
        final long[] baseOnes = new long[SLOTS], baseZeros = new long[SLOTS]; // of the rings written to
        final int[] writes = new int[SLOTS];
        final int[] unknown = new int[SLOTS], dropped = new int[SLOTS]; // completions and arms for no CQ there
        boolean armFiredAlone, armFiredAloneBefore; // an arm taken and no completion, one and two edges before

        Seen(CqeWriter w) { this.w = w; }

        @Override public void drive() {}

        @Override public void update() {
            if (w.event().valid()) {
                int s = (int) (w.event().payload().cqn() & (SLOTS - 1));
                long v = w.event().payload().vector();
                vectorOnes[s] |= v;
                vectorZeros[s] |= ~v & CqeCorners.VECTOR_MASK;
                // a completion's event is on the port the edge after it, an arm's two edges after (held one edge),
                // and on the edge between them neither a completion nor an arm is taken
                if (armFiredAloneBefore) armEvents[s]++;
            }
            if (w.error().valid() && w.error().payload().code() == CqError.Code.UNKNOWN_CQ.ordinal())
                unknown[(int) (w.error().payload().cqn() & (SLOTS - 1))]++;
            if (w.dropped().valid()) dropped[(int) (w.dropped().payload().qpn() & (SLOTS - 1))]++;
            armFiredAloneBefore = armFiredAlone;
            armFiredAlone = w.arm().fire() && !w.cqe().fire();
            if (w.write().fire()) {
                long[] r = ringOf(w.write().payload().addr());
                if (r != null) {
                    int s = (int) r[2];
                    writes[s]++;
                    baseOnes[s] |= r[0];
                    baseZeros[s] |= ~r[0];
                }
            }
        }

        final List<long[]> rings = new ArrayList<>(); // base, bytes, slot: from the configurations seen

        /** The ring configured last that holds {@code addr} (null: none). */
        long[] ringOf(long addr) {
            for (int i = rings.size() - 1; i >= 0; i--) {
                long[] r = rings.get(i);
                if (Long.compareUnsigned(addr - r[0], r[1]) < 0) return r;
            }
            return null;
        }

        @Override public boolean active() { return true; }
    }

    @Test
    void everySlotRaisesAnEventAtOnceAndShowsEachBitOfItsVectorAndRingBaseBothWays() {
        Simulator sim = new Simulator();
        ClockDomain core = sim.clockDomain("core", 4_000);
        CqeWriter w = new CqeWriter(core, new CqeWriter.Config(SLOTS));
        core.add(new CqeStimulus(w, 1));
        Seen seen = new Seen(w);
        core.add(seen);
        core.add(new Clocked() { // the rings as firmware configures them, before the writes to them
            @Override public void drive() {}
            @Override public void update() {
                if (w.cqConfig().valid()) {
                    var k = w.cqConfig().payload();
                    seen.rings.add(new long[] {k.base(), 64L << k.logSize(), k.cqn() & (SLOTS - 1)});
                }
            }
            @Override public boolean active() { return true; }
        });
        for (long c = 0; c < EDGES; c++) {
            core.wake();
            sim.runUntil(core.picosOfCycle(c));
        }
        for (int s = 0; s < SLOTS; s++) {
            assertTrue(seen.armEvents[s] > 0, "slot " + s + ": no arm raised its event at once");
            assertTrue(seen.unknown[s] > 0 && seen.dropped[s] > 0, "slot " + s + ": " + seen.unknown[s]
                    + " completions and " + seen.dropped[s] + " arms for a CQ it does not hold");
            assertEquals(CqeCorners.VECTOR_MASK, seen.vectorOnes[s] & seen.vectorZeros[s],
                    "slot " + s + ": vector bits seen both ways");
            assertEquals(-1L, seen.baseOnes[s] & seen.baseZeros[s], "slot " + s + ": base bits seen both ways, over "
                    + seen.writes[s] + " writes");
        }
    }
}
