package nicsim.host;

/**
 * A PCI function's 256-byte configuration header (type 0): IDs, the command register, up to three
 * 64-bit memory BARs, an MSI-X capability, and for a PCI Express function ({@link #pcie}) the PCI
 * Express capability after it, whose Device Control register initiates a function-level reset. BARs
 * behave as hardware does for sizing: writing all ones and reading back gives the size mask; the low
 * four bits are read-only type flags.
 */
public final class ConfigSpace {
    public static final int VENDOR_ID = 0x00, DEVICE_ID = 0x02, COMMAND = 0x04, STATUS = 0x06,
            CLASS_REV = 0x08, BAR0 = 0x10, CAP_PTR = 0x34, MSIX_CAP = 0x40;
    public static final int CMD_MEMORY_SPACE = 1 << 1, CMD_BUS_MASTER = 1 << 2;
    public static final int CAP_ID_MSIX = 0x11;
    public static final int MSIX_ENABLE = 1 << 15, MSIX_FUNCTION_MASK = 1 << 14;
    /** The PCI Express capability (PCIe r4.0 sec. 7.5.3), version 2, of an endpoint: where it is, its registers. */
    public static final int PCIE_CAP = 0x50, CAP_ID_PCIE = 0x10, PCIE_DEVCAP = PCIE_CAP + 0x4,
            PCIE_DEVCTL = PCIE_CAP + 0x8, PCIE_LNKCAP = PCIE_CAP + 0xc, PCIE_LNKCTL = PCIE_CAP + 0x10,
            PCIE_DEVCTL2 = PCIE_CAP + 0x28, PCIE_LNKCTL2 = PCIE_CAP + 0x30, PCIE_CAP_END = PCIE_CAP + 0x3c;
    /** Device Capabilities: Function Level Reset capable; Device Control: Initiate Function Level Reset. */
    public static final int DEVCAP_FLR = 1 << 28, DEVCTL_INITIATE_FLR = 1 << 15;
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
    /** PCIe only: Device Capabilities, Link Capabilities (= Link Status's speed and width), else 0. */
    private int devCap, linkCap;
    /** What the driver wrote to Device Control (less Initiate FLR, which reads 0), Link Control, and their 2s. */
    private int devCtl, linkCtl, devCtl2, linkCtl2;
    /** Told when the driver writes Initiate FLR (null: nobody resets this function, the bit does nothing). */
    private Runnable onFunctionReset;

    /**
     * @param barSizes sizes of 64-bit BARs 0, 1, 2 (0 = absent); each a power of two >= 4 KiB
     * @param msixVectors number of MSI-X vectors (0 = no MSI-X capability)
     */
    public ConfigSpace(int vendorId, int deviceId, int classRev, long[] barSizes,
                       int msixVectors, int msixTableBar, long msixTableOffset) {
        this.vendorId = vendorId;
        this.deviceId = deviceId;
        this.classRev = classRev;
        if (barSizes.length > 3)
            throw new IllegalArgumentException("at most three 64-bit BARs, got " + barSizes.length);
        for (int i = 0; i < barSizes.length; i++) {
            long s = barSizes[i];
            if (s != 0 && (s < 4096 || Long.bitCount(s) != 1))
                throw new IllegalArgumentException("BAR" + i + " size " + s + " must be a power of two >= 4096");
            barSize[i] = s;
        }
        if (msixVectors < 0 || msixVectors > 2048)
            throw new IllegalArgumentException("MSI-X vectors " + msixVectors + " must be 0..2048");
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

    /**
     * Makes the function a PCI Express endpoint: a PCI Express capability at {@link #PCIE_CAP}, after
     * MSI-X, saying FLR capable, a largest payload of {@code 128 << mpsCode} bytes and a link of
     * {@code speed} (1: 2.5 GT/s .. 5: 32 GT/s) and {@code width} lanes, trained at both.
     */
    public void pcie(int speed, int width, int mpsCode) {
        if (msixVectors == 0) throw new IllegalArgumentException("a PCIe capability here follows MSI-X's: none");
        if (speed < 1 || speed > 5 || width < 1 || width > 32 || mpsCode < 0 || mpsCode > 5)
            throw new IllegalArgumentException("PCIe link speed " + speed + " (1..5), width " + width + " (1..32), "
                    + "payload code " + mpsCode + " (0..5)");
        devCap = DEVCAP_FLR | mpsCode;
        linkCap = speed | width << 4;
    }

    public boolean isPcie() { return devCap != 0; }

    /** {@code reset} runs when the driver writes Initiate Function Level Reset (after the write is taken). */
    public void onFunctionReset(Runnable reset) { this.onFunctionReset = reset; }

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
            case MSIX_CAP: return msixVectors == 0 ? 0 : CAP_ID_MSIX | (isPcie() ? PCIE_CAP << 8 : 0)
                    | ((msixControl | (msixVectors - 1)) << 16);
            case MSIX_CAP + 4: return msixVectors == 0 ? 0 : (int) msixTableOffset | msixTableBar * 2;
            default:
                if (isPcie() && offset >= PCIE_CAP && offset < PCIE_CAP_END) return pcieRead(offset);
                if (offset >= BAR0 && offset < BAR0 + 24) {
                    int slot = (offset - BAR0) / 4, bar = slot / 2;
                    if (barSize[bar] == 0) return 0;
                    if (bar == 0 && bar0Is32Bit) return slot == 0 ? (int) barBase[0] | BAR_FLAGS_32BIT : 0;
                    if (slot % 2 == 0) return (int) (barBase[bar] | BAR_FLAGS_64BIT_PREFETCH);
                    return (int) (barBase[bar] >>> 32);
                }
                return 0;
        }
    }

    public void write32(int offset, int value) {
        checkOffset(offset);
        if (offset == COMMAND) { command = value & (CMD_MEMORY_SPACE | CMD_BUS_MASTER); return; }
        if (offset == MSIX_CAP && msixVectors > 0) {
            msixControl = (value >>> 16) & (MSIX_ENABLE | MSIX_FUNCTION_MASK);
            return;
        }
        if (isPcie() && offset >= PCIE_CAP && offset < PCIE_CAP_END) { pcieWrite(offset, value); return; }
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

    /**
     * The PCI Express capability's dwords: version 2, an endpoint (type 0); no slot or root registers.
     * Device Status's Transactions Pending (bit 5) reads 0: the model's reset drops whatever DMA was
     * under way, so nothing is worth waiting for.
     */
    private int pcieRead(int offset) {
        return switch (offset) {
            case PCIE_CAP -> CAP_ID_PCIE | 2 << 16;
            case PCIE_DEVCAP -> devCap;
            case PCIE_DEVCTL -> devCtl;
            case PCIE_LNKCAP -> linkCap;
            case PCIE_LNKCTL -> linkCtl | (linkCap & 0x3ff) << 16; // Link Status: the speed and width trained
            case PCIE_DEVCTL2 -> devCtl2;
            case PCIE_LNKCTL2 -> linkCtl2;
            default -> 0;
        };
    }

    private void pcieWrite(int offset, int value) {
        switch (offset) {
            case PCIE_DEVCTL -> { // the Status half is write-1-to-clear bits that never set here
                devCtl = value & 0x7fff;
                if ((value & DEVCTL_INITIATE_FLR) != 0 && onFunctionReset != null) onFunctionReset.run();
            }
            case PCIE_LNKCTL -> linkCtl = value & 0xffff;
            case PCIE_DEVCTL2 -> devCtl2 = value & 0xffff;
            case PCIE_LNKCTL2 -> linkCtl2 = value & 0xffff;
            default -> { } // capabilities are read-only
        }
    }

    private static void checkOffset(int offset) {
        if (offset < 0 || offset > 252 || (offset & 3) != 0)
            throw new IllegalArgumentException("config space offset 0x" + Integer.toHexString(offset)
                    + " must be a dword in 0..0xfc");
    }
}
