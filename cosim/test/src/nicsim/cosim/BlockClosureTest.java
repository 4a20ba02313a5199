package nicsim.cosim;

import static org.junit.jupiter.api.Assertions.*;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import nicsim.profile.Profile;
import nicsim.profile.Profiles;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.io.TempDir;

/**
 * What CI checks of every RTL block beside the lockstep (docs/blocks.md, "What CI runs"): its coverage
 * over its lockstep stimulus stays at or above the floor committed here, and {@code hw mutate}'s mutants
 * of seed 1 are killed at least as often as committed, every mutant the block's list judges equivalent
 * surviving. The contract's proofs of every block are {@link HwProveTest}'s. A stimulus or RTL change
 * that raises a figure may raise its floor; one that lowers it fails here, naming the block and figure.
 *
 * <p>Each block costs one coverage build and one netlist of all its mutants, Verilated once; both are
 * cached by a hash of their Verilog ({@code NICSIM_CACHE}), and Yosys's mutant netlist by a hash of
 * its inputs, so a run with a warm cache builds nothing.
 */
class BlockClosureTest {
    private final Profile profile = Profiles.load("cx-gen3x16");

    /** One seed of the docs' coverage run: the figures below are its own, deterministic. */
    private static final long COVERAGE_CYCLES = 20_000;

    /** Percent of Verilator's line points and toggle points hit (seed 1, 20000 cycles, cx-gen3x16). */
    private record Floor(double lines, double toggles) {}

    private static final Map<String, Floor> COVERAGE = Map.of(
            "doorbell", new Floor(100.0, 89.4),
            "wqe", new Floor(99.9, 85.3),
            "mtt", new Floor(91.6, 73.9),
            "cqe", new Floor(99.7, 95.8),
            "dma", new Floor(100.0, 94.0));

    /** As {@code hw mutate BLOCK --mutants 50}: seed 1, 20000 cycles a mutant. */
    private static final int MUTANTS = 50;

    private static final long MUTANT_CYCLES = 20_000;

    /** Mutants killed of the 50 (docs/blocks.md's table of scores). */
    private static final Map<String, Integer> KILLED = Map.of(
            "doorbell", 48, "wqe", 47, "mtt", 43, "cqe", 49, "dma", 46);

    @ParameterizedTest
    @ValueSource(strings = {"doorbell", "wqe", "mtt", "dma", "cqe"})
    void coverageStaysAtOrAboveItsFloor(String block, @TempDir Path out) throws Exception {
        long t0 = System.nanoTime();
        HwCoverage.Report r = HwCoverage.run(profile, block, null, COVERAGE_CYCLES, List.of(1L), out, l -> {});
        System.out.printf("coverage of %s: %.1f s, the build included%n", block, (System.nanoTime() - t0) / 1e9);
        Floor f = COVERAGE.get(block);
        String what = String.format("%s: lines %.1f %% (%d / %d), toggles %.1f %% (%d / %d); first never hit: %s",
                block, r.percent(HwCoverage.LINE), r.hit(HwCoverage.LINE), r.total(HwCoverage.LINE),
                r.percent(HwCoverage.TOGGLE), r.hit(HwCoverage.TOGGLE), r.total(HwCoverage.TOGGLE),
                r.missed().stream().limit(5).toList());
        System.out.println("coverage " + what);
        assertTrue(r.percent(HwCoverage.LINE) >= f.lines(), "below its floor of " + f.lines() + " % lines: " + what);
        assertTrue(r.percent(HwCoverage.TOGGLE) >= f.toggles(),
                "below its floor of " + f.toggles() + " % toggles: " + what);
    }

    @ParameterizedTest
    @ValueSource(strings = {"doorbell", "wqe", "mtt", "dma", "cqe"})
    void mutantsAreKilledAsCommittedAndTheEquivalentOnesSurvive(String block) throws Exception {
        List<String> progress = new ArrayList<>();
        HwMutate.Report r = HwMutate.run(profile, block, MUTANTS, 1, MUTANT_CYCLES, false, progress::add);
        String what = String.format("%s: %d of %d mutants killed, %d judged equivalent, %d proven equivalent "
                + "(score over the rest %.1f %%); build %.0f s, %.2f s a mutant; survivors %s", block, r.killed(),
                r.mutants().size(), r.equivalent().size(), r.provenEquivalent().size(), 100 * r.scoreOfNotProven(),
                r.buildSeconds(), r.secondsPerMutant(), r.mutants().stream()
                        .filter(m -> m.fate() == HwMutate.Fate.SURVIVED).map(HwMutate.Mutant::mutation).toList());
        System.out.println("mutation " + progress.get(0) + "; " + what);
        assertEquals(MUTANTS, r.mutants().size(), what);
        assertTrue(r.killed() >= KILLED.get(block), "fewer killed than the " + KILLED.get(block) + " committed: "
                + what);
        // a listed mutant the lockstep kills is the list's mistake; one not among today's mutants is stale
        assertEquals(List.of(), r.wronglyJudged(), block + ": listed equivalent but killed");
        assertEquals(r.judged().size(), r.equivalent().size(),
                block + ": every listed equivalent mutant is one of today's and survives: " + r.judged().keySet());
    }
}
