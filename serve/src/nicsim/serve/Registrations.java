package nicsim.serve;

import java.util.HashMap;
import java.util.Map;
import java.util.function.LongUnaryOperator;
import nicsim.abi.MttEntry;
import nicsim.driver.Host;
import nicsim.verbs.AccessFlags;
import nicsim.verbs.Errno;
import nicsim.verbs.MemoryRegion;
import nicsim.verbs.ProtectionDomain;
import nicsim.verbs.VerbsException;

/**
 * An attached program's registered memory: the pages under each of its MRs attached to the node's
 * host memory (backed by /proc/&lt;pid&gt;/mem), so the adapter's DMA reads and writes them in
 * place. Each MR has its own window of physical addresses; it goes when the MR goes.
 */
final class Registrations {
    private final Host host;
    /** Each MR's window of physical addresses. */
    private final Map<MemoryRegion, Window> windows = new HashMap<>();
    /** Each implicit on-demand MR's windows, one per 2 MB page the adapter touched, by the page's address. */
    private final Map<MemoryRegion, Map<Long, Window>> pages = new HashMap<>();

    Registrations(Host host) { this.host = host; }

    /**
     * A window over the program's pages under {@code [addr, addr + length)}: its physical base, and the translation
     * into it.
     */
    private record Window(long pa, long bytes, LongUnaryOperator translate) {}

    /** The window's range is simulated memory no longer, and its physical addresses go back. */
    private void drop(Window w) {
        host.memory.detach(w.pa());
        host.freePhysical(w.pa(), w.bytes());
    }

    private Window attach(ProcMemory memory, long addr, long length, int access) {
        if (length <= 0 || addr + length < addr)
            throw new VerbsException(Errno.EINVAL, "reg_mr length " + Long.toUnsignedString(length));
        memory.checkMapped(addr, length, (access & AccessFlags.LOCAL_WRITE) != 0);
        int page = host.memory.pageSize();
        long first = Math.floorDiv(addr, page) * page;
        long bytes = ((addr + length - first) + page - 1) / page * page;
        long pa = host.allocPinned(bytes);
        host.memory.attach(pa, bytes, memory.at(first));
        return new Window(pa, bytes, va -> va >= first && va < first + bytes ? pa + (va - first) : -1);
    }

    /** ibv_reg_mr of {@code length} bytes at {@code addr} of {@code memory}, addressed as {@code iova}. */
    MemoryRegion register(ProcMemory memory, ProtectionDomain pd, long addr, long length, long iova, int access) {
        Window w = attach(memory, addr, length, access);
        try {
            MemoryRegion mr = pd.regMrMapped(addr, length, iova, access, w.translate());
            windows.put(mr, w);
            return mr;
        } catch (RuntimeException e) {
            drop(w);
            throw e;
        }
    }

    /**
     * ibv_reg_mr(pd, NULL, SIZE_MAX, access) with ON_DEMAND: the whole address space. Each 2 MB page
     * the adapter touches gets a window when it faults, if anything of the program is mapped there
     * (a part not mapped reads zeros and takes no writes, counted as DMA the kernel refused).
     */
    MemoryRegion registerImplicit(ProcMemory memory, ProtectionDomain pd, int access) {
        Map<Long, Window> touched = new HashMap<>();
        long size = 1L << MttEntry.IMPLICIT_PAGE_SHIFT;
        MemoryRegion mr = pd.regMrImplicitMapped(access, va -> {
            Window w = touched.get(va);
            if (w == null) {
                if (!memory.anyMapped(va, size)) return -1;
                long pa = host.allocPhysical(size, size);
                host.memory.attach(pa, size, memory.at(va));
                w = new Window(pa, size, x -> -1);
                touched.put(va, w);
            }
            return w.pa();
        });
        pages.put(mr, touched);
        return mr;
    }

    /** ibv_rereg_mr: a new translation gets a window of its own; the old one goes once the adapter took the change. */
    void rereg(ProcMemory memory, MemoryRegion mr, int flags, ProtectionDomain pd, long addr, long length,
               int access) {
        Window old = windows.get(mr);
        if (old == null)
            throw new VerbsException(Errno.EINVAL, "rereg_mr of a region over device memory: IBV_MR_TYPE_MR only");
        if ((flags & MemoryRegion.REREG_CHANGE_TRANSLATION) == 0) { // the same pages: the same window
            mr.reregMapped(flags, pd, addr, length, access, old.translate());
            return;
        }
        Window w = attach(memory, addr, length, (flags & MemoryRegion.REREG_CHANGE_ACCESS) != 0 ? access : mr.access());
        try {
            mr.reregMapped(flags, pd, addr, length, access, w.translate());
        } catch (RuntimeException e) {
            drop(w);
            throw e;
        }
        drop(windows.put(mr, w));
    }

    /** ibv_dereg_mr (of host memory, or of device memory, which has no window). */
    void deregister(MemoryRegion mr) {
        mr.close();
        Window w = windows.remove(mr);
        if (w != null) drop(w);
        Map<Long, Window> touched = pages.remove(mr);
        if (touched != null) touched.values().forEach(this::drop);
    }

    /** The program left: every window goes (its MRs went with its context). */
    void releaseAll() {
        for (Window w : windows.values()) drop(w);
        windows.clear();
        for (Map<Long, Window> touched : pages.values()) touched.values().forEach(this::drop);
        pages.clear();
    }
}
