package nicsim.adapter;

import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import nicsim.abi.Cmd;
import nicsim.abi.UarLayout;
import nicsim.abi.WqeLayout;
import nicsim.adapter.CqePorts.CqConfig;
import nicsim.adapter.CqePorts.CqeIn;
import nicsim.adapter.WqePorts.SqConfig;
import nicsim.fabric.Packet;
import nicsim.host.ConfigSpace;
import nicsim.host.PciFunction;
import nicsim.host.PciLink;
import nicsim.host.PciPort;
import nicsim.sim.ClockDomain;
import nicsim.sim.Counters;
import nicsim.sim.Simulator;
import nicsim.sim.StreamDemux;

/**
 * The adapter as the host sees it: one PCI function whose BAR0 holds the initialization page
 * (with the MSI-X table at {@link #Cmd.REG_MSIX_TABLE}) and the doorbell window. Built so far: the send
 * path from a doorbell to a checked WQE, and completions. MMIO writes into the window go, eight
 * bytes a cycle, to the {@link DoorbellDecoder}; a demux sends its send doorbells to the
 * {@link WqeFetcher}, whose ring reads go through the PCI model ({@link PciDmaReader}), and its
 * CQ arms to the {@link CqeWriter}. Complete WQEs, and what else the blocks produce for it, go to
 * the embedded processor ({@link EmbeddedProcessor}: the firmware, or a stand-in in block-level
 * tests), which drives the blocks back through the methods marked "Firmware:". CQEs are DMA-written into the
 * host's CQ ring; an event raises the CQ's MSI-X vector after its CQE's write, so the host never sees the
 * interrupt before the entry. Every WQE gets a timeline in the simulator's trace (block "wqe", transaction
 * "qp0x&lt;qpn&gt;/wqe&lt;index&gt;"): the doorbell that announced it decoded, the ring read that fetched it
 * issued, the WQE delivered and, when it completes, its CQE in host memory.
 *
 * <p>Here: the blocks' construction and wiring, the host's view (configuration space, MMIO) and the firmware's
 * methods. Its parts: {@link BlockQueues}, what waits for the blocks on the core clock and what they hand back;
 * {@link BlueFlameBuffer}, WQEs written with their doorbells; {@link WqeTimeline}, the per-WQE trace; and
 * {@link CoreCoast}, the core clock's coast over the edges the blocks run alone.
 */
public final class Adapter implements PciFunction {

    /** A complete WQE as fetched: its queue, WQEBB counter, bytes, and the cycle it was handed over. */
    public record Wqe(long qpn, long index, byte[] bytes, long cycle) {}

    private final Simulator sim;
    private final ClockDomain core;
    private final ConfigSpace config;
    private final DoorbellDecoder decoder;
    private final WqeFetcher fetcher;
    private final CqeWriter cqeWriter;
    private final MttWalker mtt;
    private final DmaPath dma;
    private final EmbeddedProcessor firmware;
    /** What it took from the profile. */
    private final AdapterConfig cfg;
    private final DoorbellDecoder.Config dbCfg;
    /**
     * 0: doorbells are decoded by hardware as they arrive; else the control program polls SRAM for them at this period.
     */
    private final long pollInterval;
    private final StreamDemux<DoorbellMsg> route;
    /** What waits here for the blocks, and their outputs handed on (the adapter's part of the core clock). */
    private final BlockQueues queues;
    /** The BlueFlame buffer, and the send queues' rings and owners it places WQEs by. */
    private final BlueFlameBuffer blueFlame;
    /** The adapter's part of the per-WQE timeline. */
    private final WqeTimeline timeline;
    private final Map<Long, Integer> cqVectors = new HashMap<>();
    // counted once per doorbell: held, not looked up by name each time
    private final Counters.Ref doorbellsPolled, pollWaitPicos, mmioOutsideWindow;
    private PciPort port;
    private final OnChipMemory dm;
    private final long dmWindow;
    /** What the adapter found wrong: each counted, the first and last {@link Problems#KEPT} kept. */
    private final Problems problems = new Problems();

    /** The blocks alone, without firmware (block-level tests, the demo). */
    public Adapter(Simulator sim, AdapterConfig cfg) { this(sim, cfg, "core", EmbeddedProcessor::none); }

    /**
     * An adapter whose clock domain is called {@code clockName} (one per adapter in a simulator),
     * with the firmware {@code firmware} makes for it.
     */
    public Adapter(Simulator sim, AdapterConfig cfg, String clockName,
            Function<Adapter, EmbeddedProcessor> firmware) {
        this.sim = sim;
        this.cfg = cfg;
        this.core = sim.clockDomain(clockName, cfg.corePeriodPs());
        this.config = new ConfigSpace(Cmd.PCI_VENDOR, Cmd.PCI_DEVICE, 0x02070000, new long[]{cfg.bar0Bytes(), 0, 0},
                Cmd.MSIX_VECTORS, 0, Cmd.REG_MSIX_TABLE);
        if (cfg.pci().pcie()) pcieCapability(cfg.pci());
        this.dbCfg = cfg.doorbell();
        this.pollInterval = cfg.pollIntervalPs();
        this.blueFlame = new BlueFlameBuffer(core, cfg);
        this.doorbellsPolled = core.counters().ref(AdapterStat.DOORBELLS_POLLED);
        this.pollWaitPicos = core.counters().ref(AdapterStat.DOORBELL_POLL_WAIT_PS);
        this.mmioOutsideWindow = core.counters().ref(AdapterStat.MMIO_OUTSIDE_DOORBELL_WINDOW);
        this.decoder = new DoorbellDecoder(core, dbCfg);
        this.fetcher = new WqeFetcher(core, cfg.fetcher());
        this.timeline = new WqeTimeline(sim, clockName, fetcher.config().sqEntries());
        this.cqeWriter = new CqeWriter(core, cfg.cqeWriter());
        this.mtt = new MttWalker(core, cfg.mtt());
        this.dma = new DmaPath(sim, cfg.dma(), clockName.replaceFirst("core$", ""), () -> port);
        this.dm = new OnChipMemory(cfg.dm(), core.periodPicos());
        this.dmWindow = dm.size() == 0 ? -1 : cfg.dm().barOffsetBytes();
        // on the timeline, each set of DMA engines works on its own transfer
        for (String engine : List.of("DmaEngine host", "DmaEngine send")) sim.trace()
                .lanes(timeline.prefix() + engine, cfg.dma().channels());
        // decoded doorbells: send doorbells to the fetcher, CQ arms to the CQE writer
        route = new StreamDemux<>("doorbellRoute", core, DoorbellMsg.LAYOUT, 2,
                m -> m.kind() == DoorbellMsg.Kind.CQ_ARM.ordinal() ? 1 : 0);
        decoder.doorbell().connect(route.input());
        route.output(0).connect(fetcher.doorbell());
        route.output(1).connect(cqeWriter.arm());
        this.queues = new BlockQueues(this, timeline);
        core.add(queues);
        this.firmware = firmware.apply(this);
        queues.firmware(this.firmware);
    }

    public Simulator simulator() { return sim; }

    /**
     * The trace transaction of a send WQE: "qp0x&lt;qpn&gt;/wqe&lt;index&gt;", prefixed by the node when there are
     * several adapters.
     */
    public String wqeTxn(long qpn, long index) { return timeline.wqeTxn(qpn, index); }

    /**
     * Whether the per-WQE timeline (block "wqe") is being recorded: callers build a stage's detail
     * only then, so a run without a timeline pays nothing for it.
     */
    public boolean tracingWqe() { return timeline.tracing(); }

    /** Records a stage of send WQE {@code index} of {@code qpn} in the per-WQE timeline (block "wqe"). */
    public void traceWqe(long qpn, long index, WqeStage stage, String detail) {
        timeline.stage(qpn, index, stage, detail);
    }

    /**
     * {@link #traceWqe} with the detail {@code before + n + after}: built only where the timeline keeps details
     * (not for a {@link #recordStages} log).
     */
    public void traceWqe(long qpn, long index, WqeStage stage, String before, long n, String after) {
        timeline.stage(qpn, index, stage, before, n, after);
    }

    /**
     * Send WQE {@code index} of {@code qpn} puts the first packet of its message on the wire, from
     * port {@code lid} at {@code psn}, a packet of opcode {@code op}: the peer's adapter finds the WQE's timeline by
     * these.
     */
    public void traceMessageOut(long qpn, long index, int lid, int psn, Packet.Op op) {
        timeline.messageOut(qpn, index, lid, psn, op);
    }

    /**
     * A packet of opcode {@code op} that starts a message arrived: the stage "received" of its sender's WQE, on this
     * adapter's track.
     */
    public void traceMessageIn(int slid, long srcQp, int psn, Packet.Op op) {
        timeline.messageIn(slid, srcQp, psn, op);
    }

    /**
     * From now on this adapter keeps its send WQEs' stage times in {@code stages} (shared by the adapters of its
     * simulator) instead of in the trace: what a per-stage table needs, without names or details.
     */
    public void recordStages(StageLog stages) { timeline.log(stages); }

    /** Bytes this adapter's port sent now (the timeline's link bandwidth counter). */
    public void traceLinkBytes(int bytes) { timeline.linkBytes(bytes); }

    public MttWalker mtt() { return mtt; }
    /** The payload path: host reads and writes through the DMA engines and SRAM. */
    public DmaPath dma() { return dma; }
    /** The adapter's PCI port (DMA, MSI-X), once attached to a bus. */
    public PciPort port() { return port; }

    /** Records a problem the adapter refused or could not handle (see {@link #errors()}). */
    public void report(Object problem) { problem(problem); }

    private void problem(Object p) {
        problems.add(p, sim.now());
        // on the timeline too, where the driver's other doings are (when the adapter is traced)
        String n = "violation#" + problems.count();
        sim.trace().recordOn("Adapter", timeline.prefix() + "Adapter", n, "violation", p.toString());
    }

    /** The problems found so far: each counted, the first and last kept with their times (no copy). */
    public Problems problems() { return problems; }

    /** How many problems have been found so far, kept or not. */
    public long errorCount() { return problems.count(); }

    /** Firmware: writes an mkey context into the MttWalker's table. */
    public void mkeyWrite(MttPorts.MkeyContext c) { queues.mkeyIn.add(c); queues.queued(); }

    /**
     * Writes an indirect mkey's list entry into the walker's KLM table (one per edge, in order, before any context
     * written after it).
     */
    public void klmWrite(MttPorts.KlmEntry e) { queues.klmIn.add(e); queues.queued(); }

    /** Firmware: asks the MttWalker to translate; the answer goes to {@code Firmware.onXlate}. */
    public void translate(MttPorts.XlateReq r) { queues.xlateIn.add(r); queues.queued(); }

    /** Firmware: a completion for the CqeWriter. */
    public void postCqe(long cqn, long[] cqe, boolean solicited) {
        queues.cqeIn.add(new CqeIn(cqn, solicited ? 1 : 0, cqe));
        queues.settle.posted(cqn);
        queues.queued();
    }

    /** Firmware: runs {@code then} once every completion posted to CQ {@code cqn} is in host memory (or refused). */
    public void whenCqSettled(long cqn, Runnable then) { queues.settle.whenSettled(cqn, then); }

    /**
     * Firmware: CQ {@code cqn} writes from now on into the ring at {@code ringBase} of 2^logSize
     * entries, from its first slot, on the same MSI-X vector, disarmed. Completions posted after this
     * go to the new ring.
     */
    public void moveCq(long cqn, long ringBase, int logSize) {
        queues.cqConfigIn.add(new CqConfig(cqn, ringBase, logSize, cqVectors.getOrDefault(cqn, 0), 1));
        queues.queued();
    }

    /** Firmware: the consumer index software has reached (read from the CQ doorbell record). */
    public void cqConsumerIndex(long cqn, long ci) {
        queues.ciIn.add(new CqePorts.CqCi(cqn, ci & 0xFFFFFF));
        queues.queued();
    }

    /**
     * Firmware: registers the send queue of a QP it owns in the decoder's table (doorbells for it are
     * accepted from {@code uar}'s page); its WQEs go to the firmware's transport. The fetcher holds
     * the queue's context only once {@link #loadSq} puts it there.
     */
    public void addQpQueue(long qpn, int uar) {
        ownSq(qpn, uar);
        timeline.queueAdded(qpn);
        queues.queued();
    }

    /**
     * Firmware: loads a send queue's context into its fetcher slot (QPN low bits), replacing whatever
     * queue was there: ring, size, the next WQEBB to fetch and the producer index. {@code Firmware.onSqLoaded}
     * hears when the fetcher has taken it.
     */
    public void loadSq(long qpn, long ringBase, int logSize, int start, int producer) {
        SqConfig sc = new SqConfig(qpn, ringBase, logSize, start & 0xFFFF, producer & 0xFFFF, 1);
        blueFlame.loaded(sc);
        queues.sqIn.add(sc);
        timeline.queueLoaded(qpn, start);
        queues.queued();
    }

    /**
     * Firmware: rings {@code qpn}'s send doorbell from inside the adapter (after loading its context), with {@code
     * producer}.
     */
    public void reRing(long qpn, int uar, int producer) {
        queues.mmioIn.add(MmioWrite.of(sendDoorbellOffset(uar), WqeLayout.ctrl(0, producer & 0xFFFF, qpn, 0)));
        queues.queued();
    }

    /** Firmware: removes send queue {@code qpn} from the decoder's table and, if {@code resident}, from the fetcher. */
    public void destroySq(long qpn, boolean resident) {
        SqConfig old = blueFlame.destroyed(qpn);
        queues.tableIn.add(new QueueTableWrite(0, qpn, 0, 0));
        timeline.queueDestroyed(qpn);
        if (resident && old != null) queues.sqIn.add(new SqConfig(qpn, old.base(), old.logSize(), 0));
        queues.queued();
    }

    /** Firmware: removes CQ {@code cqn}. */
    public void destroyCq(long cqn) {
        queues.tableIn.add(new QueueTableWrite(1, cqn, 0, 0));
        queues.cqConfigIn.add(new CqConfig(cqn, 0, 1, 0, 0));
        cqVectors.remove(cqn);
        queues.queued();
    }

    public ClockDomain core() { return core; }
    public DoorbellDecoder decoder() { return decoder; }
    public WqeFetcher fetcher() { return fetcher; }
    public CqeWriter cqeWriter() { return cqeWriter; }
    /**
     * Refused doorbells, malformed WQEs and dropped doorbells, in order: every one, or past twice
     * {@link Problems#KEPT} the first and last kept with a line between saying how many were not (a view, no copy).
     */
    public List<Object> errors() { return problems.reports(); }

    /**
     * Sets up completion queue {@code cqn}: owned by UAR page {@code uar}, ring at {@code ringBase}
     * of 2^logSize 64-byte CQEs, events on MSI-X {@code vector}.
     */
    public void createCq(long cqn, int uar, long ringBase, int logSize, int vector) {
        if (vector < 0 || vector >= Cmd.MSIX_VECTORS)
            throw new IllegalArgumentException("MSI-X vector " + vector + " must be 0.." + (Cmd.MSIX_VECTORS - 1));
        queues.tableIn.add(new QueueTableWrite(1, cqn, uar, 1));
        queues.cqConfigIn.add(new CqConfig(cqn, ringBase, logSize, vector, 1));
        cqVectors.put(cqn, vector);
        queues.queued();
    }

    /** BAR0 offset of a UAR page's CQ doorbell, where CQ arms go. */
    public long cqDoorbellOffset(int uar) {
        return dbCfg.windowBase() + (long) uar * dbCfg.pageSize() + UarLayout.CQ_DOORBELL;
    }

    /** BAR0 offset of a UAR page's BlueFlame register 0, where send doorbells go. */
    public long sendDoorbellOffset(int uar) {
        return dbCfg.windowBase() + (long) uar * dbCfg.pageSize() + UarLayout.BF_OFFSET;
    }

    @Override public ConfigSpace config() { return config; }

    /** The parameters it was made with (its blocks', its link's, device memory's). */
    public AdapterConfig parameters() { return cfg; }
    @Override public void connect(PciPort p) {
        port = new OnChipPort(p, dm); // device memory is served on the chip; the rest goes over PCI
        queues.connect(port);
        PciDmaReader reader = new PciDmaReader(core, port, fetcher.dmaReq(), fetcher.dmaRsp(), blueFlame::lines);
        core.coastWith(new CoreCoast(this, route, reader, queues, blueFlame, timeline, firmware), core.blocks());
    }

    /** The adapter's device memory (ibv_alloc_dm). */
    public OnChipMemory deviceMemory() { return dm; }

    /** BAR0 offset of the window onto device memory (ibv_memcpy_to_dm writes through it), or -1: none. */
    public long deviceMemoryWindow() { return dmWindow; }

    private boolean inDmWindow(long offset, int length) {
        return dmWindow >= 0 && offset >= dmWindow && dm.holds(OnChipMemory.BASE + offset - dmWindow, length);
    }

    @Override public void mmioWrite(int bar, long offset, byte[] data) {
        if (inDmWindow(offset, data.length)) { dm.write(offset - dmWindow, data); return; }
        if (offset >= dbCfg.windowBase() && offset < dbCfg.windowBase() + dbCfg.windowSize()) {
            if (!blueFlame.written(offset, data)) { // the rest of a WQE written in 64-byte chunks
                queues.queued();
                return;
            }
            MmioWrite w = MmioWrite.of(offset, Arrays.copyOf(data, Math.min(data.length, 8)));
            if (pollInterval > 0) {
                // no hardware doorbell: the write lands in adapter SRAM, where the control program finds it on its next
                // poll
                long at = -Math.floorDiv(-sim.now(), pollInterval) * pollInterval;
                doorbellsPolled.inc();
                pollWaitPicos.add(at - sim.now());
                sim.schedule(at, () -> { queues.mmioIn.add(w); queues.queued(); });
                return;
            }
            queues.mmioIn.add(w);
            queues.queued();
        } else if (offset < Cmd.REG_MSIX_TABLE) {
            firmware.mmioWrite(offset, data); // the initialization page: the command interface
        } else {
            mmioOutsideWindow.inc();
            problem(String.format("MMIO write of %d bytes at BAR0+0x%x: no register there", data.length, offset));
        }
    }

    /**
     * Gives send queue {@code qpn} to UAR page {@code uar}: in the decoder's table, and for the BlueFlame buffer's
     * check.
     */
    private void ownSq(long qpn, int uar) {
        blueFlame.owned(qpn, uar);
        queues.tableIn.add(new QueueTableWrite(0, qpn, uar, 1));
    }

    /**
     * The most bytes of a lone WQE a send doorbell may carry whole (QUERY_HCA_CAP's bfSize): half a
     * BlueFlame register, as mlx5's buffers alternate between the halves; 0 without a BlueFlame buffer.
     */
    public int blueFlameBytes() { return blueFlame.blueFlameBytes(); }

    @Override public byte[] mmioRead(int bar, long offset, int length) {
        if (inDmWindow(offset, length)) return dm.read(offset - dmWindow, length);
        return offset < Cmd.REG_MSIX_TABLE ? firmware.mmioRead(offset, length) : new byte[length];
    }

    /** Core clock cycles since the simulation started: the adapter's free-running clock (ibv_query_rt_values_ex). */
    public long coreCycles() { return sim.now() / core.periodPicos(); }

    /** The core clock's frequency in kHz (hca_core_clock). */
    public long coreClockKhz() { return 1_000_000_000L / core.periodPicos(); }

    /**
     * A PCIe adapter's PCI Express capability: its link as the profile trains it (pci.lane.rate's
     * generation, pci.lanes) and its largest payload (pci.max.payload), FLR capable.
     */
    private void pcieCapability(PciLink.Config pci) {
        long gtps = pci.laneBitsPerSecond() / 100_000_000L; // tenths of GT/s
        int speed = gtps == 25 ? 1 : gtps == 50 ? 2 : gtps == 80 ? 3 : gtps == 160 ? 4 : gtps == 320 ? 5 : 0;
        if (speed == 0) throw new IllegalArgumentException("pci.lane.rate " + gtps / 10.0 + " GT/s: a PCIe "
                + "generation's (2.5, 5, 8, 16 or 32 GT/s)");
        int mps = Integer.numberOfTrailingZeros(pci.maxPayloadBytes() >>> 7);
        config.pcie(speed, pci.lanes(), mps);
    }
}
