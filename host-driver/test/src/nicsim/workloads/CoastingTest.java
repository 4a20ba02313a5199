package nicsim.workloads;

import static org.junit.jupiter.api.Assertions.*;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import nicsim.driver.World;
import nicsim.fabric.Faults;
import nicsim.profile.Profiles;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The DMA channels' clocks coast over edges that only move beats inside a channel (ClockDomain.Coaster).
 * That must change nothing a user sees: every workload, at sizes from one beat to several packets, on
 * every profile, with and without faults, gives the same figures, counters and end time as the same
 * run with every edge run one by one through the wires.
 */
class CoastingTest {
    static Stream<Arguments> runs() {
        List<Arguments> l = new ArrayList<>();
        for (String profile : Profiles.BUILTIN)
            for (String workload : Workloads.NAMES)
                for (long size : new long[]{8, 4096, 65536}) {
                    boolean atomicOver8 = workload.startsWith("atomic") && size != 8;
                    if (atomicOver8 || workload.startsWith("ud") && size > 4096) continue;
                    l.add(Arguments.of(workload, profile, size, "none"));
                }
        for (String profile : Profiles.BUILTIN)
            l.add(Arguments.of("write_bw", profile, 65536L, "drop=0.02,reorder=0.02,dup=0.01"));
        l.add(Arguments.of("read_bw", "cx-gen3x16", 200_000L, "drop=0.02"));
        return l.stream();
    }

    /** Everything a run shows: its rows, every counter, and when it ended. */
    static String fingerprint(String workload, String profile, long size, String faults, boolean coasting) {
        World w = new World(workload.equals("pairs_write_bw") ? 4 : 2, Profiles.load(profile), 3, Faults.parse(faults));
        w.sim.coasting(coasting);
        Options o = Options.defaults().with(set -> set.size(size).iters(size >= 65536 ? 6 : 20));
        if (workload.endsWith("_bw")) o = o.with(set -> set.qps(2));
        Result r = Workloads.run(workload, w, o, new PrintStream(new ByteArrayOutputStream()));
        return "ok=" + r.ok() + " " + r.errors() + "\n" + r.rows() + "\n" + w.sim.counters().snapshot()
                + "\nend " + w.sim.now() + " ps";
    }

    @ParameterizedTest(name = "{0} {2} B on {1}, faults {3}")
    @MethodSource("runs")
    void coastingGivesTheSameRunAsEveryEdgeOneByOne(String workload, String profile, long size, String faults) {
        String oneByOne = fingerprint(workload, profile, size, faults, false);
        assertTrue(oneByOne.startsWith("ok=true"), oneByOne);
        assertEquals(oneByOne, fingerprint(workload, profile, size, faults, true));
    }
}
