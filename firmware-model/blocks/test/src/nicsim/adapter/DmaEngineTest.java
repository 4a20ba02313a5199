package nicsim.adapter;

import static org.junit.jupiter.api.Assertions.*;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import nicsim.adapter.DmaPorts.Beat;
import nicsim.adapter.DmaPorts.Done;
import nicsim.adapter.DmaPorts.HostDesc;
import nicsim.adapter.DmaPorts.LinkDesc;
import nicsim.adapter.DmaPorts.WriteBeat;
import nicsim.profile.Profiles;
import nicsim.sim.ClockDomain;
import nicsim.sim.Clocked;
import nicsim.sim.Simulator;
import org.junit.jupiter.api.Test;

class DmaEngineTest {
    static final class Bench implements Clocked {
        final Simulator sim = new Simulator();
        final ClockDomain core = sim.clockDomain("core", 4_000);
        final DmaEngine d;
        final int beat;
        final ArrayDeque<HostDesc> host = new ArrayDeque<>();
        final ArrayDeque<LinkDesc> send = new ArrayDeque<>(), recv = new ArrayDeque<>();
        final ArrayDeque<Beat> pciData = new ArrayDeque<>(), linkRx = new ArrayDeque<>();
        final List<Beat> linkTx = new ArrayList<>();
        final List<WriteBeat> pciWrite = new ArrayList<>();
        final List<Done> hostDone = new ArrayList<>(), sendDone = new ArrayList<>(), recvDone = new ArrayList<>();
        final List<Long> sendDoneCycles = new ArrayList<>();

        Bench(String profile) {
            d = new DmaEngine(core, DmaEngine.Config.from(Profiles.load(profile)));
            beat = d.config().beatBytes();
            core.add(this);
        }

        @Override public void drive() {
            if (host.isEmpty()) d.hostDesc().idle(); else d.hostDesc().push(host.peekFirst());
            if (send.isEmpty()) d.sendDesc().idle(); else d.sendDesc().push(send.peekFirst());
            if (recv.isEmpty()) d.recvDesc().idle(); else d.recvDesc().push(recv.peekFirst());
            if (pciData.isEmpty()) d.pciData().idle(); else d.pciData().push(pciData.peekFirst());
            if (linkRx.isEmpty()) d.linkRx().idle(); else d.linkRx().push(linkRx.peekFirst());
            d.pciRead().ready(true);
            d.pciWrite().ready(true);
            d.linkTx().ready(true);
        }

        @Override public void update() {
            if (d.hostDesc().fire()) host.pollFirst();
            if (d.sendDesc().fire()) send.pollFirst();
            if (d.recvDesc().fire()) recv.pollFirst();
            if (d.pciData().fire()) pciData.pollFirst();
            if (d.linkRx().fire()) linkRx.pollFirst();
            if (d.linkTx().fire()) linkTx.add(d.linkTx().payload());
            if (d.pciWrite().fire()) pciWrite.add(d.pciWrite().payload());
            if (d.hostDone().valid()) hostDone.add(d.hostDone().payload());
            if (d.sendDone().valid()) { sendDone.add(d.sendDone().payload()); sendDoneCycles.add(core.cycle()); }
            if (d.recvDone().valid()) recvDone.add(d.recvDone().payload());
        }

        @Override public boolean active() {
            return !host.isEmpty() || !send.isEmpty() || !recv.isEmpty() || !pciData.isEmpty() || !linkRx.isEmpty();
        }

        Beat beat(int seed, long flag) {
            long[] v = new long[DmaPorts.words(d.config().widthBits())];
            long mask = beat < 8 ? 0xFFFF_FFFFL : -1L;
            for (int i = 0; i < v.length; i++) v[i] = (0x1111_1111_1111_1111L * (seed + 1) + i) & mask;
            return new Beat(v, flag);
        }

        Bench run() { core.wake(); sim.runUntilIdle(1_000_000_000L); return this; }
    }

    @Test
    void bytesCrossPciSramAndLinkUnchanged() {
        Bench b = new Bench("cx-gen3x16");
        int n = 8;
        b.host.add(new HostDesc(0, 0x4000_0000L, 0x1000, (long) n * b.beat, 1));
        for (int i = 0; i < n; i++) b.pciData.add(b.beat(i, 0));
        b.run();
        assertEquals(List.of(new Done(1, 0, (long) n * b.beat)), b.hostDone);
        b.send.add(new LinkDesc(0x1000, (long) n * b.beat, 2));
        b.run();
        assertEquals(n, b.linkTx.size());
        for (int i = 0; i < n; i++) {
            assertArrayEquals(b.beat(i, 0).data(), b.linkTx.get(i).data(), "beat " + i);
            assertEquals(i == n - 1 ? 1 : 0, b.linkTx.get(i).flag(), "last flag of beat " + i);
        }
        assertEquals(List.of(new Done(2, 0, (long) n * b.beat)), b.sendDone);
    }

    @Test
    void beatsAnywhereInSramComeBackUnchanged() {
        Bench b = new Bench("cx-gen3x16");
        int n = 8;
        // astride a boundary of the model's SRAM storage (256 beats), and the top of SRAM
        long[] at = {(256 - 3L) * b.beat, b.d.config().sramBytes() - (long) n * b.beat};
        for (int k = 0; k < at.length; k++) {
            b.host.add(new HostDesc(0, 0x4000_0000L, at[k], (long) n * b.beat, k));
            for (int i = 0; i < n; i++) b.pciData.add(b.beat(10 * k + i, 0));
        }
        b.run();
        for (int k = at.length - 1; k >= 0; k--) b.send.add(new LinkDesc(at[k], (long) n * b.beat, 10 + k));
        b.run();
        assertEquals(2 * n, b.linkTx.size());
        for (int k = 0; k < at.length; k++)
            for (int i = 0; i < n; i++)
                assertArrayEquals(b.beat(10 * k + i, 0).data(), b.linkTx.get((at.length - 1 - k) * n + i).data(),
                        "beat " + i + " at " + at[k]);
    }

    @Test
    void sramToHostWritesConsecutiveAddresses() {
        Bench b = new Bench("lanai72");
        for (int i = 0; i < 4; i++) b.linkRx.add(b.beat(i, i == 3 ? 1 : 0));
        b.recv.add(new LinkDesc(0x200, 64, 7));
        b.run();
        assertEquals(List.of(new Done(7, 0, 4L * b.beat)), b.recvDone, "a short packet ends at its last beat");
        b.host.add(new HostDesc(1, 0x5000_0000L, 0x200, 4L * b.beat, 8));
        b.run();
        assertEquals(4, b.pciWrite.size());
        for (int i = 0; i < 4; i++) {
            assertEquals(0x5000_0000L + (long) i * b.beat, b.pciWrite.get(i).addr());
            assertArrayEquals(b.beat(i, 0).data(), b.pciWrite.get(i).data());
        }
        assertEquals(1, b.pciWrite.get(3).last());
    }

    @Test
    void twoBusyEnginesShareTheLocalBusHalfAndHalf() {
        Bench b = new Bench("cx-gen3x16");
        for (int i = 0; i < 64; i++) b.linkRx.add(b.beat(i, i == 63 ? 1 : 0));
        b.recv.add(new LinkDesc(0, 64L * b.beat, 1));
        b.run();
        long beatsBefore = b.d.beats();
        // now the host engine fills buffer B while the send engine drains buffer A: both want the bus every cycle
        for (int i = 0; i < 64; i++) b.pciData.add(b.beat(i + 100, 0));
        b.host.add(new HostDesc(0, 0x4000_0000L, 0x10000, 64L * b.beat, 2));
        b.send.add(new LinkDesc(0, 64L * b.beat, 3));
        long start = b.core.cycle();
        b.run();
        assertEquals(128, b.d.beats() - beatsBefore);
        assertTrue(b.d.contentionCycles() >= 120, "contention cycles " + b.d.contentionCycles());
        // each engine got every other cycle, so each took about twice as long as it would alone
        long took = b.sendDoneCycles.get(0) - start;
        assertTrue(took >= 127, "send finished after " + took + " cycles");
    }

    @Test
    void overrunMisalignmentAndSramBoundsAreReported() {
        Bench b = new Bench("cx-gen3x16");
        for (int i = 0; i < 4; i++) b.linkRx.add(b.beat(i, i == 3 ? 1 : 0));
        b.recv.add(new LinkDesc(0, 2L * b.beat, 1));                    // room for 2 of the packet's 4 beats
        b.host.add(new HostDesc(0, 0x4000_0001L, 0, b.beat, 2));        // host address not on a beat
        b.send.add(new LinkDesc(b.d.config().sramBytes() - b.beat, 2L * b.beat, 3)); // runs off the end of SRAM
        b.run();
        assertEquals(List.of(new Done(1, Done.Status.OVERRUN.ordinal(), 2L * b.beat)), b.recvDone);
        assertEquals(List.of(new Done(2, Done.Status.MISALIGNED.ordinal(), 0)), b.hostDone);
        assertEquals(List.of(new Done(3, Done.Status.OUT_OF_SRAM.ordinal(), 0)), b.sendDone);
        assertTrue(b.linkTx.isEmpty());
    }

    /** The RTL's SRAM pointers are as wide as the largest share the twin accepts: a larger one is refused. */
    @Test
    void anSramShareAboveOneGibIsRefusedNamingItsKeyAndValue() {
        assertEquals(1L << 30, new DmaEngine.Config(256, 1L << 30).sramBytes());
        var e = assertThrows(IllegalArgumentException.class, () -> new DmaEngine.Config(256, 1L << 31));
        assertEquals("core.sram.size / dma.channels = 2147483648 B: must be a power of two from 4096 B to "
                + "1073741824 B", e.getMessage());
    }

    @Test
    void failedPciReadEndsWithPciErrorAfterTheGoodBeats() {
        Bench b = new Bench("cx-gen3x16");
        b.host.add(new HostDesc(0, 0x4000_0000L, 0, 4L * b.beat, 5));
        b.pciData.add(b.beat(0, 0));
        b.pciData.add(b.beat(1, 0));
        b.pciData.add(b.beat(2, 1));                                     // the completion failed here
        b.pciData.add(b.beat(3, 0));
        b.run();
        assertEquals(List.of(new Done(5, Done.Status.PCI_ERROR.ordinal(), 2L * b.beat)), b.hostDone);
        assertEquals(1, b.sim.counters().get("DmaEngine.done_pci_error"));
    }

    @Test
    void narrowerDataPathMovesTheSameBytesInMoreCycles() {
        long[] cycles = new long[2];
        String[] profiles = {"lanai43", "cx-gen3x16"};
        for (int p = 0; p < 2; p++) {
            Bench b = new Bench(profiles[p]);
            int n = 1024 / b.beat;
            for (int i = 0; i < n; i++) b.linkRx.add(b.beat(i, i == n - 1 ? 1 : 0));
            b.recv.add(new LinkDesc(0, 1024, 1));
            b.run();
            b.send.add(new LinkDesc(0, 1024, 2));
            long start = b.core.cycle();
            b.run();
            cycles[p] = b.sendDoneCycles.get(0) - start;
            assertEquals(1024, b.sendDone.get(0).length());
        }
        assertTrue(cycles[0] >= 256 && cycles[1] >= 32, "a beat per cycle at most: 256 beats of 4 B, 32 of 32 B");
        assertTrue(cycles[0] > 7 * cycles[1], "32-bit path " + cycles[0] + " cycles vs 256-bit " + cycles[1]);
    }
}
