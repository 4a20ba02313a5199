# A ConnectX-6-class adapter (docs/sources.md#connectx-6-figures): HDR InfiniBand at 200 Gb/s on PCIe Gen4 x16. It is
# cx-gen3x16's adapter with the faster link and bus, from published figures only; parameters not listed here are
# cx-gen3x16's (its PCIe latencies, host costs and adapter cycles, for which no ConnectX-6 figure is published).
profile cx6-gen4x16
about    A ConnectX-6-class adapter: HDR 200 Gb/s, PCIe Gen4 x16, the rest as cx-gen3x16.
extends  cx-gen3x16

link.rate               = 200 Gb/s    | network link data rate per direction: HDR, 4 lanes of 50 Gb/s
                                      | docs/sources.md#connectx-6-figures (ConnectX-6 user manual: 200 Gb/s ports; HDR
                                        lanes at 53.125 Gb/s with 64b/66b)
pci.lane.rate           = 16 GT/s     | Gen4 per-lane transfer rate
                                      | docs/sources.md#connectx-6-figures (ConnectX-6 user manual: PCIe
                                        Gen 4.0 at 16 GT/s, x16)
dma.clock               = 800 MHz     | clock of the DMA engines and their local bus to SRAM (one beat per cycle):
                                        256 bit x 800 MHz = 204.8 Gb/s per engine
                                      | derived: as cx-gen3x16's, one message's path through the adapter runs
                                        at least the link's rate
