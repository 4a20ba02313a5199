package nicsim.firmware;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import nicsim.abi.AccessBits;
import nicsim.abi.Cmd;
import nicsim.abi.MttEntry;
import nicsim.abi.Vendor;
import nicsim.abi.WqeFormat;
import nicsim.adapter.MttPorts.MkeyContext;
import nicsim.adapter.MttPorts.XlateRsp;
import nicsim.adapter.MttPorts;
import nicsim.host.PciPort;
import nicsim.sim.Recent;

/**
 * Memory keys: the table of every mkey's context (MRs, windows, indirect mkeys), MR registration and its undoing,
 * and the commands and work requests on the other kinds, each handed to its own part: windows
 * ({@link MemoryWindows}), indirect mkeys ({@link IndirectMkeys}), on-demand paging ({@link MrPaging}), and the
 * MttWalker's table of mkey contexts as a cache of all of them, with the translations through it ({@link MkeyCache}).
 */
final class MemoryKeys {
    /** MRs and windows an adapter holds in all; the MttWalker's table holds mtt.mkey.entries of them at a time. */
    static final int MAX_MKEYS = 1 << 18;
    /** Bytes of one mkey context in host memory (ICM), read on a miss. */
    static final int MKC_BYTES = 64;

    private final Firmware fw;
    /** Every mkey's context, by mkey index. */
    final Table<MkeyContext> mkeys = new Table<>(1, MAX_MKEYS, Cmd.Syndrome.OUT_OF_MKEYS, false);
    /** Keys destroyed lately, with when (for the driver sanitizer: a WQE naming one is a use after destroy). */
    private final Recent<Long, Long> destroyedAt = new Recent<>(256);
    private int keySeed = 0x5a;
    /** Where mkey contexts live in host memory (-1: nowhere, the walker's table is all there is). */
    long mkcAddr = -1;
    final MkeyCache cache;
    final MemoryWindows windows = new MemoryWindows(this);
    final IndirectMkeys indirects;
    private final MrPaging paging;

    /** Mkeys alive: regions, windows and indirect mkeys. */
    int live() { return mkeys.all().size(); }

    /** The contexts of the memory regions alive (not windows, not indirect mkeys), for {@link Resources}. */
    List<MkeyContext> regions() {
        List<MkeyContext> out = new ArrayList<>();
        for (MkeyContext m : mkeys.all())
            if (!windows.has(m.index()) && !indirects.has(m.index())) out.add(m);
        return out;
    }

    /**
     * What on-demand paging did to one MR, as mlx5 counts it per MR (`rdma statistic mr`): page faults its
     * accesses took, invalidations of its pages (ODP_INVALIDATE) and prefetches (ODP_PREFETCH).
     */
    record Paging(long faults, long invalidations, long prefetches) {
        static final Paging NONE = new Paging(0, 0, 0);
    }

    /** MR {@code index}'s paging counts. */
    Paging paging(long index) { return paging.of(index); }

    /**
     * A page not present at MTT index {@code mttIndex}: counted to the MR whose entries hold it, then the host
     * brings the pages in ({@link MttFill#pageFault}) and {@code done} runs.
     */
    void pageFault(long mttIndex, long pages, Runnable done) { paging.pageFault(mttIndex, pages, done); }

    MemoryKeys(Firmware fw, int walkerEntries) {
        this.fw = fw;
        this.cache = new MkeyCache(fw, this, walkerEntries);
        this.indirects = new IndirectMkeys(fw, this);
        this.paging = new MrPaging(fw, this);
    }

    long limit() { return MAX_MKEYS; }

    /** Whether some MR or window belongs to {@code pd}. */
    boolean usePd(long pd) { return mkeys.all().stream().anyMatch(m -> m.pd() == pd); }

    /** The next key byte: it changes on every registration. */
    int nextKey() { return keySeed = (keySeed * 37 + 11) & 0xff; }

    // ------------------------------------------------------------------ MR commands

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
        cache.publish(m);
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
        if (m == null || m.key() != (r.mkey() & 0xff) || m.state() != MttPorts.STATE_VALID || windows.has(index)
                || indirects.has(index))
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
        cache.publish(m);
    }

    /**
     * ODP_PREFETCH (ibv_advise_mr): the range's pages brought in ahead ({@link MrPaging#prefetch}); {@code in} runs
     * once they are.
     */
    void prefetch(Cmd.OdpPrefetch c, Runnable in) { paging.prefetch(c, in); }

    /** ODP_INVALIDATE: the OS takes the range's pages away ({@link MrPaging#invalidate}). */
    void invalidate(Cmd.OdpPrefetch c) { paging.invalidate(c); }

    /** ALLOC_MW (its PD checked): returns the key. */
    long allocWindow(Cmd.AllocMw a) { return windows.alloc(a); }

    /** CREATE_INDIRECT_MKEY ({@link IndirectMkeys#create}): returns the key. */
    long createIndirect(Cmd.CreateIndirectMkey c) { return indirects.create(c); }

    /** A layout UMR of indirect mkey {@code key} by {@code qp} ({@link IndirectMkeys#configure}): 0 or a syndrome. */
    int configure(Qp qp, long key, WqeFormat.MkeyLayout l) { return indirects.configure(qp, key, l); }

    void deallocWindow(long key) { windows.dealloc(key); }

    void destroyMr(long key) {
        MkeyContext m = mkeys.get(key >>> 8);
        if (m == null || m.key() != (key & 0xff) || windows.has(key >>> 8))
            throw new CommandRefused(Cmd.Syndrome.UNKNOWN_MKEY, key);
        if (windows.boundTo(key >>> 8)) throw new CommandRefused(Cmd.Syndrome.MR_HAS_WINDOWS, key);
        boolean indirect = indirects.release(key >>> 8);
        MkeyContext gone = mkeys.remove(key >>> 8);
        paging.forget(key >>> 8);
        if (!indirect) fw.mttFill.space.give(gone.mttBase()); // its entries' rows go back
        cache.publish(destroyed(key >>> 8));
        destroyedAt.keep(key & 0xFFFF_FFFFL, fw.sim.now());
    }

    /** When key {@code key} was destroyed, if it was lately and no key of its index is live since; else null. */
    Long destroyedAt(long key) {
        Long at = destroyedAt.get(key & 0xFFFF_FFFFL);
        return at == null || mkeys.has(key >>> 8) ? null : at;
    }

    /** The context that frees mkey index {@code index}'s walker entry (state NONE). */
    static MkeyContext destroyed(long index) {
        return new MkeyContext(index, MttPorts.STATE_NONE, 0, 0, 0, 0, 0, 0, 0, 12, 0, 0);
    }

    // ------------------------------------------------------------------ work requests

    /**
     * Binds window {@code mwKey} to {@code length} bytes at {@code addr} of MR {@code mrKey} for {@code qp}
     * ({@link MemoryWindows#bind}). Returns 0, or the vendor syndrome of the failed check (MW_BIND_ERR).
     */
    int bind(Qp qp, long mwKey, long mrKey, long addr, long length, int access) {
        return windows.bind(qp, mwKey, mrKey, addr, length, access);
    }

    /**
     * LOCAL_INV or SEND_WITH_INV of {@code key} by {@code qp}: an indirect mkey, FREE again for its next layout, or
     * a bound type-2 window (nicsim's MRs are not fast-registered). Returns 0 or a vendor syndrome.
     */
    int invalidate(Qp qp, long key) {
        MkeyContext m = mkeys.get(key >>> 8);
        if (m == null || m.key() != (key & 0xff)) return Vendor.INV_UNKNOWN;
        if (indirects.has(key >>> 8)) return indirects.invalidate(qp, m);
        return windows.invalidate(qp, m);
    }

    // ------------------------------------------------------------------ translations

    /** Translates through the MttWalker ({@link MkeyCache}); the callback gets the chunks, or one failed response. */
    void translate(long mkey, long va, long length, int access, long pd, long qpn, Consumer<List<XlateRsp>> done) {
        cache.translate(mkey, va, length, access, pd, qpn, done);
    }

    /** A response from the MttWalker: the last one of a translation hands them all over. */
    void onResponse(XlateRsp r) { cache.onResponse(r); }
}
