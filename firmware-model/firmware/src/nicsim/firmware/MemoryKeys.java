package nicsim.firmware;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.stream.LongStream;
import nicsim.abi.AccessBits;
import nicsim.abi.Cmd;
import nicsim.abi.MttEntry;
import nicsim.abi.Vendor;
import nicsim.abi.WqeFormat;
import nicsim.adapter.MttPorts.MkeyContext;
import nicsim.adapter.MttPorts.XlateReq;
import nicsim.adapter.MttPorts.XlateRsp;
import nicsim.adapter.MttPorts;
import nicsim.host.PciPort;
import nicsim.sim.Recent;

/**
 * Memory keys: the MRs and windows (their commands, bind and invalidate), and the MttWalker's
 * table of mkey contexts as a cache of all of them: a translation whose key the walker does not
 * hold first loads its context from host memory (ICM).
 */
final class MemoryKeys {
    /** MRs and windows an adapter holds in all; the MttWalker's table holds mtt.mkey.entries of them at a time. */
    static final int MAX_MKEYS = 1 << 18;
    /** Bytes of one mkey context in host memory (ICM), read on a miss. */
    static final int MKC_BYTES = 64;

    private final Firmware fw;
    private final Table<MkeyContext> mkeys = new Table<>(1, MAX_MKEYS, Cmd.Syndrome.OUT_OF_MKEYS, false);
    private final Map<Long, Window> windows = new HashMap<>();
    /** Keys destroyed lately, with when (for the driver sanitizer: a WQE naming one is a use after destroy). */
    private final Recent<Long, Long> destroyedAt = new Recent<>(256);
    private int keySeed = 0x5a;
    /** Where mkey contexts live in host memory (-1: nowhere, the walker's table is all there is). */
    long mkcAddr = -1;

    /** An indirect mkey (by its mkey index): its run of the walker's KLM table, and the mkeys its layout names. */
    private static final class Indirect {
        final long klmBase;
        final int maxEntries;
        List<Long> pieces = List.of();

        Indirect(long klmBase, int maxEntries) { this.klmBase = klmBase; this.maxEntries = maxEntries; }
    }

    private final Map<Long, Indirect> indirects = new HashMap<>();

    /** Mkeys alive: regions, windows and indirect mkeys. */
    int live() { return mkeys.all().size(); }

    /** The contexts of the memory regions alive (not windows, not indirect mkeys), for {@link Resources}. */
    List<MkeyContext> regions() {
        List<MkeyContext> out = new ArrayList<>();
        for (MkeyContext m : mkeys.all())
            if (!windows.containsKey(m.index()) && !indirects.containsKey(m.index())) out.add(m);
        return out;
    }
    /**
     * What on-demand paging did to one MR, as mlx5 counts it per MR (`rdma statistic mr`): page faults its
     * accesses took, invalidations of its pages (ODP_INVALIDATE) and prefetches (ODP_PREFETCH).
     */
    record Paging(long faults, long invalidations, long prefetches) {
        static final Paging NONE = new Paging(0, 0, 0);
    }

    /** Each MR's {@link Paging} by mkey index; an MR paging never touched has none. */
    private final Map<Long, Paging> paging = new HashMap<>();

    /** MR {@code index}'s paging counts. */
    Paging paging(long index) { return paging.getOrDefault(index, Paging.NONE); }

    private void counted(long index, long faults, long invalidations, long prefetches) {
        Paging p = paging(index);
        paging.put(index, new Paging(p.faults + faults, p.invalidations + invalidations, p.prefetches + prefetches));
    }

    /**
     * A page not present at MTT index {@code mttIndex}: counted to the MR whose entries hold it, then the host
     * brings the pages in ({@link MttFill#pageFault}) and {@code done} runs.
     */
    void pageFault(long mttIndex, long pages, Runnable done) {
        long base = fw.mttFill.space.runStart(mttIndex);
        for (MkeyContext m : regions())
            if (base >= 0 && m.mttBase() == base) {
                counted(m.index(), 1, 0, 0);
                break;
            }
        fw.mttFill.pageFault(mttIndex, pages, done);
    }

    /** The walker's KLM table entries in use. */
    private final BitSet klmUsed = new BitSet();

    /** A memory window (by its mkey index): type 1 or 2, and the index of the MR it is bound to (-1: none). */
    private static final class Window {
        final int type;
        long boundTo = -1;

        Window(int type) { this.type = type; }
    }

    // the walker's table as a cache: which mkey index each entry holds (-1: none), translations in flight per entry
    private final long[] walkerIndex;
    private final int[] walkerBusy;
    /** Each walker entry's slot alone (made at its first use), the slots of a direct key's translation. */
    private final int[][] oneSlot;
    private static final int[] NO_SLOTS = {};
    private final ArrayDeque<XlateReq> queue = new ArrayDeque<>();
    private boolean loading;
    private int nextTag;
    // translations by tag: slot tag & (length - 1), grown when two in flight would share a slot
    private Translation[] inFlight = new Translation[16];

    /** A translation sent to the walker: the walker entries it holds busy, its responses so far, who waits for them. */
    private static final class Translation {
        final int tag;
        final List<XlateRsp> parts = new ArrayList<>();
        final Consumer<List<XlateRsp>> done;
        int[] slots = NO_SLOTS; // set when it is sent (read only: it may be one of oneSlot's)

        Translation(int tag, Consumer<List<XlateRsp>> done) { this.tag = tag; this.done = done; }
    }

    MemoryKeys(Firmware fw, int walkerEntries) {
        this.fw = fw;
        this.walkerIndex = new long[walkerEntries];
        this.walkerBusy = new int[walkerEntries];
        this.oneSlot = new int[walkerEntries][];
        Arrays.fill(walkerIndex, -1);
    }

    long limit() { return MAX_MKEYS; }

    /** Whether some MR or window belongs to {@code pd}. */
    boolean usePd(long pd) { return mkeys.all().stream().anyMatch(m -> m.pd() == pd); }

    private int nextKey() { return keySeed = (keySeed * 37 + 11) & 0xff; } // the key byte changes on every registration

    // ------------------------------------------------------------------ commands

    /** CREATE_MKEY of an MR (its PD checked): copies the page list into the translation table; returns the key. */
    long createMr(Cmd.CreateMkey c, Runnable written) {
        checkMr(c);
        long index = mkeys.free();
        int key = nextKey();
        install(index, key, c, written);
        return index << 8 | key;
    }

    /**
     * CREATE_IMPLICIT_MKEY: an on-demand MR of {@code c.length()} bytes from {@code c.start()} (the
     * whole address space) with no page list: its pages' entries get rows as the adapter touches
     * them, and the host's handler is told each page's address ({@link MttEntry#IMPLICIT}). Returns the key.
     */
    long createImplicit(Cmd.CreateMkey c) {
        if (c.pageShift() != MttEntry.IMPLICIT_PAGE_SHIFT)
            throw new CommandRefused(Cmd.Syndrome.BAD_PAGE_SHIFT, c.pageShift());
        if ((c.access() & ~AccessBits.ALL) != 0) throw new CommandRefused(Cmd.Syndrome.BAD_ACCESS, c.access());
        long pageMask = (1L << MttEntry.IMPLICIT_PAGE_SHIFT) - 1;
        if (((c.start() | c.length()) & pageMask) != 0 || c.pageOffset() != 0 || c.length() <= 0
                || c.pages() != c.length() >>> MttEntry.IMPLICIT_PAGE_SHIFT)
            throw new CommandRefused(Cmd.Syndrome.BAD_ATTRIBUTE, c.length());
        if (!fw.mttFill.space.fitsSparse(c.pages())) throw new CommandRefused(Cmd.Syndrome.OUT_OF_MTT, c.pages());
        long index = mkeys.free();
        int key = nextKey();
        long base = fw.mttFill.space.takeSparse(c.pages(), c.start(), index, MttEntry.IMPLICIT_PAGE_SHIFT);
        MkeyContext m = new MkeyContext(index, MttPorts.STATE_VALID, key, c.pd(), 0, 0, c.start(), c.length(),
                c.access() & 0x3f, MttEntry.IMPLICIT_PAGE_SHIFT, 0, base);
        mkeys.put(index, m);
        publish(m);
        return index << 8 | key;
    }

    private void checkMr(Cmd.CreateMkey c) {
        if (c.pageShift() < Cmd.MIN_PAGE_SHIFT || c.pageShift() > Cmd.MAX_PAGE_SHIFT)
            throw new CommandRefused(Cmd.Syndrome.BAD_PAGE_SHIFT, c.pageShift());
        if ((c.access() & ~AccessBits.ALL) != 0) throw new CommandRefused(Cmd.Syndrome.BAD_ACCESS, c.access());
        if ((c.pageList() & 7) != 0) throw new CommandRefused(Cmd.Syndrome.BAD_ADDRESS, c.pageList());
        if (!fw.mttFill.fits(Math.max(1, c.pages()))) throw new CommandRefused(Cmd.Syndrome.OUT_OF_MTT, c.pages());
    }

    /**
     * REREG_MKEY: an MR keeps its index and key and takes a new translation, PD and access, on
     * fresh MTT entries the walker's cache has never seen (as ODP_INVALIDATE moves an MR).
     */
    void reregMr(Cmd.ReregMkey r, Runnable written) {
        long index = r.mkey() >>> 8;
        MkeyContext m = mkeys.get(index);
        if (m == null || m.key() != (r.mkey() & 0xff) || m.state() != MttPorts.STATE_VALID || windows.containsKey(index)
                || indirects.containsKey(index))
            // no MR of that key: a window, an indirect mkey, or none
            throw new CommandRefused(Cmd.Syndrome.UNKNOWN_MKEY, r.mkey());
        checkMr(r.to());
        install(index, (int) (r.mkey() & 0xff), r.to(), written);
    }

    /**
     * MR {@code index} with key byte {@code key}, as {@code c} describes it: its page list copied
     * into fresh MTT entries, the context published; {@code written} runs once the copy is in the
     * table (the command answers then: a request right after it translates through the new entries).
     */
    private void install(long index, int key, Cmd.CreateMkey c, Runnable written) {
        MttFill mtt = fw.mttFill;
        long mttBase = mtt.take(c.pages());
        if (mttBase < 0) throw new CommandRefused(Cmd.Syndrome.OUT_OF_MTT, c.pages()); // no run of free rows that long
        MkeyContext old = mkeys.get(index);
        if (old != null) mtt.space.give(old.mttBase()); // re-registered: its old entries' rows go back
        MkeyContext m = new MkeyContext(index, MttPorts.STATE_VALID, key, c.pd(), 0, 0, c.start(), c.length(),
                c.access() & 0x3f, c.pageShift(), c.pageOffset(), mttBase);
        mkeys.put(index, m);
        // copy the page list into the adapter's translation table in host memory (ICM), then publish the context
        var port = fw.adapter.port();
        port.dmaRead(c.pageList(), (int) (c.pages() * 8), r -> {
            if (r.status() == PciPort.DmaStatus.OK) port.dmaWrite(mtt.entryAddr(mttBase), r.data(), w -> written.run());
            else {
                fw.report(String.format("MR page list at 0x%x unreadable: %s", c.pageList(), r.status()));
                written.run();
            }
        });
        publish(m);
    }

    /**
     * ODP_PREFETCH (ibv_advise_mr): the pages of the range are brought in ahead by the host's
     * handler, as on page faults (present ones are answered at once); {@code in} runs once they are
     * (ODP_PREFETCH_FLUSH answers then; ODP_PREFETCH at once).
     */
    void prefetch(Cmd.OdpPrefetch c, Runnable in) {
        MkeyContext m = odpMr(c);
        long[] pages = pagesOf(m, c);
        fw.stats.inc(FirmwareStat.ODP_PREFETCHES);
        counted(m.index(), 0, 0, 1);
        if (!fw.mttFill.hasHandler()) { // nothing can bring them in: nothing to wait for
            in.run();
            return;
        }
        fw.mttFill.bringIn(m.mttBase() + pages[0], pages[1] - pages[0] + 1, in);
    }

    /**
     * ODP_INVALIDATE: the OS takes the range's pages away. Their entries are marked not present, and
     * the walker's cached translations of them must go: the MR moves to fresh MTT entries (a copy
     * of its table with those pages not present), which the walker's cache has never seen, and its
     * context is published again once the copy is written. The next access faults them back in.
     */
    void invalidate(Cmd.OdpPrefetch c) {
        MkeyContext m = odpMr(c);
        long[] range = pagesOf(m, c);
        long pages = (m.pageOffset() + m.length() + (1L << m.pageShift()) - 1) >> m.pageShift();
        MttFill mtt = fw.mttFill;
        if (mtt.space.sparse(m.mttBase())) { // implicit: a fresh sparse run, every page not present (faults in again)
            long base = mtt.space.takeSparse(pages, m.start(), m.index(), m.pageShift());
            if (base < 0) throw new CommandRefused(Cmd.Syndrome.OUT_OF_MTT, pages);
            mtt.space.give(m.mttBase());
            MkeyContext moved = new MkeyContext(m.index(), m.state(), m.key(), m.pd(), m.qpn(), m.boundQp(), m.start(),
                    m.length(), m.access(), m.pageShift(), m.pageOffset(), base);
            mkeys.put(m.index(), moved);
            fw.stats.inc(FirmwareStat.ODP_INVALIDATIONS);
            counted(m.index(), 0, 1, 0);
            publish(moved);
            return;
        }
        long base = mtt.take(pages);
        if (base < 0) throw new CommandRefused(Cmd.Syndrome.OUT_OF_MTT, pages);
        MkeyContext moved = new MkeyContext(m.index(), m.state(), m.key(), m.pd(), m.qpn(), m.boundQp(), m.start(),
                m.length(), m.access(), m.pageShift(), m.pageOffset(), base);
        mkeys.put(m.index(), moved);
        fw.stats.inc(FirmwareStat.ODP_INVALIDATIONS);
        counted(m.index(), 0, 1, 0);
        var port = fw.adapter.port();
        port.dmaRead(mtt.entryAddr(m.mttBase()), (int) (pages * 8), r -> {
            mtt.space.give(m.mttBase()); // read: the old entries' rows go back
            if (r.status() != PciPort.DmaStatus.OK) {
                fw.report("ODP invalidation: MTT entries of mkey 0x" + Long.toHexString(c.lkey()) + " unreadable");
                return;
            }
            byte[] t = r.data();
            // the mark is bit 0 of the big-endian entry: its last byte
            for (long p = range[0]; p <= range[1]; p++) t[(int) (p * 8 + 7)] |= (byte) MttEntry.NOT_PRESENT;
            port.dmaWrite(mtt.entryAddr(base), t, w -> publish(moved));
        });
    }

    /** The MR an ODP command names (its key, PD, and a range inside it). */
    private MkeyContext odpMr(Cmd.OdpPrefetch c) {
        MkeyContext m = mkeys.get(c.lkey() >>> 8);
        if (m == null || m.key() != (c.lkey() & 0xff) || windows.containsKey(c.lkey() >>> 8))
            throw new CommandRefused(Cmd.Syndrome.UNKNOWN_MKEY, c.lkey());
        if (m.pd() != c.pd()) throw new CommandRefused(Cmd.Syndrome.UNKNOWN_PD, c.pd());
        long rel = rel(m, c.addr());
        if (c.length() == 0 || rel < 0 || rel + c.length() > m.length())
            throw new CommandRefused(Cmd.Syndrome.BAD_ATTRIBUTE, c.addr());
        return m;
    }

    private static long rel(MkeyContext m, long addr) {
        return (m.access() & MttPorts.ZERO_BASED) != 0 ? addr : addr - m.start();
    }

    /** The first and last page (from the MR's first) of the command's range. */
    private static long[] pagesOf(MkeyContext m, Cmd.OdpPrefetch c) {
        long rel = rel(m, c.addr());
        return new long[]{(rel + m.pageOffset()) >> m.pageShift(),
                (rel + m.pageOffset() + c.length() - 1) >> m.pageShift()};
    }

    /** ALLOC_MW (its PD checked): returns the key. */
    long allocWindow(Cmd.AllocMw a) {
        if (a.type() != 1 && a.type() != 2) throw new CommandRefused(Cmd.Syndrome.BAD_MW_TYPE, a.type());
        long index = mkeys.free();
        int key = nextKey();
        // type 1 is usable (VALID) at once, with no range until bound; type 2 starts FREE (rxe_alloc_mw)
        MkeyContext m = new MkeyContext(index, a.type() == 1 ? MttPorts.STATE_VALID : MttPorts.STATE_FREE, key, a.pd(),
                0, 0, 0, 0, 0, 12, 0, 0);
        mkeys.put(index, m);
        windows.put(index, new Window((int) a.type()));
        publish(m);
        return index << 8 | key;
    }

    /**
     * CREATE_INDIRECT_MKEY: an mkey of up to {@code maxEntries} KLM entries, their run of the
     * walker's KLM table taken now (first fit); it starts FREE, with no layout. Returns the key.
     */
    long createIndirect(Cmd.CreateIndirectMkey c) {
        if (fw.umrKlmCycles < 0) throw new CommandRefused(Cmd.Syndrome.UMR_NOT_SUPPORTED, 0);
        int klmEntries = fw.adapter.mtt().config().klmEntries();
        if (c.maxEntries() < 1 || c.maxEntries() > klmEntries)
            throw new CommandRefused(Cmd.Syndrome.BAD_ATTRIBUTE, c.maxEntries());
        int base = -1;
        for (int from = klmUsed.nextClearBit(0); from + c.maxEntries() <= klmEntries;
                from = klmUsed.nextClearBit(from + 1)) {
            int used = klmUsed.nextSetBit(from);
            if (used < 0 || used >= from + c.maxEntries()) { base = from; break; }
            from = used;
        }
        if (base < 0) throw new CommandRefused(Cmd.Syndrome.OUT_OF_KLMS, c.maxEntries());
        long index = mkeys.free();
        klmUsed.set(base, base + (int) c.maxEntries());
        MkeyContext m = MkeyContext.indirect(index, MttPorts.STATE_FREE, nextKey(), c.pd(), 0, 0, base, 0, 1);
        mkeys.put(index, m);
        indirects.put(index, new Indirect(base, (int) c.maxEntries()));
        publish(m);
        return index << 8 | m.key();
    }

    /**
     * A layout UMR of indirect mkey {@code key} by {@code qp}: the mkey must be FREE (new or
     * invalidated) and of the QP's PD, the layout fit what it was created for (an interleaved one
     * takes an entry more, for its repeat block, as mlx5's does). Its entries go to the walker's KLM
     * table, then its context, VALID with the layout's length (zero based), or with the start and
     * length the layout's address segment gives (no larger than its entries). The key byte is the
     * WQE's: a layout may give the mkey a new one, as mlx5's UMR sets mkey_7_0 (a kernel ULP's
     * ib_update_fast_reg_key before each IB_WR_REG_MR), so a peer holding the old rkey is refused.
     * Returns 0 or the vendor syndrome of the failed check. The entries' own keys are checked at
     * each access, by the walker.
     */
    int configure(Qp qp, long key, WqeFormat.MkeyLayout l) {
        Indirect ind = indirects.get(key >>> 8);
        MkeyContext m = mkeys.get(key >>> 8);
        if (ind == null || m == null) return Vendor.UMR_NOT_INDIRECT;
        if (m.pd() != qp.pd) return Vendor.UMR_PD;
        if (m.state() != MttPorts.STATE_FREE) return Vendor.UMR_NOT_FREE;
        if (l.entries().size() + (l.interleaved() ? 1 : 0) > ind.maxEntries) return Vendor.UMR_TOO_MANY_ENTRIES;
        if (l.entries().isEmpty() || l.entries().stream().anyMatch(k -> k.length() == 0)) return Vendor.UMR_BAD_LAYOUT;
        long repeat = l.interleaved() ? l.repeat() : 1, row = 0;
        if (l.based()) { // the key's bytes must all lie in the entries, and its VAs must not wrap past 2^64
            long total = l.entries().stream().mapToLong(k -> k.length() & 0xFFFFFFFFL).sum() * repeat;
            boolean wraps = Long.compareUnsigned(l.start() + l.length() - 1, l.start()) < 0;
            if (Long.compareUnsigned(l.length(), total) > 0 || wraps) return Vendor.UMR_BAD_LAYOUT;
        }
        List<Long> pieces = new ArrayList<>();
        for (int j = 0; j < l.entries().size(); j++) {
            var k = l.entries().get(j);
            fw.adapter.klmWrite(new MttPorts.KlmEntry(ind.klmBase + j, k.lkey() & 0xFFFFFFFFL, k.addr(),
                    k.length() & 0xFFFFFFFFL, k.stride() & 0xFFFFL));
            row += k.length() & 0xFFFFFFFFL;
            pieces.add((k.lkey() & 0xFFFFFFFFL) >>> 8);
        }
        ind.pieces = List.copyOf(pieces);
        int n = l.entries().size();
        MkeyContext valid = l.based()
                ? MkeyContext.indirectAt(m.index(), MttPorts.STATE_VALID, key & 0xff, m.pd(), l.start(), l.length(),
                        l.access() & 0x1f, ind.klmBase, n, repeat)
                : MkeyContext.indirect(m.index(), MttPorts.STATE_VALID, key & 0xff, m.pd(), row * repeat,
                        l.access() & 0x1f, ind.klmBase, n, repeat);
        mkeys.put(m.index(), valid);
        publish(valid); // the adapter writes it after the entries
        return 0;
    }

    void deallocWindow(long key) {
        if (!mkeys.has(key >>> 8) || !windows.containsKey(key >>> 8))
            throw new CommandRefused(Cmd.Syndrome.UNKNOWN_MKEY, key);
        windows.get(key >>> 8).boundTo = -1;
        mkeys.remove(key >>> 8);
        windows.remove(key >>> 8);
        publish(destroyed(key >>> 8));
    }

    void destroyMr(long key) {
        MkeyContext m = mkeys.get(key >>> 8);
        if (m == null || m.key() != (key & 0xff) || windows.containsKey(key >>> 8))
            throw new CommandRefused(Cmd.Syndrome.UNKNOWN_MKEY, key);
        for (Window w : windows.values())
            if (w.boundTo == (key >>> 8)) throw new CommandRefused(Cmd.Syndrome.MR_HAS_WINDOWS, key);
        Indirect ind = indirects.remove(key >>> 8);
        if (ind != null) klmUsed.clear((int) ind.klmBase, (int) ind.klmBase + ind.maxEntries);
        MkeyContext gone = mkeys.remove(key >>> 8);
        paging.remove(key >>> 8);
        if (ind == null) fw.mttFill.space.give(gone.mttBase()); // its entries' rows go back
        publish(destroyed(key >>> 8));
        destroyedAt.keep(key & 0xFFFF_FFFFL, fw.sim.now());
    }

    /** When key {@code key} was destroyed, if it was lately and no key of its index is live since; else null. */
    Long destroyedAt(long key) {
        Long at = destroyedAt.get(key & 0xFFFF_FFFFL);
        return at == null || mkeys.has(key >>> 8) ? null : at;
    }

    private static MkeyContext destroyed(long index) {
        return new MkeyContext(index, MttPorts.STATE_NONE, 0, 0, 0, 0, 0, 0, 0, 12, 0, 0);
    }

    // ------------------------------------------------------------------ windows

    /**
     * Binds window {@code mwKey} (index, and the new key byte in its low 8 bits) to {@code length} bytes at
     * {@code addr} of MR {@code mrKey} for {@code qp}, with {@code access}: the checks of rxe's bind
     * (docs/sources.md#rxe-keys-and-memory-windows). Returns 0, or the vendor syndrome of the failed check
     * (MW_BIND_ERR).
     */
    int bind(Qp qp, long mwKey, long mrKey, long addr, long length, int access) {
        Window w = windows.get(mwKey >>> 8);
        MkeyContext mw = mkeys.get(mwKey >>> 8), mr = mkeys.get(mrKey >>> 8);
        if (w == null || mw == null) return Vendor.MW_UNKNOWN;
        if (w.type == 2 && mw.state() != MttPorts.STATE_FREE) return Vendor.MW_NOT_FREE;
        if (w.type == 1 && (access & MttPorts.ZERO_BASED) != 0) return Vendor.MW_TYPE1_ZERO_BASED;
        if (mw.pd() != qp.pd) return Vendor.MW_PD;
        if (mr == null || windows.containsKey(mrKey >>> 8) || mr.key() != (mrKey & 0xff) || mr.length() == 0)
            return Vendor.MW_BAD_MR;
        if ((mr.access() & MttPorts.ZERO_BASED) != 0 || (mr.access() & MttPorts.MW_BIND) == 0)
            return Vendor.MW_MR_NO_BIND;
        if ((access & (MttPorts.REMOTE_WRITE | MttPorts.REMOTE_ATOMIC)) != 0
                && (mr.access() & MttPorts.LOCAL_WRITE) == 0)
            return Vendor.MW_MR_NO_BIND;
        if (addr < mr.start() || length > mr.length() || addr - mr.start() > mr.length() - length)
            return Vendor.MW_RANGE;
        long offInMr = addr - mr.start() + mr.pageOffset(), pageMask = (1L << mr.pageShift()) - 1;
        MkeyContext bound = new MkeyContext(mw.index(), MttPorts.STATE_VALID, mwKey & 0xff, mw.pd(), qp.qpn & 0xFFFFFF,
                w.type == 2 ? 1 : 0, addr, length, access & 0x1f, mr.pageShift(), offInMr & pageMask,
                mr.mttBase() + (offInMr >> mr.pageShift()));
        mkeys.put(mw.index(), bound);
        w.boundTo = mr.index();
        publish(bound);
        return 0;
    }

    /**
     * LOCAL_INV or SEND_WITH_INV of {@code key} by {@code qp}: only a bound type-2 window (nicsim's MRs are not
     * fast-registered). Returns 0 or a vendor syndrome.
     */
    int invalidate(Qp qp, long key) {
        Window w = windows.get(key >>> 8);
        MkeyContext m = mkeys.get(key >>> 8);
        if (m == null || m.key() != (key & 0xff)) return Vendor.INV_UNKNOWN;
        if (indirects.containsKey(key >>> 8)) { // an indirect mkey: FREE again, for its next layout
            if (m.state() != MttPorts.STATE_VALID || m.pd() != qp.pd) return Vendor.INV_UNKNOWN;
            MkeyContext free = MkeyContext.indirect(m.index(), MttPorts.STATE_FREE, m.key(), m.pd(), 0, 0, m.mttBase(),
                    0, 1);
            mkeys.put(m.index(), free);
            publish(free);
            return 0;
        }
        if (w == null) return Vendor.INV_NOT_WINDOW;
        if (w.type == 1) return Vendor.INV_TYPE1;
        if (m.state() != MttPorts.STATE_VALID || m.pd() != qp.pd) return Vendor.INV_UNKNOWN;
        MkeyContext free = new MkeyContext(m.index(), MttPorts.STATE_FREE, m.key(), m.pd(), 0, 0, 0, 0, 0, 12, 0, 0);
        mkeys.put(m.index(), free);
        w.boundTo = -1;
        publish(free);
        return 0;
    }

    // ------------------------------------------------------------------ the walker's context cache and translations

    private int walkerSlot(long index) { return (int) (index & (walkerIndex.length - 1)); }

    /**
     * Writes an mkey context: to host memory (ICM), and into the walker's table if the walker holds
     * that index or the entry is free. A context of state NONE (a destroyed key) frees the entry.
     */
    private void publish(MkeyContext m) {
        int slot = walkerSlot(m.index());
        if (mkcAddr >= 0 && m.state() != MttPorts.STATE_NONE) fw.adapter.port()
                .dmaWrite(mkcAddr + m.index() * MKC_BYTES, new byte[MKC_BYTES], r -> {});
        if (walkerIndex[slot] == m.index() || walkerIndex[slot] < 0) {
            fw.adapter.mkeyWrite(m);
            walkerIndex[slot] = m.state() == MttPorts.STATE_NONE ? -1 : m.index();
        }
    }

    /** Translates through the MttWalker; the callback gets the chunks, or one failed response. */
    void translate(long mkey, long va, long length, int access, long pd, long qpn, Consumer<List<XlateRsp>> done) {
        int tag = nextTag;
        nextTag = (nextTag + 1) & 0xFFFF;
        track(new Translation(tag, done));
        queue.add(new XlateReq(mkey & 0xFFFFFFFFL, va, length, access, pd, qpn & 0xFFFFFF, tag));
        pump();
    }

    /** Sends queued translations to the walker, loading an mkey context first when the walker does not hold it. */
    private void pump() {
        while (!queue.isEmpty() && !loading) {
            XlateReq r = queue.peek();
            long own = r.mkey() >>> 8;
            long[] need = needed(own);
            int[] slots;
            int used = 0;
            long missing = -1;
            if (need == null) { // a direct key: its own context, in its one entry
                int s = walkerSlot(own);
                slots = oneSlot[s] != null ? oneSlot[s] : (oneSlot[s] = new int[]{s});
                used = 1;
                if (walkerIndex[s] != own && mkeys.get(own) != null) missing = own; // no lookup on a hit
            } else {
                slots = new int[need.length];
                // the first context the walker lacks, unless its entry holds another this translation needs
                for (long n : need) {
                    int s = walkerSlot(n);
                    if (holds(slots, used, s)) continue;
                    slots[used++] = s;
                    if (missing < 0 && walkerIndex[s] != n && mkeys.get(n) != null) missing = n;
                }
            }
            long index = missing;
            int slot = walkerSlot(index);
            if (index >= 0) {
                // a miss: the entry's current key must have no translation in flight before it is replaced
                if (walkerBusy[slot] > 0) return;
                loading = true;
                fw.stats.inc(FirmwareStat.MKEY_CONTEXT_MISSES);
                Runnable load = () -> {
                    MkeyContext now = mkeys.get(index);
                    if (now != null) {
                        fw.adapter.mkeyWrite(now);
                        walkerIndex[slot] = index;
                    }
                    loading = false;
                    pump();
                };
                if (mkcAddr < 0) load.run();
                else fw.adapter.port().dmaRead(mkcAddr + index * MKC_BYTES, MKC_BYTES, x -> load.run());
                return;
            }
            queue.poll();
            for (int i = 0; i < used; i++) walkerBusy[slots[i]]++;
            tracked((int) r.tag()).slots = used == slots.length ? slots : Arrays.copyOf(slots, used);
            fw.adapter.translate(r);
        }
    }

    /**
     * The contexts a translation under mkey {@code index} needs in the walker: its own, and for an
     * indirect mkey those of the keys its layout names (pieces that share a walker entry with an
     * earlier one are not loaded: the walker reports them BAD_INDEX).
     */
    private long[] needed(long index) {
        Indirect ind = indirects.isEmpty() ? null : indirects.get(index); // no boxed lookup without indirect keys
        if (ind == null || ind.pieces.isEmpty()) return null;
        return LongStream.concat(LongStream.of(index),
                ind.pieces.stream().mapToLong(Long::longValue)).distinct().toArray();
    }

    private static boolean holds(int[] slots, int used, int s) {
        for (int i = 0; i < used; i++) if (slots[i] == s) return true;
        return false;
    }

    /**
     * Keeps {@code t} until its last response, by tag (in place of one of its tag that never finished, as a map would).
     */
    private void track(Translation t) {
        Translation o;
        while ((o = inFlight[t.tag & (inFlight.length - 1)]) != null && o.tag != t.tag) {
            Translation[] bigger = new Translation[2 * inFlight.length];
            for (Translation x : inFlight) if (x != null) bigger[x.tag & (bigger.length - 1)] = x;
            inFlight = bigger;
        }
        inFlight[t.tag & (inFlight.length - 1)] = t;
    }

    /** The translation in flight under {@code tag}, or null. */
    private Translation tracked(int tag) {
        Translation t = inFlight[tag & (inFlight.length - 1)];
        return t != null && t.tag == tag ? t : null;
    }

    /** A response from the MttWalker: the last one of a translation hands them all over. */
    void onResponse(XlateRsp r) {
        Translation t = tracked((int) r.tag());
        if (t == null) return;
        t.parts.add(r);
        if (r.last() != 0) {
            inFlight[t.tag & (inFlight.length - 1)] = null;
            for (int s : t.slots) walkerBusy[s]--;
            t.done.accept(t.parts);
            pump();
        }
    }
}
