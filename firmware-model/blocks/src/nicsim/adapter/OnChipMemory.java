package nicsim.adapter;

import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import nicsim.host.FreeRanges;
import nicsim.profile.Profile;
import nicsim.profile.Require;

/**
 * The adapter's device memory (ibv_alloc_dm): on-chip SRAM a program may allocate, fill through a
 * window of BAR0 (ibv_memcpy_to_dm, _from_dm: MMIO), register (ibv_reg_dm_mr) and reach by RDMA.
 * Its bytes sit at an aperture of physical addresses no host memory has ({@link #BASE} on): a DMA
 * the adapter's own engines address there is served here, at SRAM timing, and never crosses PCIe.
 */
public final class OnChipMemory {
    /** The physical address of device memory byte 0: above any host memory, so no DMA meant for the host lands here. */
    public static final long BASE = 1L << 52;

    private final int size;
    /** Made when first written (null: every byte reads zero): most adapters never use their device memory. */
    private byte[] bytes;
    private final FreeRanges free;
    private final long latencyCycles, bytesPerCycle, periodPicos;
    private final Map<Long, Long> allocated = new HashMap<>();

    /**
     * Device memory's parameters, from the profile's {@code dm.*} (none: {@code dm.size} 0 or absent): its size, the
     * SRAM's access latency, the bytes the datapath moves a cycle ({@code core.datapath.width}), and where its window
     * lies in BAR0 ({@code dm.bar.offset}; 0 when the profile has none, as the device reports it).
     */
    public record Config(int sizeBytes, long accessLatencyCycles, int bytesPerCycle, long barOffsetBytes) {
        public Config {
            Require.atLeast("dm.size", sizeBytes, 0, "B");
            Require.atLeast("dm.access.latency", accessLatencyCycles, 0, "cycles");
            Require.atLeast("core.datapath.width", bytesPerCycle, 1, "B");
            Require.atLeast("dm.bar.offset", barOffsetBytes, 0, "B");
        }

        public static Config from(Profile p) {
            int size = p.has("dm.size") ? p.bytesInt("dm.size") : 0;
            // device memory needs its window: the offset is required only when there is some
            long offset = size > 0 || p.has("dm.bar.offset") ? p.bytes("dm.bar.offset") : 0;
            long latency = size == 0 ? 0 : p.cycles("dm.access.latency");
            return new Config(size, latency, p.bits("core.datapath.width") / 8, offset);
        }
    }

    OnChipMemory(Config cfg, long periodPicos) {
        this.size = cfg.sizeBytes();
        this.free = new FreeRanges(cfg.sizeBytes());
        this.latencyCycles = cfg.accessLatencyCycles();
        this.bytesPerCycle = cfg.bytesPerCycle();
        this.periodPicos = periodPicos;
    }

    /** Bytes of device memory (max_dm_size); 0: none. */
    public long size() { return size; }

    /** Whether {@code [pa, pa + length)} lies in device memory. */
    public boolean holds(long pa, long length) {
        return pa >= BASE && length >= 0 && pa - BASE <= size - length;
    }

    /** Picoseconds an access of {@code length} bytes takes: the SRAM's latency, then the datapath's width per cycle. */
    public long accessPicos(int length) {
        return (latencyCycles + (length + bytesPerCycle - 1) / bytesPerCycle) * periodPicos;
    }

    /** Allocates {@code length} bytes aligned to 2^{@code logAlign}: their offset, or -1 when there is no room. */
    public long allocate(long length, int logAlign) {
        long at = free.takeAligned((length + 3) & -4, 1L << Math.max(2, logAlign)); // reached 4 bytes at a time
        if (at >= 0) allocated.put(at, (length + 3) & -4);
        return at;
    }

    /** Gives back the allocation at {@code offset}; false if there is none there. */
    public boolean release(long offset) {
        Long length = allocated.remove(offset);
        if (length == null) return false;
        if (bytes != null) Arrays.fill(bytes, (int) offset, (int) (offset + length), (byte) 0);
        free.give(offset, offset + length);
        return true;
    }

    /** The length of the allocation at {@code offset}, or -1. */
    /** Allocations not released. */
    public int allocations() { return allocated.size(); }

    public long allocationAt(long offset) { return allocated.getOrDefault(offset, -1L); }

    public byte[] read(long offset, int length) {
        if (bytes == null) {
            // as the array would: offset within the memory, bytes past its end reading zero
            Objects.checkIndex(offset, size + 1L);
            return new byte[length];
        }
        return Arrays.copyOfRange(bytes, (int) offset, (int) offset + length);
    }

    public void write(long offset, byte[] data) {
        if (bytes == null) bytes = new byte[size];
        System.arraycopy(data, 0, bytes, (int) offset, data.length);
    }
}
