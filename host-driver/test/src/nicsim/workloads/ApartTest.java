package nicsim.workloads;

import static org.junit.jupiter.api.Assertions.*;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import nicsim.driver.World;
import nicsim.fabric.Faults;
import nicsim.profile.Profiles;
import org.junit.jupiter.api.Test;

/** Hosts running apart in windows (issue 36): the same output, counters and bytes for any number of threads. */
class ApartTest {
    /** pairs_write_bw on 8 nodes: what it printed, its rows, every counter, and each server's buffer. */
    static List<String> run(int threads, String faults) {
        var p = Profiles.load("cx-gen3x16");
        try (World w = threads == 0 ? new World(8, p, 5, Faults.parse(faults)) : World.apart(8, p, 5,
                Faults.parse(faults), threads)) {
            ByteArrayOutputStream text = new ByteArrayOutputStream();
            Result r = Workloads.run("pairs_write_bw", w, Options.defaults().with(set -> set.iters(60).size(16384)),
                    new PrintStream(text));
            assertTrue(r.ok(), r.errors().toString());
            List<String> out = new ArrayList<>(List.of(text.toString(), r.rows().toString(),
                    w.sim.counters().snapshot().toString()));
            for (int k = 1; k < 8; k += 2)
                out.add(Arrays.toString(w.host(k).memory.read(0x100000, 4096)).hashCode() + "");
            out.add(w.isApart() ? "apart" : "together");
            return out;
        }
    }

    @Test
    void eightNodesGiveTheSameResultsOnOneTwoOrThreeThreads() {
        List<String> one = run(1, "none");
        assertTrue(one.get(0).contains("4 pairs x 60 writes"), one.get(0));
        assertTrue(one.get(2).contains("Fabric.packets"), "every host's counters are read together");
        assertEquals(one, run(2, "none"), "2 threads");
        assertEquals(one, run(3, "none"), "3 threads");
    }

    @Test
    void lossAndItsRetransmissionsToo() {
        List<String> one = run(1, "drop=0.01,reorder=0.01");
        assertTrue(one.get(2).contains("Fabric.dropped"), one.get(2));
        assertEquals(one, run(2, "drop=0.01,reorder=0.01"));
    }

    @Test
    void theMeasuredFiguresAreThoseOfOneSimulator() {
        // apart, the hosts' setups overlap (each host's own clock); from the first post on, the runs are the same
        List<String> apart = run(2, "none"), together = run(0, "none");
        assertEquals(together.get(1), apart.get(1), "the rows");
        assertEquals(together.subList(3, 7), apart.subList(3, 7), "the bytes written");
    }
}
