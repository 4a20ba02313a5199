package nicsim.adapter;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import nicsim.abi.BigEndian;
import nicsim.abi.Cmd;
import nicsim.abi.Cqe64;
import nicsim.abi.Line64;
import nicsim.abi.UarLayout;
import nicsim.abi.WqeLayout;
import nicsim.adapter.CqePorts.CqConfig;
import nicsim.adapter.CqePorts.CqeIn;
import nicsim.adapter.WqePorts.SqConfig;
import nicsim.adapter.WqePorts.WqeBeat;
import nicsim.adapter.WqePorts.WqeError;
import nicsim.host.ConfigSpace;
import nicsim.host.PciFunction;
import nicsim.host.PciLink;
import nicsim.host.PciPort;
import nicsim.sim.ClockDomain;
import nicsim.sim.Clocked;
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
 */
public final class Adapter implements PciFunction, Clocked {

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
    private final ArrayDeque<MttPorts.XlateReq> xlateIn = new ArrayDeque<>();
    private final StreamDemux<DoorbellMsg> route;
    private PciDmaReader reader;
    private final ArrayDeque<MttPorts.MkeyContext> mkeyIn = new ArrayDeque<>();
    private final ArrayDeque<MttPorts.KlmEntry> klmIn = new ArrayDeque<>();
    private final ArrayDeque<MttPorts.MttFillRsp> fillRspIn = new ArrayDeque<>();
    private final ArrayDeque<CqePorts.CqCi> ciIn = new ArrayDeque<>();
    private final ArrayDeque<Boolean> cqeSolicited = new ArrayDeque<>();
    private boolean fillBusy;
    private final ArrayDeque<CqConfig> cqConfigIn = new ArrayDeque<>();
    private final ArrayDeque<CqeIn> cqeIn = new ArrayDeque<>();
    private final CqSettle settle = new CqSettle();
    private final Map<Long, Integer> cqVectors = new HashMap<>();
    private final ArrayDeque<Long> pendingMsix = new ArrayDeque<>();
    /** The UAR page each send queue's doorbells must come through. */
    private final Map<Long, Long> sqOwner = new HashMap<>();
    /** BlueFlame-written WQEBBs by ring address, oldest first; at most {@link #bfEntries}. */
    private final BlueFlameLines bfLines; // null: no BlueFlame buffer
    private final int bfEntries;
    // counted once per doorbell or fetch: held, not looked up by name each time
    private final Counters.Ref bfContinuations, bfWrites, bfFetchesSkipped;
    private final Counters.Ref doorbellsPolled, pollWaitPicos, mmioOutsideWindow;
    private PciPort port;
    private final OnChipMemory dm;
    private final long dmWindow;
    private final ArrayDeque<MmioWrite> mmioIn = new ArrayDeque<>();
    private final ArrayDeque<QueueTableWrite> tableIn = new ArrayDeque<>();
    private final ArrayDeque<SqConfig> sqIn = new ArrayDeque<>();
    /** Every queue of what waits here for the blocks (whether the adapter is active, whether one entry is alone). */
    private final ArrayDeque<?>[] queues = {mmioIn, tableIn, sqIn, cqConfigIn, cqeIn, pendingMsix, xlateIn, mkeyIn,
            klmIn, fillRspIn, ciIn};
    /** What the adapter found wrong: each counted, the first and last {@link Problems#KEPT} kept. */
    private final Problems problems = new Problems();
    private final List<byte[]> partial = new ArrayList<>();
    /** Per send queue, for the timeline: decoded doorbells {producer, time} and fetches {first WQEBB, count, time}. */
    private final Map<Long, ArrayDeque<long[]>> doorbellsSeen = new HashMap<>();
    private final Map<Long, ArrayDeque<long[]>> fetchesSeen = new HashMap<>();
    // by fetcher slot: the QP loaded there (-1: none) and the next WQEBB it fetches, read at each fetch with no boxing
    private final long[] slotQpn;
    private final int[] slotNext;

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
        this.tracePrefix = clockName.equals("core") ? "" : clockName.replaceFirst("\\.core$", "") + "/";
        this.config = new ConfigSpace(Cmd.PCI_VENDOR, Cmd.PCI_DEVICE, 0x02070000, new long[]{cfg.bar0Bytes(), 0, 0},
                Cmd.MSIX_VECTORS, 0, Cmd.REG_MSIX_TABLE);
        if (cfg.pci().pcie()) pcieCapability(cfg.pci());
        this.dbCfg = cfg.doorbell();
        this.pollInterval = cfg.pollIntervalPs();
        this.bfEntries = cfg.bfBufferEntries();
        this.bfLines = bfEntries == 0 ? null : new BlueFlameLines(bfEntries);
        this.bfContinuations = core.counters().ref(AdapterStat.BLUEFLAME_CONTINUATIONS);
        this.bfWrites = core.counters().ref(AdapterStat.BLUEFLAME_WRITES);
        this.bfFetchesSkipped = core.counters().ref(AdapterStat.BLUEFLAME_FETCHES_SKIPPED);
        this.doorbellsPolled = core.counters().ref(AdapterStat.DOORBELLS_POLLED);
        this.pollWaitPicos = core.counters().ref(AdapterStat.DOORBELL_POLL_WAIT_PS);
        this.mmioOutsideWindow = core.counters().ref(AdapterStat.MMIO_OUTSIDE_DOORBELL_WINDOW);
        this.decoder = new DoorbellDecoder(core, dbCfg);
        this.fetcher = new WqeFetcher(core, cfg.fetcher());
        slotQpn = new long[fetcher.config().sqEntries()];
        Arrays.fill(slotQpn, -1);
        slotNext = new int[slotQpn.length];
        this.cqeWriter = new CqeWriter(core, cfg.cqeWriter());
        this.mtt = new MttWalker(core, cfg.mtt());
        this.dma = new DmaPath(sim, cfg.dma(), clockName.replaceFirst("core$", ""), () -> port);
        this.dm = new OnChipMemory(cfg.dm(), core.periodPicos());
        this.dmWindow = dm.size() == 0 ? -1 : cfg.dm().barOffsetBytes();
        // on the timeline, each set of DMA engines works on its own transfer
        for (String engine : List.of("DmaEngine host", "DmaEngine send")) sim.trace()
                .lanes(tracePrefix + engine, cfg.dma().channels());
        // decoded doorbells: send doorbells to the fetcher, CQ arms to the CQE writer
        route = new StreamDemux<>("doorbellRoute", core, DoorbellMsg.LAYOUT, 2,
                m -> m.kind() == DoorbellMsg.Kind.CQ_ARM.ordinal() ? 1 : 0);
        decoder.doorbell().connect(route.input());
        route.output(0).connect(fetcher.doorbell());
        route.output(1).connect(cqeWriter.arm());
        core.add(this);
        this.firmware = firmware.apply(this);
    }

    public Simulator simulator() { return sim; }

    private String tracePrefix = "";

    /**
     * The trace transaction of a send WQE: "qp0x&lt;qpn&gt;/wqe&lt;index&gt;", prefixed by the node when there are
     * several adapters.
     */
    public String wqeTxn(long qpn, long index) {
        if (qpn != txnQpn) {
            txnPrefix = tracePrefix + "qp0x" + Long.toHexString(qpn) + "/wqe";
            txnQpn = qpn;
        }
        return txnPrefix + index;
    }

    // the transaction names' start for the QP named last (a traced run names the same QP's WQEs many times over)
    private long txnQpn = -1;
    private String txnPrefix;

    /**
     * The block that does the work ending in each stage of a WQE's timeline: the track the stage
     * goes on. "received" is the peer's receive of the message, ending its time on the link.
     */
    private static final Map<String, String> STAGE_BLOCK = Map.ofEntries(
            Map.entry("doorbell_decoded", "DoorbellDecoder"), Map.entry("fetch_issued", "WqeFetcher"),
            Map.entry("delivered", "WqeFetcher"), Map.entry("translated", "MttWalker"),
            Map.entry("page_fault", "MttWalker"), Map.entry("payload_read", "DmaEngine host"),
            Map.entry("on_wire", "DmaEngine send"), Map.entry("received", "Link"), Map.entry("acked", "Link"),
            Map.entry("cqe_stamped", "CqeWriter"), Map.entry("cqe_written", "CqeWriter"));

    /** This adapter's timeline track of a block: "node0/MttWalker". */
    private String track(String stage) {
        String t = tracks.get(stage);
        if (t == null) tracks.put(stage, t = tracePrefix + STAGE_BLOCK.getOrDefault(stage, "Firmware"));
        return t;
    }

    /** {@link #track} of each stage named so far. */
    private final Map<String, String> tracks = new HashMap<>();

    /**
     * Whether the per-WQE timeline (block "wqe") is being recorded: callers build a stage's detail
     * only then, so a run without a timeline pays nothing for it.
     */
    public boolean tracingWqe() { return sim.trace().enabled("wqe"); }

    /** Records a stage of send WQE {@code index} of {@code qpn} in the per-WQE timeline (block "wqe"). */
    public void traceWqe(long qpn, long index, String stage, String detail) {
        if (tracingWqe()) sim.trace().recordOn("wqe", track(stage), wqeTxn(qpn, index), stage, detail);
    }

    /**
     * Send WQE {@code index} of {@code qpn} puts the first packet of its message on the wire, from
     * port {@code lid} at {@code psn}: the peer's adapter finds the WQE's timeline by these.
     */
    public void traceMessageOut(long qpn, long index, int lid, int psn, String detail) {
        if (!tracingWqe()) return;
        traceWqe(qpn, index, "on_wire", detail);
        sim.trace().alias(messageKey(lid, qpn, psn), wqeTxn(qpn, index));
    }

    /** A packet that starts a message arrived: the stage "received" of its sender's WQE, on this adapter's track. */
    public void traceMessageIn(int slid, long srcQp, int psn, String detail) {
        if (!tracingWqe()) return;
        String txn = sim.trace().takeAlias(messageKey(slid, srcQp, psn));
        if (txn != null) sim.trace().recordOn("wqe", track("received"), txn, "received", detail);
    }

    /** Bytes this adapter's port sent now (the timeline's link bandwidth counter). */
    public void traceLinkBytes(int bytes) {
        if (tracingWqe()) sim.trace().sample("wqe", tracePrefix + "Link tx", bytes, true);
    }

    private static String messageKey(int lid, long qpn, int psn) { return lid + "/" + qpn + "/" + psn; }
    public MttWalker mtt() { return mtt; }
    /** The payload path: host reads and writes through the DMA engines and SRAM. */
    public DmaPath dma() { return dma; }
    /** The firmware: command interface, QP contexts and transport. */
    /** The adapter's PCI port (DMA, MSI-X), once attached to a bus. */
    public PciPort port() { return port; }

    /** Records a problem the adapter refused or could not handle (see {@link #errors()}). */
    public void report(Object problem) { problem(problem); }

    private void problem(Object p) {
        problems.add(p, sim.now());
        // on the timeline too, where the driver's other doings are (when the adapter is traced)
        String n = "violation#" + problems.count();
        sim.trace().recordOn("Adapter", tracePrefix + "Adapter", n, "violation", p.toString());
    }

    /** The problems found so far: each counted, the first and last kept with their times (no copy). */
    public Problems problems() { return problems; }

    /** How many problems have been found so far, kept or not. */
    public long errorCount() { return problems.count(); }

    /** Firmware: writes an mkey context into the MttWalker's table. */
    public void mkeyWrite(MttPorts.MkeyContext c) { mkeyIn.add(c); queued(); }

    /**
     * Writes an indirect mkey's list entry into the walker's KLM table (one per edge, in order, before any context
     * written after it).
     */
    public void klmWrite(MttPorts.KlmEntry e) { klmIn.add(e); queued(); }

    /** Firmware: asks the MttWalker to translate; the answer goes to {@code Firmware.onXlate}. */
    public void translate(MttPorts.XlateReq r) { xlateIn.add(r); queued(); }

    /** Firmware: a completion for the CqeWriter. */
    public void postCqe(long cqn, long[] cqe, boolean solicited) {
        cqeIn.add(new CqeIn(cqn, solicited ? 1 : 0, cqe));
        settle.posted(cqn);
        queued();
    }

    /** Firmware: runs {@code then} once every completion posted to CQ {@code cqn} is in host memory (or refused). */
    public void whenCqSettled(long cqn, Runnable then) { settle.whenSettled(cqn, then); }

    /**
     * Firmware: CQ {@code cqn} writes from now on into the ring at {@code ringBase} of 2^logSize
     * entries, from its first slot, on the same MSI-X vector, disarmed. Completions posted after this
     * go to the new ring.
     */
    public void moveCq(long cqn, long ringBase, int logSize) {
        cqConfigIn.add(new CqConfig(cqn, ringBase, logSize, cqVectors.getOrDefault(cqn, 0), 1));
        queued();
    }

    /** Firmware: the consumer index software has reached (read from the CQ doorbell record). */
    public void cqConsumerIndex(long cqn, long ci) { ciIn.add(new CqePorts.CqCi(cqn, ci & 0xFFFFFF)); queued(); }

    /**
     * Firmware: registers the send queue of a QP it owns in the decoder's table (doorbells for it are
     * accepted from {@code uar}'s page); its WQEs go to the firmware's transport. The fetcher holds
     * the queue's context only once {@link #loadSq} puts it there.
     */
    public void addQpQueue(long qpn, int uar) {
        ownSq(qpn, uar);
        doorbellsSeen.put(qpn, new ArrayDeque<>());
        fetchesSeen.put(qpn, new ArrayDeque<>());
        queued();
    }

    /**
     * Firmware: loads a send queue's context into its fetcher slot (QPN low bits), replacing whatever
     * queue was there: ring, size, the next WQEBB to fetch and the producer index. {@code Firmware.onSqLoaded}
     * hears when the fetcher has taken it.
     */
    public void loadSq(long qpn, long ringBase, int logSize, int start, int producer) {
        SqConfig sc = new SqConfig(qpn, ringBase, logSize, start & 0xFFFF, producer & 0xFFFF, 1);
        sqConfigs.put(qpn, sc);
        bfQpn = -1;
        sqIn.add(sc);
        int slot = slot(qpn);
        slotQpn[slot] = qpn;
        slotNext[slot] = start & 0xFFFF;
        ArrayDeque<long[]> d = doorbellsSeen.get(qpn), f = fetchesSeen.get(qpn);
        if (d != null) d.clear();
        if (f != null) f.clear();
        queued();
    }

    /** The fetcher slot of send queue {@code qpn}: its QPN's low bits. */
    private int slot(long qpn) { return (int) (qpn & (slotQpn.length - 1)); }

    /**
     * Firmware: rings {@code qpn}'s send doorbell from inside the adapter (after loading its context), with {@code
     * producer}.
     */
    public void reRing(long qpn, int uar, int producer) {
        mmioIn.add(MmioWrite.of(sendDoorbellOffset(uar), WqeLayout.ctrl(0, producer & 0xFFFF, qpn, 0)));
        queued();
    }

    /** Firmware: removes send queue {@code qpn} from the decoder's table and, if {@code resident}, from the fetcher. */
    public void destroySq(long qpn, boolean resident) {
        SqConfig old = sqConfigs.remove(qpn);
        tableIn.add(new QueueTableWrite(0, qpn, 0, 0));
        sqOwner.remove(qpn);
        bfQpn = -1;
        doorbellsSeen.remove(qpn);
        fetchesSeen.remove(qpn);
        if (slotQpn[slot(qpn)] == qpn) slotQpn[slot(qpn)] = -1;
        if (resident && old != null) sqIn.add(new SqConfig(qpn, old.base(), old.logSize(), 0));
        queued();
    }

    /** Firmware: removes CQ {@code cqn}. */
    public void destroyCq(long cqn) {
        tableIn.add(new QueueTableWrite(1, cqn, 0, 0));
        cqConfigIn.add(new CqConfig(cqn, 0, 1, 0, 0));
        cqVectors.remove(cqn);
        queued();
    }

    private final Map<Long, SqConfig> sqConfigs = new HashMap<>();

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
        tableIn.add(new QueueTableWrite(1, cqn, uar, 1));
        cqConfigIn.add(new CqConfig(cqn, ringBase, logSize, vector, 1));
        cqVectors.put(cqn, vector);
        queued();
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
        reader = new PciDmaReader(core, port, fetcher.dmaReq(), fetcher.dmaRsp(), this::blueFlameLines);
        core.coastWith(new CoreCoast(), core.blocks());
    }

    /**
     * The core clock coasts over the edges its blocks run alone, inside themselves: the DoorbellDecoder's decode of the
     * write it holds, the doorbell route's hand-over of a send doorbell to a quiet WqeFetcher, the fetcher's pick of
     * the next ring read, the MttWalker's checks and walk steps; and over the two edges after a pick when the
     * BlueFlame buffer holds the read whole: the reader takes it and serves it from there, and hands the first WQEBB
     * back. Only while nothing waits here for the blocks (but one doorbell write or one translation, which the quiet
     * decoder or walker takes on the coast's first edge, even the edge a stopped clock is woken for) and every other
     * block on the clock is idle: no input from outside them is valid on those edges, so the busy blocks change only
     * among themselves, each as on its own. The edge that shows what they made runs through the wires, but for the
     * walker's whole answer to a translation it took in the coast: that edge hands it to the firmware without them.
     */
    private final class CoreCoast implements ClockDomain.Coaster {
        // which blocks step in the coast the last look-ahead found (the rest are idle on its edges), whether the
        // decoder takes a write on its first edge (the decode is then on the second), whether the walker takes a
        // translation there (its check then follows), whether the route hands the fetcher a doorbell on its first
        // edge (the pick is then on the second), and whether the fetcher's pick goes on to the read served from
        // BlueFlame
        private boolean decoding, taking, xlating, routing, picking, walking, serving;
        // the walker alone takes a translation and holds its whole answer at the coast's end: the edge after hands it
        // to the firmware, at its own time, with no wires (coastsEdgeAfter); found: the coast's edges before that one
        private boolean answering;
        private long found;

        @Override public long coastable() {
            answering = false;
            if (cqeWriter.active() || reader.active()) return 0;
            long d = decoder.quietEdges(), f = fetcher.quietEdges(), w = mtt.quietEdges();
            // a doorbell write alone here for the quiet decoder, which takes it, then decodes it; or a translation
            // alone here for the idle walker, which takes it, then checks it and walks
            taking = d == MttWalker.IDLE_EDGES && alone(mmioIn);
            xlating = w == MttWalker.IDLE_EDGES && alone(xlateIn);
            if (xlating) w = mtt.quietEdgesTaking(xlateIn.peekFirst());
            if (xlating ? w == 0 : !xlateIn.isEmpty() || active() && !taking) return 0;
            if (taking) d = 2;
            DoorbellMsg held = null;
            if (route.active()) {
                // a send doorbell alone in the route, which the quiet fetcher takes (nothing comes in behind it)
                held = route.soleFor(0);
                if (held == null || d == 0 || !fetcher.takesQuietly(held)) return 0;
            }
            routing = held != null;
            WqePorts.DmaReadReq read = routing ? fetcher.readAfter(held) : f == 1 ? fetcher.nextRead() : null;
            serving = read != null && reader.idle() && heldWhole(read);
            if (routing) f = serving ? 4 : 2;
            else if (serving) f = 3;
            long n = Math.min(d, Math.min(f, w));
            if (n == MttWalker.IDLE_EDGES) return 0;
            decoding = d != MttWalker.IDLE_EDGES;
            picking = f != MttWalker.IDLE_EDGES;
            walking = w != MttWalker.IDLE_EDGES;
            answering = xlating && !decoding && !picking && !routing && n == w
                    && mtt.answersWholeTaking(xlateIn.peekFirst());
            found = n;
            return n;
        }

        /** The edge after a translation's coast hands the walker's answer over: it needs no wires. */
        @Override public boolean coastsEdgeAfter() { return answering; }

        /** A doorbell write or a translation wakes the stopped clock: its block takes it in a coast. */
        @Override public boolean coastsFromStop() { return true; }

        /**
         * Found at the wake itself: every input comes through a queue here before {@link #queued} wakes the clock,
         * or from the reader before it does. Not when doorbells are polled: a BlueFlame write keeps its lines at once
         * and wakes the clock only at the poll, and a fetch looked ahead for meanwhile may find them.
         */
        @Override public boolean coastsAtWake() { return pollInterval == 0; }

        @Override public void coast(long first, long n) {
            boolean handOver = answering && n > found; // the edge after the coast is run too
            if (handOver) n = found;
            if (taking) {
                decoder.coastMmio(taken(mmioIn));
                core.stirred(decoder);
            }
            if (decoding && (!taking || n > 1)) decoder.coast();
            if (xlating) {
                mtt.coastTake(taken(xlateIn));
                core.stirred(mtt);
            }
            int pick = routing ? 1 : 0; // the edge of the coast the fetcher picks on
            if (routing) {
                fetcher.coastRing(route.coastPass());
                core.stirred(fetcher);
            }
            if (picking && n > pick) fetcher.coast();
            if (walking) mtt.coast(xlating ? n - 1 : n);
            if (handOver) firmware.onXlate(mtt.coastAnswerTaken()); // as the edge's update would hand it over
            if (!serving || n < pick + 2) return;
            WqePorts.DmaReadReq r = fetcher.coastReadTaken();
            fetchIssued(r, core.picosOfCycle(first + pick + 1));
            reader.coastTake(r);
            if (n > pick + 2) fetcher.coastBeat(reader.coastBeatTaken());
        }
    }

    /** Whether one entry of {@code q} is all that waits here for the blocks. */
    private boolean alone(ArrayDeque<?> q) {
        if (q.size() != 1) return false;
        for (ArrayDeque<?> other : queues) if (other != q && !other.isEmpty()) return false;
        return true;
    }

    /** Whether the BlueFlame buffer holds every WQEBB of ring read {@code r} (the reader serves it from there). */
    private boolean heldWhole(WqePorts.DmaReadReq r) {
        if (bfLines == null || bfLines.isEmpty()) return false;
        for (long i = 0; i < r.length() / WqeLayout.WQEBB; i++)
            if (!bfLines.contains(r.addr() + i * WqeLayout.WQEBB)) return false;
        return true;
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
            // a BlueFlame write (a whole WQE) rings with its ctrl segment's first 8 bytes; a WQE of up to
            // blueFlameBytes() written in one burst is also kept in the BlueFlame buffer, where the fetcher's
            // read of it finds it (a WQE written in 64-byte chunks keeps only its first)
            long po = (offset - dbCfg.windowBase()) % dbCfg.pageSize();
            boolean wqeHead = po >= UarLayout.BF_OFFSET && (po - UarLayout.BF_OFFSET) % (dbCfg.bfRegSize() / 2) == 0;
            if (data.length > 8 && !wqeHead) { // the rest of a WQE written in 64-byte chunks
                bfContinuations.inc();
                queued();
                return;
            }
            if (data.length > 8) bfWrites.inc();
            int most = Math.max(WqeLayout.WQEBB, blueFlameBytes());
            boolean whole = data.length % WqeLayout.WQEBB == 0 && data.length <= most;
            long page = (offset - dbCfg.windowBase()) / dbCfg.pageSize();
            if (wqeHead && whole && data.length > 0) keepBlueFlame(page, data);
            MmioWrite w = MmioWrite.of(offset, Arrays.copyOf(data, Math.min(data.length, 8)));
            if (pollInterval > 0) {
                // no hardware doorbell: the write lands in adapter SRAM, where the control program finds it on its next
                // poll
                long at = -Math.floorDiv(-sim.now(), pollInterval) * pollInterval;
                doorbellsPolled.inc();
                pollWaitPicos.add(at - sim.now());
                sim.schedule(at, () -> { mmioIn.add(w); queued(); });
                return;
            }
            mmioIn.add(w);
            queued();
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
        sqOwner.put(qpn, (long) uar);
        bfQpn = -1;
        tableIn.add(new QueueTableWrite(0, qpn, uar, 1));
    }

    /**
     * The most bytes of a lone WQE a send doorbell may carry whole (QUERY_HCA_CAP's bfSize): half a
     * BlueFlame register, as mlx5's buffers alternate between the halves; 0 without a BlueFlame buffer.
     */
    public int blueFlameBytes() {
        return bfEntries == 0 ? 0 : Math.min(dbCfg.bfRegSize() / 2, bfEntries * WqeLayout.WQEBB);
    }

    /**
     * Keeps a BlueFlame-written WQE's WQEBBs under their ring addresses, if the page it came through
     * owns the queue its ctrl segment names (the decoder's own check; a write through a foreign page
     * is rejected there and leaves nothing here). The oldest lines go when the buffer is full.
     */
    // keepBlueFlame's last queue, its context and its owner's page (-1: none); a change to either table forgets it
    private long bfQpn = -1, bfOwner = -1;
    private SqConfig bfSq;

    private void keepBlueFlame(long page, byte[] wqe) {
        if (bfEntries == 0) return;
        long ctrl = ctrlWord(wqe);
        long qpn = WqeLayout.qpn(ctrl);
        int index = WqeLayout.index(ctrl);
        if (qpn != bfQpn) { // a run of posts to one queue looks its context and owner up once, with no boxing
            bfSq = sqConfigs.get(qpn);
            Long owner = sqOwner.get(qpn);
            bfOwner = owner == null ? -1 : owner;
            bfQpn = qpn;
        }
        SqConfig sc = bfSq;
        if (sc == null || bfOwner != page) return;
        int mask = (1 << sc.logSize()) - 1;
        for (int k = 0; k < wqe.length / WqeLayout.WQEBB; k++) {
            long pa = sc.base() + (long) ((index + k) & mask) * WqeLayout.WQEBB;
            bfLines.keep(pa, Arrays.copyOfRange(wqe, k * WqeLayout.WQEBB, (k + 1) * WqeLayout.WQEBB));
        }
    }

    /** The first 8 bytes of a WQE as the first word of its WQEBB's {@link Line64#words}: its ctrl segment's word. */
    private static long ctrlWord(byte[] wqe) {
        long w = 0;
        for (int j = 7; j >= 0; j--) w = w << 8 | wqe[j] & 0xff;
        return w;
    }

    /**
     * The fetcher's ring read, served from the BlueFlame buffer when every WQEBB it asks for is
     * there (no PCIe read: the WQE came with its doorbell); otherwise null, and the lines it covers
     * are dropped (the ring is read instead).
     */
    private byte[] blueFlameLines(WqePorts.DmaReadReq r) {
        if (bfLines == null || bfLines.isEmpty()) return null;
        int n = (int) (r.length() / WqeLayout.WQEBB);
        boolean all = true;
        for (int i = 0; i < n && all; i++) all = bfLines.contains(r.addr() + (long) i * WqeLayout.WQEBB);
        if (all && n == 1) { // one line: handed over as it is, out of the buffer
            bfFetchesSkipped.inc();
            return bfLines.remove(r.addr());
        }
        byte[] out = all ? new byte[(int) r.length()] : null;
        for (int i = 0; i < n; i++) {
            byte[] line = bfLines.remove(r.addr() + (long) i * WqeLayout.WQEBB);
            if (out != null) System.arraycopy(line, 0, out, i * WqeLayout.WQEBB, WqeLayout.WQEBB);
        }
        if (out != null) bfFetchesSkipped.inc();
        return out;
    }

    @Override public byte[] mmioRead(int bar, long offset, int length) {
        if (inDmWindow(offset, length)) return dm.read(offset - dmWindow, length);
        return offset < Cmd.REG_MSIX_TABLE ? firmware.mmioRead(offset, length) : new byte[length];
    }

    // the wires show the queues as they are: an edge's drive would change nothing (a queue the
    // firmware fills from outside, or one its update takes from, clears this)
    private boolean wiresCurrent;

    /** Something was queued for the blocks from outside their domain: the next edge drives it. */
    private void queued() {
        wiresCurrent = false;
        core.wake();
    }

    @Override public void drive() {
        // a context waiting in sqIn goes out once the firmware lets it, which no queue here shows
        if (wiresCurrent && sqIn.isEmpty()) return;
        wiresCurrent = true;
        if (mmioIn.isEmpty()) decoder.mmio().idle(); else decoder.mmio().push(mmioIn.peekFirst());
        if (tableIn.isEmpty()) decoder.tableWrite().idle(); else decoder.tableWrite().push(tableIn.peekFirst());
        if (sqIn.isEmpty() || !firmware.mayLoad(sqIn.peekFirst())) fetcher.sqConfig().idle(); else fetcher.sqConfig()
                .push(sqIn.peekFirst());
        fetcher.wqe().ready(true);
        if (cqConfigIn.isEmpty()) cqeWriter.cqConfig().idle(); else cqeWriter.cqConfig().push(cqConfigIn.peekFirst());
        // a completion offered stays offered till the writer takes it (the stream's contract): a consumer-index
        // update or a configuration of its CQ that came meanwhile (a destroy, a resize) waits behind it, as it
        // would had the writer taken it at once
        if (cqeOffered) { cqeWriter.ci().idle(); cqeWriter.cqe().push(cqeIn.peekFirst()); }
        // a consumer-index update goes a cycle ahead of the completion it makes room for
        else if (!ciIn.isEmpty()) { cqeWriter.ci().push(ciIn.peekFirst()); cqeWriter.cqe().idle(); }
        else {
            cqeWriter.ci().idle();
            // a completion waits for its CQ's configuration still on the way (a ring moved by RESIZE_CQ)
            if (cqeIn.isEmpty() || configuring(cqeIn.peekFirst().cqn())) cqeWriter.cqe().idle();
            else {
                cqeWriter.cqe().push(cqeIn.peekFirst());
                cqeOffered = true;
            }
        }
        if (xlateIn.isEmpty()) mtt.req().idle(); else mtt.req().push(xlateIn.peekFirst());
        // a context waits for the KLM entries written before it, so an indirect mkey is never VALID over stale entries
        if (mkeyIn.isEmpty() || !klmIn.isEmpty()) mtt.mkeyWrite().idle(); else mtt.mkeyWrite().push(mkeyIn.peekFirst());
        if (klmIn.isEmpty()) mtt.klmWrite().idle(); else mtt.klmWrite().push(klmIn.peekFirst());
        if (fillRspIn.isEmpty()) mtt.fillRsp().idle(); else mtt.fillRsp().push(fillRspIn.peekFirst());
        mtt.rsp().ready(true);
        mtt.fill().ready(!fillBusy);
        cqeWriter.write().ready(true);
    }

    /** Whether the head of cqeIn is on the CqeWriter's input, not yet taken: it must stay there till it is. */
    private boolean cqeOffered;

    private boolean configuring(long cqn) {
        for (CqConfig c : cqConfigIn) if (c.cqn() == cqn) return true;
        return false;
    }

    @Override public void update() {
        if (decoder.mmio().valid()) taken(mmioIn);
        if (decoder.tableWrite().valid()) taken(tableIn);
        if (fetcher.sqConfig().valid()) {
            SqConfig c = taken(sqIn);
            if (c != null && c.valid() == 1) firmware.onSqLoaded(c.qpn());
        }
        if (decoder.doorbell().fire()) {
            DoorbellMsg m = decoder.doorbell().payload();
            ArrayDeque<long[]> seen = tracingWqe() ? doorbellsSeen.get(m.qpn()) : null;
            if (seen != null) seen.add(new long[]{m.index(), sim.now()});
            if (m.kind() != DoorbellMsg.Kind.CQ_ARM.ordinal()) firmware.onDoorbell(m.qpn(), (int) m.index());
        }
        if (decoder.error().valid()) problem(decoder.error().payload());
        if (fetcher.error().valid()) {
            WqeError e = fetcher.error().payload();
            problem(e);
            firmware.onWqeError(e);
        }
        if (fetcher.dropped().valid()) {
            DoorbellMsg d = fetcher.dropped().payload();
            // a QP whose context is not in the fetcher: a context-cache miss for the firmware, not an error
            firmware.onSqMiss(d.qpn(), (int) d.index());
        }
        if (fetcher.dmaReq().fire()) fetchIssued(fetcher.dmaReq().payload(), sim.now());
        if (fetcher.wqe().fire()) collect(fetcher.wqe().payload());
        if (cqeWriter.cqConfig().valid()) taken(cqConfigIn);
        if (cqeWriter.cqe().fire()) {
            settle.accepted(taken(cqeIn).cqn());
            cqeOffered = false;
        }
        if (cqeWriter.ci().valid()) taken(ciIn);
        if (mtt.req().fire()) taken(xlateIn);
        if (mtt.mkeyWrite().valid()) taken(mkeyIn);
        if (mtt.klmWrite().valid()) taken(klmIn);
        if (mtt.fillRsp().fire()) { taken(fillRspIn); fillBusy = false; }
        if (mtt.rsp().fire()) firmware.onXlate(mtt.rsp().payload());
        if (mtt.fill().fire()) {
            fillBusy = true;
            wiresCurrent = false;
            firmware.onMttFill(mtt.fill().payload().index(), r -> {
                fillRspIn.add(new MttPorts.MttFillRsp(r[0], r[1]));
                queued();
            });
        }
        if (cqeWriter.error().valid()) {
            settle.refused();
            problem(cqeWriter.error().payload());
            firmware.onCqError(cqeWriter.error().payload().cqn(), cqeWriter.error().payload().reason());
        }
        if (cqeWriter.dropped().valid()) problem("CQ arm for an unconfigured CQ: " + cqeWriter.dropped().payload());
        if (cqeWriter.event().valid()) { // it follows the CQE write the writer holds, if one; else it leaves now
            if (cqeWriter.write().valid()) pendingMsix.add(cqeWriter.event().payload().vector());
            else port.msix((int) cqeWriter.event().payload().vector());
        }
        if (cqeWriter.write().fire()) {
            CqePorts.Write64 w = cqeWriter.write().payload();
            byte[] entry = Line64.bytes(w.data());
            long cqn = settle.writing();
            stamp(entry);
            port.dmaWrite(w.addr(), entry, r -> {
                settle.written(cqn);
                if (r.status() != PciPort.DmaStatus.OK) {
                    problem(String.format("CQE write to 0x%x failed: %s", w.addr(), r.status()));
                    return;
                }
                firmware.onCqeWritten(entry);
                if (tracingWqe()) { // the WQE's last stage: its CQE is in host memory
                    Cqe64.View v = Cqe64.parse(entry);
                    if (v.opcode() == Cqe64.REQ || v.opcode() == Cqe64.REQ_ERR)
                        traceWqe(v.qpn(), v.wqeCounter(), "cqe_written",
                                String.format("CQE opcode %d at 0x%x", v.opcode(), w.addr()));
                }
            });
            // an event's MSI-X follows its CQE's write on the link (posted writes stay in order): each event
            // waiting was raised while this write was held (a completion's, or an arm's behind it)
            while (!pendingMsix.isEmpty()) port.msix((int) (long) pendingMsix.pollFirst());
        }
    }

    /** The fetcher's ring read {@code r} left it at {@code time}: the WQEBBs its queue fetches next, the timeline's. */
    private void fetchIssued(WqePorts.DmaReadReq r, long time) {
        int slot = (int) r.tag();
        if (slotQpn[slot] < 0) return;
        int count = (int) (r.length() / WqeLayout.WQEBB), first = slotNext[slot];
        if (tracingWqe()) fetchesSeen.get(slotQpn[slot]).add(new long[]{first, count, time});
        slotNext[slot] = (first + count) & 0xFFFF;
    }

    /**
     * The completion timestamp of a CQE on its way to host memory, as mlx5's CQE carries it: the
     * core clock cycle its write left the writer, a free-running count from the simulation's start
     * (an error's CQE has none). A traced WQE's timeline marks the same instant as "cqe_stamped".
     */
    private void stamp(byte[] entry) {
        if (Cqe64.isError(entry)) return;
        // moved by RESIZE_CQ: it keeps the time it was first written
        if (BigEndian.get64(entry, Cqe64.TIMESTAMP) != 0) return;
        long cycles = sim.now() / core.periodPicos();
        BigEndian.put64(entry, Cqe64.TIMESTAMP, cycles);
        if (tracingWqe()) {
            Cqe64.View v = Cqe64.parse(entry);
            if (v.opcode() == Cqe64.REQ)
                traceWqe(v.qpn(), v.wqeCounter(), "cqe_stamped", "timestamp " + cycles + " cycles");
        }
    }

    /** Core clock cycles since the simulation started: the adapter's free-running clock (ibv_query_rt_values_ex). */
    public long coreCycles() { return sim.now() / core.periodPicos(); }

    /** The core clock's frequency in kHz (hca_core_clock). */
    public long coreClockKhz() { return 1_000_000_000L / core.periodPicos(); }

    /** The head of {@code q}, which a block took on this edge: the next drive shows the one behind it. */
    private <T> T taken(ArrayDeque<T> q) {
        wiresCurrent = false;
        return q.pollFirst();
    }

    private void collect(WqeBeat b) {
        byte[] bb = Line64.bytes(b.data());
        if (b.first() != 0) partial.clear();
        partial.add(bb);
        if (b.last() != 0) {
            byte[] all = bb; // a WQE of one WQEBB is its bytes
            if (partial.size() > 1) {
                all = new byte[partial.size() * WqeLayout.WQEBB];
                for (int i = 0; i < partial.size(); i++)
                    System.arraycopy(partial.get(i), 0, all, i * WqeLayout.WQEBB, WqeLayout.WQEBB);
            }
            long first = (b.index() - partial.size() + 1) & 0xFFFF;
            if (tracingWqe()) timeline(b.qpn(), first, partial.size(), WqeLayout.opcode(b.data()[0]));
            firmware.onWqe(b.qpn(), (int) first, all);
            partial.clear();
        }
    }

    /**
     * The stages of WQE {@code first} of {@code qpn}: the doorbell that announced it, the read that fetched it, now.
     */
    private void timeline(long qpn, long first, int bbs, int opcode) {
        String txn = wqeTxn(qpn, first);
        ArrayDeque<long[]> dbs = doorbellsSeen.get(qpn), fs = fetchesSeen.get(qpn);
        if (dbs == null) return;
        // a doorbell announces WQEBBs before its producer index: drop those wholly behind this WQE
        while (!dbs.isEmpty() && !WqeLayout.announced(dbs.peekFirst()[0], first)) dbs.pollFirst();
        if (!dbs.isEmpty()) {
            long[] db = dbs.peekFirst();
            sim.trace().recordAt(db[1], "wqe", track("doorbell_decoded"), txn, "doorbell_decoded", "producer " + db[0]);
        }
        while (!fs.isEmpty() && ((first - fs.peekFirst()[0]) & 0xFFFF) >= fs.peekFirst()[1]) fs.pollFirst();
        if (!fs.isEmpty()) {
            long[] fetch = fs.peekFirst();
            sim.trace().recordAt(fetch[2], "wqe", track("fetch_issued"), txn, "fetch_issued", fetch[1] + " WQEBB read");
        }
        traceWqe(qpn, first, "delivered", "opcode 0x" + Integer.toHexString(opcode) + ", " + bbs + " WQEBB");
    }

    /**
     * Whether a queue has something to hand on: a translation already at the walker's input waits for the walker,
     * active while it can take it.
     */
    @Override public boolean active() {
        for (ArrayDeque<?> q : queues) if (!q.isEmpty() && (q != xlateIn || !mtt.req().valid())) return true;
        return false;
    }

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
