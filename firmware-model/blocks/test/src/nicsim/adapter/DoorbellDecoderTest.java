package nicsim.adapter;

import static org.junit.jupiter.api.Assertions.*;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import nicsim.abi.UarLayout;
import nicsim.abi.WqeLayout;
import nicsim.profile.Profiles;
import nicsim.sim.ClockDomain;
import nicsim.sim.Clocked;
import nicsim.sim.Simulator;
import org.junit.jupiter.api.Test;

class DoorbellDecoderTest {
    static final DoorbellDecoder.Config CFG = DoorbellDecoder.Config.from(Profiles.load("cx-gen3x16"));

    /**
     * Drives the decoder's inputs from queues, with a seeded ready probability, and records its outputs with their
     * cycles.
     */
    static final class Bench implements Clocked {
        final Simulator sim = new Simulator();
        final ClockDomain core = sim.clockDomain("core", 4_000);
        final DoorbellDecoder dec = new DoorbellDecoder(core, CFG);
        final ArrayDeque<MmioWrite> writes = new ArrayDeque<>();
        final ArrayDeque<QueueTableWrite> table = new ArrayDeque<>();
        final List<DoorbellMsg> out = new ArrayList<>();
        final List<Long> outCycles = new ArrayList<>();
        final List<DoorbellError> errors = new ArrayList<>();
        final List<Long> errCycles = new ArrayList<>();
        final Random rnd = new Random(5);
        int readyPercent = 100;

        Bench() { core.add(this); }

        @Override public void drive() {
            if (writes.isEmpty()) dec.mmio().idle(); else dec.mmio().push(writes.peekFirst());
            if (table.isEmpty()) dec.tableWrite().idle(); else dec.tableWrite().push(table.peekFirst());
            dec.doorbell().ready(rnd.nextInt(100) < readyPercent);
        }

        @Override public void update() {
            if (dec.mmio().valid()) writes.pollFirst();
            if (dec.tableWrite().valid()) table.pollFirst();
            if (dec.doorbell().fire()) { out.add(dec.doorbell().payload()); outCycles.add(core.cycle()); }
            if (dec.error().valid()) { errors.add(dec.error().payload()); errCycles.add(core.cycle()); }
        }

        @Override public boolean active() { return !writes.isEmpty() || !table.isEmpty() || dec.active(); }

        Bench own(long qpn, int page) { table.add(new QueueTableWrite(0, qpn, page, 1)); return this; }
        Bench ownCq(long cqn, int page) { table.add(new QueueTableWrite(1, cqn, page, 1)); return this; }

        /** A plain doorbell (DS 0): the index is the producer counter. */
        Bench send(int page, long qpn, int producer) {
            long off = CFG.windowBase() + (long) page * CFG.pageSize() + UarLayout.BF_OFFSET;
            writes.add(MmioWrite.of(off, WqeLayout.ctrl(0x0a, producer, qpn, 0)));
            return this;
        }

        Bench run() { core.wake(); sim.runUntilIdle(10_000_000_000L); return this; }

        /** For a stalled consumer: the decoder stays busy, so run a fixed number of cycles. */
        Bench runCycles(int n) { core.wake(); sim.runFor(core.cyclesToPicos(n)); return this; }
    }

    @Test
    void sendDoorbellBecomesAMessageTwoCyclesAfterTheWrite() {
        Bench b = new Bench().own(0x123456, 3);
        b.run();
        long start = b.core.cycle() + 1;
        b.send(3, 0x123456, 0xBEEF).run();
        assertEquals(List.of(DoorbellMsg.send(0x123456, 0xBEEF)), b.out);
        assertEquals(start + 2, b.outCycles.get(0)); // written at edge n, queued at n+1, offered at n+2
        assertTrue(b.errors.isEmpty());
        assertEquals(1, b.sim.counters().get("DoorbellDecoder.doorbells_seen"));
    }

    @Test
    void anMlx5StyleDoorbellAnnouncesTheLastWqesEnd() {
        // mlx5 rings with the last WQE's ctrl segment: index 40, DS 9 (3 WQEBBs) -> producer 43
        Bench b = new Bench().own(0x99, 0);
        long bf = CFG.windowBase() + UarLayout.BF_OFFSET;
        b.writes.add(MmioWrite.of(bf, WqeLayout.ctrl(WqeLayout.OP_RDMA_WRITE, 40, 0x99, 9)));
        b.writes.add(MmioWrite.of(bf, WqeLayout.ctrl(WqeLayout.OP_SEND, 0xFFFF, 0x99, 4))); // wraps
        b.run();
        assertEquals(List.of(DoorbellMsg.send(0x99, 43), DoorbellMsg.send(0x99, 0)), b.out);
    }

    @Test
    void cqArmDecodesSequenceSolicitedAndConsumerIndex() {
        Bench b = new Bench().ownCq(0x42, 1);
        int w0 = (2 << 28) | UarLayout.CQ_ARM_SOLICITED | 0x00ABCDEF;
        long off = CFG.windowBase() + CFG.pageSize() + UarLayout.CQ_DOORBELL;
        byte[] arm = {(byte) (w0 >>> 24), (byte) (w0 >> 16), (byte) (w0 >> 8), (byte) w0, 0, 0, 0, 0x42};
        b.writes.add(MmioWrite.of(off, arm));
        b.run();
        assertEquals(List.of(new DoorbellMsg(0x42, 0xABCDEF, DoorbellMsg.Kind.CQ_ARM.ordinal(), 2, 1)), b.out);
    }

    @Test
    void everyRefusalIsReportedWithAddressAndValueAndChangesNothing() {
        Bench b = new Bench().own(0x10, 2);
        long page2 = CFG.windowBase() + 2L * CFG.pageSize();
        b.send(5, 0x10, 1);                                                        // another context's page
        b.writes.add(MmioWrite.of(page2 + 0x100, new byte[8]));                   // no register at 0x100
        b.writes.add(MmioWrite.of(page2 + UarLayout.BF_OFFSET, new byte[4]));     // 4-byte doorbell
        b.writes.add(MmioWrite.of(CFG.windowBase() - 8, new byte[8]));            // below the window
        b.send(2, 0x10 + CFG.tableEntries(), 1);                                  // same table slot, other queue
        b.run();
        assertTrue(b.out.isEmpty(), "no refused doorbell may reach the fetcher: " + b.out);
        assertEquals(List.of(DoorbellError.Code.NOT_OWNER, DoorbellError.Code.UNKNOWN_REGISTER,
                DoorbellError.Code.BAD_SIZE, DoorbellError.Code.OUT_OF_WINDOW, DoorbellError.Code.BAD_QUEUE),
                b.errors.stream().map(DoorbellError::reason).toList());
        DoorbellError first = b.errors.get(0);
        assertEquals(CFG.windowBase() + 5L * CFG.pageSize() + UarLayout.BF_OFFSET, first.offset());
        // the written value, its queue number byte
        assertEquals(0x10, new MmioWrite(first.offset(), first.data(), 8).byteAt(6));
        assertTrue(first.toString().contains("NOT_OWNER"), first.toString());
        assertEquals(5, b.dec.rejected());
        assertEquals(1, b.sim.counters().get("DoorbellDecoder.rejected_not_owner"));
        assertEquals(0, b.dec.occupancy());
        // the real owner's doorbell still works afterwards
        b.send(2, 0x10, 7).run();
        assertEquals(List.of(DoorbellMsg.send(0x10, 7)), b.out);
    }

    @Test
    void destroyedQueueIsRefused() {
        Bench b = new Bench().own(0x77, 0);
        b.table.add(new QueueTableWrite(0, 0x77, 0, 0));
        b.run(); // the table updates land before the doorbell is decoded
        b.send(0, 0x77, 1).run();
        assertEquals(DoorbellError.Code.BAD_QUEUE, b.errors.get(0).reason());
    }

    @Test
    void queuesAcrossTheWholeTableAreKeptApart() {
        // the table's first and last slots, and both sides of a boundary of the decoder's table storage
        int n = CFG.tableEntries();
        long[] owned = {0, 255, 256, n / 2 + 1, n - 1};
        Bench b = new Bench();
        for (long q : owned) b.own(q, 4);
        b.table.add(new QueueTableWrite(0, 256, 4, 0)); // destroyed again
        b.run();
        for (long q : owned) b.send(4, q, (int) q);
        b.send(4, 257, 1).send(4, n / 2 + 2, 1).send(4, n - 2, 1); // never owned, beside owned ones
        b.run();
        assertEquals(List.of(DoorbellMsg.send(0, 0), DoorbellMsg.send(255, 255), DoorbellMsg.send(n / 2 + 1, n / 2 + 1),
                DoorbellMsg.send(n - 1, n - 1)), b.out);
        assertEquals(List.of(DoorbellError.Code.BAD_QUEUE, DoorbellError.Code.BAD_QUEUE, DoorbellError.Code.BAD_QUEUE,
                DoorbellError.Code.BAD_QUEUE), b.errors.stream().map(DoorbellError::reason).toList());
    }

    @Test
    void repeatedDoorbellsCoalesceButTheOfferedHeadStaysStable() {
        Bench b = new Bench().own(0x1, 0).own(0x2, 0);
        b.run();
        b.readyPercent = 0; // the fetcher is busy
        b.send(0, 0x1, 1).send(0, 0x2, 1).send(0, 0x1, 2).send(0, 0x2, 2).send(0, 0x2, 3).runCycles(20);
        // head (qpn 1, idx 1) is offered and frozen, so qpn 1's second doorbell is appended; qpn 2 merges twice
        assertEquals(2, b.dec.coalesced());
        assertEquals(3, b.dec.occupancy());
        b.readyPercent = 100;
        b.core.wake();
        b.run();
        assertEquals(List.of(DoorbellMsg.send(1, 1), DoorbellMsg.send(2, 3), DoorbellMsg.send(1, 2)), b.out);
        assertTrue(b.sim.contractViolations().isEmpty());
    }

    @Test
    void fullFifoDropsCountsAndReportsOverflow() {
        Bench b = new Bench();
        for (int q = 0; q < CFG.fifoDepth() + 3; q++) b.own(0x200 + q, 1);
        b.run();
        b.readyPercent = 0;
        for (int q = 0; q < CFG.fifoDepth() + 3; q++) b.send(1, 0x200 + q, q);
        b.runCycles(CFG.fifoDepth() + 10);
        assertEquals(CFG.fifoDepth(), b.dec.occupancy());
        assertEquals(3, b.dec.overflowed());
        assertEquals(3, b.errors.stream().filter(e -> e.reason() == DoorbellError.Code.OVERFLOW).count());
        assertEquals(3, b.sim.counters().get("DoorbellDecoder.doorbells_overflowed"));
    }

    @Test
    void randomBackPressureLosesNothingAndKeepsOrderPerQueue() {
        Bench b = new Bench();
        for (int q = 0; q < 64; q++) b.own(0x300 + q, q % 8);
        b.run();
        b.readyPercent = 35;
        Random r = new Random(9);
        int[] last = new int[64];
        for (int i = 0; i < 3000; i++) {
            int q = r.nextInt(64);
            last[q] = i & 0xFFFF;
            b.send(q % 8, 0x300 + q, last[q]);
        }
        b.run();
        // per queue the delivered indices increase, and the newest index written is either delivered
        // or reported as an OVERFLOW drop (then the doorbell record in host memory still carries it)
        int[] seenLast = new int[64], droppedLast = new int[64];
        Arrays.fill(seenLast, -1);
        Arrays.fill(droppedLast, -1);
        for (DoorbellMsg m : b.out) {
            int q = (int) m.qpn() - 0x300;
            assertTrue(m.index() > seenLast[q], "queue " + q + " went back from " + seenLast[q] + " to " + m.index());
            seenLast[q] = (int) m.index();
        }
        for (DoorbellError e : b.errors) {
            assertEquals(DoorbellError.Code.OVERFLOW, e.reason());
            MmioWrite w = new MmioWrite(e.offset(), e.data(), 8);
            int q = (w.byteAt(4) << 16 | w.byteAt(5) << 8 | w.byteAt(6)) - 0x300;
            droppedLast[q] = Math.max(droppedLast[q], w.byteAt(1) << 8 | w.byteAt(2));
        }
        for (int q = 0; q < 64; q++)
            if (last[q] != 0) assertEquals(last[q], Math.max(seenLast[q], droppedLast[q]), "queue " + q);
        assertEquals(3000, b.dec.seen());
        assertEquals(3000, b.out.size() + b.dec.coalesced() + b.dec.overflowed());
        assertTrue(b.dec.coalesced() > 0);
    }

    @Test
    void configurationErrorsNameTheParameter() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> DoorbellDecoder.Config.from(Profiles.load("cx-gen3x16").with("doorbell.fifo.depth", "1")));
        assertTrue(e.getMessage().contains("doorbell.fifo.depth"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class,
                () -> DoorbellDecoder.Config.from(Profiles.load("cx-gen3x16").with("doorbell.bf.reg.size", "2 KiB")));
        assertTrue(e.getMessage().contains("doorbell.bf.reg.size"), e.getMessage());
    }
}
