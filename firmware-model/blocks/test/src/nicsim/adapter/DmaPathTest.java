package nicsim.adapter;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.function.Consumer;
import nicsim.host.ConfigSpace;
import nicsim.host.HostMemory;
import nicsim.host.PciBus;
import nicsim.host.PciFunction;
import nicsim.host.PciLink;
import nicsim.host.PciPort;
import nicsim.profile.Profile;
import nicsim.profile.Profiles;
import nicsim.sim.Arrival;
import nicsim.sim.Simulator;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

/** Payload through the DmaEngines: host engine, SRAM, send/receive engine, with a real PCI model on the host side. */
class DmaPathTest {
    static final long BASE = 1 << 24;

    static final class Bench implements PciFunction {
        final Simulator sim = new Simulator();
        final HostMemory mem = new HostMemory(1L << 28, 4096);
        final ConfigSpace config = new ConfigSpace(1, 1, 0, new long[]{1 << 20, 0, 0}, 0, 0, 0);
        final DmaPath dma;
        PciPort port;

        Bench(Profile p) {
            PciBus bus = new PciBus(sim, PciBus.Config.from(p), mem);
            bus.configWrite32(bus.attach(this), ConfigSpace.COMMAND,
                    ConfigSpace.CMD_MEMORY_SPACE | ConfigSpace.CMD_BUS_MASTER);
            dma = new DmaPath(sim, DmaPath.Config.from(p, PciLink.Config.from(p)), "", () -> port);
        }

        long beats() { return sim.counters().get("DmaEngine.local_bus_beats"); }

        @Override public ConfigSpace config() { return config; }
        @Override public void mmioWrite(int bar, long offset, byte[] data) { }
        @Override public byte[] mmioRead(int bar, long offset, int length) { return new byte[length]; }
        @Override public void connect(PciPort p) { port = p; }
    }

    @ParameterizedTest
    @ValueSource(strings = {"lanai43", "lanai72", "cx-gen3x16"})
    void unalignedReadsAndWritesCarryExactlyTheirBytes(String profile) {
        Bench b = new Bench(Profiles.load(profile));
        Random rnd = new Random(7);
        byte[] host = new byte[1 << 20];
        rnd.nextBytes(host);
        b.mem.write(BASE, host);
        byte[] expect = host.clone();
        List<Runnable> checks = new ArrayList<>();
        // reads and writes at once, each at an odd address and length; writes into areas of their own
        int cursor = host.length / 2;
        for (int i = 0; i < 40; i++) {
            int len = 1 + rnd.nextInt(i % 5 == 0 ? 70_000 : 300); // some longer than a piece
            int off = rnd.nextInt(host.length / 2 - len);
            if (i % 2 == 0) {
                byte[][] got = {null};
                b.dma.read(BASE + off, len, d -> got[0] = d);
                checks.add(() -> assertArrayEquals(Arrays.copyOfRange(host, off, off + len), got[0],
                        "read of " + len + " B at +" + off));
            } else {
                int at = cursor + rnd.nextInt(64);
                cursor = at + len;
                byte[] data = new byte[len];
                rnd.nextBytes(data);
                System.arraycopy(data, 0, expect, at, len);
                boolean[] ok = {false};
                b.dma.write(BASE + at, data, r -> ok[0] = r);
                checks.add(() -> assertTrue(ok[0], "write of " + len + " B at +" + at));
            }
        }
        b.sim.runUntilIdle();
        checks.forEach(Runnable::run);
        // written bytes landed and their neighbours within the same beats are untouched (byte enables)
        int half = host.length / 2;
        assertArrayEquals(Arrays.copyOfRange(expect, half, host.length), b.mem.read(BASE + half, half));
    }

    @Test
    void everyPayloadBeatCrossesTheLocalBusTwice() {
        Profile p = Profiles.load("lanai43");
        Bench b = new Bench(p);
        int beat = p.bits("core.datapath.width") / 8;
        b.dma.read(BASE, 4096, d -> {});
        b.sim.runUntilIdle();
        assertEquals(2 * 4096 / beat, b.beats(), "host engine into SRAM, send engine out of it");
        // an unaligned write covers one more beat at each end
        b.dma.write(BASE + 1, new byte[4096], ok -> {});
        b.sim.runUntilIdle();
        assertEquals(2 * 4096 / beat + 2 * (4096 / beat + 1), b.beats(),
                "receive engine into SRAM, host engine out of it");
    }

    @Test
    void theLanai72BusMovesPayloadFasterThanLanai43s() {
        // the same 64 KiB read with only the local bus and DMA width changed: 32 bit shares 132 MB/s
        // between host and send engines, below the PCI bus; 64 bit does not
        long[] t = new long[2];
        String[] widths = {"32 bit", "64 bit"};
        for (int i = 0; i < 2; i++) {
            Bench b = new Bench(Profiles.load("lanai43").with("core.datapath.width", widths[i]));
            long[] end = {0};
            b.dma.read(BASE, 65536, d -> end[0] = b.sim.now());
            b.sim.runUntilIdle();
            t[i] = end[0];
        }
        double ratio = (double) t[0] / t[1];
        assertTrue(ratio > 1.5 && ratio < 2.1, "32-bit / 64-bit time " + ratio + " (" + t[0] + " vs " + t[1] + " ps)");
    }

    @Test
    void aCompletionWrittenOnceTheDataIsIssuedLandsAfterTheData() {
        // what a receive CQE relies on: PCI keeps posted writes in order, so it need not wait for the data to land
        for (String profile : List.of("lanai43", "cx-gen3x16")) {
            Bench b = new Bench(Profiles.load(profile));
            byte[] data = new byte[10_000];
            new Random(3).nextBytes(data);
            long flag = BASE + (1 << 20);
            long[] issuedAt = {-1}, landedAt = {-1}, flagAt = {-1};
            boolean[] dataThereWhenFlagLanded = {false};
            b.dma.write(BASE + 3, data, () -> {
                issuedAt[0] = b.sim.now();
                b.port.dmaWrite(flag, new byte[]{1}, r -> {
                    flagAt[0] = r.completedAt();
                    dataThereWhenFlagLanded[0] = Arrays.equals(data, b.mem.read(BASE + 3, data.length));
                });
            }, ok -> landedAt[0] = b.sim.now());
            b.sim.runUntilIdle();
            assertTrue(issuedAt[0] >= 0 && issuedAt[0] < landedAt[0],
                    profile + ": issued at " + issuedAt[0] + " ps, landed at " + landedAt[0]);
            assertTrue(flagAt[0] >= landedAt[0],
                    profile + ": the later write landed at " + flagAt[0] + " ps, the data at " + landedAt[0]);
            assertTrue(dataThereWhenFlagLanded[0],
                    profile + ": every data byte is in memory when the later write lands");
        }
    }

    @Test
    void theDmaEnginesRunOnDmaClock() {
        Profile p = Profiles.load("lanai72");
        long[] t = new long[2];
        String[] clocks = {"66 MHz", "132 MHz"};
        for (int i = 0; i < 2; i++) {
            Bench b = new Bench(p.with("dma.clock", clocks[i]));
            assertEquals(p.with("dma.clock", clocks[i]).periodPicos("dma.clock"), b.dma.domain(0).periodPicos());
            long[] end = {0};
            b.dma.write(BASE, new byte[4096], ok -> end[0] = b.sim.now());
            b.sim.runUntilIdle();
            t[i] = end[0];
        }
        assertTrue(t[1] < t[0], "a faster SRAM clock moves the same write sooner: " + t[0] + " vs " + t[1] + " ps");
    }

    @Test
    void aFailedHostReadIsReportedAndFreesItsSram() {
        Profile p = Profiles.load("lanai43");
        Bench b = new Bench(p);
        byte[][] got = {new byte[1]};
        b.dma.read((1L << 28) - 64, 256, d -> got[0] = d); // runs past the end of host memory
        b.sim.runUntilIdle();
        assertNull(got[0], "a read that failed on PCI gives no bytes");
        assertEquals(1, b.sim.counters().get("DmaEngine.done_pci_error"));
        // SRAM is whole again: a read as large as the path cuts goes through
        b.mem.write(BASE, new byte[]{1, 2, 3});
        byte[][] next = {null};
        b.dma.read(BASE, b.dma.pieceBytes(), d -> next[0] = d);
        b.sim.runUntilIdle();
        assertNotNull(next[0]);
        assertEquals(3, next[0][2]);
    }

    @Test
    void manyChannelsOverlapTheirHostReads() {
        // 32 small reads: one channel waits out a PCIe round trip per read, sixteen overlap them
        long[] t = new long[2];
        String[] channels = {"1", "16"};
        for (int i = 0; i < 2; i++) {
            Bench b = new Bench(Profiles.load("cx-gen3x16").with("dma.channels", channels[i]));
            long[] end = {0};
            for (int k = 0; k < 32; k++) b.dma.read(BASE + 4096L * k, 64, d -> end[0] = Math.max(end[0], b.sim.now()));
            b.sim.runUntilIdle();
            t[i] = end[0];
        }
        assertTrue(t[0] > 8 * t[1], "1 channel " + t[0] + " ps, 16 channels " + t[1] + " ps");
    }
    @ParameterizedTest
    @ValueSource(strings = {"lanai43", "cx-gen3x16"})
    void aPacketReadOutHoldsItsBytesInSramUntilTheGoAheadThenStreamsThemOut(String profile) {
        Profile p = Profiles.load(profile);
        Bench b = new Bench(p);
        byte[] host = new byte[20_000];
        new Random(11).nextBytes(host);
        b.mem.write(BASE, host);
        // two unaligned ranges, the second longer than a piece: one packet's bytes from two pages
        List<DmaPath.Range> ranges = List.of(new DmaPath.Range(BASE + 5, 3000), new DmaPath.Range(BASE + 9001, 5000));
        byte[] expect = new byte[8000];
        System.arraycopy(host, 5, expect, 0, 3000);
        System.arraycopy(host, 9001, expect, 3000, 5000);
        long hold = 50_000_000; // the firmware takes 50 us over the headers
        long[] inSramAt = {-1}, headAt = {-1}, feed = {-1}, doneAt = {-1};
        byte[][] head = {null}, out = {null};
        b.dma.readOut(ranges, go -> { inSramAt[0] = b.sim.now(); b.sim.scheduleIn(hold, go); }, (bytes, f) -> {
            headAt[0] = b.sim.now();
            head[0] = bytes.clone();
            feed[0] = f;
        }, bytes -> { doneAt[0] = b.sim.now(); out[0] = bytes; });
        b.sim.runUntilIdle();
        assertArrayEquals(expect, head[0], "the packet's bytes as they stand in SRAM");
        assertArrayEquals(expect, out[0], "and as they came off the send engine");
        long beatsBefore = b.beats();
        assertTrue(headAt[0] >= inSramAt[0] + hold,
                "the send engine waits for the go-ahead: in SRAM at " + inSramAt[0] + ", head at " + headAt[0]);
        assertTrue(doneAt[0] > headAt[0], "the head leaves before the rest");
        int beat = p.bits("core.datapath.width") / 8;
        long beats = 0; // each piece covers whole beats
        for (DmaPath.Range r : ranges)
            for (int off = 0; off < r.length(); off += b.dma.pieceBytes()) {
                int len = Math.min(b.dma.pieceBytes(), r.length() - off);
                beats += ((r.addr() + off) % beat + len + beat - 1) / beat;
            }
        // on one channel the engine feeds every beat, one per dma.clock cycle; on many, the busiest channel's share
        long period = p.periodPicos("dma.clock");
        if (p.countInt("dma.channels") == 1) assertEquals(period * beats, feed[0], "one channel feeds every beat");
        else assertTrue(feed[0] > 0 && feed[0] < period * beats,
                "channels side by side feed " + beats + " beats in " + feed[0] + " ps");
        assertEquals(2 * beats, beatsBefore, "each beat crossed the local bus twice");
    }

    /**
     * A packet's last piece in SRAM asks its caller for the go-ahead in a step run next, after the edge it
     * came in at (posted for that instant, from the slot beside the queue), also when another event is due then but
     * sorts after the step; at the same times either way.
     */
    @Test
    void aPacketInSramAsksForTheGoAheadRightAfterItsEdge() {
        long[][] at = new long[2][];
        long[] events = new long[2], runNext = new long[2];
        for (int run = 0; run < 2; run++) {
            Bench b = new Bench(Profiles.load("cx-gen3x16"));
            b.mem.write(BASE, new byte[64]);
            if (run == 1) b.sim.schedule(at[0][0], () -> { }); // due at the instant the bytes are in, after the step
            long[] t = {-1, -1, -1};
            Consumer<Runnable> inSram = go -> {
                t[0] = b.sim.now();
                b.sim.scheduleIn(1_000_000, go);
            };
            b.dma.readOut(List.of(new DmaPath.Range(BASE, 64)), inSram, (bytes, f) -> t[1] = b.sim.now(),
                    bytes -> t[2] = b.sim.now());
            b.sim.runUntilIdle();
            at[run] = t;
            events[run] = b.sim.eventsExecuted();
            runNext[run] = b.sim.stepsRunNext();
        }
        assertArrayEquals(at[0], at[1], "in SRAM, head and done at the same times");
        assertEquals(events[0] + 1, events[1], "the other event only");
        assertTrue(runNext[0] > 0, "the go-ahead's ask ran next, without the queue");
        assertEquals(runNext[0], runNext[1], "the other event, due at that instant, did not send the ask to the queue");
    }

    /**
     * SRAM freed out of order splits into pieces; a packet placed in a piece between two others must
     * take only that piece. (It once took everything to the end of SRAM, so the next packet was put
     * over one still waiting to be sent.)
     */
    @ParameterizedTest
    @ValueSource(strings = {"lanai43", "lanai72"})
    void packetsPlacedInFreedSramKeepTheirBytes(String profile) {
        Bench b = new Bench(Profiles.load(profile));
        byte[] host = new byte[100_000];
        new Random(5).nextBytes(host);
        b.mem.write(BASE, host);
        // A..E held in SRAM side by side; B and D leave first; then X fits only where D was, and Y after it
        int[] lengths = {1000, 1000, 1000, 3000, 1000, 2000, 1500};
        long[] goAt = {400, 100, 400, 100, 400, 400, 400}, startAt = {0, 0, 0, 0, 0, 200, 300};
        byte[][] expect = new byte[lengths.length][], out = new byte[lengths.length][];
        int from = 0;
        for (int k = 0; k < lengths.length; k++) {
            int at = from, kk = k;
            expect[k] = Arrays.copyOfRange(host, at, at + lengths[k]);
            from += lengths[k];
            var packet = List.of(new DmaPath.Range(BASE + at, lengths[kk]));
            b.sim.schedule(startAt[k] * 1_000_000, () -> b.dma.readOut(packet,
                    go -> b.sim.schedule(Math.max(b.sim.now(), goAt[kk] * 1_000_000), go), (bytes, f) -> {},
                    d -> out[kk] = d));
        }
        b.sim.runUntilIdle();
        for (int k = 0; k < lengths.length; k++) assertArrayEquals(expect[k], out[k], "packet " + "ABCDEXY".charAt(k));
    }

    @Test
    void aPacketReadOutWhoseReadFailsGivesNullNeverStartsAndFreesItsSram() {
        Bench b = new Bench(Profiles.load("lanai43"));
        boolean[] headRan = {false}, inSramRan = {false};
        byte[][] got = {new byte[1]};
        List<DmaPath.Range> ranges = List.of(new DmaPath.Range(BASE, 2000), new DmaPath.Range((1L << 28) - 64, 256));
        b.dma.readOut(ranges, go -> inSramRan[0] = true, (bytes, f) -> headRan[0] = true, d -> got[0] = d);
        b.sim.runUntilIdle();
        assertNull(got[0]);
        assertTrue(!headRan[0] && !inSramRan[0], "no go-ahead is asked and nothing leaves for the link");
        // all of SRAM is free again: reads as large as it can hold go through
        long sram = Profiles.load("lanai43").bytes("core.sram.size");
        int[] ok = {0};
        for (long at = 0; at < sram; at += b.dma.pieceBytes())
            b.dma.read(BASE, b.dma.pieceBytes(), d -> { if (d != null) ok[0]++; });
        b.sim.runUntilIdle();
        assertEquals(sram / b.dma.pieceBytes(), ok[0]);
    }

    @Test
    void theReceiveEngineTakesNoBeatBeforeItArrivesSoItFillsSramWhileThePacketComesIn() {
        // a 4 KiB packet arriving over 25.6 us (Myrinet at 1.28 Gb/s) into lanai43's 132 MB/s receive engine
        Profile p = Profiles.load("lanai43");
        byte[] data = new byte[4096];
        new Random(5).nextBytes(data);
        long head = 1_000_000, tail = head + 25_600_000;
        long[] whole = new long[2];
        for (int i = 0; i < 2; i++) {
            Bench b = new Bench(p);
            long[] issued = {-1};
            boolean streaming = i == 1;
            if (streaming)
                b.dma.write(BASE, data, new Arrival(head, tail, data.length), () -> issued[0] = b.sim.now(), ok -> {});
            else b.sim.schedule(tail, () -> b.dma.write(BASE, data, () -> issued[0] = b.sim.now(), ok -> {}));
            b.sim.runUntilIdle();
            assertArrayEquals(data, b.mem.read(BASE, data.length));
            assertTrue(issued[0] > tail, "the last byte leaves after it arrived: " + issued[0] + " ps");
            whole[i] = issued[0];
        }
        long busTime = 4096 / 4 * p.periodPicos("dma.clock");
        assertTrue(whole[0] - whole[1] > (tail - head) / 2,
                "taken as it arrives, the packet is out " + (whole[0] - whole[1])
                        + " ps sooner than taken whole (bus time " + busTime + " ps)");
    }

    @Test
    void theHostEngineMovesBytesBetweenPciAndSramAsTheyCrossTheBus() {
        // lanai43: the PCI bus and the local bus both move 132 MB/s, so a 512 B burst that waited for
        // all its data before entering SRAM (or leaving it) would take twice as long
        Profile p = Profiles.load("lanai43");
        long cycle = p.periodPicos("dma.clock"), beats = 512 / 4;
        Bench raw = new Bench(p);
        long[] pciEnd = {-1};
        raw.port.dmaRead(BASE, 512, r -> pciEnd[0] = r.completedAt());
        raw.sim.runUntilIdle();
        Bench b = new Bench(p);
        byte[] host = new byte[512];
        new Random(9).nextBytes(host);
        b.mem.write(BASE, host);
        long[] inSramAt = {-1};
        byte[][] out = {null};
        b.dma.readOut(List.of(new DmaPath.Range(BASE, 512)), go -> {
            inSramAt[0] = b.sim.now();
            go.run();
        }, (bytes, f) -> {}, d -> out[0] = d);
        b.sim.runUntilIdle();
        assertArrayEquals(host, out[0]);
        assertTrue(inSramAt[0] >= pciEnd[0] && inSramAt[0] < pciEnd[0] + 8 * cycle,
                "in SRAM at " + inSramAt[0] + " ps, a few cycles after its last data phase at " + pciEnd[0]
                        + " ps, not " + beats + " cycles");
        // the other way: the host engine starts the PCI burst with its first beat out of SRAM
        Bench w = new Bench(p);
        long[] landedAt = {-1};
        w.dma.write(BASE, host, ok -> landedAt[0] = w.sim.now());
        w.sim.runUntilIdle();
        assertArrayEquals(host, w.mem.read(BASE, 512));
        long burst = new PciLink(PciLink.Config.from(p)).serializePicos(512 + 16);
        long latency = p.picos("pci.link.latency");
        assertTrue(landedAt[0] < (beats + 8) * cycle + burst + latency,
                "landed at " + landedAt[0] + " ps: receive engine " + beats
                        + " cycles, then the burst overlapping the host engine's " + beats);
    }
}
