package nicsim.driver;

import static org.junit.jupiter.api.Assertions.*;

import java.util.ArrayList;
import java.util.List;
import nicsim.fabric.Faults;
import nicsim.profile.Profiles;
import org.junit.jupiter.api.Test;

class WorldTest {
    @Test
    void aConditionOnSomeHostsIsLookedAtOnlyWhenTheirMemoryIsWritten() {
        World w = new World(2, Profiles.load("cx-gen3x16"), 1, Faults.NONE);
        w.runFor(1_000_000); // the adapters settle
        long a = w.host(0).allocPhysical(64, 64), b = w.host(1).allocPhysical(64, 64);
        for (int i = 1; i <= 5; i++) {
            long t = w.now() + i * 1_000_000L;
            byte v = (byte) i;
            w.sim.schedule(t, () -> w.host(1).memory.write(b, new byte[]{v})); // the other host: never looked for
        }
        w.sim.schedule(w.now() + 3_500_000L, () -> w.host(0).memory.write(a, new byte[]{9}));
        List<Long> looks = new ArrayList<>();
        w.runUntilMemoryHolds(new int[]{0}, () -> { looks.add(w.now()); return w.host(0).memory.read(a, 1)[0] == 9; }, 10_000_000L);
        assertEquals(2, looks.size(), "a look at the start and one after host 0's write, none for host 1's: " + looks);
        assertEquals(looks.get(0) + 3_500_000L, looks.get(1));
    }
}
