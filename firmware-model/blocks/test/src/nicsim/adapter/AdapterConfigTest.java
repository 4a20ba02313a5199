package nicsim.adapter;

import static org.junit.jupiter.api.Assertions.*;

import nicsim.profile.Profile;
import nicsim.profile.Profiles;
import org.junit.jupiter.api.Test;

/** The adapter's parameters are read and checked once, before any block is made: a bad one is named with its value. */
class AdapterConfigTest {
    private static String refused(Profile p) {
        return assertThrows(IllegalArgumentException.class, () -> AdapterConfig.from(p)).getMessage();
    }

    @Test
    void everyBuiltInProfileGivesAConfigOfItsFigures() {
        for (String name : Profiles.BUILTIN) AdapterConfig.from(Profiles.load(name));
        AdapterConfig cx = AdapterConfig.from(Profiles.load("cx-gen3x16"));
        assertEquals(4000, cx.corePeriodPs(), "250 MHz");
        assertEquals(16, cx.dma().channels());
        assertEquals(2000, cx.dma().clockPeriodPs(), "500 MHz");
        assertEquals(512, cx.mtt().cacheEntries());
        assertEquals(24 << 20, cx.dm().barOffsetBytes());
        assertEquals(16, cx.pci().lanes());
        assertEquals(0, cx.pollIntervalPs(), "hardware doorbells");
        assertEquals(3_000_000, AdapterConfig.from(Profiles.load("lanai43")).pollIntervalPs());
    }

    @Test
    void aBadValueIsRefusedNamingKeyAndValue() {
        Profile cx = Profiles.load("cx-gen3x16");
        assertEquals("mtt.cache.entries = 3: must be a power of two from 2 to 65536",
                refused(cx.with("mtt.cache.entries", "3")));
        assertEquals("wqe.fetch.batch = 0 WQEBBs: must be from 1 WQEBBs to 64 WQEBBs",
                refused(cx.with("wqe.fetch.batch", "0")));
        assertEquals("pci.max.payload = 96 B: must be a power of two from 4 B to 4096 B",
                refused(cx.with("pci.max.payload", "96 B")));
        assertEquals("pci.read.completion = 256 B: must be at most pci.max.payload (128 B)",
                refused(cx.with("pci.max.payload", "128 B")));
        assertEquals("pci.kind = \"agp\": must be one of \"pcie\", \"pci\"", refused(cx.with("pci.kind", "\"agp\"")));
        assertEquals("dma.channels = 0: must be from 1 to 64", refused(cx.with("dma.channels", "0")));
        assertEquals("wqe.bf.buffer.entries = -1: must be from 0 to 65536",
                refused(cx.with("wqe.bf.buffer.entries", "-1")));
    }
}
