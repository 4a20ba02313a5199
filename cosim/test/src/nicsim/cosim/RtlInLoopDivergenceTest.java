package nicsim.cosim;

import static org.junit.jupiter.api.Assertions.*;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.util.Set;
import nicsim.driver.World;
import nicsim.fabric.Faults;
import nicsim.profile.Profile;
import nicsim.profile.Profiles;
import nicsim.workloads.Options;
import nicsim.workloads.Workloads;
import org.junit.jupiter.api.Test;

/**
 * RTL in the loop catches an RTL that differs from its twin, and names the cycle it first differed
 * at whether the RTL runs edge by edge or in batches.
 */
class RtlInLoopDivergenceTest {
    /**
     * The MttWalker's RTL built with a 2-entry translation cache while its twin has 512: with MRs in
     * 4 KiB pages (mtt.page.max), 8 KiB messages span pages, so it misses where the twin hits.
     */
    static String divergence(int batch) {
        World w = new World(2, Profiles.load("cx-gen3x16").with("mtt.page.max", "4 KiB"), 2, Faults.NONE);
        Profile other = w.profile.with("mtt.cache.entries", "2");
        RtlInLoop rtl = new RtlInLoop(w.host(0).adapter, other, Set.of("mtt"), batch);
        RtlInLoop.Divergence d = assertThrows(RtlInLoop.Divergence.class, () -> {
            try (rtl) {
                Workloads.run("write_bw", w, Options.defaults().with(set -> set.iters(50).size(8192)),
                        new PrintStream(new ByteArrayOutputStream()));
            }
        });
        return d.getMessage();
    }

    @Test
    void aDifferentRtlIsCaughtAtTheSameCycleEdgeByEdgeOrInBatches() {
        String edgeByEdge = divergence(1);
        assertTrue(edgeByEdge.matches("RTL in the loop: MttWalker diverged at cycle \\d+ of clock \\S+ on io_\\w+: "
                + "Java model 0x\\p{XDigit}+, RTL 0x\\p{XDigit}+"), edgeByEdge);
        assertEquals(edgeByEdge, divergence(RtlInLoop.BATCH));
    }

    @Test
    void everyEdgeIsComparedIncludingAPartialLastBatch() {
        World w = new World(2, Profiles.load("cx-gen3x16"), 2, Faults.NONE);
        try (RtlInLoop rtl = new RtlInLoop(w.host(0).adapter, w.profile, Set.of("doorbell", "wqe"), 7)) {
            var r = Workloads.run("write_bw", w, Options.defaults().with(set -> set.iters(200).size(64)),
                    new PrintStream(new ByteArrayOutputStream()));
            assertTrue(r.ok(), r.errors().toString());
            // batches of 7 leave a partial one at the end: edges() runs it too, so every edge the core clock ran was
            // compared
            assertEquals(w.host(0).adapter.core().edgesRun(), rtl.edges().get("wqe"));
            assertEquals(w.host(0).adapter.core().edgesRun(), rtl.edges().get("doorbell"));
        }
    }

    /**
     * A DMA channel's clock coasts over edges that only move beats inside it, but not while its engine
     * runs from RTL in lockstep: then every edge goes through the wires and is compared, and the run
     * gives the same figures as the model alone, which coasts.
     */
    @Test
    void aChannelWithItsEngineInRtlRunsAndComparesEveryEdge() {
        Options o = Options.defaults().with(set -> set.iters(20).size(8192));
        World alone = new World(2, Profiles.load("lanai72"), 2, Faults.NONE);
        var model = Workloads.run("write_bw", alone, o, new PrintStream(new ByteArrayOutputStream()));
        assertTrue(alone.host(0).adapter.dma().domain(0).edgesCoasted() > 0, "the model alone coasts");
        World w = new World(2, Profiles.load("lanai72"), 2, Faults.NONE);
        try (RtlInLoop rtl = new RtlInLoop(w.host(0).adapter, w.profile, Set.of("dma"), RtlInLoop.BATCH)) {
            var r = Workloads.run("write_bw", w, o, new PrintStream(new ByteArrayOutputStream()));
            assertTrue(r.ok(), r.errors().toString());
            var channel = w.host(0).adapter.dma().domain(0);
            assertEquals(0, channel.edgesCoasted());
            assertEquals(channel.edgesRun(), rtl.edges().get("dma"));
            assertEquals(alone.host(0).adapter.dma().domain(0).edgesRun(), channel.edgesRun(),
                    "the same edges, coasted or not");
            assertTrue(w.host(1).adapter.dma().domain(0).edgesCoasted() > 0,
                    "node 1's channel, all Java, still coasts");
            assertEquals(model.rows(), r.rows());
            assertEquals(alone.sim.counters().snapshot(), w.sim.counters().snapshot());
        }
    }
}
