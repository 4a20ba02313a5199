package nicsim.serve;

import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import nicsim.driver.Host;
import nicsim.host.HostMemory;
import nicsim.verbs.Errno;
import nicsim.verbs.VerbsException;

/**
 * A PCI face driver's DMA mappings (PCI_DMA_MAP, PCI_DMA_UNMAP): each a window of the node's bus addresses at an I/O
 * virtual address, backed by the driver's memory through /proc/&lt;pid&gt;/mem; the only memory the adapter reaches,
 * as behind an IOMMU. They outlive a function-level reset (the host's IOMMU's, not the function's) and go when the
 * driver does. Runs on the simulator's thread only.
 */
final class PciDmaMaps {
    private final PciDevice device;
    private final ProcMemory memory;
    /** The driver's DMA mappings by I/O virtual address: their lengths. */
    private final TreeMap<Long, Long> maps = new TreeMap<>();
    /** What backs each mapping (by IOVA): attached again to a fresh host's memory after a reset. */
    private final Map<Long, HostMemory.Backing> backings = new HashMap<>();
    /** The IOVAs of mappings at an address the driver chose (MAP_FIXED): not the node's allocator's to free. */
    private final Set<Long> fixed = new HashSet<>();
    /** Writes into a user context's waking mappings (MAP_WAKE) so far. */
    long wakes;

    PciDmaMaps(PciDevice device, ProcMemory memory) {
        this.device = device;
        this.memory = memory;
    }

    /** The mappings the driver holds now. */
    int size() { return maps.size(); }

    /** Whether {@code [addr, addr + length)} lies in one of the driver's DMA mappings. */
    boolean mapped(long addr, long length) {
        var m = maps.floorEntry(addr);
        return m != null && addr - m.getKey() + length <= m.getValue();
    }

    /** PCI_DMA_MAP (address, length, flags, and with MAP_FIXED the IOVA): the mapping's IOVA. */
    long map(Wire.In in) {
        WireLayout.DmaMapRequest q = in.read(WireLayout.DmaMapRequest.class);
        long address = q.address(), length = q.length();
        int flags = q.flags(), known = PciDevice.MAP_WRITABLE | PciDevice.MAP_WAKE | PciDevice.MAP_FIXED;
        if ((flags & ~known) != 0)
            throw new VerbsException(Errno.EINVAL, String.format("PCI_DMA_MAP flags 0x%x: only 0x%x are "
                    + "defined", flags, known));
        long at = (flags & PciDevice.MAP_FIXED) != 0 ? in.read(WireLayout.Iova.class).iova() : -1;
        return map(address, length, (flags & PciDevice.MAP_WRITABLE) != 0, (flags & PciDevice.MAP_WAKE) != 0, at);
    }

    /**
     * Maps the driver's {@code [address, address + length)} for DMA: its I/O virtual address, {@code at}
     * if not negative (MAP_FIXED), else one the node's allocator gives.
     */
    private long map(long address, long length, boolean writable, boolean wake, long at) {
        Host host = device.host;
        int page = host.memory.pageSize();
        if (length <= 0 || address % page != 0 || length % page != 0)
            throw new VerbsException(Errno.EINVAL, String.format("DMA map of 0x%x, 0x%x bytes: page-aligned (%d) "
                    + "address and length", address, length, page));
        memory.checkMapped(address, length, writable);
        if (at >= 0) checkFixed(at, length);
        long iova = at >= 0 ? at : host.allocPinned(length);
        HostMemory.Backing b = memory.at(address);
        HostMemory.Backing backing = !wake ? b : new HostMemory.Backing() {
            @Override public void read(long offset, byte[] dst, int off, int len) { b.read(offset, dst, off, len); }
            @Override public void write(long offset, byte[] src, int off, int len) {
                b.write(offset, src, off, len);
                wakes++;
            }
        };
        host.memory.attach(iova, length, backing);
        maps.put(iova, length);
        backings.put(iova, backing);
        if (at >= 0) fixed.add(iova);
        return iova;
    }

    /**
     * A MAP_FIXED window {@code [iova, iova + length)}: a whole function's (a user context's IOVAs are the
     * kernel's to give), page-aligned, within the node's bus addresses, and clear of the driver's other
     * mappings. It shadows the node's memory allocator, which nothing else uses while a driver holds
     * the whole function (the Java driver is refused the node).
     */
    private void checkFixed(long iova, long length) {
        Host host = device.host;
        if (device.user != null)
            throw new VerbsException(Errno.EPERM, "PCI_DMA_MAP at a fixed IOVA on a user context: its IOVAs are "
                    + "the kernel's to choose");
        if (iova % host.memory.pageSize() != 0 || !host.memory.inBounds(iova, length))
            throw new VerbsException(Errno.EINVAL, String.format("PCI_DMA_MAP iova 0x%x, 0x%x bytes: page-aligned "
                    + "and below the node's 0x%x bytes of bus addresses", iova, length, host.memory.size()));
        var below = maps.floorEntry(iova + length - 1);
        if (below != null && below.getKey() + below.getValue() > iova)
            throw new VerbsException(Errno.EEXIST, String.format("PCI_DMA_MAP iova 0x%x, 0x%x bytes: overlaps the "
                    + "mapping at 0x%x", iova, length, below.getKey()));
    }

    void unmap(long iova) {
        Long length = maps.remove(iova);
        if (length == null)
            throw new VerbsException(Errno.EINVAL, String.format("DMA unmap of iova 0x%x: not mapped", iova));
        backings.remove(iova);
        device.host.memory.detach(iova);
        if (!fixed.remove(iova)) device.host.freePhysical(iova, length);
    }

    /** The function was reset: every mapping again on the node's fresh host, at the same bus addresses. */
    void attachTo(Host fresh) {
        for (var e : maps.entrySet()) {
            if (!fixed.contains(e.getKey())) fresh.memory.reserve(e.getKey(), e.getValue());
            fresh.memory.attach(e.getKey(), e.getValue(), backings.get(e.getKey()));
        }
    }

    /** The driver left: every mapping goes from the host's memory, and the allocator's addresses go back. */
    void release() {
        Host host = device.host;
        for (var e : maps.entrySet()) {
            host.memory.detach(e.getKey());
            if (!fixed.contains(e.getKey())) host.freePhysical(e.getKey(), e.getValue());
        }
        maps.clear();
        fixed.clear();
        backings.clear();
    }
}
