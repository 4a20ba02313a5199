package nicsim.cosim;

import static org.junit.jupiter.api.Assertions.*;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import nicsim.cosim.cli.Main;
import nicsim.profile.Profile;
import nicsim.profile.Profiles;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** nicsim hw cost: Yosys's figures for a block, following the profile it is built for. */
class HwCostTest {
    @Test
    void theMttWalkersCostFollowsItsCacheSize() throws Exception {
        Profile p = Profiles.load("cx-gen3x16");
        HwCost.Cost small = HwCost.of(p, "mtt");
        assertEquals("MttWalker", small.module());
        assertTrue(small.cells() > 1000 && small.flipFlops() > 100 && small.depth() > 5, small.toString());
        assertTrue(small.luts() > 100 && small.luts() < small.cells(), "Xilinx LUTs take fewer than gates: " + small);
        assertTrue(small.lutLevels() > 0 && small.lutLevels() < small.depth(),
                "LUTs take several gates a level: " + small);
        assertEquals(p.periodPicos("core.clock"), small.clockPicos(), "timed against the clock it runs at");
        assertTrue(Math.abs(small.fpgaFlipFlops() - small.flipFlops()) < small.flipFlops() / 10,
                "both flows keep the block's registers: " + small);
        assertEquals(3, small.memories(), "the mkey table, the translation cache and the KLM table stay memories: "
                + small);
        int entries = p.countInt("mtt.cache.entries");
        HwCost.Cost big = HwCost.of(p.with("mtt.cache.entries", Integer.toString(entries * 2)), "mtt");
        assertTrue(big.memoryBits() > small.memoryBits(), "twice the cache entries, more memory bits: " + small
                + " / " + big);
    }

    /** A register, then {@code n} LUT2s in a row (7-series cells, so no synthesis can shorten it), then a register. */
    private static Path chain(Path dir, int n) throws Exception {
        Path f = dir.resolve("chain" + n + ".v");
        Files.writeString(f, """
                module chain #(parameter N = %d) (input clk, input [N:0] a, output reg q);
                  reg [N:0] r;
                  wire [N:0] s;
                  assign s[0] = r[0];
                  genvar k;
                  generate for (k = 1; k <= N; k = k + 1) begin : stage
                    LUT2 #(.INIT(4'h6)) x (.O(s[k]), .I0(s[k-1]), .I1(r[k]));
                  end endgenerate
                  always @(posedge clk) begin r <= a; q <= s[N]; end
                endmodule
                """.formatted(n));
        return f;
    }

    @Test
    void aDeeperModuleReportsItsLevelsAndATooFastClockFlagsIt(@TempDir Path dir) throws Exception {
        Profile p = Profiles.load("cx-gen3x16");
        HwCost.Cost deep = HwCost.ofVerilog(p, "doorbell", List.of(chain(dir, 12)), "chain");
        assertEquals(12, deep.lutLevels(), deep.toString());
        assertTrue(deep.deepest().startsWith("s["), "the path ends on the chain: " + deep.deepest());
        assertFalse(deep.meetsClock(), "12 levels do not fit 250 MHz: " + deep);
        HwCost.Cost shallow = HwCost.ofVerilog(p, "doorbell", List.of(chain(dir, 2)), "chain");
        assertEquals(2, shallow.lutLevels(), shallow.toString());
        assertTrue(shallow.meetsClock(), "two levels fit 250 MHz: " + shallow);
        assertTrue(shallow.fmaxMhz() > deep.fmaxMhz());
        HwCost.Cost fast = HwCost.ofVerilog(p.with("core.clock", "800 MHz"), "doorbell", List.of(chain(dir, 2)),
                "chain");
        assertFalse(fast.meetsClock(), "two levels do not fit 800 MHz: " + fast);
        assertEquals(1250, fast.clockPicos());
    }

    @Test
    void anUnknownBlockIsOneLineAndExitTwo() {
        assertEquals(2, Main.run("hw", "cost", "nope"));
    }
}
