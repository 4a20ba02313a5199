package nicsim.firmware;

import java.util.ArrayList;
import java.util.BitSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import nicsim.abi.Cmd;
import nicsim.abi.Vendor;
import nicsim.abi.WqeFormat;
import nicsim.adapter.MttPorts.MkeyContext;
import nicsim.adapter.MttPorts;

/**
 * Indirect mkeys (CREATE_INDIRECT_MKEY, then a layout UMR and LOCAL_INV in turn): each one's run of the MttWalker's
 * KLM table, and the mkeys its layout names, which a translation through it needs in the walker ({@link MkeyCache}).
 * Their contexts live in {@link MemoryKeys}' table with every other key's.
 */
final class IndirectMkeys {
    private final Firmware fw;
    private final MemoryKeys keys;

    /** An indirect mkey (by its mkey index): its run of the walker's KLM table, and the mkeys its layout names. */
    private static final class Indirect {
        final long klmBase;
        final int maxEntries;
        List<Long> pieces = List.of();

        Indirect(long klmBase, int maxEntries) { this.klmBase = klmBase; this.maxEntries = maxEntries; }
    }

    private final Map<Long, Indirect> indirects = new HashMap<>();
    /** The walker's KLM table entries in use. */
    private final BitSet klmUsed = new BitSet();

    IndirectMkeys(Firmware fw, MemoryKeys keys) {
        this.fw = fw;
        this.keys = keys;
    }

    /** Whether mkey index {@code index} is an indirect mkey. */
    boolean has(long index) { return indirects.containsKey(index); }

    /** The mkey indexes indirect mkey {@code index}'s layout names, or null when it is no indirect mkey. */
    List<Long> pieces(long index) {
        Indirect ind = indirects.isEmpty() ? null : indirects.get(index); // no boxed lookup without indirect keys
        return ind == null ? null : ind.pieces;
    }

    /** Mkey index {@code index} is destroyed: its KLM entries go back; whether it was an indirect mkey. */
    boolean release(long index) {
        Indirect ind = indirects.remove(index);
        if (ind != null) klmUsed.clear((int) ind.klmBase, (int) ind.klmBase + ind.maxEntries);
        return ind != null;
    }

    /**
     * CREATE_INDIRECT_MKEY: an mkey of up to {@code maxEntries} KLM entries, their run of the
     * walker's KLM table taken now (first fit); it starts FREE, with no layout. Returns the key.
     */
    long create(Cmd.CreateIndirectMkey c) {
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
        long index = keys.mkeys.free();
        klmUsed.set(base, base + (int) c.maxEntries());
        MkeyContext m = MkeyContext.indirect(index, MttPorts.STATE_FREE, keys.nextKey(), c.pd(), 0, 0, base, 0, 1);
        keys.mkeys.put(index, m);
        indirects.put(index, new Indirect(base, (int) c.maxEntries()));
        keys.cache.publish(m);
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
        MkeyContext m = keys.mkeys.get(key >>> 8);
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
        keys.mkeys.put(m.index(), valid);
        keys.cache.publish(valid); // the adapter writes it after the entries
        return 0;
    }

    /**
     * LOCAL_INV or SEND_WITH_INV by {@code qp} of indirect mkey {@code m} (its key checked): FREE again, for its
     * next layout. Returns 0 or a vendor syndrome.
     */
    int invalidate(Qp qp, MkeyContext m) {
        if (m.state() != MttPorts.STATE_VALID || m.pd() != qp.pd) return Vendor.INV_UNKNOWN;
        MkeyContext free = MkeyContext.indirect(m.index(), MttPorts.STATE_FREE, m.key(), m.pd(), 0, 0, m.mttBase(),
                0, 1);
        keys.mkeys.put(m.index(), free);
        keys.cache.publish(free);
        return 0;
    }
}
