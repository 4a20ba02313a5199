package nicsim.adapter.stim;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import nicsim.adapter.MttPorts;
import nicsim.adapter.MttPorts.KlmEntry;
import nicsim.adapter.MttPorts.MkeyContext;
import nicsim.adapter.MttPorts.XlateReq;

/**
 * The directed part of {@link MttStimulus}: a verification engineer's corner sequences, seeded like
 * the rest, for values a random draw seldom or never makes. The contexts are written once, in table
 * slots the random part leaves alone; their KLM entries take the table's first slots. The cases:
 * <ul>
 * <li>{@code BIG}: an MR of 256 GiB in 2 GiB pages at a high VA, its start up to 1 GiB into its first
 * page, its index's every bit above the table slot set, its pages anywhere in 64 bits; asked for a
 * whole 2 GiB page from its first byte (a response of 2^31 bytes), two pages less a byte, or a few bytes.
 * <li>{@code WINDOW}: a type-2 window over two of BIG's pages bound to a QP, starting at the page-offset
 * field's largest values, asked by that QP and by QPs one bit away from it, each bit of the 24 in turn.
 * <li>{@code INTERLEAVED}: an indirect key over BIG with a large repeat count, entries of about 4 GiB
 * and strides of about 4 GiB, so that a walk goes past 128 GiB into the region (pieces at positions
 * over 2^37) within a few dozen edges.
 * <li>{@code LONG}: a list of more than 128 short pieces (as many as the KLM table has room for),
 * one in six failing in one way (a FREE MR, a wrong key, an indirect key inside, an MTT entry that
 * cannot be fetched, a page not present), asked from past its 128th piece.
 * <li>{@code SHORT}: a list whose context claims more bytes than its pieces hold: a walk past the
 * last repetition ends in OUT_OF_RANGE, after pieces or at once.
 * <li>{@code SMALL}: one MR per page size below 4 KiB (shifts 0 to 11), asked a few pages at a time.
 * <li>{@code STALL}: with the walker idle, a request that fails NESTED_INDIRECT, then one that runs
 * out of SHORT's repetitions, while the consumer of responses stalls: the walk runs out with the
 * first failure still waiting in the output register.
 * </ul>
 * Each request stays short in edges: a few dozen chunks at most, walks of a few hundred entries.
 */
final class MttCorners {
    private static final int BIG_SHIFT = 31;
    private static final long BIG_PAGES = 128;
    /** Edges the consumer stalls in a STALL sequence: more than the two requests take to fail. */
    private static final int STALL_EDGES = 16;

    private final Random r;
    private final long pd;
    private final List<MkeyContext> contexts = new ArrayList<>();
    private final List<KlmEntry> klm = new ArrayList<>();
    private final Set<Long> notPresent = new HashSet<>();
    private final MkeyContext big, window, interleaved, longList, shortList, nest;
    private final List<MkeyContext> small = new ArrayList<>();
    /** BIG's first page's VA and its start's offset in it. */
    private final long bigPage0, bigOffset;
    /** Where each of LONG's pieces starts in its region; SHORT's bytes that its pieces hold. */
    private final long[] longStarts;
    private final long shortHeld;
    private final ArrayDeque<XlateReq> queued = new ArrayDeque<>();
    private int qpBit, stall;

    /**
     * Contexts from table slot {@code slot} up, KLM entries from slot 0 leaving {@code klmLeft} of the
     * table's {@code klmEntries} free, MTT entries from {@code mttNext} (their pages put in {@code mtt}),
     * all in protection domain {@code pd}; WINDOW bound to {@code qpn}.
     */
    MttCorners(Random r, int mkeyEntries, int klmEntries, int klmLeft, int slot, long mttNext, long pd, long qpn,
               Map<Long, Long> mtt) {
        this.r = r;
        this.pd = pd;
        long page = 1L << BIG_SHIFT;
        bigPage0 = (r.nextLong() >>> 1) & -page;          // below 2^63: BIG never wraps
        bigOffset = r.nextInt(1 << 30);                     // the page-offset field is 30 bits
        for (long p = 0; p <= BIG_PAGES; p++) mtt.put(mttNext + p, r.nextLong() & -page);
        long maxIndex = (1L << 24) - mkeyEntries;
        big = new MkeyContext(maxIndex | slot++, MttPorts.STATE_VALID, r.nextInt(256), pd, 0, 0, bigPage0 + bigOffset,
                BIG_PAGES * page, 0x1f, BIG_SHIFT, bigOffset, mttNext);
        long windowOffset = (1 << 30) - 1 - r.nextInt(4096); // the page-offset field's largest values
        window = new MkeyContext(index(slot++, mkeyEntries), MttPorts.STATE_VALID, r.nextInt(256), pd, qpn, 1,
                bigPage0 + 2 * page + windowOffset, 2 * page - r.nextInt(4096), 0x1f, BIG_SHIFT, windowOffset,
                mttNext + 2);
        mttNext += BIG_PAGES + 2;
        // INTERLEAVED: repeated 2^16 to 2^31 times plus a few (the walk reaches repetition 16 or so, so that
        // a high bit read wrongly shows as an early end)
        int base = klm.size();
        long total = 0;
        for (int j = 0; j < 4; j++) {
            long len = 0xFFFF_FFFFL - r.nextInt(1 << 21);
            long stride = len + r.nextInt((int) (0xFFFF_FFFFL - len) + 1); // both within the fields' 32 bits
            klm.add(new KlmEntry(klm.size(), mkey(big), big.start() + j * (1L << 32) + r.nextInt(4096), len, stride));
            total += len;
        }
        long repeat = (1L << (16 + r.nextInt(16))) + 2 + r.nextInt(14);
        long whole = Math.multiplyHigh(total, repeat) == 0 && total * repeat > 0 ? total * repeat : Long.MAX_VALUE;
        interleaved = MkeyContext.indirect(index(slot++, mkeyEntries), MttPorts.STATE_VALID, r.nextInt(256), pd, whole,
                MttPorts.LOCAL_WRITE | MttPorts.REMOTE_READ, base, 4, repeat);
        // SMALL: pages of 1 byte to 2 KiB, 4 to 7 pages each, starting anywhere in the first
        for (int shift = 0; shift < 12; shift++) {
            long pages = 4 + r.nextInt(4), off = r.nextInt(1 << shift);
            long at = (r.nextLong() >>> 2 & -(1L << shift)) + off;
            for (long p = 0; p <= pages; p++) mtt.put(mttNext + p, r.nextLong() & -(1L << shift));
            small.add(new MkeyContext(index(slot++, mkeyEntries), MttPorts.STATE_VALID, r.nextInt(256), pd, 0, 0, at,
                    (pages << shift) - off, 0x1f | (r.nextInt(4) == 0 ? MttPorts.ZERO_BASED : 0), shift, off, mttNext));
            mttNext += pages + 2;
        }
        // LONG's failing pieces: a FREE MR; an MR whose MTT entries cannot be fetched, one whose pages are absent
        MkeyContext free = new MkeyContext(index(slot++, mkeyEntries), MttPorts.STATE_FREE, r.nextInt(256), pd, 0, 0,
                big.start(), page, 0x1f, BIG_SHIFT, bigOffset, big.mttBase());
        MkeyContext hole = new MkeyContext(index(slot++, mkeyEntries), MttPorts.STATE_VALID, r.nextInt(256), pd, 0, 0,
                r.nextLong() >>> 1 & -4096, 4 << 12, 0x1f, 12, 0, mttNext);
        mttNext += 5;
        MkeyContext absent = new MkeyContext(index(slot++, mkeyEntries), MttPorts.STATE_VALID, r.nextInt(256), pd, 0, 0,
                r.nextLong() >>> 1 & -4096, 4 << 12, 0x1f, 12, 0, mttNext);
        for (long p = 0; p < 4; p++) notPresent.add(mttNext + p);
        mttNext += 5;
        MkeyContext[] failing = {free, null, interleaved, hole, absent};
        // LONG: short pieces in BIG or SMALL's larger pages
        int m = Math.max(2, Math.min(130 + r.nextInt(120), klmEntries - klmLeft - klm.size() - 3));
        longStarts = new long[m + 1];
        base = klm.size();
        for (int j = 0; j < m; j++) {
            long len = 1 + r.nextInt(64);
            int fail = r.nextInt(6) == 0 ? 1 + r.nextInt(5) : 0;
            MkeyContext t = fail > 0 && fail != 2 ? failing[fail - 1]
                    : r.nextBoolean() ? big : small.get(6 + r.nextInt(6));
            long off = (long) (r.nextDouble() * (t.length() - len));
            long va = fail == 3 ? r.nextInt(4096) : (t.access() & MttPorts.ZERO_BASED) != 0 ? off : t.start() + off;
            // a wrong key byte: 1 to 255 away from the right one
            long key = fail == 2 ? t.key() ^ (1 + r.nextInt(255)) : t.key();
            klm.add(new KlmEntry(klm.size(), t.index() << 8 | key, va, len, 0));
            longStarts[j + 1] = longStarts[j] + len;
        }
        longList = MkeyContext.indirect(index(slot++, mkeyEntries), MttPorts.STATE_VALID, r.nextInt(256), pd,
                longStarts[m], 0x1f, base, m, 1);
        // SHORT: 2 pieces in BIG, taken 1 to 3 times, under a context that claims up to 4 KiB more
        base = klm.size();
        long held = 0;
        for (int j = 0; j < 2; j++) {
            long len = 1 + r.nextInt(5000);
            klm.add(new KlmEntry(klm.size(), mkey(big), big.start() + r.nextInt(1 << 30), len, 1L << 20));
            held += len;
        }
        long times = 1 + r.nextInt(3);
        shortHeld = held * times;
        shortList = MkeyContext.indirect(index(slot++, mkeyEntries), MttPorts.STATE_VALID, r.nextInt(256), pd,
                shortHeld + 1 + r.nextInt(4096), 0x1f, base, 2, times);
        // NEST: one piece, under an indirect key
        long nestLen = 1 + r.nextInt(4096);
        klm.add(new KlmEntry(klm.size(), mkey(interleaved), r.nextInt(4096), nestLen, 0));
        nest = MkeyContext.indirect(index(slot, mkeyEntries), MttPorts.STATE_VALID, r.nextInt(256), pd, nestLen, 0x1f,
                klm.size() - 1, 1, 1);
        contexts.addAll(List.of(big, window, interleaved));
        contexts.addAll(small);
        contexts.addAll(List.of(free, hole, absent, longList, shortList, nest));
    }

    /** The contexts to write, in order. */
    List<MkeyContext> contexts() { return contexts; }

    /** The KLM entries to write, in order (from slot 0). */
    List<KlmEntry> klm() { return klm; }

    /** Whether the page of MTT entry {@code index} is not present: its fill answers FILL_NOT_PRESENT. */
    boolean notPresent(long index) { return notPresent.contains(index); }

    /** Whether the response consumer stalls on this edge. */
    boolean stalling() { return stall > 0; }

    /** One edge passed. */
    void edge() { if (stall > 0) stall--; }

    /** Whether the next request is a corner's: one in six. */
    boolean turn() { return r.nextInt(6) == 0; }

    /**
     * The next request of a sequence under way, or, one time in 100 when the walker is {@code quiet}
     * (idle with its output register empty), the first of a new STALL sequence; else null.
     */
    XlateReq sequence(boolean quiet, long qpn, long tag) {
        if (!queued.isEmpty()) return queued.poll();
        if (!quiet || r.nextInt(100) != 0) return null;
        stall = STALL_EDGES;
        queued.add(req(shortList, shortHeld + r.nextInt((int) (shortList.length() - shortHeld)), 1, qpn, tag + 1));
        return req(nest, 0, nest.length(), qpn, tag);
    }

    /** A request of one of the cases, drawn. */
    XlateReq request(long qpn, long tag) {
        long page = 1L << BIG_SHIFT;
        // weighed by cost in edges: LONG walks over 128 entries, INTERLEAVED up to 64, the others a few
        int w = r.nextInt(32);
        switch (w < 9 ? 0 : w < 16 ? 1 : w < 23 ? 5 : w < 28 ? 4 : w < 31 ? 2 : 3) {
            case 0 -> { // BIG: a whole 2 GiB page from its first byte, two pages less one byte, or a few bytes
                long first = bigPage0 + (1 + r.nextInt((int) BIG_PAGES - 3)) * page - big.start();
                int k = r.nextInt(3);
                return k == 0 ? req(big, first, page, qpn, tag) : k == 1 ? req(big, first, 2 * page - 1, qpn, tag)
                        : req(big, first + (r.nextLong() & (page - 1)), 1 + r.nextInt(1 << 16), qpn, tag);
            }
            case 1 -> { // WINDOW: its own QP, or one a bit away, the bits in turn
                long q = r.nextBoolean() ? window.qpn() : window.qpn() ^ 1L << qpBit++ % 24;
                long off = (long) (r.nextDouble() * (window.length() - 4096));
                return req(window, off, 1 + r.nextInt(4096), q, tag);
            }
            case 2 -> { // INTERLEAVED: anywhere in its first 2^38 bytes, a few bytes or up to past a piece's end
                long len = r.nextBoolean() ? 1 + r.nextInt(1 << 20) : 1L + r.nextInt(Integer.MAX_VALUE) + (1L << 31);
                return req(interleaved, r.nextLong() & ((1L << 38) - 1), len, qpn, tag);
            }
            case 3 -> { // LONG: from a piece past the 128th (anywhere in a shorter list), over up to 24 pieces
                int m = longStarts.length - 1;
                int from = m > 128 ? 128 + r.nextInt(m - 128) : r.nextInt(m);
                long off = longStarts[from] + r.nextInt((int) (longStarts[from + 1] - longStarts[from]));
                return req(longList, off, Math.min(longStarts[m] - off, 1 + r.nextInt(24 * 32)), qpn, tag);
            }
            case 4 -> { // SHORT: past what its pieces hold, or from inside them, running to the end
                long off = r.nextBoolean() ? shortHeld + r.nextInt((int) (shortList.length() - shortHeld))
                        : r.nextInt((int) shortHeld);
                return req(shortList, off, shortList.length() - off, qpn, tag);
            }
            default -> { // SMALL: a few pages from anywhere
                MkeyContext c = small.get(r.nextInt(small.size()));
                long off = (long) (r.nextDouble() * c.length());
                long len = Math.min(c.length() - off, 1 + r.nextInt((int) Math.min(4L << c.pageShift(), 1 << 12)));
                return req(c, off, len, qpn, tag);
            }
        }
    }

    /** {@code len} bytes at offset {@code off} of context {@code c}, as QP {@code qpn}. */
    private XlateReq req(MkeyContext c, long off, long len, long qpn, long tag) {
        long va = (c.access() & MttPorts.ZERO_BASED) != 0 ? off : c.start() + off;
        return new XlateReq(mkey(c), va, Math.min(len, 0xFFFF_FFFFL), MttPorts.LOCAL_WRITE, pd, qpn & 0xFFFFFF,
                tag & 0xFFFF);
    }

    private static long mkey(MkeyContext c) { return c.index() << 8 | c.key(); }

    /** Table slot {@code slot} under an index with random high bits (the field is 24 bits). */
    private long index(int slot, int mkeyEntries) { return (r.nextInt(1 << 24) & -mkeyEntries) | slot; }
}
