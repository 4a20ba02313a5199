# KVIA's platform (docs/sources.md#kvia-adapter, docs/sources.md#kvia-measurements): the same hosts
# as lanai43, with Myrinet
# LANai 7.2 adapters: 4 MB SRAM, 64-bit local bus and DMA engines, a hardware doorbell window in
# the upper 8 MB of the 16 MB PCI space, and a translation/protection table of 8K entries indexed
# by VA[24:12], filled by interrupting the host. Parameters not listed here are lanai43's.
profile lanai72
about    KVIA on Myrinet LANai 7.2: 64-bit local bus and DMA, hardware doorbell window (8-16 MB of a 16 MB BAR),
         8K-entry translation table indexed by VA[24:12], filled by host interrupt.
extends  lanai43

core.clock              = 66 MHz      | LANai 7.2 processor and local-bus clock
                                      | assumption: LANai 7 boards ran at 66 MHz; docs/sources.md#myrinet-figures lists
                                        the LANai 7 clock as not found
core.datapath.width     = 64 bit      | LANai 7.2 local bus and DMA engine width
                                      | docs/sources.md#kvia-adapter (64-bit LBUS, 64-bit DMA)
dma.clock               = 66 MHz      | clock of the DMA engines and their local bus to SRAM: one 64-bit
                                        beat per cycle, 528 MB/s
                                      | assumption: the processor clock, as lanai43; docs/sources.md#myrinet-figures
                                        gives the PCI64A boards "more than 1 GByte/s of local-memory data rate", i.e.
                                        two accesses per clock, left out so both LANais are modeled alike (the bench's
                                        gap study shows its effect)
core.sram.size          = 4 MiB       | adapter SRAM | docs/sources.md#kvia-measurements
mtt.cache.entries       = 8192        | the translation/protection table: 8K entries, indexed by VA[24:12] on KVIA,
                                        filled by host interrupt
                                      | docs/sources.md#kvia-translation
mtt.fill                = "interrupt" | misses in the 8K-entry table are filled by the host: the LANai interrupts, the
                                        driver writes the entry over PCI
                                      | docs/sources.md#kvia-translation
doorbell.poll.interval  = 0 us        | KVIA decodes doorbells in hardware: writes to the doorbell window reach
                                        the decoder as they arrive
                                      | docs/sources.md#kvia-doorbell-window
