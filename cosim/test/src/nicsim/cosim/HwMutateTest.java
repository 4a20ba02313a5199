package nicsim.cosim;

import static org.junit.jupiter.api.Assertions.*;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import nicsim.hw.VerilogFile;
import nicsim.profile.Profile;
import nicsim.profile.Profiles;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * nicsim hw mutate: Yosys's single-point mutants of a block's RTL, all in one Verilated netlist and
 * picked by a select input, each run against the Java twin; the lockstep kills mutants that change
 * what the block does, and the report names each mutation.
 */
class HwMutateTest {
    private final Profile profile = Profiles.load("cx-gen3x16");

    /**
     * The one-build netlist gives each mutant exactly the fate (and the divergence: cycle, wire and
     * values) of the same mutant built on its own, so sharing the build changes no score.
     */
    @Test
    void mutantsInOneBuildFareAsEachBuiltAlone(@TempDir Path dir) throws Exception {
        List<String> progress = new ArrayList<>();
        HwMutate.Report r = HwMutate.run(profile, "doorbell", 3, 1, 10_000, progress::add);
        assertEquals(3, r.mutants().size());
        assertEquals(4 + r.survived(), progress.size(),
                "the build, each mutant, then each survivor's proof: " + progress);
        assertTrue(progress.get(0).startsWith("netlist of 3 mutants: Yosys "), progress.get(0));
        assertTrue(r.killed() >= 2, "the lockstep kills a mutant that changes the block: " + r.mutants());
        assertEquals((double) r.killed() / r.mutants().size(), r.score(), 1e-9);

        String top = VerilogFile.write(BlockPairs.get(profile, "doorbell").rtl(), dir);
        List<String> alone = HwMutate.mutations(dir, top, 3, 1, "doorbell");
        // Yosys's netlist of the run is kept by its inputs: asked again, it is found, with the same mutants
        HwMutate.Netlist again = HwMutate.netlist(dir, top, 3, 1, "doorbell", "");
        assertTrue(again.cached(), "the netlist of the run above is cached: " + again.file());
        assertEquals(alone, again.mutations());
        assertTrue(Files.readString(again.file()).contains(HwMutate.SELECT), "the netlist's select");
        for (int i = 0; i < 3; i++) {
            HwMutate.Mutant m = r.mutants().get(i);
            assertEquals(alone.get(i), m.mutation(), "the same mutants, in the same order");
            assertTrue(m.mutation().startsWith("mutate -mode ") && m.mutation().contains("-module DoorbellDecoder"),
                    m.mutation());
            Path file = dir.resolve("mutant" + i + ".v");
            HwMutate.writeMutant(dir, top, m.mutation(), file);
            String d = RtlInLoop.lockstep(profile, "doorbell", new RtlInLoop.Own(List.of(file), top), 10_000, 1);
            assertEquals(d == null ? HwMutate.Fate.SURVIVED : HwMutate.Fate.KILLED, m.fate(), m.mutation());
            assertEquals(d == null ? "" : d, m.detail(), m.mutation());
            if (m.fate() == HwMutate.Fate.KILLED)
                assertTrue(m.detail().startsWith("RTL in the loop: DoorbellDecoder diverged at cycle "), m.detail());
        }
    }

    /** The score over non-equivalent mutants leaves out only survivors the block's list names. */
    @Test
    void equivalentSurvivorsLeaveTheScoreOnlyWhenListed() {
        var killed = new HwMutate.Mutant("mutate -a", HwMutate.Fate.KILLED, "diverged");
        var listed = new HwMutate.Mutant("mutate -b", HwMutate.Fate.SURVIVED, "");
        var gap = new HwMutate.Mutant("mutate -c", HwMutate.Fate.SURVIVED, "");
        var r = new HwMutate.Report("x", List.of(killed, killed, killed, listed, gap), 0, 0,
                Map.of("mutate -b", "never read", "mutate -a", "wrong"));
        assertEquals(0.6, r.score(), 1e-9);
        assertEquals(List.of(listed), r.equivalent());
        assertEquals(0.75, r.scoreOfNonEquivalent(), 1e-9);
        assertEquals(3, r.wronglyJudged().size(), "a listed mutant that dies is the list's mistake");
        assertTrue(assertDoesNotThrow(() -> HwMutate.equivalents("NoSuchBlock")).isEmpty(), "no list: none judged");
    }

    /** A list's command may go on over lines ending in " \\": it is the lines joined, their indents dropped. */
    @Test
    void aCommandContinuedOverLinesIsTheOneHwMutatePrints() {
        String one = "mutate -mode cnot1 -module M -cell $add$M.v:5$3 -port A -portbit 2 -src M.v:5.31-5.63";
        Map<String, String> listed = HwMutate.equivalents("M.equivalent-mutants", "# a comment\n"
                + "mutate -mode cnot1 -module M \\\n    -cell $add$M.v:5$3 -port A -portbit 2 \\\n"
                + "    -src M.v:5.31-5.63\n  the counter's bit 2, only after 2^28\n  overflows\n\n"
                + "mutate -mode const0 -module M -cell $eq$1\n  never read\n");
        assertEquals(List.of(one, "mutate -mode const0 -module M -cell $eq$1"), List.copyOf(listed.keySet()));
        assertEquals("the counter's bit 2, only after 2^28 overflows", listed.get(one));
        var e = assertThrows(IllegalStateException.class,
                () -> HwMutate.equivalents("M.equivalent-mutants", "mutate -mode inv \\\n\n  why\n"));
        assertTrue(e.getMessage().startsWith("M.equivalent-mutants: the command goes on"), e.getMessage());
    }

    /**
     * mtt's list is kept beside its RTL: every entry has a reason and is one of the mutants {@code hw mutate
     * mtt --mutants 50} makes of today's RTL (a stale entry would count for nothing).
     */
    @Test
    void theMttListJudgesTodaysMutantsWithAReasonEach(@TempDir Path dir) throws Exception {
        Map<String, String> list = HwMutate.equivalents("MttWalker");
        assertFalse(list.isEmpty());
        list.forEach((m, why) -> assertTrue(why.length() > 40, m + ": " + why));
        String top = VerilogFile.write(BlockPairs.get(profile, "mtt").rtl(), dir);
        List<String> made = HwMutate.mutations(dir, top, 50, 1, "mtt");
        for (String m : list.keySet()) assertTrue(made.contains(m), "not among today's mutants: " + m);
    }

    @Test
    void theSelectIsWideEnoughForEveryMutantAndNone() {
        assertEquals(1, HwMutate.selectWidth(1));
        assertEquals(2, HwMutate.selectWidth(3));
        assertEquals(3, HwMutate.selectWidth(4));
        assertEquals(6, HwMutate.selectWidth(50));
    }
}
