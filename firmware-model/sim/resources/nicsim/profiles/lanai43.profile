# Berkeley VIA's platform in the KVIA paper (docs/sources.md#kvia-measurements): Pentium-III 500 MHz hosts
# with a 32-bit PCI bus, Myrinet LANai 4.3 adapters (2 MB SRAM, 32-bit local bus, 32-bit DMA).
# LANai 4.x has no hardware doorbell: the host writes descriptors into adapter SRAM and the control
# program polls; translations are fetched by DMA. Figures with a source cite
# docs/sources.md; "assumption" marks a value no public source gave.
profile lanai43
about    Berkeley VIA on Myrinet LANai 4.3: 32-bit local bus and DMA, PCI 32-bit/33 MHz, doorbells by polling adapter
         SRAM, translation fetched by DMA.

# --- adapter core
core.clock              = 33 MHz      | LANai 4.3 processor and local-bus clock
                                      | assumption: LANai 4.x ran at the PCI clock;
                                        docs/sources.md#myrinet-figures has no LANai 4 clock
core.datapath.width     = 32 bit      | LANai local bus (LBUS) and DMA engine width
                                      | docs/sources.md#kvia-measurements (32-bit local bus, 32-bit DMA)
core.sram.size          = 2 MiB       | adapter SRAM | docs/sources.md#kvia-measurements
dma.clock               = 33 MHz      | clock of the DMA engines and their local bus to SRAM: one beat per cycle
                                      | assumption: the processor clock; no public LANai 4 memory figure (the bench's
                                        gap study shows what a double-rate SRAM would change)
dma.channels            = 1           | sets of DMA engines (host, send, receive) sharing the
                                        adapter SRAM: a LANai has one
                                      | docs/sources.md#kvia-adapter

# --- host
host.page.size          = 4 KiB       | host page size | i386 Linux 2.2
host.memory.size        = 256 MiB     | host memory of each node | docs/sources.md#kvia-measurements
host.memory.read.latency = 150 ns     | time the PCI host bridge takes to serve a DMA read from memory
                                      | assumption: 1999-era chipset
host.mmio.write.cost    = 60 ns       | CPU time to issue one uncached 32-bit write to adapter SRAM over PCI
                                      | assumption: a few PCI clocks on a posted-write buffer
host.mmio.read.cost     = 60 ns       | CPU time spent issuing an MMIO read, before it waits | assumption
host.msi.address        = 0xFEE00000  | message address window (the LANai raises a line interrupt; modelled as
                                        a message to this window)
                                      | x86 APIC range

# --- PCI bus (parallel, shared by both directions)
pci.kind                = "pci"       | link type: "pcie" or "pci" (parallel bus, half duplex) |
pci.bus.width           = 32 bit      | host PCI bus width | docs/sources.md#kvia-measurements (32-bit PCI)
pci.clock               = 33 MHz      | host PCI bus clock (132 MB/s peak at 32 bit)
                                      | docs/sources.md#myrinet-figures (32/33: 132 MB/s)
pci.max.payload         = 512 B       | longest burst one DMA transaction holds the bus for before re-arbitrating
                                      | assumption: latency-timer limited bursts
pci.max.read.request    = 512 B       | longest read burst | assumption, as pci.max.payload
pci.read.completion     = 512 B       | read data returns in one burst (PCI has no split completions)
                                      | PCI 2.x delayed transactions
pci.burst.overhead      = 4 cycles    | bus cycles per burst besides data: arbitration, address phase,
                                        turnaround, target latency
                                      | assumption
pci.link.latency        = 120 ns      | bridge latency for a transaction to reach the other side,
                                        excluding the burst itself
                                      | assumption
pci.mmio.read.response  = 60 ns       | time the adapter takes to answer an MMIO read of its SRAM
                                      | assumption: two LANai clocks
pci.bar0.size           = 16 MiB      | the LANai's PCI address space (SRAM, registers; doorbell window on LANai 7)
                                      | docs/sources.md#kvia-doorbell-window

# --- doorbell decoder (DoorbellDecoder: MMIO write -> queue message; 2 core cycles from write to message)
uar.page.size           = 4 KiB       | size of one UAR (doorbell) page; a context owns whole pages
                                      | docs/sources.md#mlx5-sizes (MLX5_ADAPTER_PAGE_SIZE)
doorbell.window.base    = 8 MiB       | BAR0 offset where the doorbell (UAR) pages start
                                      | docs/sources.md#kvia-doorbell-window: 8-16 MB of the 16 MB PCI
                                        space is the doorbell area
doorbell.window.size    = 8 MiB       | size of the doorbell window
                                      | docs/sources.md#kvia-doorbell-window: 8-16 MB of the 16 MB PCI
                                        space is the doorbell area
doorbell.bf.reg.size    = 512 B       | size of each of the 4 BlueFlame registers at UAR offset 0x800
                                        (send doorbells land here)
                                      | assumption: docs/sources.md#mlx5-doorbells lists bf_reg_size as not found; 512 B
                                        is a common kernel value
doorbell.poll.interval  = 3 us        | Berkeley VIA has no hardware doorbell: the host writes doorbells into LANai SRAM
                                        and the control program finds them when its loop polls (0 = a
                                        hardware doorbell decoder)
                                      | assumption: one pass of the MCP's polling loop over its VIs;
                                        docs/sources.md#kvia-measurements names the hardware doorbell as a
                                        source of KVIA's lower latency
doorbell.fifo.depth     = 8           | doorbell messages queued between the decoder and the WQE fetcher | assumption
doorbell.queue.table.entries = 256   | entries of the decoder's queue-ownership table (QP and CQ tables each), indexed
                                       by queue-number low bits
                                     | assumption

# --- WQE fetcher (WqeFetcher: doorbell -> DMA read of WQEBBs -> checked WQEs to firmware)
wqe.fetch.batch         = 1           | most WQEBBs (64 B each) one DMA read of a send ring fetches
                                      | docs/sources.md#kvia-translation: each descriptor is fetched by its own DMA
wqe.bf.buffer.entries   = 0           | one-WQEBB WQEs written through the doorbell window that the WQE fetch may take
                                        instead of reading the ring (0: every descriptor is fetched by DMA)
                                      | docs/sources.md#kvia-measurements: Berkeley VIA moves all data and descriptors
                                        by DMA whatever their size
wqe.sq.entries          = 16          | send queues the fetcher tracks in hardware (indexed by QPN low bits)
                                      | assumption

# --- translation and protection (MttWalker: mkey + VA -> checks -> MTT walk through a translation cache)
mtt.mkey.entries        = 256         | mkey contexts (MRs and MWs) the walker holds, indexed by mkey index low bits
                                      | assumption
mtt.cache.entries       = 2           | entries of the direct-mapped translation cache (MTT index -> page address)
                                      | docs/sources.md#kvia-measurements: Berkeley VIA fetches each translation by DMA
                                        (no table worth the name)
mtt.klm.entries         = 64          | entries of the walker's KLM table for indirect mkeys; the LANai firmware offers
                                        no indirect mkeys (an mlx5 feature), so only the block's own tests write it
                                      | assumption
mtt.fill                = "dma"       | how translation-cache misses are served: "dma" (the adapter reads the table in
                                        host memory) or "interrupt" (the host's handler writes the entry in)
                                      | docs/sources.md#kvia-measurements: Berkeley VIA gets translations by DMA
host.interrupt.cost     = 6 us        | CPU time from a device interrupt to its handler running, plus the
                                        handler's own work and return
                                      | assumption: Linux 2.2 on a 500 MHz Pentium III

# --- completions (CqeWriter: firmware's completion -> 64-byte CQE into the host ring, owner bit, arming, events)
cqe.cq.entries          = 16          | completion queues the writer tracks in hardware (indexed by CQN low bits)
                                      | assumption

# --- network link
link.rate               = 1280 Mb/s   | Myrinet link data rate per direction
                                      | docs/sources.md#myrinet-figures (KVIA's 950 Mb/s = 74% of link peak)
link.propagation        = 50 ns       | signal propagation along one cable (adapter to switch)
                                      | assumption: 10 m of Myrinet cable at about 5 ns/m
link.mtu                = 4 KiB       | largest packet payload the transport sends
                                      | assumption: VIA implementations on Myrinet fragmented at 4 KB pages
switch.latency          = 550 ns      | port-to-port latency of the Myrinet switch, head in to head out
                                      | assumption: Myrinet 8-port switches were quoted at about 300-550 ns cut-through
switch.sma.latency      = 5 us        | time the switch's management port takes over one SMP (Myrinet had no SMPs: the
                                        InfiniBand management nicsim's subnet tools speak, modelled the same way)
                                      | assumption: switch firmware answers in microseconds
switch.forwarding       = "cut-through" | when the switch may start forwarding a packet: "cut-through" (once its head is
                                          in) or "store-and-forward" (once all of it is)
                                        | docs/sources.md#kvia-measurements: the nodes are joined by a Myrinet
                                          switch doing wormhole routing
link.transmit           = "cut-through" | when a packet goes on the wire: "cut-through" (as its first beat leaves the
                                          send engine, which then feeds the link from SRAM; the packet leaves at the
                                          slower of engine and link) or "store-and-forward" (once the send
                                          engine has moved all of it)
                                        | docs/sources.md#kvia-adapter: the LANai's send DMA engine moves data
                                          from SRAM to the network
link.receive            = "cut-through" | when the adapter takes a packet: "cut-through" (once its headers are in; the
                                          receive engine fills SRAM as the rest arrives) or
                                          "store-and-forward" (once all of it is in)
                                        | docs/sources.md#kvia-adapter: the LANai's receive DMA engine moves data
                                          from the network to SRAM

# --- firmware: the LANai control program (MCP) running on the LANai processor
fw.command.latency      = 50 us       | MCP time to execute one command from the host (create/modify/destroy)
                                      | assumption
fw.wqe.cycles           = 400 cycles  | LANai cycles the MCP spends starting one send descriptor (decode,
                                        translation lookup, DMA setup)
                                      | calibrated with fw.packet.cycles: their sum per round trip sets the
                                        lanai43-lanai72 gap (a cycle costs twice as long at 33 MHz); rc_pingpong 4 B
                                        gives 78.0 us here (with the polled doorbell, doorbell.poll.interval) and
                                        59.4 us on lanai72, against 77 and 59 us in docs/sources.md#kvia-measurements
fw.packet.cycles        = 85 cycles   | LANai cycles to build or take one packet (headers,
                                        sequence numbers, queue state)
                                      | calibrated against docs/sources.md#kvia-measurements (see fw.wqe.cycles)
fw.ack.coalesce         = 64          | request packets between forced ACK requests in a long message (the
                                        last packet always asks)
                                      | docs/sources.md#rxe-acks-and-naks (rxe RXE_MAX_PKT_PER_ACK = 64)
fw.max.msg.size         = 1 GiB       | longest message the port sends or accepts (max_msg_sz in QUERY_HCA_CAP); a
                                        request past the responder's limit is refused there
                                        (docs/sources.md#responder-errors)
                                      | assumption: the KVIA paper gives no VIA maximum transfer size; the same limit as
                                        cx-gen3x16, so only timing differs

# --- host CPU cost of the driver's data path
host.post.cost          = 6000 ns     | CPU time to build one descriptor and post it (the VIA
                                        library on a late-1990s host)
                                      | calibrated with host.poll.cost: the host time common to both LANai profiles,
                                        fitted to the absolute round trips of docs/sources.md#kvia-measurements
host.poll.cost          = 3900 ns     | CPU time to take one completion from the completion queue
                                      | calibrated against docs/sources.md#kvia-measurements (see host.post.cost)
switch.port.buffer      = 16 KiB      | bytes the switch buffers for each input port: a sender starts a packet only
                                        while the switch has room for it, learnt one propagation late (Myrinet's stop/go
                                        flow control, modelled as credits)
                                      | assumption
fw.recv.prefetch        = 0           | receive descriptors the MCP reads ahead of need (0: read each one
                                        when its message arrives)
                                      | assumption: a simple MCP fetches on demand
