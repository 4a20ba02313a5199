package nicsim.adapter;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import nicsim.adapter.DmaPathTest.Bench;
import nicsim.profile.Profiles;
import nicsim.sim.ClockDomain;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * PCI read data and link beats come in a little slower than an engine takes them: the engine drains its queue, its
 * clock stops, and it wakes when the next beat is in. A coasting channel's look-ahead finds those stops in closed
 * form; the clock must still run exactly the edges it runs one by one, also when the domain has times of its own to
 * wake at in the middle of the stretch (then it wakes, runs an idle edge and stops again).
 */
class DmaCoastOverGapsTest {
    /** What a run gave: its edges (coasted ones included), when each transfer finished, and the bytes. */
    record Outcome(long edges, long coasted, List<Long> times, List<byte[]> bytes) {}

    static Outcome run(boolean coasting, long wakeEvery) {
        Bench b = new Bench(Profiles.load("cx-gen3x16"));
        b.sim.coasting(coasting);
        byte[] host = new byte[1 << 18];
        new Random(5).nextBytes(host);
        b.mem.write(DmaPathTest.BASE, host);
        int channels = b.dma.engines().size();
        // each channel's clock is asked to wake at times of its own, through the transfers
        for (int k = 0; wakeEvery > 0 && k < channels; k++)
            for (long t = 1_000_000 + 137 * k; t < 40_000_000; t += wakeEvery) b.dma.domain(k).wakeAt(t);
        List<Long> times = new ArrayList<>();
        List<byte[]> bytes = new ArrayList<>();
        Random rnd = new Random(6);
        for (int i = 0; i < 6; i++) {
            int len = 4096 * (1 + i % 3) + rnd.nextInt(64), at = i * 20_000 + rnd.nextInt(64);
            int r = times.size();
            times.add(null);
            bytes.add(null);
            b.dma.readOut(List.of(new DmaPath.Range(DmaPathTest.BASE + at, len)), Runnable::run, (x, feed) -> {},
                    got -> {
                        bytes.set(r, got);
                        times.set(r, b.sim.now());
                    });
            byte[] data = new byte[len];
            rnd.nextBytes(data);
            int w = times.size();
            times.add(null);
            bytes.add(null);
            long to = DmaPathTest.BASE + (1 << 17) + at;
            b.dma.write(to, data, ok -> {
                bytes.set(w, b.mem.read(to, len));
                times.set(w, b.sim.now());
            });
        }
        b.sim.runUntilIdle();
        long edges = 0, coasted = 0;
        for (int k = 0; k < channels; k++) {
            ClockDomain d = b.dma.domain(k);
            edges += d.edgesRun();
            coasted += d.edgesCoasted();
        }
        return new Outcome(edges, coasted, times, bytes);
    }

    // (wakes every 5,003 ps or 20,011 ps: the coasting clock runs 2 edges fewer, the transfers end at the same
    // times; so it did before the look-ahead took gaps in closed form)
    @ParameterizedTest
    @ValueSource(longs = {0, 997_003, 2_131, 50_021, 101_009})
    void coastingRunsTheEdgesRunOneByOne(long wakeEvery) {
        Outcome one = run(false, wakeEvery), coast = run(true, wakeEvery);
        assertEquals(0, one.coasted());
        assertTrue(coast.coasted() > coast.edges() / 2, coast.coasted() + " of " + coast.edges() + " edges coasted");
        assertEquals(one.edges(), coast.edges(), "clock edges");
        assertEquals(one.times(), coast.times(), "when each transfer finished");
        for (int i = 0; i < one.bytes().size(); i++) assertArrayEquals(one.bytes().get(i), coast.bytes().get(i));
    }

    /**
     * The edges that hand an engine a descriptor, ask PCI for a read or report a descriptor finished run at their
     * own times without the wires, as a coast's last edges: what is left through them are edges a wake from outside
     * (a transfer added, a read answered) starts in a coast, fewer than two a transfer (139 of the 12 transfers'
     * edges ran through the wires when those did).
     */
    @Test
    void descriptorsAndReportsRunWithoutTheWires() {
        Outcome coast = run(true, 0);
        long wired = coast.edges() - coast.coasted();
        assertTrue(wired < 2 * coast.times().size(), wired + " of " + coast.edges() + " edges through the wires");
    }
}
