package nicsim.driver;

import static org.junit.jupiter.api.Assertions.*;

import nicsim.fabric.Faults;
import nicsim.profile.Profile;
import nicsim.profile.Profiles;
import org.junit.jupiter.api.Test;

/** A host's parameters are read and checked once, as it is made: a bad one is named with its value. */
class HostConfigTest {
    private static String refused(Profile p) {
        return assertThrows(IllegalArgumentException.class, () -> Host.Config.from(p)).getMessage();
    }

    @Test
    void optionalFeaturesAreAbsentWhereTheProfileHasNone() {
        Host.Config cx = Host.Config.from(Profiles.load("cx-gen3x16"));
        assertEquals(64L << 30, cx.memoryBytes());
        assertEquals(60_000, cx.postCostPs(), "60 ns a WQE");
        assertEquals(20_000, cx.pollCostPs(), "20 ns a CQE");
        assertEquals(2_000_000, cx.interruptCostPs());
        assertTrue(cx.odp());
        assertEquals(5_000_000, cx.odpFaultCostPs());
        assertTrue(cx.umr());
        assertEquals(1_000_000_000L, cx.flrTimePs(), "1 ms");
        Host.Config lanai = Host.Config.from(Profiles.load("lanai72"));
        assertFalse(lanai.odp(), "no on-demand paging");
        assertFalse(lanai.umr(), "no indirect mkeys");
        assertEquals(0, lanai.flrTimePs(), "a conventional PCI function: no FLR");
        assertEquals(6_000_000, lanai.postCostPs());
    }

    @Test
    void aBadValueIsRefusedNamingKeyAndValue() {
        Profile cx = Profiles.load("cx-gen3x16");
        assertEquals("host.page.size = 3000 B: must be a power of two from 64 B to 1073741824 B",
                refused(cx.with("host.page.size", "3000 B")));
        assertEquals("host.memory.size = 1048576 B: must be at least 2097152 B",
                refused(cx.with("host.memory.size", "1 MiB")));
        assertEquals("host.memory.size = 3147776 B: must be a multiple of host.page.size (4096 B)",
                refused(cx.with("host.memory.size", "3147776 B")));
        assertEquals("host.post.cost = -1000 ps: must be at least 0 ps", refused(cx.with("host.post.cost", "-1 ns")));
        assertEquals("host.poll.cost = -1 ps: must be at least 0 ps", refused(cx.with("host.poll.cost", "-1 ps")));
        assertEquals("host.interrupt.cost = -2000000 ps: must be at least 0 ps",
                refused(cx.with("host.interrupt.cost", "-2 us")));
        assertEquals("host.odp.fault.cost = -1 ps: must be at least 0 ps",
                refused(cx.with("host.odp.fault.cost", "-1 ps")));
        assertEquals("pci.flr.time = 200000000000 ps: must be from 0 ps to 100000000000 ps",
                refused(cx.with("pci.flr.time", "200 ms")));
    }

    @Test
    void aWorldWithABadHostValueIsRefusedBeforeItRuns() {
        Profile bad = Profiles.load("cx-gen3x16").with("pci.flr.time", "101 ms");
        String m = assertThrows(IllegalArgumentException.class, () -> new World(2, bad, 1, Faults.NONE)).getMessage();
        assertEquals("pci.flr.time = 101000000000 ps: must be from 0 ps to 100000000000 ps", m);
    }
}
