package nicsim.cosim;

import static org.junit.jupiter.api.Assertions.*;

import java.util.List;
import java.util.Set;
import nicsim.profile.Profile;
import nicsim.profile.Profiles;
import org.junit.jupiter.api.Test;

/** hw prove --mutants: how each property's mutants are aimed and selected (quick; HwProveTest runs them). */
class VacuityTest {
    private final Profile profile = Profiles.load("cx-gen3x16");

    /** A property's aim reads what its assertion reads, the balance's inputs and what it covers included. */
    @Test
    void aPropertyIsAimedAtTheOutputsItReads() {
        var wires = ProveContract.wires(profile, "doorbell");
        String w = ProveContract.wrapper("doorbell", "DoorbellDecoder", wires, true).text();
        assertEquals(Set.of("io_seen"), Vacuity.reads(w, "p_seen_reset", wires));
        // the balance's output transfer and what it covers (mmio is a Flow: no ready to read)
        assertEquals(Set.of("io_doorbell_valid", "io_occupancy"),
                Vacuity.reads(w, "p_doorbell_covers", wires));
        List<Vacuity.Aim> holds = Vacuity.aims("p_doorbell_holds", Vacuity.reads(w, "p_doorbell_holds", wires), wires);
        assertEquals(new Vacuity.Aim("i:io_doorbell_ready %co2", "const1", "\\Qio_doorbell_ready\\E"), holds.get(0));
    }

    /**
     * A _stable property is also aimed at the load enables of the registers behind its payload (wqe's request:
     * two guards keep it still, so no single mutant of one moves it), a _holds property is not; a finer model
     * (cqe's event balance) is checked to at most Vacuity.FINER_DEPTH edges, the main one to the depth asked.
     */
    @Test
    void aStablePropertyIsAlsoAimedAtItsPayloadsLoadEnables() {
        var wires = ProveContract.wires(profile, "wqe");
        String w = ProveContract.wrapper("wqe", "WqeFetcher", wires, true).text();
        List<Vacuity.Aim> stable = Vacuity.aims("p_dmaReq_stable", Vacuity.reads(w, "p_dmaReq_stable", wires), wires);
        Vacuity.Aim enables = stable.stream().filter(Vacuity.Aim::enables).findFirst().orElseThrow();
        assertEquals(2, stable.indexOf(enables) + 1, "after the ready tied to 1: " + stable);
        assertTrue(enables.selection().startsWith("o:io_dmaReq_payload_"), enables.selection());
        assertTrue(enables.selection().endsWith(" %ci4 t:$mux %i") && !enables.selection().contains("_valid"),
                enables.selection());
        assertTrue(Vacuity.aims("p_dmaReq_holds", Vacuity.reads(w, "p_dmaReq_holds", wires), wires).stream()
                .noneMatch(Vacuity.Aim::enables));
        assertEquals(5, Vacuity.depth(0, 5));
        assertEquals(Vacuity.FINER_DEPTH, Vacuity.depth(1, 5));
        assertEquals(2, Vacuity.depth(1, 2));
    }

    /** The wrapper passes the mutant select up as an input of its own, beside reset. */
    @Test
    void theSelectIsAnInputOfTheWrapperPassedToTheModule() {
        String w = ProveContract.wrapper("doorbell", "DoorbellDecoder", ProveContract.wires(profile, "doorbell"), true)
                .text();
        String s = Vacuity.withSelect(w, 4);
        assertTrue(s.contains("\n  input reset,\n  input [3:0] nicsim_mutant,\n  input "), s);
        assertTrue(s.contains(".reset(reset),\n    .nicsim_mutant(nicsim_mutant),"), s);
        assertEquals("0101", Vacuity.bits(5, 4));
    }
}
