package nicsim.host;

import static org.junit.jupiter.api.Assertions.*;

import org.junit.jupiter.api.Test;

/** BAR0's two kinds, as a bus's enumeration sizes and places them; the PCI Express capability and its FLR. */
class ConfigSpaceTest {
    private static ConfigSpace space(long bar0) {
        return new ConfigSpace(1, 2, 0, new long[]{bar0, 0, 0}, 4, 0, 0x800);
    }

    /** What a BIOS reads after writing all ones to a BAR dword: its size mask and type bits. */
    private static int sized(ConfigSpace cs, int offset) {
        cs.write32(offset, 0xffffffff);
        return cs.read32(offset);
    }

    @Test
    void bar0Is64BitPrefetchableUnlessMade32Bit() {
        ConfigSpace cs = space(32 << 20);
        assertEquals(0xfe00000c, sized(cs, ConfigSpace.BAR0), "64-bit (0b10 << 1), prefetchable (1 << 3)");
        assertEquals(0xffffffff, sized(cs, ConfigSpace.BAR0 + 4), "the upper half sizes as all ones");
        cs.bar0As32Bit(true);
        assertEquals(0, cs.barBase(0), "the base is the driver's to assign anew");
        assertEquals(0xfe000000, sized(cs, ConfigSpace.BAR0), "32-bit, not prefetchable: low bits 0");
        assertEquals(0, sized(cs, ConfigSpace.BAR0 + 4), "the next dword is an absent BAR1");
        cs.write32(ConfigSpace.BAR0, 0xfc000000);
        cs.write32(ConfigSpace.COMMAND, ConfigSpace.CMD_MEMORY_SPACE);
        assertEquals(0xfc000000L, cs.barBase(0));
        assertEquals(0, cs.decode(0xfc000000L + (32 << 20) - 4));
        assertEquals(-1, cs.decode(0xfc000000L + (32 << 20)));
        cs.bar0As32Bit(false);
        assertEquals(0xfe00000c, sized(cs, ConfigSpace.BAR0), "the usual BAR0 again");
    }

    @Test
    void aBar0Over2GiBCannotBe32Bit() {
        var x = assertThrows(IllegalArgumentException.class, () -> space(4L << 30).bar0As32Bit(true));
        assertTrue(x.getMessage().contains("0x100000000 bytes"), x.getMessage());
    }

    /** What Linux's capability walk and its pcie_flr read and write. */
    @Test
    void aPcieFunctionListsItsCapabilityAfterMsixAndInitiatesFlrFromDeviceControl() {
        ConfigSpace cs = space(32 << 20);
        assertEquals(0, cs.read32(ConfigSpace.MSIX_CAP) >> 8 & 0xff, "conventional PCI: MSI-X is the last capability");
        assertEquals(0, cs.read32(ConfigSpace.PCIE_CAP), "and nothing is there");
        cs.pcie(3, 16, 1); // 8 GT/s x16, 256-byte payloads
        int[] resets = {0};
        cs.onFunctionReset(() -> resets[0]++);
        assertEquals(ConfigSpace.PCIE_CAP, cs.read32(ConfigSpace.MSIX_CAP) >> 8 & 0xff, "MSI-X's next pointer");
        assertEquals(ConfigSpace.CAP_ID_PCIE | 2 << 16, cs.read32(ConfigSpace.PCIE_CAP),
                "version 2, an endpoint, last");
        assertEquals(ConfigSpace.DEVCAP_FLR | 1, cs.read32(ConfigSpace.PCIE_DEVCAP), "FLR capable, MPS 256");
        assertEquals(3 | 16 << 4, cs.read32(ConfigSpace.PCIE_LNKCAP));
        assertEquals((3 | 16 << 4) << 16, cs.read32(ConfigSpace.PCIE_LNKCTL), "Link Status: trained at both");
        cs.write32(ConfigSpace.PCIE_DEVCTL, 0x2010); // MRRS 512, relaxed ordering: kept, no reset
        assertEquals(0x2010, cs.read32(ConfigSpace.PCIE_DEVCTL));
        assertEquals(0, resets[0]);
        cs.write32(ConfigSpace.PCIE_DEVCTL, 0x2010 | ConfigSpace.DEVCTL_INITIATE_FLR);
        assertEquals(1, resets[0], "Initiate FLR asks for the reset once");
        assertEquals(0x2010, cs.read32(ConfigSpace.PCIE_DEVCTL), "Initiate FLR always reads 0");
        cs.write32(ConfigSpace.PCIE_DEVCAP, 0);
        assertEquals(ConfigSpace.DEVCAP_FLR | 1, cs.read32(ConfigSpace.PCIE_DEVCAP), "capabilities are read-only");
    }
}
