package nicsim.firmware;

import java.util.HashMap;
import java.util.Map;
import nicsim.abi.Cmd;
import nicsim.abi.Vendor;
import nicsim.adapter.MttPorts.MkeyContext;
import nicsim.adapter.MttPorts;

/**
 * Memory windows: ALLOC_MW and DEALLOC_MW, a bind (the checks of rxe's) and an invalidation, and which MR each
 * window is bound to. Their contexts live in {@link MemoryKeys}' table with every other key's.
 */
final class MemoryWindows {
    private final MemoryKeys keys;

    /** A memory window (by its mkey index): type 1 or 2, and the index of the MR it is bound to (-1: none). */
    private static final class Window {
        final int type;
        long boundTo = -1;

        Window(int type) { this.type = type; }
    }

    private final Map<Long, Window> windows = new HashMap<>();

    MemoryWindows(MemoryKeys keys) { this.keys = keys; }

    /** Whether mkey index {@code index} is a window. */
    boolean has(long index) { return windows.containsKey(index); }

    /** Whether some window is bound to the MR of mkey index {@code mrIndex}. */
    boolean boundTo(long mrIndex) {
        for (Window w : windows.values()) if (w.boundTo == mrIndex) return true;
        return false;
    }

    /** ALLOC_MW (its PD checked): returns the key. */
    long alloc(Cmd.AllocMw a) {
        if (a.type() != 1 && a.type() != 2) throw new CommandRefused(Cmd.Syndrome.BAD_MW_TYPE, a.type());
        long index = keys.mkeys.free();
        int key = keys.nextKey();
        // type 1 is usable (VALID) at once, with no range until bound; type 2 starts FREE (rxe_alloc_mw)
        MkeyContext m = new MkeyContext(index, a.type() == 1 ? MttPorts.STATE_VALID : MttPorts.STATE_FREE, key, a.pd(),
                0, 0, 0, 0, 0, 12, 0, 0);
        keys.mkeys.put(index, m);
        windows.put(index, new Window((int) a.type()));
        keys.cache.publish(m);
        return index << 8 | key;
    }

    /** DEALLOC_MW: the window of {@code key} goes; its context, destroyed, is published. */
    void dealloc(long key) {
        if (!keys.mkeys.has(key >>> 8) || !windows.containsKey(key >>> 8))
            throw new CommandRefused(Cmd.Syndrome.UNKNOWN_MKEY, key);
        windows.get(key >>> 8).boundTo = -1;
        keys.mkeys.remove(key >>> 8);
        windows.remove(key >>> 8);
        keys.cache.publish(MemoryKeys.destroyed(key >>> 8));
    }

    /**
     * Binds window {@code mwKey} (index, and the new key byte in its low 8 bits) to {@code length} bytes at
     * {@code addr} of MR {@code mrKey} for {@code qp}, with {@code access}: the checks of rxe's bind
     * (docs/sources.md#rxe-keys-and-memory-windows). Returns 0, or the vendor syndrome of the failed check
     * (MW_BIND_ERR).
     */
    int bind(Qp qp, long mwKey, long mrKey, long addr, long length, int access) {
        Window w = windows.get(mwKey >>> 8);
        MkeyContext mw = keys.mkeys.get(mwKey >>> 8), mr = keys.mkeys.get(mrKey >>> 8);
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
        keys.mkeys.put(mw.index(), bound);
        w.boundTo = mr.index();
        keys.cache.publish(bound);
        return 0;
    }

    /**
     * LOCAL_INV or SEND_WITH_INV by {@code qp} of the key whose context is {@code m} (its key checked, no
     * indirect mkey): only a bound type-2 window (nicsim's MRs are not fast-registered). Returns 0 or a vendor
     * syndrome.
     */
    int invalidate(Qp qp, MkeyContext m) {
        Window w = windows.get(m.index());
        if (w == null) return Vendor.INV_NOT_WINDOW;
        if (w.type == 1) return Vendor.INV_TYPE1;
        if (m.state() != MttPorts.STATE_VALID || m.pd() != qp.pd) return Vendor.INV_UNKNOWN;
        MkeyContext free = new MkeyContext(m.index(), MttPorts.STATE_FREE, m.key(), m.pd(), 0, 0, 0, 0, 0, 12, 0, 0);
        keys.mkeys.put(m.index(), free);
        w.boundTo = -1;
        keys.cache.publish(free);
        return 0;
    }
}
