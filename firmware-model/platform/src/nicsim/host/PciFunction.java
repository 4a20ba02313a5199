package nicsim.host;

/**
 * What a device shows the PCI bus, and nothing more (SimBricks' narrow device interface): its
 * configuration space, MMIO accesses that hit its BARs, and the port it is given to issue DMA and
 * MSI-X. The Java adapter model and an RTL-backed adapter both sit behind this interface, so the
 * driver cannot tell them apart.
 */
public interface PciFunction {
    ConfigSpace config();

    /** Receives a posted MMIO write that hit {@code bar} at {@code offset}, at its arrival time. */
    void mmioWrite(int bar, long offset, byte[] data);

    /** Answers an MMIO read that hit {@code bar}; the bus adds the response time from the profile. */
    byte[] mmioRead(int bar, long offset, int length);

    /** Called once when the function is attached: the port through which it reaches the host. */
    void connect(PciPort port);
}
