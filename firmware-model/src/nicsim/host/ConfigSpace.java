package nicsim.host;

/**
 * A PCI function's 256-byte configuration header (type 0): IDs, the command register, up to three
 * 64-bit memory BARs, and an MSI-X capability. BARs behave as hardware does for sizing: writing all
 * ones and reading back gives the size mask; the low four bits are read-only type flags.
 */
public final class ConfigSpace {
    public static final int VENDOR_ID = 0x00, DEVICE_ID = 0x02, COMMAND = 0x04, STATUS = 0x06,
            CLASS_REV = 0x08, BAR0 = 0x10, CAP_PTR = 0x34, MSIX_CAP = 0x40;
    public static final int CMD_MEMORY_SPACE = 1 << 1, CMD_BUS_MASTER = 1 << 2;
    public static final int CAP_ID_MSIX = 0x11;
    public static final int MSIX_ENABLE = 1 << 15, MSIX_FUNCTION_MASK = 1 << 14;
    private static final int BAR_FLAGS_64BIT_PREFETCH = 0b1100;
    /** BAR0's low bits as a 32-bit, non-prefetchable memory BAR: all zero. */
    private static final int BAR_FLAGS_32BIT = 0b0000;

    private final int vendorId;
    private final int deviceId;
    private final int classRev;
    private final long[] barSize = new long[3];
    private final long[] barBase = new long[3];
    private int command;
    private final int msixVectors;
    private final int msixTableBar;
    private final long msixTableOffset;
    private int msixControl;
    /**
     * BAR0 decodes 32 bits and is not prefetchable ({@link #bar0As32Bit}): what a bus that cannot place
     * a 64-bit BAR offers (QEMU's remote PCI proxy); the dword after it is then an absent BAR1.
     */
    private boolean bar0Is32Bit;

    /**
     * @param barSizes sizes of 64-bit BARs 0, 1, 2 (0 = absent); each a power of two >= 4 KiB
     * @param msixVectors number of MSI-X vectors (0 = no MSI-X capability)
     */
    public ConfigSpace(int vendorId, int deviceId, int classRev, long[] barSizes,
                       int msixVectors, int msixTableBar, long msixTableOffset) {
        this.vendorId = vendorId;
        this.deviceId = deviceId;
        this.classRev = classRev;
        if (barSizes.length > 3) throw new IllegalArgumentException("at most three 64-bit BARs, got " + barSizes.length);
        for (int i = 0; i < barSizes.length; i++) {
            long s = barSizes[i];
            if (s != 0 && (s < 4096 || Long.bitCount(s) != 1))
                throw new IllegalArgumentException("BAR" + i + " size " + s + " must be a power of two >= 4096");
            barSize[i] = s;
        }
        if (msixVectors < 0 || msixVectors > 2048) throw new IllegalArgumentException("MSI-X vectors " + msixVectors + " must be 0..2048");
        if (msixVectors > 0 && (msixTableBar < 0 || msixTableBar > 2 || barSize[msixTableBar] == 0))
            throw new IllegalArgumentException("MSI-X table BAR " + msixTableBar + " does not exist");
        this.msixVectors = msixVectors;
        this.msixTableBar = msixTableBar;
        this.msixTableOffset = msixTableOffset;
    }

    /**
     * Makes BAR0 a 32-bit non-prefetchable BAR ({@code on}) or the 64-bit prefetchable one again; its base
     * is cleared (the driver assigns it anew). Refused if BAR0 is more than 2 GiB or a BAR1 exists
     * (its dword would be BAR0's upper half).
     */
    public void bar0As32Bit(boolean on) {
        if (on && (barSize[0] > 1L << 31 || barSize[1] != 0))
            throw new IllegalArgumentException("BAR0 of 0x" + Long.toHexString(barSize[0]) + " bytes"
                    + (barSize[1] != 0 ? " beside a BAR1" : "") + " cannot be a 32-bit BAR");
        bar0Is32Bit = on;
        barBase[0] = 0;
    }

    public boolean bar0Is32Bit() { return bar0Is32Bit; }

    public int barCount() { return 3; }
    public long barSize(int bar) { return barSize[bar]; }
    public long barBase(int bar) { return barBase[bar]; }
    public boolean memorySpaceEnabled() { return (command & CMD_MEMORY_SPACE) != 0; }
    public boolean busMasterEnabled() { return (command & CMD_BUS_MASTER) != 0; }
    public int msixVectors() { return msixVectors; }
    public int msixTableBar() { return msixTableBar; }
    public long msixTableOffset() { return msixTableOffset; }
    public boolean msixEnabled() { return msixVectors > 0 && (msixControl & MSIX_ENABLE) != 0; }
    public boolean msixFunctionMasked() { return (msixControl & MSIX_FUNCTION_MASK) != 0; }

    /** Which BAR decodes {@code addr} (memory space enabled, BAR assigned), or -1. */
    public int decode(long addr) {
        if (!memorySpaceEnabled()) return -1;
        for (int i = 0; i < 3; i++)
            if (barSize[i] != 0 && barBase[i] != 0 && addr >= barBase[i] && addr - barBase[i] < barSize[i]) return i;
        return -1;
    }

    public int read32(int offset) {
        checkOffset(offset);
        switch (offset) {
            case VENDOR_ID: return vendorId | deviceId << 16;
            case COMMAND: return command | (msixVectors > 0 ? 1 << 20 : 0); // status bit 4: capability list present
            case CLASS_REV: return classRev;
            case CAP_PTR: return msixVectors > 0 ? MSIX_CAP : 0;
            case MSIX_CAP: return msixVectors == 0 ? 0 : CAP_ID_MSIX | ((msixControl | (msixVectors - 1)) << 16);
            case MSIX_CAP + 4: return msixVectors == 0 ? 0 : (int) msixTableOffset | msixTableBar * 2;
            default:
                if (offset >= BAR0 && offset < BAR0 + 24) {
                    int slot = (offset - BAR0) / 4, bar = slot / 2;
                    if (barSize[bar] == 0) return 0;
                    if (bar == 0 && bar0Is32Bit) return slot == 0 ? (int) barBase[0] | BAR_FLAGS_32BIT : 0;
                    return slot % 2 == 0 ? (int) (barBase[bar] | BAR_FLAGS_64BIT_PREFETCH) : (int) (barBase[bar] >>> 32);
                }
                return 0;
        }
    }

    public void write32(int offset, int value) {
        checkOffset(offset);
        if (offset == COMMAND) { command = value & (CMD_MEMORY_SPACE | CMD_BUS_MASTER); return; }
        if (offset == MSIX_CAP && msixVectors > 0) { msixControl = (value >>> 16) & (MSIX_ENABLE | MSIX_FUNCTION_MASK); return; }
        if (offset >= BAR0 && offset < BAR0 + 24) {
            int slot = (offset - BAR0) / 4, bar = slot / 2;
            if (barSize[bar] == 0) return;
            if (bar == 0 && bar0Is32Bit) { // one dword: the next one is an absent BAR1, reading 0
                if (slot == 0) barBase[0] = Integer.toUnsignedLong(value) & ~(barSize[0] - 1) & ~0xFL;
                return;
            }
            long mask = ~(barSize[bar] - 1);
            long v = Integer.toUnsignedLong(value);
            barBase[bar] = slot % 2 == 0 ? ((barBase[bar] & 0xFFFF_FFFF_0000_0000L) | v) & mask & ~0xFL
                                         : ((barBase[bar] & 0xFFFF_FFFFL) | (v << 32)) & mask;
        }
        // IDs, class and capability pointers are read-only
    }

    private static void checkOffset(int offset) {
        if (offset < 0 || offset > 252 || (offset & 3) != 0)
            throw new IllegalArgumentException("config space offset 0x" + Integer.toHexString(offset) + " must be a dword in 0..0xfc");
    }
}
