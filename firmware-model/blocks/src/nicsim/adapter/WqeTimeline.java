package nicsim.adapter;

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
    private final Map<Long, Seen> seen = new HashMap<>();
    // the queue looked up last (-1: none), found again without boxing its QPN: a doorbell's and a fetch's look-up
    private long seenQpn = -1;
    private Seen seenLast;
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

    /** This adapter's timeline track of the block that does the work ending in a stage: "node0/MttWalker". */
    private String track(WqeStage stage) {
        String t = tracks[stage.ordinal()];
        if (t == null) tracks[stage.ordinal()] = t = tracePrefix + stage.block();
        return t;
    }

    /** {@link #track} of each stage recorded so far, by code. */
    private final String[] tracks = new String[WqeStage.values().length];

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
    void stage(long qpn, long index, WqeStage stage, String detail) {
        if (log != null) log.entry(table, qpn, index, stage, sim.now());
        else if (traced()) sim.trace().recordOn("wqe", track(stage), wqeTxn(qpn, index), stage.label(), detail);
    }

    /** {@link #stage} with the detail {@code before + n + after}, built only for the trace. */
    void stage(long qpn, long index, WqeStage stage, String before, long n, String after) {
        if (log != null) log.entry(table, qpn, index, stage, sim.now());
        else if (traced()) stage(qpn, index, stage, before + n + after);
    }

    /**
     * The first packet of send WQE {@code index}'s message went on the wire from port {@code lid} at {@code psn}
     * (detail: the packet's opcode and PSN).
     */
    void messageOut(long qpn, long index, int lid, int psn, Object op) {
        if (log != null) {
            log.entry(table, qpn, index, WqeStage.ON_WIRE, sim.now());
            log.messageOut(lid, qpn, psn);
            return;
        }
        if (!traced()) return;
        stage(qpn, index, WqeStage.ON_WIRE, op + " psn " + psn);
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
        if (txn != null)
            sim.trace().recordOn("wqe", track(WqeStage.RECEIVED), txn, WqeStage.RECEIVED.label(), op + " psn " + psn);
    }

    /** Bytes this adapter's port sent now (the timeline's link bandwidth counter). */
    void linkBytes(int bytes) {
        if (log == null && traced()) sim.trace().sample("wqe", tracePrefix + "Link tx", bytes, true);
    }

    /** The CQE of send WQE {@code index} of {@code qpn} (opcode {@code opcode}) was written at {@code addr}. */
    void cqeWritten(long qpn, long index, int opcode, long addr) {
        if (log != null) log.entry(table, qpn, index, WqeStage.CQE_WRITTEN, sim.now());
        else if (traced())
            stage(qpn, index, WqeStage.CQE_WRITTEN, String.format("CQE opcode %d at 0x%x", opcode, addr));
    }

    /** The CQE of send WQE {@code index} of {@code qpn} was stamped with {@code cycles}. */
    void cqeStamped(long qpn, long index, long cycles) {
        if (log != null) log.entry(table, qpn, index, WqeStage.CQE_STAMPED, sim.now());
        else if (traced()) stage(qpn, index, WqeStage.CQE_STAMPED, "timestamp " + cycles + " cycles");
    }

    private static String messageKey(int lid, long qpn, int psn) { return lid + "/" + qpn + "/" + psn; }

    /** The firmware registered send queue {@code qpn}: its doorbells and fetches are kept from now on. */
    void queueAdded(long qpn) {
        seen.put(qpn, new Seen());
        seenQpn = -1;
    }

    /** What send queue {@code qpn} has seen (null: a queue not added). */
    private Seen seen(long qpn) {
        if (qpn != seenQpn) {
            seenLast = seen.get(qpn);
            seenQpn = qpn;
        }
        return seenLast;
    }

    /** Send queue {@code qpn}'s context went to its fetcher slot, fetching from WQEBB {@code start} on. */
    void queueLoaded(long qpn, int start) {
        int slot = slot(qpn);
        slotQpn[slot] = qpn;
        slotNext[slot] = start & 0xFFFF;
        Seen s = seen(qpn);
        if (s != null) {
            s.doorbells.clear();
            s.fetches.clear();
        }
    }

    /** Send queue {@code qpn} is gone. */
    void queueDestroyed(long qpn) {
        seen.remove(qpn);
        seenQpn = -1;
        if (slotQpn[slot(qpn)] == qpn) slotQpn[slot(qpn)] = -1;
    }

    /** The fetcher slot of send queue {@code qpn}: its QPN's low bits. */
    private int slot(long qpn) { return (int) (qpn & (slotQpn.length - 1)); }

    /** The decoder handed on a doorbell of {@code qpn} up to producer {@code index} now (kept while tracing). */
    void doorbellDecoded(long qpn, long index) {
        Seen s = tracing() ? seen(qpn) : null;
        if (s != null) s.doorbells.add(index, sim.now(), 0);
    }

    /** The fetcher's ring read {@code r} left it at {@code time}: the WQEBBs its queue fetches next, the timeline's. */
    void fetchIssued(WqePorts.DmaReadReq r, long time) {
        int slot = (int) r.tag();
        if (slotQpn[slot] < 0) return;
        int count = (int) (r.length() / WqeLayout.WQEBB), first = slotNext[slot];
        if (tracing()) seen(slotQpn[slot]).fetches.add(first, count, time);
        slotNext[slot] = (first + count) & 0xFFFF;
    }

    /**
     * The stages of WQE {@code first} of {@code qpn}: the doorbell that announced it, the read that fetched it, now.
     */
    void delivered(long qpn, long first, int bbs, int opcode) {
        Seen s = seen(qpn);
        if (s == null) return;
        Ring dbs = s.doorbells, fs = s.fetches;
        String txn = log != null ? null : wqeTxn(qpn, first);
        // a doorbell announces WQEBBs before its producer index: drop those wholly behind this WQE
        while (!dbs.isEmpty() && !WqeLayout.announced(dbs.first(0), first)) dbs.poll();
        if (!dbs.isEmpty()) {
            if (log != null) log.entry(table, qpn, first, WqeStage.DOORBELL_DECODED, dbs.first(1));
            else sim.trace().recordAt(dbs.first(1), "wqe", track(WqeStage.DOORBELL_DECODED), txn,
                    WqeStage.DOORBELL_DECODED.label(), "producer " + dbs.first(0));
        }
        while (!fs.isEmpty() && ((first - fs.first(0)) & 0xFFFF) >= fs.first(1)) fs.poll();
        if (!fs.isEmpty()) {
            if (log != null) log.entry(table, qpn, first, WqeStage.FETCH_ISSUED, fs.first(2));
            else sim.trace().recordAt(fs.first(2), "wqe", track(WqeStage.FETCH_ISSUED), txn,
                    WqeStage.FETCH_ISSUED.label(), fs.first(1) + " WQEBB read");
        }
        if (log != null) log.entry(table, qpn, first, WqeStage.DELIVERED, sim.now());
        else stage(qpn, first, WqeStage.DELIVERED, "opcode 0x" + Integer.toHexString(opcode) + ", " + bbs + " WQEBB");
    }

    /** A send queue's decoded doorbells and fetches, oldest first. */
    private static final class Seen {
        final Ring doorbells = new Ring(), fetches = new Ring();
    }

    /** A queue of records of three longs in one array, a power of two of them: no array per record. */
    private static final class Ring {
        private long[] a = new long[3 * 16];
        private int mask = 15, head, size;

        boolean isEmpty() { return size == 0; }

        /** Field {@code f} of the oldest record. */
        long first(int f) { return a[head * 3 + f]; }

        void poll() {
            head = (head + 1) & mask;
            size--;
        }

        void clear() { head = size = 0; }

        void add(long x, long y, long z) {
            if (size == mask + 1) {
                long[] b = new long[a.length * 2];
                for (int k = 0; k < size; k++) System.arraycopy(a, ((head + k) & mask) * 3, b, k * 3, 3);
                a = b;
                head = 0;
                mask = mask * 2 + 1;
            }
            int at = ((head + size) & mask) * 3;
            a[at] = x;
            a[at + 1] = y;
            a[at + 2] = z;
            size++;
        }
    }
}
