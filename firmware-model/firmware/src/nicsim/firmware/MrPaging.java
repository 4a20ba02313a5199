package nicsim.firmware;

import java.util.HashMap;
import java.util.Map;
import nicsim.abi.Cmd;
import nicsim.abi.MttEntry;
import nicsim.adapter.MttPorts.MkeyContext;
import nicsim.adapter.MttPorts;
import nicsim.host.PciPort;

/**
 * On-demand paging of MRs: ODP_PREFETCH (pages brought in ahead), ODP_INVALIDATE (an MR moved to fresh MTT entries
 * with the range's pages not present), page faults counted to the MR whose entries hold them, and each MR's
 * {@link MemoryKeys.Paging} counts.
 */
final class MrPaging {
    private final Firmware fw;
    private final MemoryKeys keys;
    /** Each MR's {@link MemoryKeys.Paging} by mkey index; an MR paging never touched has none. */
    private final Map<Long, MemoryKeys.Paging> paging = new HashMap<>();

    MrPaging(Firmware fw, MemoryKeys keys) {
        this.fw = fw;
        this.keys = keys;
    }

    /** MR {@code index}'s paging counts. */
    MemoryKeys.Paging of(long index) { return paging.getOrDefault(index, MemoryKeys.Paging.NONE); }

    /** MR {@code index} is destroyed: its counts go. */
    void forget(long index) { paging.remove(index); }

    private void counted(long index, long faults, long invalidations, long prefetches) {
        MemoryKeys.Paging p = of(index);
        paging.put(index, new MemoryKeys.Paging(p.faults() + faults, p.invalidations() + invalidations,
                p.prefetches() + prefetches));
    }

    /**
     * A page not present at MTT index {@code mttIndex}: counted to the MR whose entries hold it, then the host
     * brings the pages in ({@link MttFill#pageFault}) and {@code done} runs.
     */
    void pageFault(long mttIndex, long pages, Runnable done) {
        long base = fw.mttFill.space.runStart(mttIndex);
        for (MkeyContext m : keys.regions())
            if (base >= 0 && m.mttBase() == base) {
                counted(m.index(), 1, 0, 0);
                break;
            }
        fw.mttFill.pageFault(mttIndex, pages, done);
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
            keys.mkeys.put(m.index(), moved);
            fw.stats.inc(FirmwareStat.ODP_INVALIDATIONS);
            counted(m.index(), 0, 1, 0);
            keys.cache.publish(moved);
            return;
        }
        long base = mtt.take(pages);
        if (base < 0) throw new CommandRefused(Cmd.Syndrome.OUT_OF_MTT, pages);
        MkeyContext moved = new MkeyContext(m.index(), m.state(), m.key(), m.pd(), m.qpn(), m.boundQp(), m.start(),
                m.length(), m.access(), m.pageShift(), m.pageOffset(), base);
        keys.mkeys.put(m.index(), moved);
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
            port.dmaWrite(mtt.entryAddr(base), t, w -> keys.cache.publish(moved));
        });
    }

    /** The MR an ODP command names (its key, PD, and a range inside it). */
    private MkeyContext odpMr(Cmd.OdpPrefetch c) {
        MkeyContext m = keys.mkeys.get(c.lkey() >>> 8);
        if (m == null || m.key() != (c.lkey() & 0xff) || keys.windows.has(c.lkey() >>> 8))
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
}
