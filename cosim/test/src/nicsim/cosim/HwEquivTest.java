package nicsim.cosim;

import static org.junit.jupiter.api.Assertions.*;

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
 * Yosys's equivalence check of surviving mutants ({@link HwEquiv}): it proves a mutant that changes
 * nothing the block can show, and never proves one the lockstep kills.
 */
class HwEquivTest {
    private final Profile profile = Profiles.load("cx-gen3x16");

    /** The mtt mutant that ties a bit of {@code 1 <<< ctxShift} no 5-bit shift reaches (its list's first entry). */
    private static final String PAGE_SIZE_BIT_58 = "mutate -mode const0 -module MttWalker"
            + " -cell $sshl$MttWalker.v:408$81 -port Y -portbit 58 -wire pageSize -wirebit 58"
            + " -src MttWalker.v:186.23-186.31"
            + " -src MttWalker.v:408.22-408.55";

    @Test
    void aListedEquivalentMutantIsProvenAndAKilledOneIsNot(@TempDir Path dir) throws Exception {
        String top = VerilogFile.write(BlockPairs.get(profile, "mtt").rtl(), dir);
        Map<String, String> listed = HwMutate.equivalents(top);
        assertTrue(listed.containsKey(PAGE_SIZE_BIT_58), "mtt's list names the pageSize mutant: " + listed.keySet());
        // every mutant of the 50 that the list does not name is killed by the lockstep (BlockClosureTest: 43 of 50)
        List<String> made = HwMutate.mutations(dir, top, 50, 1, "mtt");
        String killed = made.stream().filter(m -> !listed.containsKey(m)).findFirst().orElseThrow();
        List<String> progress = new ArrayList<>();
        Map<String, HwEquiv.Outcome> out = HwEquiv.check(dir, top, List.of(PAGE_SIZE_BIT_58, killed), progress::add);
        assertEquals(2, progress.size(), progress.toString());
        assertEquals(HwEquiv.Verdict.PROVEN_EQUIVALENT, out.get(PAGE_SIZE_BIT_58).verdict(), out.toString());
        assertEquals(0, out.get(PAGE_SIZE_BIT_58).unproven());
        assertEquals(HwEquiv.Verdict.UNDECIDED, out.get(killed).verdict(), killed + ": " + out.get(killed));
        assertNotEquals(0, out.get(killed).unproven(), out.get(killed).describe());
    }

    @Test
    void aCommandOfAnotherModuleIsRefusedByName() {
        var e = assertThrows(IllegalArgumentException.class, () -> HwEquiv.script("DmaEngine", PAGE_SIZE_BIT_58));
        assertTrue(e.getMessage().contains("module DmaEngine"), e.getMessage());
    }
}
