package nicsim.cosim;

import static org.junit.jupiter.api.Assertions.*;

import nicsim.profile.Profile;
import nicsim.profile.Profiles;
import org.junit.jupiter.api.Test;

/** nicsim hw cost: Yosys's figures for a block, following the profile it is built for. */
class HwCostTest {
    @Test
    void theMttWalkersCostFollowsItsCacheSize() throws Exception {
        Profile p = Profiles.load("cx-gen3x16");
        HwCost.Cost small = HwCost.of(p, "mtt");
        assertEquals("MttWalker", small.module());
        assertTrue(small.cells() > 1000 && small.flipFlops() > 100 && small.depth() > 5, small.toString());
        assertTrue(small.luts() > 100 && small.luts() < small.cells(), "Xilinx LUTs take fewer than gates: " + small);
        assertTrue(Math.abs(small.fpgaFlipFlops() - small.flipFlops()) < small.flipFlops() / 10,
                "both flows keep the block's registers: " + small);
        assertEquals(3, small.memories(), "the mkey table, the translation cache and the KLM table stay memories: "
                + small);
        int entries = p.countInt("mtt.cache.entries");
        HwCost.Cost big = HwCost.of(p.with("mtt.cache.entries", Integer.toString(entries * 2)), "mtt");
        assertTrue(big.memoryBits() > small.memoryBits(), "twice the cache entries, more memory bits: " + small
                + " / " + big);
    }

    @Test
    void anUnknownBlockIsOneLineAndExitTwo() {
        assertEquals(2, nicsim.cosim.cli.Main.run("hw", "cost", "nope"));
    }
}
