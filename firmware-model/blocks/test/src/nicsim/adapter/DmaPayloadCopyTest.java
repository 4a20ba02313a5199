package nicsim.adapter;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import nicsim.adapter.DmaPathTest.Bench;
import nicsim.profile.Profile;
import nicsim.profile.Profiles;
import nicsim.sim.Clocked;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Payload that nothing watches moves as a copy, its beats keeping only the timing; a channel that is watched (an
 * RTL twin or a waveform beside it) carries the bytes in its beats. Either way a packet's bytes arrive intact, at
 * every size and offset around a beat and a host page, at the same times and in the same beats.
 */
class DmaPayloadCopyTest {
    static final int PAGE = 4096;

    /** What a run of the same transfers gave: every packet's and write's bytes, when each finished, beats moved. */
    record Outcome(List<byte[]> bytes, List<Long> times, long beats, long end, long coasted) {}

    /** A block beside the engines, as an RTL twin in lockstep would be: it sees every edge and does nothing. */
    static final class Watcher implements Clocked {
        @Override public void drive() {}
        @Override public void update() {}
        @Override public boolean active() { return false; }
    }

    static Outcome run(Profile p, boolean watched, int[] offsets, int[] lengths) {
        Bench b = new Bench(p);
        int channels = b.dma.engines().size();
        for (int k = 0; k < channels; k++) {
            if (watched) b.dma.domain(k).add(new Watcher());
            assertEquals(watched, b.dma.domain(k).watched(), "channel " + k + " watched");
        }
        byte[] host = new byte[1 << 20];
        new Random(3).nextBytes(host);
        b.mem.write(DmaPathTest.BASE, host);
        Random rnd = new Random(4);
        List<byte[]> got = new ArrayList<>();
        List<Long> times = new ArrayList<>();
        int slot = 0;
        for (int off : offsets)
            for (int len : lengths) {
                int i = got.size(), from = (slot++ % 16) * 3 * PAGE + off; // a packet read out of host memory
                got.add(null);
                times.add(null);
                var packet = List.of(new DmaPath.Range(DmaPathTest.BASE + from, len));
                b.dma.readOut(packet, Runnable::run, (bytes, feed) -> {}, bytes -> {
                    got.set(i, bytes);
                    times.set(i, b.sim.now());
                });
                byte[] data = new byte[len]; // a packet's bytes written to host memory, at the same offset in its page
                rnd.nextBytes(data);
                long to = DmaPathTest.BASE + (1 << 19) + (slot % 16) * 3L * PAGE + off;
                int j = got.size();
                got.add(null);
                times.add(null);
                b.dma.write(to, data, ok -> {
                    assertTrue(ok, "write of " + len + " B at +" + off);
                    got.set(j, b.mem.read(to, len));
                    times.set(j, b.sim.now());
                });
                b.sim.runUntilIdle();
                assertArrayEquals(Arrays.copyOfRange(host, from, from + len), got.get(i),
                        len + " B read out at +" + off);
                assertArrayEquals(data, got.get(j), len + " B written at +" + off);
            }
        long coasted = 0;
        for (int k = 0; k < channels; k++) coasted += b.dma.domain(k).edgesCoasted();
        return new Outcome(got, times, b.beats(), b.sim.now(), coasted);
    }

    @ParameterizedTest
    @ValueSource(strings = {"lanai43", "cx-gen3x16"})
    void bytesCrossIntactAroundBeatsAndPagesAtTheSameTimesWatchedOrNot(String profile) {
        Profile p = Profiles.load(profile);
        int beat = DmaEngine.Config.from(p).beatBytes();
        int[] offsets = {0, 1, beat - 1, PAGE - beat - 1};
        int[] lengths = {1, beat - 1, beat, beat + 1, 2 * beat + 1, PAGE - 1, PAGE, PAGE + 1, 2 * PAGE + beat + 1};
        Outcome copy = run(p, false, offsets, lengths), carried = run(p, true, offsets, lengths);
        for (int k = 0; k < copy.bytes().size(); k++)
            assertArrayEquals(carried.bytes().get(k), copy.bytes().get(k), "transfer " + k);
        assertEquals(carried.times(), copy.times(), "each transfer ends at the same time");
        assertEquals(carried.beats(), copy.beats(), "the same beats on the local bus");
        assertEquals(carried.end(), copy.end());
        assertTrue(copy.coasted() > 0, "a channel nothing watches coasts");
        assertFalse(carried.coasted() > 0, "a watched channel runs every edge through its wires");
    }

    /**
     * A packet read into an array given back by an earlier one (the requester's pool) carries only the host's bytes
     * as the DMA read them, every old byte overwritten, watched or not, over ranges that split around pages; an
     * array of another length is refused, naming both.
     */
    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void aReusedArrayCarriesOnlyTheBytesReadIntoIt(boolean watched) {
        Bench b = new Bench(Profiles.load("cx-gen3x16"));
        for (int k = 0; watched && k < b.dma.engines().size(); k++) b.dma.domain(k).add(new Watcher());
        byte[] host = new byte[4 * PAGE];
        new Random(5).nextBytes(host);
        b.mem.write(DmaPathTest.BASE, host);
        byte[] stale = new byte[PAGE];
        Arrays.fill(stale, (byte) 0x5A);
        // the packet's 4096 bytes from three ranges: the end of page 0, most of page 2, the start of page 3
        long at = DmaPathTest.BASE;
        List<DmaPath.Range> ranges = List.of(new DmaPath.Range(at + PAGE - 100, 100),
                new DmaPath.Range(at + 2 * PAGE + 7, PAGE - 107), new DmaPath.Range(at + 3 * PAGE, 7));
        byte[] expect = new byte[PAGE];
        System.arraycopy(host, PAGE - 100, expect, 0, 100);
        System.arraycopy(host, 2 * PAGE + 7, expect, 100, PAGE - 107);
        System.arraycopy(host, 3 * PAGE, expect, PAGE - 7, 7);
        byte[][] head = {null}, done = {null};
        b.dma.readOut(ranges, stale, Runnable::run, (bytes, feed) -> head[0] = bytes.clone(), bytes -> done[0] = bytes);
        b.sim.runUntilIdle();
        assertArrayEquals(expect, head[0], "the packet's bytes as its first beat left");
        assertSame(stale, done[0], "the packet is the array given");
        assertArrayEquals(expect, done[0]);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> b.dma.readOut(ranges, new byte[PAGE - 1], Runnable::run, (bytes, feed) -> {}, bytes -> {}));
        assertEquals("readOut into an array of 4095 B for ranges of 4096 B", e.getMessage());
    }

    /**
     * A read handed to a sink (a READ's responses, one array each) lands every byte in its place, watched or not: a
     * piece within one array is read straight into it, one that straddles two comes through the sink, and each
     * finishes at the same time as a read into one buffer.
     */
    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void aReadIntoArraysOfItsOwnGetsEachByteInItsPlace(boolean watched) {
        int piece = new Bench(Profiles.load("cx-gen3x16")).dma.pieceBytes();
        int mtu = 2 * piece - 100, len = 6 * piece + 123, pieces = 7; // responses that end inside some pieces
        long from = DmaPathTest.BASE + 45;
        long[] ends = new long[2];
        byte[][] whole = {null};
        byte[][] parts = new byte[(len + mtu - 1) / mtu][];
        for (int run = 0; run < 2; run++) {
            Bench b = new Bench(Profiles.load("cx-gen3x16"));
            for (int k = 0; watched && k < b.dma.engines().size(); k++) b.dma.domain(k).add(new Watcher());
            byte[] host = new byte[4 * PAGE];
            new Random(6).nextBytes(host);
            b.mem.write(DmaPathTest.BASE, host);
            int r = run;
            if (run == 0) b.dma.read(from, len, d -> { whole[0] = d; ends[r] = b.sim.now(); });
            else {
                for (int k = 0; k < parts.length; k++) parts[k] = new byte[Math.min(mtu, len - k * mtu)];
                int[] put = {0};
                b.dma.read(from, len, new DmaPath.Sink() {
                    @Override public void put(int at, byte[] src, int off, int n) {
                        put[0]++;
                        for (int o = 0; o < n; ) {
                            int k = (at + o) / mtu, in = (at + o) % mtu, m = Math.min(n - o, parts[k].length - in);
                            System.arraycopy(src, off + o, parts[k], in, m);
                            o += m;
                        }
                    }

                    @Override public byte[] arrayFor(int at, int n) {
                        return at / mtu == (at + n - 1) / mtu ? parts[at / mtu] : null;
                    }

                    @Override public int offsetIn(int at) { return at % mtu; }
                }, ok -> { assertTrue(ok); ends[r] = b.sim.now(); });
                b.sim.runUntilIdle();
                if (watched) assertEquals(pieces, put[0], "a watched channel's pieces come through the sink");
                else assertTrue(put[0] > 0 && put[0] < pieces, put[0] + " of " + pieces + " pieces through the sink");
            }
            b.sim.runUntilIdle();
        }
        byte[] got = new byte[len];
        for (int k = 0; k < parts.length; k++) System.arraycopy(parts[k], 0, got, k * mtu, parts[k].length);
        assertArrayEquals(whole[0], got, "every byte in its place");
        assertEquals(ends[0], ends[1], "done at the same time");
    }
}
