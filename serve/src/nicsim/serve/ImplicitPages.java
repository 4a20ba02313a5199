package nicsim.serve;

import java.util.HashMap;
import java.util.Map;
import java.util.function.LongUnaryOperator;
import nicsim.abi.MttEntry;
import nicsim.driver.Host;

/**
 * The kernel's paging for a user context's implicit on-demand regions (CREATE_IMPLICIT_MKEY made by
 * a C driver): each 2 MB page the adapter touches gets a window of the node's bus addresses backed
 * by the process's memory, if anything of the process is mapped there (a part not mapped reads
 * zeros and takes no writes, counted as DMA refused); the windows go with the region or the process.
 */
final class ImplicitPages {
    private final Host host;
    private final ProcMemory memory;
    /** Each region's windows (by its key): the bus address of each 2 MB page touched, by the page's address. */
    private final Map<Long, Map<Long, Long>> regions = new HashMap<>();

    ImplicitPages(Host host, ProcMemory memory) {
        this.host = host;
        this.memory = memory;
    }

    /** The pager of region {@code key}: a touched page's bus address from its 2 MB-aligned address, or -1. */
    LongUnaryOperator pager(long key) {
        Map<Long, Long> touched = regions.computeIfAbsent(key, k -> new HashMap<>());
        long size = 1L << MttEntry.IMPLICIT_PAGE_SHIFT;
        return va -> touched.computeIfAbsent(va, v -> {
            if (!memory.anyMapped(v, size)) return -1L;
            long pa = host.allocPhysical(size, size);
            host.memory.attach(pa, size, memory.at(v));
            return pa;
        });
    }

    /** Region {@code key} is gone: its windows go. */
    void drop(long key) {
        Map<Long, Long> touched = regions.remove(key);
        if (touched == null) return;
        long size = 1L << MttEntry.IMPLICIT_PAGE_SHIFT;
        for (long pa : touched.values()) {
            if (pa < 0) continue;
            host.memory.detach(pa);
            host.freePhysical(pa, size);
        }
    }

    boolean has(long key) { return regions.containsKey(key); }
}
