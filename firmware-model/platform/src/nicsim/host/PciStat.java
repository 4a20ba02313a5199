package nicsim.host;

import nicsim.sim.Stat;

/** The host bus's counters, under each host's node: its TLPs by kind, and the CPU time MMIO and posting cost. */
public enum PciStat implements Stat {
    MMIO_WRITES("pci.mmio_writes"),
    MMIO_READS("pci.mmio_reads"),
    CPU_WORK_PICOS("host.cpu_work_picos"),
    UNSUPPORTED_REQUESTS("pci.unsupported_requests"),
    DMA_BLOCKED("pci.dma_blocked"),
    DMA_WRITES("pci.dma_writes"),
    DMA_WRITE_BYTES("pci.dma_write_bytes"),
    DMA_READS("pci.dma_reads"),
    DMA_READ_BYTES("pci.dma_read_bytes"),
    MSIX_BLOCKED("pci.msix_blocked"),
    MSIX_MASKED("pci.msix_masked"),
    MSIX_SENT("pci.msix_sent");

    private final String counterName;

    PciStat(String counterName) { this.counterName = counterName; }

    @Override public String counterName() { return counterName; }
}
