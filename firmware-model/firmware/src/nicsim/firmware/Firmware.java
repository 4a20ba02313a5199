package nicsim.firmware;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Consumer;
import java.util.function.LongConsumer;
import nicsim.abi.BigEndian;
import nicsim.abi.Cmd;
import nicsim.abi.EqeType;
import nicsim.adapter.Adapter;
import nicsim.adapter.CqePorts;
import nicsim.adapter.DoorbellDecoder;
import nicsim.adapter.EmbeddedProcessor;
import nicsim.adapter.MttPorts.XlateRsp;
import nicsim.adapter.Problems;
import nicsim.adapter.WqePorts.WqeError;
import nicsim.adapter.WqePorts;
import nicsim.fabric.Fabric;
import nicsim.fabric.Packet;
import nicsim.sim.ClockDomain;
import nicsim.sim.Counters;
import nicsim.sim.Simulator;

/**
 * The adapter's firmware (Java only: what runs on the adapter's embedded processor). It holds the
 * resource tables and routes what the blocks report to the part that owns it: the command
 * interface ({@link Commands}), memory keys and translations ({@link MemoryKeys}, {@link MttFill}),
 * the fetcher's send-queue contexts ({@link SqContexts}), completions ({@link Cq}), async events
 * ({@link EventQueue}), the atomic unit ({@link AtomicUnit}) and, per QP, the transport ({@link Qp}
 * with its requester, completer, responder and placement). It reaches host memory only by DMA
 * through the adapter's PCI port and sends packets on the {@link Fabric}.
 *
 * <p>Its own work runs on one processor: each task (a command, a WQE start, a packet) takes the
 * profile's cycles and tasks queue behind one another ({@link #exec}).
 */
public final class Firmware implements EmbeddedProcessor {
    final Simulator sim;
    final ClockDomain core;
    /** What it took from the profile. */
    final FirmwareConfig cfg;
    final Adapter adapter;
    final Counters counters;
    /** Its counters, each a handle made at start, so the data path counts without a lookup. */
    final FirmwareStat.Stats stats;
    final long wqeCycles, packetCycles;
    /** Core cycles a UMR takes per KLM entry it writes (umr.klm.cycles); -1: the profile offers no indirect mkeys. */
    final long umrKlmCycles;
    /**
     * {@code link.transmit}: a packet goes on the wire as its first beat leaves the send engine (else once all of it
     * has).
     */
    final boolean cutThroughTx;
    final int ackCoalesce, recvPrefetch;
    /** Longest message this port sends or accepts (max_msg_sz). */
    final long maxMsg;
    /**
     * {@code cqe.scatter.max}: the largest receive a QP that allows it gets in its CQE instead of its buffer (0: none).
     */
    final int cqeScatterMax;

    // the resource tables
    final Map<Long, Qp> qps = new TreeMap<>();
    // the QP looked up last: a message's doorbell, WQE and packets name the same QP, looked up with no boxing
    private Qp lastQp;

    /** QP {@code qpn}, null if there is none: the one named last without a look in the table. */
    Qp qp(long qpn) {
        Qp q = lastQp;
        if (q != null && q.qpn == qpn) return q;
        q = qps.get(qpn);
        if (q != null) lastQp = q;
        return q;
    }

    /** Adds {@code q} to the QP table. */
    void addQp(Qp q) { qps.put(q.qpn, q); }

    /** Takes QP {@code qpn} out of the table (null if there was none); a later look for it finds nothing. */
    Qp removeQp(long qpn) {
        if (lastQp != null && lastQp.qpn == qpn) lastQp = null;
        return qps.remove(qpn);
    }
    final Table<Cq> cqs;
    final Table<Srq> srqs = new Table<>(1, 1 << 16, Cmd.Syndrome.OUT_OF_SRQS, true);

    /** The host's page size: an MR's pages, as on-demand paging brings them in. */
    final long hostPage;

    /** DC transport's parameters (null: the profile offers no DC). */
    final FirmwareConfig.Dc dc;
    /** Tag matching's parameters (null: the profile offers none). */
    final FirmwareConfig.Tm tm;

    // the parts
    final Commands commands;
    /** QP0 and QP1 and the agents behind them. */
    final Management management;
    /** The multicast groups its UD QPs are attached to. */
    final Multicast multicast = new Multicast(this);
    /** The q counter sets QPs may count in (ALLOC_Q_COUNTER...). */
    final QCounters qCounters = new QCounters(this);

    /** The port's special QPs: its SMA and PMA, and what they pass up. */
    public Management management() { return management; }

    /** How many (QP, multicast group) attachments the adapter holds now; safe to read from any thread. */
    public int multicastAttachments() { return multicast.attachments; }

    /** Whether the adapter is up: INIT_HCA ran, and no TEARDOWN_HCA since. */
    public boolean initialized() { return commands.initialized(); }

    /** Commands, doorbells and register writes refused as malformed ({@link Cmd#REG_CMD_ERRORS}). */
    public int commandErrors() { return commands.errors(); }

    /** Every command refused as malformed so far (status and syndrome, the value it named, when), oldest first. */
    public List<String> refusedCommands() { return Collections.unmodifiableList(commands.refusals); }
    final MemoryKeys keys;
    final MttFill mttFill;
    final SqContexts sqContexts;
    final EventQueue events;
    final AtomicUnit atomics = new AtomicUnit();
    /** The arrays reliable QPs' streamed packets carry, given back once acknowledged and out of the fabric. */
    final PayloadPool payloads = new PayloadPool();

    /** Arrays reliable QPs' packets took for their bytes so far, and how many of them were given back ones. */
    public long[] payloadArrays() { return new long[]{payloads.taken(), payloads.reused()}; }
    final QpLedger ledger = new QpLedger(qps);

    /** Each QP's traffic as the device saw it, handed out as QPs are destroyed once someone listens. */
    public QpLedger ledger() { return ledger; }

    private long busyUntil;
    Fabric fabric;
    private int lid;
    /**
     * What the firmware did of note (its reports, its events), bounded as the adapter's problems are: a long-lived
     * serve's adapter logs a COMM_EST for every connection of every program.
     */
    private final Problems log = new Problems();

    public Firmware(Adapter adapter, FirmwareConfig cfg) {
        this.adapter = adapter;
        this.sim = adapter.simulator();
        this.core = adapter.core();
        this.cfg = cfg;
        this.counters = core.counters();
        this.stats = new FirmwareStat.Stats(counters);
        this.umrKlmCycles = cfg.umrKlmCycles();
        this.wqeCycles = cfg.wqeCycles();
        this.packetCycles = cfg.packetCycles();
        this.cutThroughTx = cfg.cutThroughTx();
        this.ackCoalesce = cfg.ackCoalesce();
        this.maxMsg = cfg.maxMsgBytes();
        this.recvPrefetch = cfg.recvPrefetch();
        this.hostPage = cfg.hostPageBytes();
        this.cqeScatterMax = cfg.cqeScatterMaxBytes();
        this.dc = cfg.dc();
        this.tm = cfg.tm();
        DoorbellDecoder.Config doorbells = adapter.parameters().doorbell();
        int maxQp = doorbells.tableEntries();
        this.cqs = new Table<>(1, adapter.cqeWriter().config().cqEntries(), Cmd.Syndrome.OUT_OF_CQS, false);
        this.commands = new Commands(this, maxQp, (int) (doorbells.windowSize() / doorbells.pageSize()));
        this.mttFill = new MttFill(adapter, cfg.mttFill(), stats, this::report, () -> this.sim.now());
        this.keys = new MemoryKeys(this, adapter.mtt().config().mkeyEntries());
        this.sqContexts = new SqContexts(this, adapter.fetcher().config().sqEntries(), maxQp);
        this.events = new EventQueue(adapter, stats, this::log);
        this.management = new Management(this);
    }

    /**
     * The firmware's log, oldest first: all of it up to twice {@link Problems#KEPT} lines, else the first and last
     * that many with one line in place of those not kept.
     */
    public List<String> log() { return log.reports().stream().map(Object::toString).toList(); }

    private void log(String what) { log.add(what, sim.now()); }

    /**
     * The objects the adapter holds now, by kind (QPs, CQs, SRQs, mkeys, PDs, UARs, XRCDs, device memory
     * allocations): what a test compares with a fresh adapter's to see that nothing leaked.
     */
    public Map<String, Integer> objects() {
        Map<String, Integer> m = new TreeMap<>();
        m.put("QPs", qps.size());
        m.put("CQs", cqs.all().size());
        m.put("SRQs", srqs.all().size());
        m.put("mkeys", keys.live());
        m.put("device memory", adapter.deviceMemory().allocations());
        commands.objects(m);
        return m;
    }

    /** Joins the fabric; returns the port's LID. */
    public int attach(Fabric f) {
        this.fabric = f;
        this.lid = f.attach(this::onPacket, sim);
        f.onLink(lid, this::onLink);
        return lid;
    }

    /** Takes over port {@code lid} of {@code f} from the adapter this one replaces (a reset); returns the LID. */
    public int reattach(Fabric f, int lid) {
        this.fabric = f;
        f.reattach(lid, this::onPacket);
        f.onLink(lid, this::onLink);
        this.lid = lid;
        return lid;
    }

    public int lid() { return lid; }

    /** The adapter's one port, as its async events name it (libibverbs' port_num). */
    public static final int PORT = 1;

    /** Whether the port's link is up: PortInfo's and query_port's ACTIVE, else DOWN (none: not on a fabric yet). */
    public boolean linkUp() { return fabric == null || fabric.linkUp(lid); }

    /**
     * The port's link went down or came up (the fabric's doing): the firmware takes the change as it takes a
     * packet, then writes PORT_ERR or PORT_ACTIVE to the event queue for the port.
     */
    private void onLink(boolean up) {
        stats.inc(up ? FirmwareStat.LINK_UPS : FirmwareStat.LINK_DOWNS);
        exec(packetCycles, () -> event(up ? EqeType.PORT_ACTIVE : EqeType.PORT_ERR, PORT));
    }
    public Fabric fabric() { return fabric; }

    void report(String what) {
        log(what);
        adapter.report(what);
    }

    // ------------------------------------------------------------------ the processor

    /** Runs {@code task} after {@code cycles} of firmware time, queued behind earlier tasks. */
    void exec(long cycles, Runnable task) {
        long start = Math.max(sim.now(), busyUntil);
        long edge = core.picosOfCycle(core.nextEdgeCycleAtOrAfter(start));
        busyUntil = edge + core.cyclesToPicos(cycles);
        sim.post(busyUntil, Simulator.Priority.DEFAULT, task); // no one cancels a task: a spare event serves
    }

    // ------------------------------------------------------------------ registers

    @Override public void mmioWrite(long offset, byte[] data) {
        if (offset == Cmd.REG_XLATE_VECTOR && data.length == 4) mttFill.setVector((int) BigEndian.get32(data, 0));
        else if (offset == Cmd.REG_XLATE_FILL && data.length == 16)
            mttFill.hostAnswer(BigEndian.get64(data, 0), BigEndian.get64(data, 8));
        else if (offset == Cmd.REG_CMDQ_ADDR && data.length == 8) commands.setQueue(BigEndian.get64(data, 0));
        else if (offset == Cmd.REG_CMD_DOORBELL && data.length == 4) commands.doorbell();
        else {
            commands.refusedWrite();
            report(String.format("MMIO write of %d bytes at BAR0+0x%x: no such initialization register", data.length,
                    offset));
        }
    }

    @Override public byte[] mmioRead(long offset, int length) {
        byte[] out = new byte[length];
        if (offset == Cmd.REG_XLATE_MISS && length == 8) {
            BigEndian.put64(out, 0, mttFill.oldestMiss());
            return out;
        }
        long v = offset == Cmd.REG_FW_REV ? Cmd.FW_REV : offset == Cmd.REG_CMD_ERRORS ? commands.errors() : 0;
        if (length >= 4) BigEndian.put32(out, 0, v);
        return out;
    }

    /**
     * A QP whose requester has retried {@code retries} times over {@code picos} of simulated time without progress; the
     * last retry's cause.
     */
    public record Stall(long qpn, int retries, long picos, String lastRetry) {}

    /** The QPs retrying with no progress for at least {@code picos} of simulated time (a watchdog's question). */
    public List<Stall> stalls(long picos) {
        List<Stall> out = new ArrayList<>();
        for (Qp q : qps.values()) {
            Stall st = q.completer.stall(picos);
            if (st != null) out.add(st);
        }
        return out;
    }

    // ------------------------------------------------------------------ events from the blocks

    /** A fetched, checked send WQE. */
    @Override public void onWqe(long qpn, int index, byte[] bytes) {
        Qp q = qp(qpn);
        if (q == null) {
            report(String.format("WQE %d for QP 0x%x, which does not exist", index, qpn));
            return;
        }
        q.requester.onWqe(index, bytes);
    }

    /** The fetcher refused a WQE: its QP's requester takes it ({@link Requester#onWqeError}). */
    @Override public void onWqeError(WqeError e) {
        Qp q = qp(e.qpn());
        if (q != null) q.requester.onWqeError(e);
    }

    /** A decoded send doorbell (a kick: a QP in ERR re-reads its receive queue to flush new receives). */
    @Override public void onDoorbell(long qpn, int producer) {
        Qp q = qp(qpn);
        if (q == null) return;
        q.requester.doorbell(producer);
        ledger.doorbell(qpn, producer, sim.now());
        q.checkSendRecord(producer);
        q.onDoorbell();
    }

    @Override public void onCqeWritten(byte[] cqe) { ledger.cqeWritten(cqe, sim.now()); }

    @Override public void onSqMiss(long qpn, int producer) {
        Qp q = qp(qpn);
        if (q != null) sqContexts.miss(q, producer);
    }

    @Override public void onSqLoaded(long qpn) {
        Qp q = qp(qpn);
        if (q != null) sqContexts.loaded(q);
    }

    @Override public boolean mayLoad(WqePorts.SqConfig c) { return sqContexts.mayLoad(c); }

    @Override public void onXlate(XlateRsp r) { keys.onResponse(r); }

    @Override public void onMttFill(long index, Consumer<long[]> done) { mttFill.fill(index, done); }

    /** The CQE writer could not write a completion. */
    @Override public void onCqError(long cqn, CqePorts.CqError.Code code) {
        Cq cq = cqs.get(cqn);
        if (cq == null || cq.error) return;
        cq.error = true;
        stats.inc(FirmwareStat.CQ_OVERFLOWS);
        event(EqeType.CQ_ERR, cqn);
        for (Qp q : qps.values())
            if (q.scq == cq || q.rcq == cq) {
                event(EqeType.QP_FATAL, q.qpn);
                q.toError();
            }
    }

    private void onPacket(Packet p) {
        stats.inc(FirmwareStat.PACKETS_IN);
        management.countRcv(p);
        if (management.onPacket(p)) return;
        if (p.destQp() == Packet.MULTICAST_QPN) {
            multicast.onPacket(p);
            return;
        }
        Qp q = qp(p.destQp());
        if (q == null) {
            stats.inc(FirmwareStat.PACKETS_NO_QP);
            return;
        }
        q.countOwn(FirmwareStat.PACKETS_IN, 1);
        if (q.dct != null) q.dct.onPacket(p); // a DC target hands each request to the responder of its initiator
        else q.responder.onPacket(p);
    }

    // ------------------------------------------------------------------ services for the transport

    /** Sends a packet. */
    void send(Packet p) { send(p, 0, left -> { }); }

    /** Sends a packet whose bytes the send engine feeds to the link in {@code feedPicos}. */
    void send(Packet p, long feedPicos) { send(p, feedPicos, left -> { }); }

    /** As above; {@code left} hears when its last bit left the adapter's port (it may wait for the link's credits). */
    void send(Packet p, long feedPicos, LongConsumer left) { send(p, feedPicos, left, null); }

    /** As above; {@code gone} (null: no one) hears once no copy of the packet is in the fabric. */
    void send(Packet p, long feedPicos, LongConsumer left, Fabric.Gone gone) {
        stats.inc(FirmwareStat.PACKETS_OUT);
        if (qCounters.allocated() > 0) { // only then may a QP count its own (a lookup per packet otherwise saved)
            Qp from = qp(p.srcQp());
            if (from != null) from.countOwn(FirmwareStat.PACKETS_OUT, 1);
        }
        management.countXmit(p);
        adapter.traceLinkBytes(p.wireBytes());
        if (Packet.multicastLid(p.dlid()) && p.grh() != null) { // the group's QPs on this adapter get it from here
            fabric.send(p, feedPicos, end -> {
                left.accept(end);
                sim.schedule(end, () -> multicast.loopback(p));
            });
            return;
        }
        fabric.send(p, feedPicos, left, gone);
    }

    /**
     * Writes a completion to {@code cq}, in order (none: an XRC SRQ destroyed under a message, the completion is lost
     * and counted).
     */
    void complete(Cq cq, long[] cqe, boolean solicited) {
        if (cq != null) cq.post(cqe, solicited);
        else stats.inc(FirmwareStat.CQES_LOST);
    }

    /** Posts an async event into the event queue. */
    void event(EqeType type, long resource) { events.post(type, resource); }
}
