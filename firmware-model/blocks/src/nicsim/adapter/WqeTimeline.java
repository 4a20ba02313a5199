package nicsim.adapter;

import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import nicsim.abi.WqeLayout;
import nicsim.sim.Simulator;

/**
 * An adapter's part of the per-WQE timeline in the simulator's trace (block "wqe", transaction
 * "qp0x&lt;qpn&gt;/wqe&lt;index&gt;"): each stage on the track of the block that did its work, and what it keeps to
 * give a delivered WQE the stages before it, the doorbell that announced it decoded and the ring read that fetched it
 * issued. Nothing here changes what the adapter does; a run without a timeline pays only the look whether one is
 * recorded ({@link #tracing}). With a {@link StageLog} it keeps the stages' times there as numbers instead, and
 * builds no names or details.
 */
final class WqeTimeline {

    private final Simulator sim;
    /** "": the only adapter; else its node's name and a slash, before each track and transaction. */
    private final String tracePrefix;
    /** Per send queue, for the timeline: decoded doorbells {producer, time} and fetches {first WQEBB, count, time}. */
    private final Map<Long, ArrayDeque<long[]>> doorbellsSeen = new HashMap<>();
    private final Map<Long, ArrayDeque<long[]>> fetchesSeen = new HashMap<>();
    // by fetcher slot: the QP loaded there (-1: none) and the next WQEBB it fetches, read at each fetch with no boxing
    private final long[] slotQpn;
    private final int[] slotNext;

    /** The timeline of the adapter whose clock domain is {@code clockName}, its fetcher of {@code sqEntries} slots. */
    WqeTimeline(Simulator sim, String clockName, int sqEntries) {
        this.sim = sim;
        this.tracePrefix = clockName.equals("core") ? "" : clockName.replaceFirst("\\.core$", "") + "/";
        slotQpn = new long[sqEntries];
        Arrays.fill(slotQpn, -1);
        slotNext = new int[slotQpn.length];
    }

    /** What goes before this adapter's tracks: "" or "node0/". */
    String prefix() { return tracePrefix; }

    /**
     * The trace transaction of a send WQE: "qp0x&lt;qpn&gt;/wqe&lt;index&gt;", prefixed by the node when there are
     * several adapters.
     */
    String wqeTxn(long qpn, long index) {
        if (qpn != txnQpn) {
            txnPrefix = tracePrefix + "qp0x" + Long.toHexString(qpn) + "/wqe";
            txnQpn = qpn;
        }
        return txnPrefix + index;
    }

    /** {@link #wqeTxn} of an adapter whose tracks start with {@code prefix}. */
    static String txn(String prefix, long qpn, long index) {
        return prefix + "qp0x" + Long.toHexString(qpn) + "/wqe" + index;
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

    /** The stage times kept as numbers instead of in the trace (null: none), and this adapter's table there. */
    private StageLog log;
    private StageLog.Table table;

    /** From now on the stages go to {@code stages} (shared by the adapters of one simulator), not to the trace. */
    void log(StageLog stages) {
        log = stages;
        table = stages.table(tracePrefix);
    }

    /** Whether the per-WQE timeline (block "wqe") is being recorded, in the trace or in a {@link StageLog}. */
    boolean tracing() { return log != null || traced(); }

    /** Whether the timeline goes to the trace, details and all. */
    private boolean traced() { return sim.trace().enabled("wqe"); }

    /** Records a stage of send WQE {@code index} of {@code qpn} in the per-WQE timeline (block "wqe"). */
    void stage(long qpn, long index, String stage, String detail) {
        if (log != null) log.entry(table, qpn, index, StageLog.index(stage), sim.now());
        else if (traced()) sim.trace().recordOn("wqe", track(stage), wqeTxn(qpn, index), stage, detail);
    }

    /** {@link #stage} with the detail {@code before + n + after}, built only for the trace. */
    void stage(long qpn, long index, String stage, String before, long n, String after) {
        if (log != null) log.entry(table, qpn, index, StageLog.index(stage), sim.now());
        else if (traced()) stage(qpn, index, stage, before + n + after);
    }

    /**
     * The first packet of send WQE {@code index}'s message went on the wire from port {@code lid} at {@code psn}
     * (detail: the packet's opcode and PSN).
     */
    void messageOut(long qpn, long index, int lid, int psn, Object op) {
        if (log != null) {
            log.entry(table, qpn, index, StageLog.index("on_wire"), sim.now());
            log.messageOut(lid, qpn, psn);
            return;
        }
        if (!traced()) return;
        stage(qpn, index, "on_wire", op + " psn " + psn);
        sim.trace().alias(messageKey(lid, qpn, psn), wqeTxn(qpn, index));
    }

    /** A packet that starts a message arrived: the stage "received" of its sender's WQE, on this adapter's track. */
    void messageIn(int slid, long srcQp, int psn, Object op) {
        if (log != null) {
            if (log.messageIn(slid, srcQp, psn)) log.entry();
            return;
        }
        if (!traced()) return;
        String txn = sim.trace().takeAlias(messageKey(slid, srcQp, psn));
        if (txn != null) sim.trace().recordOn("wqe", track("received"), txn, "received", op + " psn " + psn);
    }

    /** Bytes this adapter's port sent now (the timeline's link bandwidth counter). */
    void linkBytes(int bytes) {
        if (log == null && traced()) sim.trace().sample("wqe", tracePrefix + "Link tx", bytes, true);
    }

    private static String messageKey(int lid, long qpn, int psn) { return lid + "/" + qpn + "/" + psn; }

    /** The firmware registered send queue {@code qpn}: its doorbells and fetches are kept from now on. */
    void queueAdded(long qpn) {
        doorbellsSeen.put(qpn, new ArrayDeque<>());
        fetchesSeen.put(qpn, new ArrayDeque<>());
    }

    /** Send queue {@code qpn}'s context went to its fetcher slot, fetching from WQEBB {@code start} on. */
    void queueLoaded(long qpn, int start) {
        int slot = slot(qpn);
        slotQpn[slot] = qpn;
        slotNext[slot] = start & 0xFFFF;
        ArrayDeque<long[]> d = doorbellsSeen.get(qpn), f = fetchesSeen.get(qpn);
        if (d != null) d.clear();
        if (f != null) f.clear();
    }

    /** Send queue {@code qpn} is gone. */
    void queueDestroyed(long qpn) {
        doorbellsSeen.remove(qpn);
        fetchesSeen.remove(qpn);
        if (slotQpn[slot(qpn)] == qpn) slotQpn[slot(qpn)] = -1;
    }

    /** The fetcher slot of send queue {@code qpn}: its QPN's low bits. */
    private int slot(long qpn) { return (int) (qpn & (slotQpn.length - 1)); }

    /** The decoder handed on a doorbell of {@code qpn} up to producer {@code index} now (kept while tracing). */
    void doorbellDecoded(long qpn, long index) {
        ArrayDeque<long[]> seen = tracing() ? doorbellsSeen.get(qpn) : null;
        if (seen != null) seen.add(new long[]{index, sim.now()});
    }

    /** The fetcher's ring read {@code r} left it at {@code time}: the WQEBBs its queue fetches next, the timeline's. */
    void fetchIssued(WqePorts.DmaReadReq r, long time) {
        int slot = (int) r.tag();
        if (slotQpn[slot] < 0) return;
        int count = (int) (r.length() / WqeLayout.WQEBB), first = slotNext[slot];
        if (tracing()) fetchesSeen.get(slotQpn[slot]).add(new long[]{first, count, time});
        slotNext[slot] = (first + count) & 0xFFFF;
    }

    /**
     * The stages of WQE {@code first} of {@code qpn}: the doorbell that announced it, the read that fetched it, now.
     */
    void delivered(long qpn, long first, int bbs, int opcode) {
        ArrayDeque<long[]> dbs = doorbellsSeen.get(qpn), fs = fetchesSeen.get(qpn);
        if (dbs == null) return;
        String txn = log != null ? null : wqeTxn(qpn, first);
        // a doorbell announces WQEBBs before its producer index: drop those wholly behind this WQE
        while (!dbs.isEmpty() && !WqeLayout.announced(dbs.peekFirst()[0], first)) dbs.pollFirst();
        if (!dbs.isEmpty()) {
            long[] db = dbs.peekFirst();
            if (log != null) log.entry(table, qpn, first, StageLog.index("doorbell_decoded"), db[1]);
            else sim.trace().recordAt(db[1], "wqe", track("doorbell_decoded"), txn, "doorbell_decoded",
                    "producer " + db[0]);
        }
        while (!fs.isEmpty() && ((first - fs.peekFirst()[0]) & 0xFFFF) >= fs.peekFirst()[1]) fs.pollFirst();
        if (!fs.isEmpty()) {
            long[] fetch = fs.peekFirst();
            if (log != null) log.entry(table, qpn, first, StageLog.index("fetch_issued"), fetch[2]);
            else sim.trace().recordAt(fetch[2], "wqe", track("fetch_issued"), txn, "fetch_issued",
                    fetch[1] + " WQEBB read");
        }
        if (log != null) log.entry(table, qpn, first, StageLog.index("delivered"), sim.now());
        else stage(qpn, first, "delivered", "opcode 0x" + Integer.toHexString(opcode) + ", " + bbs + " WQEBB");
    }
}
