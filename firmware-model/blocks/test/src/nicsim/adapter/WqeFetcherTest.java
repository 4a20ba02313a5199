package nicsim.adapter;

import static org.junit.jupiter.api.Assertions.*;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import nicsim.abi.WqeLayout;
import nicsim.adapter.WqePorts.DmaReadReq;
import nicsim.adapter.WqePorts.SqConfig;
import nicsim.adapter.WqePorts.WqeBeat;
import nicsim.adapter.WqePorts.WqeError;
import nicsim.host.ConfigSpace;
import nicsim.host.HostMemory;
import nicsim.host.PciBus;
import nicsim.host.PciFunction;
import nicsim.host.PciLink;
import nicsim.host.PciPort;
import nicsim.profile.Profile;
import nicsim.profile.Profiles;
import nicsim.sim.ClockDomain;
import nicsim.sim.Clocked;
import nicsim.sim.Simulator;
import org.junit.jupiter.api.Test;

/** The WqeFetcher on a real host: rings in host memory, reads through the PCI model. */
class WqeFetcherTest {
    static final class Bench implements Clocked, PciFunction {
        final Profile profile;
        final Simulator sim = new Simulator();
        final ClockDomain core;
        final HostMemory mem = new HostMemory(1L << 30, 4096);
        final PciBus bus;
        final WqeFetcher f;
        final ConfigSpace config = new ConfigSpace(1, 1, 0, new long[]{1 << 20, 0, 0}, 0, 0, 0);
        PciPort port;
        final ArrayDeque<SqConfig> configs = new ArrayDeque<>();
        final ArrayDeque<DoorbellMsg> doorbells = new ArrayDeque<>();
        final List<DmaReadReq> requests = new ArrayList<>();
        final List<Long> requestCycles = new ArrayList<>();
        final List<Long> doorbellCycles = new ArrayList<>();
        final List<WqeBeat> out = new ArrayList<>();
        final List<Long> outCycles = new ArrayList<>();
        final List<WqeError> errors = new ArrayList<>();
        final List<DoorbellMsg> dropped = new ArrayList<>();

        Bench(String profileName) {
            profile = Profiles.load(profileName);
            core = sim.clockDomain("core", profile.periodPicos("core.clock"));
            bus = new PciBus(sim, PciBus.Config.from(profile), mem);
            bus.configWrite32(bus.attach(this), ConfigSpace.COMMAND,
                    ConfigSpace.CMD_MEMORY_SPACE | ConfigSpace.CMD_BUS_MASTER);
            f = new WqeFetcher(core, WqeFetcher.Config.from(profile));
            new PciDmaReader(core, port, f.dmaReq(), f.dmaRsp(), r -> null);
            core.add(this);
        }

        @Override public ConfigSpace config() { return config; }
        @Override public void mmioWrite(int bar, long offset, byte[] data) { }
        @Override public byte[] mmioRead(int bar, long offset, int length) { return new byte[length]; }
        @Override public void connect(PciPort p) { port = p; }

        @Override public void drive() {
            if (configs.isEmpty()) f.sqConfig().idle(); else f.sqConfig().push(configs.peekFirst());
            if (doorbells.isEmpty()) f.doorbell().idle(); else f.doorbell().push(doorbells.peekFirst());
            f.wqe().ready(true);
        }

        @Override public void update() {
            if (f.sqConfig().valid()) configs.pollFirst();
            if (f.doorbell().fire()) { doorbells.pollFirst(); doorbellCycles.add(core.cycle()); }
            if (f.dmaReq().fire()) { requests.add(f.dmaReq().payload()); requestCycles.add(core.cycle()); }
            if (f.wqe().fire()) { out.add(f.wqe().payload()); outCycles.add(core.cycle()); }
            if (f.error().valid()) errors.add(f.error().payload());
            if (f.dropped().valid()) dropped.add(f.dropped().payload());
        }

        @Override public boolean active() { return !configs.isEmpty() || !doorbells.isEmpty(); }

        /** Writes a WQE of {@code ds} units at WQEBB counter {@code index} of a ring of 2^logSize WQEBBs. */
        void post(long base, int logSize, long qpn, int index, int opcode, int ds) {
            int size = 1 << logSize;
            for (int b = 0; b < Math.max(1, WqeLayout.wqebbs(ds)); b++) {
                byte[] bb = new byte[WqeLayout.WQEBB];
                for (int k = 0; k < bb.length; k++) bb[k] = (byte) (index * 31 + b * 7 + k);
                if (b == 0) System.arraycopy(WqeLayout.ctrl(opcode, index, qpn, ds), 0, bb, 0, 8);
                mem.write(base + (long) ((index + b) & (size - 1)) * WqeLayout.WQEBB, bb);
            }
        }

        Bench run() { core.wake(); sim.runUntilIdle(1_000_000_000_000L); return this; }
    }

    static final long Q = 0x321, BASE = 0x40_0000;

    @Test
    void aBatchOf8WqebbsCostsExactlyTheProfilesDmaReadPlusThePipeline() {
        Bench b = new Bench("cx-gen3x16");
        b.configs.add(new SqConfig(Q, BASE, 6, 1));
        b.run(); // configuration lands before any doorbell (same-edge doorbells see the old state)
        for (int i = 0; i < 8; i++) b.post(BASE, 6, Q, i, WqeLayout.OP_SEND, 2);
        b.doorbells.add(DoorbellMsg.send(Q, 8));
        b.run();
        assertEquals(8, b.out.size());
        long dbCycle = b.doorbellCycles.get(0);
        // doorbell taken at edge n; arbiter issues at n+1; the reader takes the request at n+2
        assertEquals(dbCycle + 2, b.requestCycles.get(0));
        assertEquals(new DmaReadReq(BASE, 512, Q & 63), b.requests.get(0));
        // one 512 B read: request TLP up, memory latency, two 256 B completions down
        // (docs/sources.md#pcie-tlp-arithmetic arithmetic)
        PciLink l = b.bus.link();
        long dma = l.serializePicos(l.overheadRequest()) + l.latencyPicos()
                + b.profile.picos("host.memory.read.latency")
                + 2 * l.serializePicos(256 + l.overheadCompletion()) + l.latencyPicos();
        long dataAt = b.core.nextEdgeCycleAtOrAfter(b.core.picosOfCycle(dbCycle + 2) + dma);
        // beats enter one per cycle from that edge; each leaves the output buffer the edge after
        assertEquals(dataAt + 1, b.outCycles.get(0));
        assertEquals(dataAt + 8, b.outCycles.get(7));
        // and the bytes are the ring's, WQEBB for WQEBB
        for (int i = 0; i < 8; i++) {
            WqeBeat beat = b.out.get(i);
            assertEquals(i, beat.index());
            assertEquals(1, beat.first());
            assertEquals(1, beat.last());
            byte[] ring = b.mem.read(BASE + 64L * i, 64);
            for (int k = 0; k < 8; k++)
                for (int j = 0; j < 8; j++)
                    assertEquals(ring[k * 8 + j], (byte) (beat.data()[k] >>> (8 * j)),
                            "WQEBB " + i + " byte " + (k * 8 + j));
        }
    }

    @Test
    void batchesStopAtTheRingEndAndWrap() {
        Bench b = new Bench("cx-gen3x16");
        b.configs.add(new SqConfig(Q, BASE, 4, 1));
        b.run(); // configuration lands before any doorbell (same-edge doorbells see the old state) // 16 WQEBBs
        for (int i = 0; i < 14; i++) b.post(BASE, 4, Q, i, WqeLayout.OP_RDMA_WRITE, 3);
        b.doorbells.add(DoorbellMsg.send(Q, 14));
        b.run();
        for (int i = 14; i < 20; i++) b.post(BASE, 4, Q, i, WqeLayout.OP_RDMA_WRITE, 3);
        b.doorbells.add(DoorbellMsg.send(Q, 20));
        b.run();
        assertEquals(List.of(new DmaReadReq(BASE, 8 * 64, Q & 63), new DmaReadReq(BASE + 8 * 64, 6 * 64, Q & 63),
                new DmaReadReq(BASE + 14 * 64, 2 * 64, Q & 63), new DmaReadReq(BASE, 4 * 64, Q & 63)), b.requests);
        assertEquals(20, b.out.size());
        for (int i = 0; i < 20; i++) assertEquals(i, b.out.get(i).index());
    }

    @Test
    void multiWqebbWqeIsMarkedFirstAndLastAcrossBatches() {
        Bench b = new Bench("cx-gen3x16");
        b.configs.add(new SqConfig(Q, BASE, 5, 1));
        b.run(); // configuration lands before any doorbell (same-edge doorbells see the old state)
        for (int i = 0; i < 7; i++) b.post(BASE, 5, Q, i, WqeLayout.OP_SEND, 1);
        b.post(BASE, 5, Q, 7, WqeLayout.OP_SEND, 12); // 3 WQEBBs: 7, 8, 9 (the batch of 8 ends after 7)
        b.doorbells.add(DoorbellMsg.send(Q, 10));
        b.run();
        assertEquals(2, b.requests.size());
        assertEquals(10, b.out.size());
        assertEquals(List.of(1L, 0L, 0L), List.of(b.out.get(7).first(), b.out.get(8).first(), b.out.get(9).first()));
        assertEquals(List.of(0L, 0L, 1L), List.of(b.out.get(7).last(), b.out.get(8).last(), b.out.get(9).last()));
        assertEquals(8, b.f.wqes());
    }

    @Test
    void malformedWqeStopsItsQueueWithASyndromeAndOthersGoOn() {
        Bench b = new Bench("cx-gen3x16");
        long other = 0x322, otherBase = 0x50_0000;
        b.configs.add(new SqConfig(Q, BASE, 4, 1));
        b.configs.add(new SqConfig(other, otherBase, 4, 1));
        b.run(); // configuration lands before any doorbell (same-edge doorbells see the old state)
        b.post(BASE, 4, Q, 0, WqeLayout.OP_SEND, 1);
        b.post(BASE, 4, Q, 1, WqeLayout.OP_SEND, 1);
        b.post(BASE, 4, Q, 2, 0x3f, 1);                  // not an opcode
        b.post(BASE, 4, Q, 3, WqeLayout.OP_SEND, 1);
        b.post(otherBase, 4, other, 0, WqeLayout.OP_RDMA_READ, 3);
        b.doorbells.add(DoorbellMsg.send(Q, 4));
        b.doorbells.add(DoorbellMsg.send(other, 1));
        b.run();
        assertEquals(1, b.errors.size());
        WqeError e = b.errors.get(0);
        assertEquals(WqeError.Code.BAD_OPCODE, e.reason());
        assertEquals(Q, e.qpn());
        assertEquals(2, e.index());
        assertTrue(e.toString().contains("BAD_OPCODE") && e.toString().contains("opcode 0x3f"), e.toString());
        assertEquals(List.of(0L, 1L, 0L), b.out.stream().map(WqeBeat::index).toList());
        // the stopped queue fetches nothing more, even when rung again
        b.post(BASE, 4, Q, 4, WqeLayout.OP_SEND, 1);
        b.doorbells.add(DoorbellMsg.send(Q, 5));
        int before = b.requests.size();
        b.run();
        assertEquals(before, b.requests.size());
        assertEquals(1, b.sim.counters().get("WqeFetcher.errors_bad_opcode"));
    }

    @Test
    void wrongQpnIndexOrDsAreNamedInTheSyndrome() {
        // {qpn in ctrl, index in ctrl, ds, expected code}: each WQE sits at slot 0, where WQEBB counter 0 is expected
        for (int[] c : new int[][]{{0x123, 0, 1, WqePorts.WqeError.Code.BAD_QPN.ordinal()},
                {0x321, 5, 1, WqePorts.WqeError.Code.BAD_INDEX.ordinal()},
                {0x321, 0, 0, WqePorts.WqeError.Code.BAD_DS.ordinal()}}) {
            Bench b = new Bench("cx-gen3x16");
            b.configs.add(new SqConfig(Q, BASE, 4, 1));
            b.run();
            b.mem.write(BASE, WqeLayout.ctrl(WqeLayout.OP_SEND, c[1], c[0], c[2]));
            b.doorbells.add(DoorbellMsg.send(Q, 1));
            b.run();
            assertEquals(WqeError.Code.values()[c[3]], b.errors.get(0).reason(), Arrays.toString(c));
            assertTrue(b.out.isEmpty());
        }
    }

    @Test
    void failedDmaAndUnknownQueueAreReported() {
        Bench b = new Bench("cx-gen3x16");
        long badBase = (1L << 30) - 64;                   // the ring runs off the end of host memory
        b.configs.add(new SqConfig(Q, badBase, 4, 1));
        b.run(); // configuration lands before any doorbell (same-edge doorbells see the old state)
        b.doorbells.add(DoorbellMsg.send(Q, 2));
        b.doorbells.add(DoorbellMsg.send(0x7777, 1));    // no such send queue
        b.run();
        assertEquals(WqeError.Code.DMA_ERROR, b.errors.get(0).reason());
        assertEquals(List.of(DoorbellMsg.send(0x7777, 1)), b.dropped);
        assertTrue(b.out.isEmpty());
    }

    @Test
    void lanaiFetchesOneDescriptorPerDma() {
        Bench b = new Bench("lanai72");
        b.configs.add(new SqConfig(Q & 15, BASE, 4, 1));
        b.run(); // configuration lands before any doorbell (same-edge doorbells see the old state)
        for (int i = 0; i < 3; i++) b.post(BASE, 4, Q & 15, i, WqeLayout.OP_SEND, 1);
        b.doorbells.add(DoorbellMsg.send(Q & 15, 3));
        b.run();
        assertEquals(3, b.requests.size());
        assertEquals(3, b.out.size());
    }
}
