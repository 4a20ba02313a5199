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
 * recorded ({@link #tracing}).
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

    /** Whether the per-WQE timeline (block "wqe") is being recorded. */
    boolean tracing() { return sim.trace().enabled("wqe"); }

    /** Records a stage of send WQE {@code index} of {@code qpn} in the per-WQE timeline (block "wqe"). */
    void stage(long qpn, long index, String stage, String detail) {
        if (tracing()) sim.trace().recordOn("wqe", track(stage), wqeTxn(qpn, index), stage, detail);
    }

    /** The first packet of send WQE {@code index}'s message went on the wire from port {@code lid} at {@code psn}. */
    void messageOut(long qpn, long index, int lid, int psn, String detail) {
        if (!tracing()) return;
        stage(qpn, index, "on_wire", detail);
        sim.trace().alias(messageKey(lid, qpn, psn), wqeTxn(qpn, index));
    }

    /** A packet that starts a message arrived: the stage "received" of its sender's WQE, on this adapter's track. */
    void messageIn(int slid, long srcQp, int psn, String detail) {
        if (!tracing()) return;
        String txn = sim.trace().takeAlias(messageKey(slid, srcQp, psn));
        if (txn != null) sim.trace().recordOn("wqe", track("received"), txn, "received", detail);
    }

    /** Bytes this adapter's port sent now (the timeline's link bandwidth counter). */
    void linkBytes(int bytes) {
        if (tracing()) sim.trace().sample("wqe", tracePrefix + "Link tx", bytes, true);
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
        stage(qpn, first, "delivered", "opcode 0x" + Integer.toHexString(opcode) + ", " + bbs + " WQEBB");
    }
}
