package nicsim.verbs;

import static org.junit.jupiter.api.Assertions.*;

import java.util.List;
import nicsim.adapter.Problems;
import nicsim.driver.Host;
import nicsim.driver.World;
import nicsim.fabric.Faults;
import nicsim.profile.Profiles;
import org.junit.jupiter.api.Test;

/**
 * The firmware's log (its reports and events) on an adapter that outlives many programs, as serve's do: a line for
 * every connection's COMM_EST, every link change, every report. It keeps the first and last {@link Problems#KEPT}
 * lines and says how many it did not keep, so it does not grow without bound; below the bound it has every line.
 */
class FirmwareLogTest {
    @Test
    void theLogKeepsItsFirstAndLastLinesAndCountsTheRest() {
        World world = new World(2, Profiles.load("cx-gen3x16"), 1, Faults.NONE);
        Host h = world.host(1);
        int flaps = Problems.KEPT + 100; // two events each (PORT_ERR, PORT_ACTIVE), logged: no driver yet
        for (int i = 0; i < flaps; i++) {
            if (i == Problems.KEPT / 2) assertEquals(Problems.KEPT, h.firmware.log().size(), "all lines kept below");
            for (boolean up : new boolean[]{false, true}) {
                h.within(() -> world.fabric.link(h.firmware.lid(), up));
                world.runFor(1_000_000L);
            }
        }
        List<String> log = h.firmware.log();
        assertEquals(2 * Problems.KEPT + 1, log.size());
        String first = "event PORT_ERR for 0x1", last = "event PORT_ACTIVE for 0x1";
        assertEquals(first, log.get(0));
        assertEquals(first, log.get(Problems.KEPT - 2));
        assertEquals(String.format("(%,d reports not kept: the adapter keeps the first and last %d)",
                2 * flaps - 2 * Problems.KEPT, Problems.KEPT), log.get(Problems.KEPT));
        assertEquals(last, log.get(log.size() - 1));
    }
}
