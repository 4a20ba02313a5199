# A modern ConnectX-class adapter. Figures with a source cite a section of docs/sources.md; "assumption" marks a value
# we chose where no public figure was found, with why.
profile cx-gen3x16
about    A modern RDMA adapter: PCIe Gen3 x16, max payload 256 B, read request 512 B, 100 Gb/s link, 64-byte WQEBBs
         fetched 8 at a time, BlueFlame, MTT cache.

# --- adapter core
core.clock              = 250 MHz     | clock of the adapter's hardware blocks (doorbell decode, WQE
                                        fetch, translation, DMA, CQE)
                                      | assumption: a usual ASIC datapath clock; no public ConnectX figure
core.datapath.width     = 256 bit     | width of the adapter's internal data path (bytes one beat moves = width/8)
                                      | assumption: a 32-byte beat, at dma.clock 128 Gb/s per engine
core.sram.size          = 2 MiB       | on-adapter buffer memory between the host DMA and the link engines | assumption
dm.size                 = 128 KiB     | on-chip memory offered to programs as device memory (ibv_alloc_dm,
                                        max_dm_size); absent: none
                                      | assumption: a slice of on-chip SRAM the size of mlx5's MEMIC window; no
                                        public figure for this model
dm.bar.offset           = 24 MiB      | BAR0 offset of the window through which the host writes and reads device memory
                                        (ibv_memcpy_to_dm, _from_dm)
                                      | assumption: BAR0 space past the doorbell window
dm.access.latency       = 4 cycles    | core cycles an access to device memory takes before its data moves at the
                                        datapath's width; it never crosses PCIe
                                      | assumption: an on-chip SRAM access
dma.clock               = 500 MHz     | clock of the DMA engines and their local bus to SRAM (one beat per cycle):
                                        256 bit x 500 MHz = 128 Gb/s per engine
                                      | derived: docs/sources.md#connectx-figures (one QP's ib_write_bw reaches
                                        96.6 Gb/s on EDR, so one message's data path moves at least the link rate)
dma.channels            = 16          | independent sets of DMA engines (DMA contexts), each with its own slice of SRAM,
                                        so host reads of different messages overlap
                                      | assumption: enough outstanding host reads to cover a ~1 us PCIe read round trip
                                        at the small-message rate

# --- host
host.page.size          = 4 KiB       | host page size (sparse memory allocates in these units) | x86-64 base page
host.memory.size        = 64 GiB      | simulated host physical memory (sparse: only pages touched take space)
                                      | assumption
host.memory.read.latency = 200 ns     | time the root complex and memory take to serve a DMA read,
                                        after the request arrives
                                      | derived: docs/sources.md#pcie-latency-and-mmio-cost (a small DMA read takes
                                        about 0.5 us: 2 x pci.link.latency + this = 470 ns)
host.mmio.write.cost    = 100 ns      | CPU time to issue one uncached 8-byte MMIO write (a doorbell)
                                      | docs/sources.md#pcie-latency-and-mmio-cost: consecutive UC
                                        MMIO writes 50-300 ns apart
host.mmio.read.cost     = 200 ns      | CPU time spent issuing an MMIO read, before it waits for the completion
                                      | assumption; docs/sources.md#pcie-latency-and-mmio-cost: MMIO reads
                                        far costlier than writes
host.msi.address        = 0xFEE00000  | base of the host's MSI/MSI-X message address window
                                      | x86 local APIC message address range

# --- PCI Express link (full duplex: each direction serializes its own TLPs)
pci.kind                = "pcie"      | link type: "pcie" (serial, full duplex, TLPs) or "pci"
                                        (parallel bus, half duplex) |
pci.lanes               = 16          | PCIe link width
                                      | docs/sources.md#connectx-figures (ConnectX-5: PCIe Gen3/Gen4 x16)
pci.lane.rate           = 8 GT/s      | Gen3 per-lane transfer rate | docs/sources.md#pcie-tlp-arithmetic
pci.encoding            = 128/130     | line-code efficiency (Gen3: 128b/130b) | docs/sources.md#pcie-tlp-arithmetic
pci.max.payload         = 256 B       | max payload size (MPS) of one posted write or completion TLP
                                      | docs/sources.md#pcie-tlp-arithmetic (ConnectX-3 default MPS 256 B)
pci.max.read.request    = 512 B       | max read request size (MRRS)
                                      | docs/sources.md#pcie-tlp-arithmetic (allowed 128..4096 B)
pci.read.completion     = 256 B       | size of each completion TLP returning read data (at most MPS)
                                      | assumption: root complex completes in MPS-sized chunks
                                        (docs/sources.md#pcie-tlp-arithmetic says platform-specific)
pci.tlp.overhead.posted = 24 B        | bytes on the link besides payload for a memory write TLP (framing,
                                        sequence, 4-DW header, LCRC)
                                      | docs/sources.md#pcie-tlp-arithmetic (5-7 DW per TLP)
pci.tlp.overhead.request = 24 B       | bytes on the link for a memory read request TLP (4-DW header, no payload)
                                      | docs/sources.md#pcie-tlp-arithmetic
pci.tlp.overhead.completion = 20 B    | bytes on the link besides payload for a completion TLP (3-DW header)
                                      | docs/sources.md#pcie-tlp-arithmetic
pci.link.latency        = 135 ns      | one-way latency of a TLP through the PHYs, link layers and root port, excluding
                                        serialization (a posted write's whole trip)
                                      | derived: docs/sources.md#pcie-latency-and-mmio-cost (what remains of ConnectX's
                                        0.83 us inline send, which crosses PCIe twice)
pci.mmio.read.response  = 40 ns       | time the adapter takes to answer an MMIO read once it arrives
                                      | assumption: ten core cycles
pci.bar0.size           = 32 MiB      | size of BAR0: command/initialization segment plus the doorbell (UAR) pages
                                      | assumption: mlx5-like layout
pci.flr.time            = 1 ms        | time the function takes to complete a function-level reset (Initiate FLR, or
                                        serve resetting a function its driver left), during which it answers no request;
                                        PCIe allows at most 100 ms
                                      | assumption: a reset that clears state machines and tables, not one that reboots
                                        firmware (PCIe r4.0 sec. 6.6.2 bounds it at 100 ms)

# --- doorbell decoder (DoorbellDecoder: MMIO write -> queue message; 2 core cycles from write to message)
uar.page.size           = 4 KiB       | size of one UAR (doorbell) page; a context owns whole pages
                                      | docs/sources.md#mlx5-sizes (MLX5_ADAPTER_PAGE_SIZE)
doorbell.window.base    = 4 KiB       | BAR0 offset where the doorbell (UAR) pages start
                                      | mlx5-like: page 0 of BAR0 is the initialization segment, UAR pages follow
doorbell.window.size    = 16 MiB      | size of the doorbell window
                                      | mlx5-like: page 0 of BAR0 is the initialization segment, UAR pages follow
doorbell.bf.reg.size    = 512 B       | size of each of the 4 BlueFlame registers at UAR offset 0x800
                                        (send doorbells land here)
                                      | assumption: docs/sources.md#mlx5-doorbells lists bf_reg_size as not found; 512 B
                                        is a common kernel value
doorbell.fifo.depth     = 16          | doorbell messages queued between the decoder and the WQE fetcher | assumption
doorbell.queue.table.entries = 16384 | entries of the decoder's queue-ownership table (QP and CQ tables each), indexed
                                       by queue-number low bits; bounds the QPs per adapter
                                     | assumption: room for 16K QPs, whose send-queue contexts the firmware caches in
                                       the fetcher's wqe.sq.entries slots

# --- WQE fetcher (WqeFetcher: doorbell -> DMA read of WQEBBs -> checked WQEs to firmware)
wqe.fetch.batch         = 8           | most WQEBBs (64 B each) one DMA read of a send ring fetches
                                      | assumption: 8 x 64 B WQEBBs per fetch (the design target in
                                        docs/architecture.md#data-path)
wqe.bf.buffer.entries   = 64          | WQEBBs of lone WQEs written whole by BlueFlame (up to half a BlueFlame register,
                                        256 B) that the WQE fetch takes from the adapter instead of
                                        reading the ring over PCIe
                                      | docs/sources.md#mlx5-doorbells (BlueFlame copies a lone WQE of up to bf_reg_size
                                        / 2 whole); the line count is an assumption
wqe.sq.entries          = 64          | send queues the fetcher tracks in hardware (indexed by QPN low bits)
                                      | assumption

# --- translation and protection (MttWalker: mkey + VA -> checks -> MTT walk through a translation cache)
mtt.mkey.entries        = 1024        | mkey contexts (MRs and MWs) the walker holds, indexed by mkey index low bits
                                      | assumption
mtt.cache.entries       = 512         | entries of the direct-mapped translation cache (MTT index -> page address)
                                      | assumption: an MTT cache whose misses cost a PCIe read of the MTT entry
mtt.klm.entries         = 1024        | entries of the walker's KLM table: the lists of pieces behind indirect mkeys
                                        (UMR), each mkey taking as many as it was created for
                                      | assumption: docs/sources.md#umr (mlx5 keeps KLMs in adapter memory;
                                        the size is not published)
umr.klm.cycles          = 2 cycles    | core cycles a UMR work request takes per KLM entry it writes into the walker's
                                        table (after fw.wqe.cycles to start it)
                                      | assumption: docs/sources.md#umr
mtt.fill                = "dma"       | how translation-cache misses are served: "dma" (a PCIe read of the MTT entry) or
                                        "interrupt" (the host's handler writes it)
                                      | assumption: mlx5 adapters read MTT entries from host memory
mtt.fill.line           = 64 B        | bytes of the translation table one miss reads: the missing entry and its MR's
                                        neighbours in the same cache line, kept (the last 8 lines) for the
                                        walks that want them next
                                      | docs/sources.md#mtt-walk (8-byte MTT entries; a DMA read of a host cache line
                                        costs no more than of one entry)
mtt.page.max            = 2 MiB       | largest page the driver registers pinned memory in: the largest power of two (up
                                        to this) in which the buffer's pages are physically contiguous and equally
                                        aligned, so an MR takes that many fewer MTT entries
                                      | docs/sources.md#mr-page-size (mlx5 picks the best page size per MR)
host.odp.fault.cost     = 5 us        | CPU time the driver spends bringing in one page of an on-demand MR after the
                                        adapter's page fault (find, pin and map it), besides the interrupt
                                      | assumption: docs/sources.md#on-demand-paging (ODP faults cost microseconds
                                        to tens of microseconds)
host.interrupt.cost     = 2 us        | CPU time from an MSI-X interrupt to its handler running, plus the
                                        handler's work and return
                                      | assumption

# --- completions (CqeWriter: firmware's completion -> 64-byte CQE into the host ring, owner bit, arming, events)
cqe.cq.entries          = 64          | completion queues the writer tracks in hardware (indexed by CQN low bits)
                                      | assumption
cqe.scatter.max         = 32 B        | largest receive placed in its 64-byte CQE instead of the buffer, on a QP that
                                        allows scatter to CQE (0: never)
                                      | docs/sources.md#mlx5-cqe (MLX5_INLINE_SCATTER_32)

# --- DC transport (dynamically connected QPs: mlx5's DC initiators and targets)
dc.dcr.pool             = 16          | DC responders (DCRs) each DC target holds: the initiators it serves at once; one
                                        more gets a CNAK and retries
                                      | assumption: docs/sources.md#dc-transport (the pool's size is a device capability
                                        not published per model)
dc.handshake            = "half"      | how a DC initiator connects: "half" (its data follows the connect packet at
                                        once) or "full" (its data waits for the connect's ACK)
                                      | docs/sources.md#dc-transport (half handshake for small-message latency,
                                        full handshake as an option)
dc.idle.timeout         = 20 us       | a DC initiator with nothing left to send disconnects after this long
                                      | assumption: docs/sources.md#dc-transport (a few round trips, so bursts to one
                                        target reuse the connection)
dc.cnak.backoff         = 10 us       | how long a DC initiator waits after a CNAK before it connects again
                                        (counted against rnr_retry)
                                      | assumption: docs/sources.md#dc-transport
dc.dcr.timeout          = 200 us      | a DCR idle this long is taken back when a new initiator needs one (its
                                        initiator's disconnect was lost)
                                      | assumption: docs/sources.md#dc-transport

# --- tag matching (a tag-matching SRQ's list of tagged buffers, in the adapter)
tm.max.tags             = 256         | tagged buffers one tag-matching SRQ's list holds at most (max_num_tags)
                                      | assumption: docs/sources.md#tag-matching (a device capability, queried;
                                        not published per model)
tm.max.ops              = 16          | tag-list operations outstanding at most per SRQ (max_ops)
                                      | assumption: docs/sources.md#tag-matching
tm.match.cycles         = 1 cycles    | core cycles to compare an incoming message's tag with one entry of the list
                                      | assumption: one comparator pass per entry
tm.op.latency           = 1 us        | time from a tag-list operation's doorbell to its effect on the list (mlx5 posts
                                        these on a send queue of the SRQ's own)
                                      | assumption: a WQE fetch and a firmware step

# --- network link
link.rate               = 100 Gb/s    | network link data rate per direction
                                      | docs/sources.md#connectx-figures (EDR / 100GbE)
link.propagation        = 5 ns        | signal propagation along one cable (adapter to switch)
                                      | assumption: 1 m of copper at about 5 ns/m
link.mtu                = 4 KiB       | largest path MTU the links and switch carry
                                      | IBTA maximum MTU (docs/sources.md#libibverbs-values: ibv_mtu up to 4096)
switch.latency          = 100 ns      | port-to-port latency of the switch, from a packet's head
                                        arriving to its head leaving
                                      | assumption: EDR switch datasheets quote about 90-130 ns
switch.sma.latency      = 2 us        | time the switch's management port (port 0: its SMI and SMA, in the switch's
                                        firmware) takes over one SMP, to answer it or pass a directed-route SMP
                                        on; it takes one at a time
                                      | assumption: switch SMAs answer in microseconds (firmware on the
                                        switch's management processor)
switch.forwarding       = "cut-through" | when the switch may start forwarding a packet: "cut-through" (once its head is
                                          in) or "store-and-forward" (once all of it is)
                                        | assumption: InfiniBand switches forward cut-through, which is what their
                                          quoted latencies measure
link.transmit           = "cut-through" | when a packet goes on the wire: "cut-through" (as its first beat leaves the
                                          send engine, which then feeds the link; the packet leaves at the slower of
                                          engine and link) or "store-and-forward" (once the send engine has moved all of
                                          it into the port's transmit buffer)
                                        | docs/sources.md#connectx-figures (ConnectX adapters are quoted for cut-through
                                          latency; one engine, 128 Gb/s, outruns the link)
link.receive            = "cut-through" | when the adapter takes a packet: "cut-through" (once its headers are in; the
                                          receive engine fills SRAM as the rest arrives) or
                                          "store-and-forward" (once all of it is in)
                                        | assumption: ConnectX adapters are quoted for cut-through latency

# --- firmware (the adapter's embedded processor: commands, QP state, transport)
fw.command.latency      = 10 us       | firmware time to execute one command once its mailbox is
                                        read (create/modify/destroy)
                                      | assumption: mlx5 commands take microseconds to milliseconds; the fast end
fw.wqe.cycles           = 16 cycles   | core cycles the transport spends starting one fetched send WQE
                                        (decode, translation requests)
                                      | assumption
fw.packet.cycles        = 8 cycles    | core cycles to build or take one packet (headers, PSN, QP context update)
                                      | assumption: hardware transport; pipeline depth
fw.ack.coalesce         = 64          | request packets between forced ACK requests in a long message (the
                                        last packet always asks)
                                      | docs/sources.md#rxe-acks-and-naks (rxe RXE_MAX_PKT_PER_ACK = 64)
fw.max.msg.size         = 1 GiB       | longest message the port sends or accepts (max_msg_sz in QUERY_HCA_CAP); a
                                        request past the responder's limit is refused there
                                        (docs/sources.md#responder-errors)
                                      | assumption: ConnectX adapters report max_msg_sz 0x40000000 (1 GiB); rxe accepts
                                        a RETH length up to 2^31 (docs/sources.md#rxe-acks-and-naks)

# --- host CPU cost of the driver's data path
host.post.cost          = 60 ns       | CPU time to build one WQE in the ring and update the doorbell record
                                        (before the MMIO doorbell)
                                      | assumption: a few hundred instructions at 3 GHz
host.poll.cost          = 20 ns       | CPU time to take one CQE from the ring | assumption
switch.port.buffer      = 64 KiB      | bytes the switch buffers for each input port: a sender starts a packet only with
                                        credits for it, freed once the packet has left the switch and back one
                                        propagation later (link-level flow control)
                                      | assumption: a few MTU packets per virtual lane
fw.recv.prefetch        = 4           | receive WQEs the transport reads ahead of need, per receive queue or SRQ (0:
                                        read each one when its message arrives)
                                      | assumption: hardware keeps a few receive WQEs cached per queue
