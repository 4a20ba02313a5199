package nicsim.cosim;

import static org.junit.jupiter.api.Assertions.*;

import java.util.ArrayList;
import java.util.List;
import nicsim.profile.Profiles;
import org.junit.jupiter.api.Test;

/**
 * nicsim hw mutate: Yosys's single-point mutants of a block's RTL, each run against the Java twin;
 * the lockstep kills mutants that change what the block does, and the report names each mutation.
 */
class HwMutateTest {
    @Test
    void mutantsOfTheDoorbellDecoderAreRunAndMostAreKilled() throws Exception {
        List<String> progress = new ArrayList<>();
        HwMutate.Report r = HwMutate.run(Profiles.load("cx-gen3x16"), "doorbell", 3, 1, 10_000, progress::add);
        assertEquals(3, r.mutants().size());
        assertEquals(3, progress.size());
        for (HwMutate.Mutant m : r.mutants()) {
            assertTrue(m.mutation().startsWith("mutate -mode ") && m.mutation().contains("-module DoorbellDecoder"),
                    m.mutation());
            if (m.fate() == HwMutate.Fate.KILLED)
                assertTrue(m.detail().startsWith("RTL in the loop: DoorbellDecoder diverged at cycle "), m.detail());
        }
        assertTrue(r.killed() >= 2, "the lockstep kills a mutant that changes the block: " + r.mutants());
        assertEquals((double) r.killed() / (r.killed() + r.survived()), r.score(), 1e-9);
    }
}
