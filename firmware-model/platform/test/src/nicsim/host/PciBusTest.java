package nicsim.host;

import static org.junit.jupiter.api.Assertions.*;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import nicsim.profile.Profiles;
import nicsim.sim.Simulator;
import org.junit.jupiter.api.Test;

class PciBusTest {
    @Test
    void barSizingAndEnableFollowThePciRules() {
        PciTestbench tb = new PciTestbench("cx-gen3x16");
        tb.bus.configWrite32(tb.fn, ConfigSpace.BAR0, 0xFFFF_FFFF);
        int low = tb.bus.configRead32(tb.fn, ConfigSpace.BAR0);
        assertEquals(0xFFF0_000C, low); // 1 MiB, 64-bit prefetchable
        assertEquals(1 << 20, (~(low & ~0xF)) + 1);
        assertEquals(0x15b3 | 0x1017 << 16, tb.bus.configRead32(tb.fn, ConfigSpace.VENDOR_ID));
        assertEquals(ConfigSpace.MSIX_CAP, tb.bus.configRead32(tb.fn, ConfigSpace.CAP_PTR));
        assertEquals(ConfigSpace.CAP_ID_MSIX | 3 << 16, tb.bus.configRead32(tb.fn, ConfigSpace.MSIX_CAP)); // 4 vectors
        // before memory space is enabled nothing decodes
        tb.bus.configWrite32(tb.fn, ConfigSpace.BAR0, (int) PciTestbench.BAR0);
        assertEquals(PciBus.MmioStatus.UNSUPPORTED_REQUEST, tb.bus.mmioWrite(PciTestbench.BAR0, new byte[4]));
        tb.enable();
        assertEquals(PciBus.MmioStatus.OK, tb.bus.mmioWrite(PciTestbench.BAR0, new byte[4]));
    }

    @Test
    void unmappedMmioIsReportedCountedAndNeverDelivered() {
        PciTestbench tb = new PciTestbench("cx-gen3x16").enable();
        long hole = PciTestbench.BAR0 + (1 << 20) + 0x40; // just past BAR0
        assertEquals(PciBus.MmioStatus.UNSUPPORTED_REQUEST, tb.bus.mmioWrite(hole, new byte[]{1, 2, 3, 4}));
        List<PciBus.MmioReadResult> reads = new ArrayList<>();
        tb.bus.mmioRead(0x1234_0000L, 4, reads::add);
        tb.sim.runUntilIdle();
        assertTrue(tb.device.writes.isEmpty());
        assertEquals(2, tb.sim.counters().get("pci.unsupported_requests"));
        assertEquals(2, tb.bus.unsupportedRequests().size());
        PciBus.UnsupportedRequest ur = tb.bus.unsupportedRequests().get(0);
        assertEquals(hole, ur.address());
        assertTrue(ur.toString().contains(Long.toHexString(hole)), ur.toString());
        assertEquals(PciBus.MmioStatus.UNSUPPORTED_REQUEST, reads.get(0).status());
        assertArrayEquals(new byte[]{-1, -1, -1, -1}, reads.get(0).data());
    }

    @Test
    void postedMmioWriteArrivesAfterIssueCostSerializationAndLatency() {
        PciTestbench tb = new PciTestbench(Profiles.load("cx-gen3x16").with("pci.link.latency", "400 ns")).enable();
        PciLink link = tb.bus.link();
        tb.bus.mmioWrite(PciTestbench.BAR0 + 0x800, new byte[8]);
        tb.bus.mmioWrite(PciTestbench.BAR0 + 0x808, new byte[8]);
        tb.sim.runUntilIdle();
        long cost = tb.profile.picos("host.mmio.write.cost");
        long ser = link.serializePicos(8 + 24);
        assertEquals(cost + ser + 400_000, tb.device.writes.get(0).time());
        // the second write leaves the CPU one issue cost later
        assertEquals(2 * cost + ser + 400_000, tb.device.writes.get(1).time());
        assertEquals(0x808, tb.device.writes.get(1).offset());
    }

    @Test
    void cpuWorkReleasesTheCpuInAStepRunNextOutsideTheQueue() {
        PciTestbench tb = new PciTestbench("cx-gen3x16").enable();
        long work = 50_000;
        tb.bus.cpuWork(work);
        tb.sim.runUntilIdle();
        assertEquals(2, tb.sim.eventsExecuted(), "the work's leaving; its release");
        assertEquals(1, tb.sim.stepsRunNext(), "the release, posted for its instant, not through the queue");
        tb.bus.cpuWork(work);
        tb.bus.mmioWrite(PciTestbench.BAR0 + 0x800, new byte[8]);
        tb.sim.runUntilIdle();
        long cost = tb.profile.picos("host.mmio.write.cost");
        PciLink link = tb.bus.link();
        // the CPU was free: the work starts now, the write leaves after it
        assertEquals(2 * work + cost + link.serializePicos(8 + 24) + link.latencyPicos(),
                tb.device.writes.get(0).time());
        // the work's leaving, its release (the write waiting, a step run next), the write's leaving, its release of
        // the CPU, its arrival
        assertEquals(2 + 5, tb.sim.eventsExecuted());
        assertEquals(2, tb.sim.stepsRunNext());
    }

    @Test
    void mmioReadReturnsTheDeviceDataAfterTheRoundTrip() {
        PciTestbench tb = new PciTestbench("cx-gen3x16").enable();
        tb.device.regs[0x10] = 0x5a;
        List<PciBus.MmioReadResult> r = new ArrayList<>();
        tb.bus.mmioRead(PciTestbench.BAR0 + 0x10, 4, r::add);
        tb.sim.runUntilIdle();
        PciLink l = tb.bus.link();
        long expect = tb.profile.picos("host.mmio.read.cost") + l.serializePicos(24) + l.latencyPicos()
                + tb.profile.picos("pci.mmio.read.response") + l.serializePicos(4 + 20) + l.latencyPicos();
        assertEquals(expect, r.get(0).completedAt());
        assertEquals(0x5a, r.get(0).data()[0]);
    }

    @Test
    void dmaWriteSplitsAtMaxPayloadAndLandsByteForByte() {
        PciTestbench tb = new PciTestbench("cx-gen3x16").enable();
        byte[] data = new byte[1000];
        for (int i = 0; i < data.length; i++) data[i] = (byte) (i ^ 0x5a);
        long addr = 0x10_0000 + 200; // unaligned start: pieces 56, 256, 256, 256, 176
        List<PciPort.WriteResult> done = new ArrayList<>();
        tb.device.port.dmaWrite(addr, data, done::add);
        tb.sim.runUntilIdle();
        PciLink l = tb.bus.link();
        List<Integer> lengths = PciLink.split(addr, 1000, 256).stream().map(PciLink.Piece::length).toList();
        assertEquals(List.of(56, 256, 256, 256, 176), lengths);
        assertEquals(5, l.packets(PciLink.Direction.UPSTREAM));
        assertEquals(1000 + 5 * 24, l.wireBytes(PciLink.Direction.UPSTREAM));
        // TLPs go back to back; each one's serialization is rounded up to a whole picosecond
        long wire = 0;
        for (int len : new int[]{56, 256, 256, 256, 176}) wire += l.serializePicos(len + 24);
        assertEquals(wire + l.latencyPicos(), done.get(0).completedAt());
        assertEquals(PciPort.DmaStatus.OK, done.get(0).status());
        assertArrayEquals(data, tb.memory.read(addr, data.length));
    }

    @Test
    void dmaReadRequestsAtMrrsAndCompletesAtCompletionSize() {
        PciTestbench tb = new PciTestbench("cx-gen3x16").enable();
        byte[] data = new byte[1024];
        new Random(3).nextBytes(data);
        tb.memory.write(0x20_0000, data);
        List<PciPort.ReadResult> done = new ArrayList<>();
        tb.device.port.dmaRead(0x20_0000, 1024, done::add);
        tb.sim.runUntilIdle();
        PciLink l = tb.bus.link();
        assertEquals(2, l.packets(PciLink.Direction.UPSTREAM));     // two 512 B read requests
        assertEquals(4, l.packets(PciLink.Direction.DOWNSTREAM));   // four 256 B completions
        assertEquals(1024 + 4 * 20, l.wireBytes(PciLink.Direction.DOWNSTREAM));
        // the second request leaves right behind the first; its completions queue behind the first's
        long req2AtHost = 2 * l.serializePicos(24) + l.latencyPicos();
        long served2 = req2AtHost + tb.profile.picos("host.memory.read.latency");
        long served1 = served2 - l.serializePicos(24);
        long linkFree = served1 + 2 * l.serializePicos(256 + 20);
        long expect = Math.max(served2, linkFree) + 2 * l.serializePicos(256 + 20) + l.latencyPicos();
        assertEquals(expect, done.get(0).completedAt());
        assertArrayEquals(data, done.get(0).data());
    }

    @Test
    void dmaOutsideHostMemoryOrWithoutBusMasterFails() {
        PciTestbench tb = new PciTestbench("cx-gen3x16");
        List<PciPort.ReadResult> r = new ArrayList<>();
        tb.device.port.dmaRead(0x1000, 64, r::add);
        tb.sim.runUntilIdle();
        assertEquals(PciPort.DmaStatus.BUS_MASTER_DISABLED, r.get(0).status());
        tb.enable();
        List<PciPort.WriteResult> w = new ArrayList<>();
        tb.device.port.dmaWrite((1L << 32) - 8, new byte[64], w::add);
        tb.sim.runUntilIdle();
        assertEquals(PciPort.DmaStatus.UNSUPPORTED_REQUEST, w.get(0).status());
        assertEquals(1, tb.sim.counters().get("pci.unsupported_requests"));
    }

    @Test
    void msixMessageReachesTheHostOnlyWhenEnabledAndUnmasked() {
        PciTestbench tb = new PciTestbench("cx-gen3x16").enable();
        List<Integer> got = new ArrayList<>();
        tb.bus.onInterrupt((a, d) -> got.add(d));
        assertFalse(tb.device.port.msix(1)); // MSI-X not enabled yet
        tb.bus.configWrite32(tb.fn, ConfigSpace.MSIX_CAP, ConfigSpace.MSIX_ENABLE << 16);
        assertFalse(tb.device.port.msix(1)); // vectors start masked
        assertTrue(tb.bus.msixTable(tb.fn).pending(1));
        // the driver programs entry 1: address, data, unmask
        long entry = PciTestbench.BAR0 + 0x8000 + 16;
        byte[] e = ByteBuffer.allocate(16).order(ByteOrder.LITTLE_ENDIAN)
                .putInt(0xFEE0_0000).putInt(0).putInt(0x41).putInt(0).array();
        tb.bus.mmioWrite(entry, e);
        tb.sim.runUntilIdle();
        assertTrue(tb.device.writes.isEmpty(), "MSI-X table writes are served by the bus, not the device");
        assertTrue(tb.device.port.msix(1));
        tb.sim.runUntilIdle();
        assertEquals(List.of(0x41), got);
        assertThrows(IllegalArgumentException.class, () -> tb.device.port.msix(9));
    }

    @Test
    void conventionalPciSharesOneBusForBothDirections() {
        PciTestbench tb = new PciTestbench(Profiles.load("lanai43")).enable();
        PciLink l = tb.bus.link();
        assertFalse(l.fullDuplex());
        assertEquals(32L * 33_000_000, l.bitsPerSecond()); // 132 MB/s
        assertEquals(16, l.overheadPosted());                // 4 cycles x 4 bytes
        List<PciPort.WriteResult> w = new ArrayList<>();
        tb.device.port.dmaWrite(0x10_0000, new byte[512], w::add);
        tb.bus.mmioWrite(PciTestbench.BAR0, new byte[4]); // host write must wait for the bus
        tb.sim.runUntilIdle();
        long dmaEnd = l.serializePicos(512 + 16);
        long cost = tb.profile.picos("host.mmio.write.cost");
        assertEquals(Math.max(dmaEnd, cost) + l.serializePicos(4 + 16) + l.latencyPicos(),
                tb.device.writes.get(0).time());
    }

    @Test
    void conventionalPciHandsReadDataOverAsItCrossesThePcieCompletionOnlyWhole() {
        byte[] data = new byte[512];
        new Random(5).nextBytes(data);
        // lanai43: one 512 B burst; each data phase is in as it crosses the bus
        PciTestbench whole = new PciTestbench(Profiles.load("lanai43")).enable();
        PciTestbench streamed = new PciTestbench(Profiles.load("lanai43")).enable();
        List<PciPort.ReadResult> w = new ArrayList<>(), s = new ArrayList<>();
        long[] heardAt = {-1};
        whole.memory.write(0x10_0000, data);
        streamed.memory.write(0x10_0000, data);
        whole.device.port.dmaRead(0x10_0000, 512, w::add);
        streamed.device.port.dmaReadStreamed(0x10_0000, 512, r -> { heardAt[0] = streamed.sim.now(); s.add(r); });
        whole.sim.runUntilIdle();
        streamed.sim.runUntilIdle();
        PciLink l = streamed.bus.link();
        long end = w.get(0).completedAt();
        assertNull(w.get(0).incoming());
        assertEquals(end, s.get(0).completedAt());
        assertArrayEquals(data, s.get(0).data());
        PciPort.Incoming in = s.get(0).incoming();
        long firstData = end - l.serializePicos(512);
        // heard when the bridge serves it (the bytes known), the first data phase one bus latency later
        assertEquals(firstData - l.latencyPicos(), heardAt[0],
                "heard as the host serves the read, before its first byte comes in");
        assertEquals(firstData + l.serializePicos(4), in.by(4), 1);
        assertEquals(firstData + l.serializePicos(256), in.by(256), 1);
        assertEquals(end, in.by(512));
        // cx-gen3x16: a 512 B request answered by two 256 B completions, each usable once all of it is in
        PciTestbench cx = new PciTestbench("cx-gen3x16").enable();
        List<PciPort.ReadResult> c = new ArrayList<>();
        cx.device.port.dmaReadStreamed(0x20_0000, 512, c::add);
        cx.sim.runUntilIdle();
        PciPort.Incoming ci = c.get(0).incoming();
        long second = c.get(0).completedAt(), first = second - cx.bus.link().serializePicos(256 + 20);
        assertEquals(first, ci.by(1));
        assertEquals(first, ci.by(256));
        assertEquals(second, ci.by(257));
        assertEquals(second, ci.by(512));
    }

    @Test
    void aStreamedWriteHoldsTheConventionalBusFromItsFirstByteAndEndsAfterItsLast() {
        PciTestbench tb = new PciTestbench(Profiles.load("lanai43")).enable();
        PciLink l = tb.bus.link();
        long burst = l.serializePicos(512 + 16), phase = l.serializePicos(4), t = 10_000_000;
        List<PciPort.WriteResult> fast = new ArrayList<>(), slow = new ArrayList<>();
        // fed faster than the bus carries it: the burst began with its first byte and runs its full length
        tb.sim.schedule(t, Simulator.Priority.DELIVERY,
                () -> tb.device.port.dmaWriteStreamed(0x10_0000, new byte[512], t - burst / 2, fast::add));
        // fed slower than the bus: the bus waited for each byte, and it ends one data phase after the last
        long t2 = 2 * t;
        tb.sim.schedule(t2, Simulator.Priority.DELIVERY,
                () -> tb.device.port.dmaWriteStreamed(0x20_0000, new byte[512], t2 - 2 * burst, slow::add));
        tb.sim.runUntilIdle();
        assertEquals(t - burst / 2 + burst + l.latencyPicos(), fast.get(0).completedAt());
        assertEquals(t2 + phase + l.latencyPicos(), slow.get(0).completedAt());
        assertThrows(IllegalArgumentException.class,
                () -> tb.device.port.dmaWriteStreamed(0x10_0000, new byte[4], tb.sim.now() + 1, r -> {}));
        // PCIe sends a TLP once its whole payload is there, whenever the engine began feeding it
        PciTestbench cx = new PciTestbench("cx-gen3x16").enable();
        List<PciPort.WriteResult> x = new ArrayList<>();
        cx.sim.schedule(t, Simulator.Priority.DELIVERY,
                () -> cx.device.port.dmaWriteStreamed(0x10_0000, new byte[256], 0, x::add));
        cx.sim.runUntilIdle();
        assertEquals(t + cx.bus.link().serializePicos(256 + 24) + cx.bus.link().latencyPicos(), x.get(0).completedAt());
    }

    @Test
    void aPostedWriteLandsWhenAWaitedOneWouldAndIsRefusedWhereItCouldNotLand() {
        PciTestbench tb = new PciTestbench("cx-gen3x16").enable();
        long t = 10_000_000;
        byte[] data = new byte[256];
        for (int i = 0; i < data.length; i++) data[i] = (byte) (i * 7 + 1);
        List<PciPort.WriteResult> waited = new ArrayList<>();
        long[] seen = {-1};
        tb.sim.schedule(t, Simulator.Priority.DELIVERY, () -> {
            tb.device.port.dmaWriteStreamedPosted(0x10_0000, data, t);
            tb.device.port.dmaWriteStreamed(0x20_0000, data, t, waited::add);
        });
        long version = tb.memory.version();
        tb.sim.runUntil(() -> {
            if (seen[0] < 0 && tb.memory.version() > version) seen[0] = tb.sim.now();
            return !waited.isEmpty();
        }, 1_000_000_000L);
        // the posted write went first on the link: its bytes are in, one TLP ahead of the waited one
        assertArrayEquals(data, tb.memory.read(0x10_0000, 256));
        assertEquals(t + tb.bus.link().serializePicos(256 + 24) + tb.bus.link().latencyPicos(), seen[0]);
        assertEquals(seen[0] + tb.bus.link().serializePicos(256 + 24), waited.get(0).completedAt());
        // where a write would not land (outside memory, or bus mastering off) it must be waited for: its failure is its
        // completion
        long outside = tb.memory.size() - 16;
        assertFalse(tb.device.port.dmaWriteLands(outside, 256));
        var e = assertThrows(IllegalArgumentException.class,
                () -> tb.device.port.dmaWriteStreamedPosted(outside, data, tb.sim.now()));
        assertTrue(e.getMessage().contains(Long.toHexString(outside)), e.getMessage());
        assertTrue(tb.device.port.dmaWriteLands(0x10_0000, 256));
    }
}
