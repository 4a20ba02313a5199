package nicsim.adapter;

import static org.junit.jupiter.api.Assertions.*;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import nicsim.adapter.MttPorts.MkeyContext;
import nicsim.adapter.MttPorts.MttFillRsp;
import nicsim.adapter.MttPorts.Status;
import nicsim.adapter.MttPorts.XlateReq;
import nicsim.adapter.MttPorts.XlateRsp;
import nicsim.sim.ClockDomain;
import nicsim.sim.Clocked;
import nicsim.sim.Simulator;
import org.junit.jupiter.api.Test;

class MttWalkerTest {
    static final int PD = 5, QP = 0x44;

    /** Feeds requests and context writes, serves fills from a map after a fixed latency, records responses. */
    static final class Bench implements Clocked {
        final Simulator sim = new Simulator();
        final ClockDomain core = sim.clockDomain("core", 4_000);
        final MttWalker w = new MttWalker(core, new MttWalker.Config(64, 16, 16));
        final ArrayDeque<MkeyContext> writes = new ArrayDeque<>();
        final ArrayDeque<MttPorts.KlmEntry> klms = new ArrayDeque<>();
        final ArrayDeque<XlateReq> reqs = new ArrayDeque<>();
        final Map<Long, Long> mtt = new HashMap<>();
        /** MTT entries whose page is not present (on-demand paging). */
        final Set<Long> absent = new HashSet<>();
        final ArrayDeque<long[]> fills = new ArrayDeque<>();
        final List<XlateRsp> out = new ArrayList<>();
        final List<Long> fillCycles = new ArrayList<>();
        int fillLatency = 10;
        MttFillRsp fillOut;

        Bench() { core.add(this); }

        @Override public void drive() {
            if (writes.isEmpty()) w.mkeyWrite().idle(); else w.mkeyWrite().push(writes.peekFirst());
            if (klms.isEmpty()) w.klmWrite().idle(); else w.klmWrite().push(klms.peekFirst());
            if (reqs.isEmpty() || !writes.isEmpty() || !klms.isEmpty()) w.req().idle(); else w.req()
                    .push(reqs.peekFirst());
            w.fill().ready(true);
            if (fillOut == null && !fills.isEmpty() && fills.peekFirst()[1] <= core.cycle()) {
                long idx = fills.pollFirst()[0];
                Long pa = mtt.get(idx);
                fillOut = absent.contains(idx) ? new MttFillRsp(0, MttPorts.FILL_NOT_PRESENT)
                        : pa == null ? new MttFillRsp(0, 1) : new MttFillRsp(pa, 0);
            }
            if (fillOut == null) w.fillRsp().idle(); else w.fillRsp().push(fillOut);
            w.rsp().ready(true);
        }

        @Override public void update() {
            if (w.mkeyWrite().valid()) writes.pollFirst();
            if (w.klmWrite().valid()) klms.pollFirst();
            if (w.req().fire()) reqs.pollFirst();
            if (w.fill().fire()) {
                fills.add(new long[]{w.fill().payload().index(), core.cycle() + fillLatency});
                fillCycles.add(core.cycle());
            }
            if (w.fillRsp().fire()) fillOut = null;
            if (w.rsp().fire()) out.add(w.rsp().payload());
        }

        @Override public boolean active() {
            return !writes.isEmpty() || !klms.isEmpty() || !reqs.isEmpty() || !fills.isEmpty() || fillOut != null;
        }

        /**
         * An MR of {@code pages} pages of 2^shift bytes at {@code start}, pages mapped at 0x9000_0000 + p * 2^shift *
         * 3.
         */
        MkeyContext mr(long index, int key, long start, long length, int access, int shift, long mttBase) {
            long page = 1L << shift, pageOffset = start & (page - 1);
            for (long p = 0; p * page < pageOffset + length; p++) mtt.put(mttBase + p, 0x9000_0000L + p * page * 3);
            MkeyContext c = new MkeyContext(index, MttPorts.STATE_VALID, key, PD, 0, 0, start, length, access, shift,
                    pageOffset, mttBase);
            writes.add(c);
            return c;
        }

        List<XlateRsp> translate(long mkey, long va, long len, int access) {
            int before = out.size();
            reqs.add(new XlateReq(mkey, va, len, access, PD, QP, 7));
            core.wake();
            sim.runUntilIdle(1_000_000_000L);
            return out.subList(before, out.size());
        }
    }

    @Test
    void multiPageRequestIsSplitAtPageEndsWithMttAddresses() {
        Bench b = new Bench();
        b.mr(3, 0xAB, 0x7000_1F00L, 3 * 4096, MttPorts.REMOTE_WRITE | MttPorts.LOCAL_WRITE, 12, 100);
        // 0x7000_2F80 is 0x1080 past the start, which lies 0xF00 into its page: offset 0x1F80 = MTT entry 1, 0xF80 in.
        // 0x1F80 bytes run exactly to the MR's end (0x7000_4F00).
        List<XlateRsp> r = b.translate(3 << 8 | 0xAB, 0x7000_2F80L, 0x1F80, MttPorts.REMOTE_WRITE);
        assertEquals(List.of(
                new XlateRsp(7, 0x9000_0000L + 1 * 4096 * 3 + 0xF80, 0x80, 0, 0),
                new XlateRsp(7, 0x9000_0000L + 2 * 4096 * 3, 0x1000, 0, 0),
                new XlateRsp(7, 0x9000_0000L + 3 * 4096 * 3, 0xF00, 1, 0)), r);
        // one byte more runs past the end
        assertEquals(Status.OUT_OF_RANGE,
                b.translate(3 << 8 | 0xAB, 0x7000_2F80L, 0x1F81, MttPorts.REMOTE_WRITE).get(0).reason());
    }

    @Test
    void zeroBasedMrTakesTheAddressAsAnOffsetAndHugePagesWork() {
        Bench b = new Bench();
        // 2 MiB pages, starting 0x123 into one
        b.mr(4, 1, 0x7f12_3440_0000L + 0x123, 4L << 20, MttPorts.REMOTE_READ | MttPorts.ZERO_BASED, 21, 300);
        List<XlateRsp> r = b.translate(4 << 8 | 1, 0x20_0000, 64, MttPorts.REMOTE_READ);
        // offset 2 MiB + 0x123 (the start's offset in its page): MTT entry 1, 0x123 in
        assertEquals(List.of(new XlateRsp(7, 0x9000_0000L + (1L << 21) * 3 + 0x123, 64, 1, 0)), r);
    }

    /**
     * An indirect mkey: a list of two MRs' pieces is one zero-based region, walked piece by piece
     * (only the very last chunk is last); an interleaved layout takes a column of a matrix; each
     * failure in a piece names the piece.
     */
    @Test
    void indirectMkeysWalkTheirPiecesAndNameTheOneThatFails() {
        Bench b = new Bench();
        b.mr(3, 0xAB, 0x7000_0000L, 4 * 4096, MttPorts.LOCAL_WRITE | MttPorts.REMOTE_WRITE, 12, 100);
        b.mr(4, 0xCD, 0x5000_0800L, 4096, MttPorts.LOCAL_WRITE, 12, 200); // lacks REMOTE_WRITE
        // bytes 0..0x1FF cross a page of MR 3; bytes 0x200..0x2FF are in MR 4
        b.klms.add(new MttPorts.KlmEntry(0, 3 << 8 | 0xAB, 0x7000_0F00L, 0x200, 0));
        b.klms.add(new MttPorts.KlmEntry(1, 4 << 8 | 0xCD, 0x5000_0900L, 0x100, 0));
        int writable = MttPorts.LOCAL_WRITE | MttPorts.REMOTE_WRITE;
        b.writes.add(MkeyContext.indirect(8, MttPorts.STATE_VALID, 0x77, PD, 0x300, writable, 0, 2, 1));
        long ind = 8 << 8 | 0x77;
        assertEquals(List.of(
                new XlateRsp(7, 0x9000_0000L + 0xF80, 0x80, 0, 0),
                new XlateRsp(7, 0x9000_0000L + 4096 * 3, 0x100, 0, 0),
                new XlateRsp(7, 0x9000_0000L + 0x900, 0x80, 1, 0)),
                b.translate(ind, 0x80, 0x200, MttPorts.LOCAL_WRITE));
        XlateRsp bad = b.translate(ind, 0x100, 0x180, MttPorts.REMOTE_WRITE).get(1);
        assertEquals(Status.NO_ACCESS, bad.reason(), "MR 4 lacks REMOTE_WRITE");
        assertEquals(2, bad.piece(), "the second entry");
        assertEquals(Status.OUT_OF_RANGE, b.translate(ind, 0x100, 0x201, MttPorts.LOCAL_WRITE).get(0).reason(),
                "past the region's end");
        // interleaved: 3 rows of a matrix of 0x100-byte rows, column bytes 0x10..0x2F of each, then 8 bytes of MR 4's
        b.klms.add(new MttPorts.KlmEntry(2, 3 << 8 | 0xAB, 0x7000_0010L, 0x20, 0x100));
        b.klms.add(new MttPorts.KlmEntry(3, 4 << 8 | 0xCD, 0x5000_0800L, 0x8, 0x8));
        b.writes.add(MkeyContext.indirect(9, MttPorts.STATE_VALID, 0x78, PD, 3 * 0x28, MttPorts.LOCAL_WRITE, 2, 2, 3));
        // from row 1, byte 0x10 of its column part
        List<XlateRsp> r = b.translate(9 << 8 | 0x78, 0x28 + 0x10, 0x28, MttPorts.LOCAL_WRITE);
        assertEquals(List.of(
                new XlateRsp(7, 0x9000_0000L + 0x110 + 0x10, 0x10, 0, 0),
                new XlateRsp(7, 0x9000_0000L + 0x808, 0x8, 0, 0),
                new XlateRsp(7, 0x9000_0000L + 0x210, 0x10, 1, 0)), r);
        // an entry naming an indirect mkey
        b.klms.add(new MttPorts.KlmEntry(4, ind, 0, 0x10, 0));
        b.writes.add(MkeyContext.indirect(10, MttPorts.STATE_VALID, 0x79, PD, 0x10, MttPorts.LOCAL_WRITE, 4, 1, 1));
        XlateRsp nested = b.translate(10 << 8 | 0x79, 0, 0x10, MttPorts.LOCAL_WRITE).get(0);
        assertEquals(Status.NESTED_INDIRECT, nested.reason());
        assertEquals(1, nested.piece());
    }

    @Test
    void everyCheckFailsInTheSeedsOrderWithItsOwnStatus() {
        Bench b = new Bench();
        b.mr(5, 0x10, 0x1_0000, 0x4000, MttPorts.LOCAL_WRITE, 12, 10);
        MkeyContext window = new MkeyContext(6, MttPorts.STATE_VALID, 0x20, PD, QP + 1, 1, 0x1_0000, 0x1000,
                MttPorts.REMOTE_READ, 12, 0, 10);
        b.writes.add(window);
        b.writes.add(new MkeyContext(7, MttPorts.STATE_FREE, 0x30, PD, 0, 0, 0x1_0000, 0x1000, MttPorts.LOCAL_WRITE,
                12, 0, 10));
        assertEquals(Status.BAD_INDEX, b.translate(9 << 8 | 0x10, 0x1_0000, 8, 0).get(0).reason());
        // the same slot, another index
        assertEquals(Status.BAD_INDEX, b.translate((5 + 64) << 8 | 0x10, 0x1_0000, 8, 0).get(0).reason());
        assertEquals(Status.BAD_KEY, b.translate(5 << 8 | 0x11, 0x1_0000, 8, 0).get(0).reason());
        b.reqs.add(new XlateReq(5 << 8 | 0x10, 0x1_0000, 8, 0, PD + 1, QP, 1));
        b.core.wake();
        b.sim.runUntilIdle();
        assertEquals(Status.BAD_PD, b.out.get(b.out.size() - 1).reason());
        assertEquals(Status.NOT_BOUND, b.translate(6 << 8 | 0x20, 0x1_0000, 8, MttPorts.REMOTE_READ).get(0).reason());
        assertEquals(Status.OUT_OF_RANGE, b.translate(5 << 8 | 0x10, 0x1_3FF9, 8, 0).get(0).reason());
        assertEquals(Status.OUT_OF_RANGE, b.translate(5 << 8 | 0x10, 0xFFFF, 8, 0).get(0).reason());
        assertEquals(Status.NO_ACCESS, b.translate(5 << 8 | 0x10, 0x1_0000, 8, MttPorts.REMOTE_WRITE).get(0).reason());
        assertEquals(Status.NOT_VALID, b.translate(7 << 8 | 0x30, 0x1_0000, 8, 0).get(0).reason());
        // a failed check is one response, marked last, with no address
        XlateRsp bad = b.translate(5 << 8 | 0x11, 0x1_0000, 8, 0).get(0);
        assertEquals(1, bad.last());
        assertEquals(0, bad.pa());
        assertEquals(2, b.sim.counters().get("MttWalker.failed_bad_key"));
        // a zero-length request is not checked at all (C9-88)
        assertEquals(Status.OK, b.translate(0, 0, 0, MttPorts.REMOTE_WRITE).get(0).reason());
    }

    @Test
    void cacheMissCostsTheFillAndTheSecondAccessHits() {
        Bench b = new Bench();
        b.mr(5, 0x10, 0x1_0000, 0x4000, MttPorts.LOCAL_WRITE, 12, 10);
        b.translate(5 << 8 | 0x10, 0x1_0000, 8, 0);
        assertEquals(1, b.w.misses());
        assertEquals(1, b.w.hits());
        b.translate(5 << 8 | 0x10, 0x1_0008, 8, 0);
        assertEquals(1, b.w.misses());
        assertEquals(2, b.w.hits());
        // a missing MTT entry ends the request with MTT_FAULT
        b.mtt.remove(12L);
        assertEquals(Status.MTT_FAULT, b.translate(5 << 8 | 0x10, 0x1_2000, 8, 0).get(0).reason());
    }

    /**
     * An entry whose page is not present ends the request with PAGE_FAULT, naming the page's MTT index and the bytes
     * left.
     */
    @Test
    void aPageNotPresentIsAPageFault() {
        Bench b = new Bench();
        b.mr(5, 0x10, 0x1_0000, 0x4000, MttPorts.LOCAL_WRITE, 12, 10);
        b.absent.add(11L);
        List<XlateRsp> r = b.translate(5 << 8 | 0x10, 0x1_0f00, 0x300, 0);
        assertEquals(2, r.size(), r.toString());
        assertEquals(Status.OK, r.get(0).reason(), "the first page is present: its 0x100 bytes");
        assertEquals(0x100, r.get(0).length());
        XlateRsp fault = r.get(1);
        assertEquals(Status.PAGE_FAULT, fault.reason());
        assertEquals(11, fault.pa(), "the MTT index of the missing page");
        assertEquals(0x200, fault.length(), "the bytes of the request from that page on");
        assertEquals(1, fault.last());
        assertEquals(1, b.sim.counters().get("MttWalker.failed_page_fault"));
        // the page is not cached: once present, the next access fills it
        b.absent.clear();
        assertEquals(Status.OK, b.translate(5 << 8 | 0x10, 0x1_1000, 8, 0).get(0).reason());
    }

    @Test
    void missLatencyIsTheFillLatencyPlusTheWalkCycles() {
        long[] cycles = new long[2];
        for (int latency : new int[]{5, 25}) {
            Bench b = new Bench();
            b.fillLatency = latency;
            b.mr(5, 0x10, 0x1_0000, 0x4000, MttPorts.LOCAL_WRITE, 12, 10);
            b.core.wake();
            b.sim.runUntilIdle();
            long start = b.core.cycle();
            b.translate(5 << 8 | 0x10, 0x1_0000, 8, 0);
            cycles[latency == 5 ? 0 : 1] = b.core.cycle() - start;
        }
        assertEquals(20, cycles[1] - cycles[0], "a miss costs exactly the fill's extra latency");
    }
}
