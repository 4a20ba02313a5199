package nicsim.adapter.stim;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import nicsim.adapter.MttPorts;
import nicsim.adapter.MttPorts.KlmEntry;
import nicsim.adapter.MttPorts.MkeyContext;
import nicsim.adapter.MttPorts.MttFillReq;
import nicsim.adapter.MttPorts.MttFillRsp;
import nicsim.adapter.MttPorts.XlateReq;
import nicsim.adapter.MttWalker;
import nicsim.sim.Clocked;

/**
 * Seeded random traffic for the MttWalker: a dozen MRs and windows (page sizes 4 KiB to 2 MiB,
 * unaligned starts, zero-based, type-2 windows bound to a QP, table slots shared by two indices),
 * requests that are right or wrong in exactly one way (key, PD, binding, range, access, index,
 * state), indirect mkeys (lists and an interleaved layout) over them whose pieces may fail any
 * check or name another indirect key, contexts re-registered now and then, an MTT fill server with
 * random latency that rarely fails or finds a page not present, and random back-pressure on the
 * responses. Some MRs start anywhere in the VA's 64 bits and some requests and indirect pieces run
 * over a length's whole 32 bits, so that the high bits of addresses and lengths get exercised.
 * Beside the random draw, {@link MttCorners} adds directed corner cases (one request in six of them):
 * values a draw seldom makes, such as a walk past 128 GiB, a list of over 128 pieces, a 2 GiB response.
 */
public final class MttStimulus implements Clocked {
    private static final int[] SHIFTS = {12, 13, 16, 21};

    private final MttWalker w;
    private final Random rnd;
    private final Random wide; // the high-bit values, drawn apart so that rnd's traffic mix stays as it was
    private final MttCorners corners;
    private final long[] pds = new long[3], qpns = new long[4];
    private final List<MkeyContext> mkeys = new ArrayList<>();
    private final Map<Long, Long> mtt = new HashMap<>();           // MTT index -> page address
    private final ArrayDeque<MkeyContext> writes = new ArrayDeque<>();
    private final ArrayDeque<KlmEntry> klmWrites = new ArrayDeque<>();
    private final ArrayDeque<long[]> fills = new ArrayDeque<>();    // {index, readyAtCycle}
    private MttFillRsp fillOut;
    private XlateReq reqOut;
    private long cycle, tag;
    /** The walker was idle with its output register empty after the last edge: a STALL sequence may start. */
    private boolean quiet;

    public MttStimulus(MttWalker walker, long seed) {
        this.w = walker;
        this.rnd = new Random(seed);
        this.wide = new Random(~seed);
        int entries = walker.config().mkeyEntries();
        // PDs and QPs anywhere in their 24 bits
        for (int i = 0; i < pds.length; i++) pds[i] = 1 + rnd.nextInt((1 << 24) - 1);
        for (int i = 0; i < qpns.length; i++) qpns[i] = rnd.nextInt(1 << 24);
        long mttNext = 0x100;
        for (int i = 0; i < 12; i++) {
            long index = 1 + i + (i % 4 == 3 ? entries : 0);  // every fourth shares a table slot with another index
            // the field's whole range now and then
            int shift = rnd.nextInt(4) == 0 ? 12 + rnd.nextInt(20) : SHIFTS[rnd.nextInt(SHIFTS.length)];
            boolean high = i % 4 == 1;                          // a high VA, and pages of 256 MiB to 2 GiB
            if (high) shift = 28 + wide.nextInt(4);
            long page = 1L << shift;
            long low = 0x7f00_0000_0000L + rnd.nextInt(1 << 20) * page;
            long start = (high ? highVa(page) : low)
                    + (rnd.nextBoolean() ? rnd.nextInt((int) Math.min(page, 1 << 20)) : 0);
            long pages0 = 1 + rnd.nextInt(shift > 27 ? 1 : 16) + (shift > 27 ? wide.nextInt(4) : 0);
            long length = pages0 * page - rnd.nextInt(64);         // up to 8 GiB: past a request's 32 bits
            int access = rnd.nextInt(32) | (rnd.nextInt(5) == 0 ? MttPorts.ZERO_BASED : 0);
            boolean bound = i % 6 == 5;                         // two type-2 windows bound to a QP
            long pageOffset = start & (page - 1);
            long pages = (pageOffset + length + page - 1) / page;
            Random pa = high ? wide : rnd;                      // rnd draws as many pages as it did before
            for (long p = 0; p < pages; p++)
                mtt.put(mttNext + p, (0x1_0000_0000L + pa.nextInt(1 << 16) * page) & ~(page - 1));
            MkeyContext c = new MkeyContext(index, i == 11 ? MttPorts.STATE_FREE : MttPorts.STATE_VALID,
                    rnd.nextInt(256), pds[rnd.nextInt(pds.length)], qpns[rnd.nextInt(qpns.length)], bound ? 1 : 0,
                    start, length, access, shift, pageOffset, mttNext);
            mttNext += pages + 1;
            mkeys.add(c);
            writes.add(c);
        }
        // the directed corners: contexts from table slot 32 (the random ones take slots 1 to 22), KLM entries
        // from slot 0, leaving 12 for the lists below
        corners = new MttCorners(new Random(seed * 0x9E37_79B9_7F4A_7C15L + 1), entries, walker.config().klmEntries(),
                12, 32, mttNext, pds[0], qpns[0], mtt);
        klmWrites.addAll(corners.klm());
        // indirect mkeys over them: two lists and an interleaved layout; their pieces are of random
        // MRs, so some lack rights, belong to another PD or are FREE, and one entry names an indirect key
        int klmNext = corners.klm().size();
        List<MkeyContext> direct = List.copyOf(mkeys);
        for (int i = 0; i < 3; i++) {
            long index = 20 + i;
            int n = 2 + rnd.nextInt(3);
            long repeat = i == 2 ? 2 + rnd.nextInt(6) : 1;
            long total = 0;
            long pd = i == 1 ? mkeys.get(direct.size()).pd() : pds[rnd.nextInt(pds.length)];
            List<MkeyContext> samePd = direct.stream().filter(m -> m.pd() == pd).toList();
            for (int j = 0; j < n; j++) {
                // mostly MRs of the list's own PD, so that walks get past the first pieces
                MkeyContext m = i == 1 && j == n - 1 ? null
                        : !samePd.isEmpty() && rnd.nextInt(5) != 0 ? samePd.get(rnd.nextInt(samePd.size()))
                        : direct.get(rnd.nextInt(direct.size()));
                long pieceLen = 1 + rnd.nextInt(repeat > 1 ? 2000 : 3 << 12);
                // the first list's pieces up to the field's 32 bits (not the second's: walks must reach its nested key)
                if (i == 0 && m != null && wide.nextBoolean())
                    pieceLen = 1 + (long) (wide.nextDouble() * Math.min(m.length(), 0xFFFF_FFFFL));
                long stride = repeat > 1 ? pieceLen + rnd.nextInt(3000) : 0;
                long mkey, va;
                if (m == null) { // the first list: an indirect key inside an indirect key
                    mkey = 20 << 8 | mkeys.get(direct.size()).key();
                    va = INDIRECT_START;
                } else {
                    long room = m.length() - Math.min(m.length(), pieceLen + stride * (repeat - 1));
                    long off = room == 0 ? 0 : (long) (rnd.nextDouble() * room);
                    mkey = m.index() << 8 | m.key();
                    va = (m.access() & MttPorts.ZERO_BASED) != 0 ? off : m.start() + off;
                }
                klmWrites.add(new KlmEntry(klmNext + j, mkey, va, pieceLen, stride));
                total += pieceLen;
            }
            // the first list starts at a VA of its own (a kernel ULP's iova: an xid in its top 32 bits), the
            // others at 0
            long key = rnd.nextInt(256), length = total * repeat, access = rnd.nextInt(32);
            MkeyContext c = i == 0
                    ? MkeyContext.indirectAt(index, MttPorts.STATE_VALID, key, pd, INDIRECT_START, length, access,
                            klmNext, n, repeat)
                    : MkeyContext.indirect(index, MttPorts.STATE_VALID, key, pd, length, access, klmNext, n, repeat);
            klmNext += n;
            mkeys.add(c);
            writes.add(c);
        }
        writes.addAll(corners.contexts());
    }

    /** Where the first indirect mkey's VAs start. */
    private static final long INDIRECT_START = 0xa5a5_0001_0000_0200L;

    /** A page-aligned VA anywhere in 64 bits, far enough below 2^64 that an MR of 8 GiB does not wrap. */
    private long highVa(long page) {
        long va = wide.nextLong() & -page;
        return Long.compareUnsigned(va, -(1L << 40)) >= 0 ? va ^ Long.MIN_VALUE : va;
    }

    private XlateReq request() {
        MkeyContext c = mkeys.get(rnd.nextInt(mkeys.size()));
        boolean zero = (c.access() & MttPorts.ZERO_BASED) != 0;
        long off = (long) (rnd.nextDouble() * c.length());
        long len = Math.min(c.length() - off,
                rnd.nextInt(4) == 0 ? 0 : 1 + rnd.nextInt((int) Math.min(1L << 20, 3L << c.pageShift())));
        if (len != 0 && wide.nextInt(6) == 0)                       // now and then anywhere in 32 bits, up to the end
            len = Math.min(c.length() - off, 1 + (long) (wide.nextDouble() * 0xFFFF_FFFFL));
        long va = zero ? off : c.start() + off;
        long mkey = c.index() << 8 | c.key();
        long access = c.access() & 0x1f & rnd.nextInt(32);
        long pd = c.pd(), qpn = c.boundQp() != 0 ? c.qpn() : qpns[rnd.nextInt(qpns.length)];
        switch (rnd.nextInt(24)) {
            case 0 -> mkey ^= 1 + rnd.nextInt(255);                       // wrong key byte
            case 1 -> pd ^= 1L << rnd.nextInt(24);                         // another PD, by any one bit
            case 2 -> qpn ^= 1L << rnd.nextInt(24);                        // not the QP a window is bound to
            case 3 -> len = c.length() - off + 1 + rnd.nextInt(64);        // runs past the end
            case 4 -> va = zero ? c.length() + rnd.nextInt(4096) : c.start() - 1 - rnd.nextInt(4096); // outside
            case 5 -> access |= ~c.access() & 0x1f;                        // rights it lacks
            case 6 -> mkey = (0x800L + rnd.nextInt(256)) << 8 | c.key();   // no such index
            default -> { }
        }
        return new XlateReq(mkey & 0xFFFF_FFFFL, va, Math.min(len, 0xFFFF_FFFFL), access & 0x1f, pd & 0xFFFFFF,
                qpn & 0xFFFFFF, tag++ & 0xFFFF);
    }

    @Override public void drive() {
        if (writes.isEmpty() && rnd.nextInt(400) == 0) {
            // re-register one context: new key byte, or flip between VALID and FREE
            int i = rnd.nextInt(mkeys.size());
            MkeyContext c = mkeys.get(i);
            MkeyContext n = new MkeyContext(c.index(), rnd.nextInt(4) != 0 ? MttPorts.STATE_VALID : MttPorts.STATE_FREE,
                    rnd.nextInt(256), c.pd(), c.qpn(), c.boundQp(), c.start(), c.length(), c.access(), c.pageShift(),
                    c.pageOffset(), c.mttBase(), c.indirect(), c.klmCount(), c.repeat());
            mkeys.set(i, n);
            writes.add(n);
        }
        if (writes.isEmpty()) w.mkeyWrite().idle(); else w.mkeyWrite().push(writes.peekFirst());
        if (klmWrites.isEmpty()) w.klmWrite().idle(); else w.klmWrite().push(klmWrites.peekFirst());
        if (reqOut == null && writes.isEmpty() && klmWrites.isEmpty()) {
            reqOut = corners.sequence(quiet, qpns[0], tag);
            if (reqOut != null) tag++;
            else if (rnd.nextInt(100) < 60) reqOut = corners.turn() ? corners.request(qpns[0], tag++) : request();
        }
        if (reqOut == null) w.req().idle(); else w.req().push(reqOut);
        w.fill().ready(rnd.nextInt(100) < 70);
        if (fillOut == null && !fills.isEmpty() && fills.peekFirst()[1] <= cycle) {
            long idx = fills.pollFirst()[0];
            Long pa = mtt.get(idx);
            int r = rnd.nextInt(300);
            // now and then a page on demand
            fillOut = pa == null || r == 0 ? new MttFillRsp(0, MttPorts.FILL_FAILED)
                    : r < 6 || corners.notPresent(idx) ? new MttFillRsp(0, MttPorts.FILL_NOT_PRESENT)
                    : new MttFillRsp(pa, MttPorts.FILL_OK);
        }
        if (fillOut == null) w.fillRsp().idle(); else w.fillRsp().push(fillOut);
        w.rsp().ready(rnd.nextInt(100) < 70 && !corners.stalling());
    }

    @Override public void update() {
        cycle++;
        if (w.mkeyWrite().valid()) writes.pollFirst();
        if (w.klmWrite().valid()) klmWrites.pollFirst();
        if (w.req().fire()) reqOut = null;
        if (w.fill().fire()) fills.addLast(new long[]{w.fill().payload().index(), cycle + 2 + rnd.nextInt(14)});
        if (w.fillRsp().fire()) fillOut = null;
        quiet = w.req().ready() && !w.req().fire() && (!w.rsp().valid() || w.rsp().fire());
        corners.edge();
    }

    @Override public boolean active() { return true; }
}
