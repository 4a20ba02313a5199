package nicsim.workloads;

import static org.junit.jupiter.api.Assertions.*;

import nicsim.driver.World;
import nicsim.fabric.Faults;
import nicsim.profile.Profiles;
import org.junit.jupiter.api.Test;

/**
 * The DCI-pool warning of docs/sources.md#dc-transport, measured: too few DCIs for the targets and every write needs a
 * connect.
 */
class DcPoolTest {
    static DcPool.Outcome run(int dcis) {
        return DcPool.run(new World(9, Profiles.load("cx-gen3x16"), 5, Faults.NONE), dcis, 8, 160, 64);
    }

    @Test
    void tooFewDcisConnectForEveryWrite() {
        DcPool.Outcome one = run(1), all = run(8);
        assertTrue(one.errors().isEmpty(), one.errors().toString());
        assertTrue(all.errors().isEmpty(), all.errors().toString());
        assertEquals(160, one.connects(), "one DCI for 8 targets in turn: a connect per write");
        assertEquals(8, all.connects(), "a DCI per target: each connects once");
        assertTrue(one.latAvgUs() > 2 * all.latAvgUs(),
                "switching costs latency: " + one.latAvgUs() + " vs " + all.latAvgUs() + " us");
    }

    @Test
    void sameRunSameFigures() {
        DcPool.Outcome a = run(3), b = run(3);
        assertEquals(a.latAvgUs(), b.latAvgUs());
        assertEquals(a.simPicos(), b.simPicos());
        assertEquals(a.connects(), b.connects());
    }
}
