package nicsim.adapter;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import nicsim.adapter.DmaPathTest.Bench;
import nicsim.profile.Profiles;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A coasting channel issues the PCI writes inside its coast at their edges' own times, without ending the coast on
 * each: host memory sees every write land at the picosecond it lands when every edge runs through the wires.
 */
class DmaWritesAheadTest {
    /** What a run gave: when each write to host memory landed, the bytes written, and the writes issued ahead. */
    record Outcome(List<Long> landings, List<byte[]> bytes, long ahead) {}

    static Outcome run(String profile, boolean coasting) {
        Bench b = new Bench(Profiles.load(profile));
        b.sim.coasting(coasting);
        List<Long> landings = new ArrayList<>();
        b.mem.onWrite(() -> landings.add(b.sim.now()));
        List<byte[]> bytes = new ArrayList<>();
        Random rnd = new Random(11);
        for (int i = 0; i < 5; i++) {
            int len = 4096 * (1 + i % 4) + rnd.nextInt(300), at = i * 40_000 + rnd.nextInt(64);
            byte[] data = new byte[len];
            rnd.nextBytes(data);
            long to = DmaPathTest.BASE + (1 << 17) + at;
            int w = bytes.size();
            bytes.add(null);
            b.dma.write(to, data, ok -> bytes.set(w, b.mem.read(to, len)));
            if (i % 2 == 1) b.sim.runUntilIdle(); // some back to back, some alone
        }
        b.sim.runUntilIdle();
        return new Outcome(landings, bytes, b.dma.writesIssuedAhead());
    }

    @ParameterizedTest
    @ValueSource(strings = {"cx-gen3x16", "lanai43"})
    void writesLandWhenTheyLandBeatByBeat(String profile) {
        Outcome one = run(profile, false), coast = run(profile, true);
        assertEquals(0, one.ahead());
        assertEquals(one.landings(), coast.landings(), "when each PCI write landed");
        for (int i = 0; i < one.bytes().size(); i++) assertArrayEquals(one.bytes().get(i), coast.bytes().get(i));
        // all but each job's last write and the few on an edge the clock stops after leave inside a coast
        assertTrue(coast.ahead() > coast.landings().size() / 2,
                coast.ahead() + " of " + coast.landings().size() + " writes issued ahead");
    }
}
