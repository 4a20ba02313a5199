package nicsim.workloads;

import static org.junit.jupiter.api.Assertions.*;

import nicsim.driver.World;
import nicsim.fabric.Faults;
import nicsim.profile.Profiles;
import org.junit.jupiter.api.Test;

/**
 * The on-demand paging study: first touch pays every page's fault and an RNR wait; once warm, an on-demand MR costs
 * what a pinned one does.
 */
class OdpTouchTest {
    @Test
    void firstTouchPaysEachPageThenMatchesPinned() {
        var p = Profiles.load("cx-gen3x16");
        OdpTouch.Outcome r = OdpTouch.run(new World(2, p, 1, Faults.NONE), 65536);
        assertEquals(16, r.pagesFaulted(), "every page of 64 KiB, once");
        assertTrue(r.rnrNaks() >= 1);
        assertEquals(r.pinnedWarmPs(), r.warmPs(), "warm on-demand pages translate as pinned ones");
        long faultCost = p.picos("host.odp.fault.cost");
        assertTrue(r.firstTouchPs() > r.warmPs() + 16 * faultCost, r.toString());
        assertTrue(r.pinnedColdPs() > r.pinnedWarmPs(), "the first write fills the translation cache: " + r);
    }
}
