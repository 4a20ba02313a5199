package nicsim.adapter;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The send WQEs' stage times that a per-stage table needs, kept as numbers instead of as the simulator's trace
 * (block "wqe"): no transaction names, details or entries. It keeps what the trace would have kept, to the entry:
 * it counts every entry the adapters sharing it would have recorded there, keeps a WQE's stage only while that count
 * is under the trace's limit, and keeps each WQE's first time at each stage (a transaction names a WQE by its index,
 * so WQEs whose indices wrap share one, as in the trace).
 */
public final class StageLog {

    /** The stages of a send WQE's timeline that the table shows, in order: the first of {@link WqeStage}. */
    public static final List<String> NAMES = Arrays.stream(WqeStage.values()).limit(WqeStage.SHOWN)
            .map(WqeStage::label).toList();

    private static final int N = WqeStage.SHOWN;

    private final int limit;
    private long entries;
    /** Messages on their way (their sender's port, QP and first PSN), as the trace's aliases; see {@link #key}. */
    private final LongSet aliases = new LongSet();
    private final Set<Message> otherAliases = new HashSet<>();
    private final Map<String, Table> tables = new LinkedHashMap<>();

    /** A log that keeps the stages of the first {@code limit} entries, as the trace's limit. */
    public StageLog(int limit) { this.limit = limit; }

    /** Entries the trace would have kept. */
    public long kept() { return Math.min(entries, limit); }

    /** Entries the trace would have counted and not kept. */
    public long dropped() { return Math.max(0, entries - limit); }

    /** The table of the adapter whose transactions start with {@code prefix} ("" or "node0/"). */
    Table table(String prefix) { return tables.computeIfAbsent(prefix, Table::new); }

    /** An entry of stage {@code stage} of WQE {@code index} of {@code qpn} at {@code time}. */
    void entry(Table t, long qpn, long index, WqeStage stage, long time) {
        int column = stage.column();
        if (entries++ >= limit || column < 0) return;
        t.first(qpn, index, column, time);
    }

    /** An entry of a stage the table does not show (or of a transaction it does not keep). */
    void entry() { entries++; }

    /** A message left port {@code lid} of QP {@code qpn} at {@code psn}: its receiver records it. */
    void messageOut(int lid, long qpn, int psn) {
        if (aliases.size() + otherAliases.size() >= limit) return;
        long k = key(lid, qpn, psn);
        if (k >= 0) aliases.add(k); else otherAliases.add(new Message(lid, qpn, psn));
    }

    /** Whether a message that left as {@link #messageOut} arrived (its first arrival only). */
    boolean messageIn(int lid, long qpn, int psn) {
        long k = key(lid, qpn, psn);
        return k >= 0 ? aliases.remove(k) : otherAliases.remove(new Message(lid, qpn, psn));
    }

    /** A message's port (15 bits), QP (24) and PSN (24) in a long, or -1 where they do not fit. */
    private static long key(int lid, long qpn, int psn) {
        if ((lid & ~0x7FFF) != 0 || (qpn & ~0xFFFFFFL) != 0 || (psn & ~0xFFFFFF) != 0) return -1;
        return (long) lid << 48 | qpn << 24 | psn;
    }

    private record Message(int lid, long qpn, int psn) {}

    /**
     * Each kept WQE's times at the stages of {@link #NAMES} (-1: none) whose transaction starts with {@code prefix},
     * e.g. "node0/".
     */
    public List<long[]> times(String prefix) {
        List<long[]> all = new ArrayList<>();
        for (Table t : tables.values()) t.times(prefix, all);
        return all;
    }

    /** One adapter's WQEs: an open-addressed table from (QPN, index) to a row of times. */
    static final class Table {
        private final String prefix;
        private long[] keyQpn = new long[1024], keyIndex = new long[1024];
        private int[] row = new int[1024];
        private long[] times = new long[64 * N];
        private int rows;

        Table(String prefix) {
            this.prefix = prefix;
            Arrays.fill(row, -1);
            Arrays.fill(times, -1);
        }

        /** Sets WQE (qpn, index)'s time at the stage of column {@code column} unless it has one. */
        void first(long qpn, long index, int column, long time) {
            int r = row(qpn, index);
            if (times[r * N + column] < 0) times[r * N + column] = time;
        }

        private int row(long qpn, long index) {
            int mask = row.length - 1;
            for (int i = hash(qpn, index) & mask; ; i = (i + 1) & mask) {
                if (row[i] < 0) return add(i, qpn, index);
                if (keyQpn[i] == qpn && keyIndex[i] == index) return row[i];
            }
        }

        // a QP's consecutive WQEs in consecutive slots: the table is walked in order, as the WQEs are posted
        private static int hash(long qpn, long index) { return (int) (index + (qpn * 0x9E3779B97F4A7C15L >>> 40)); }

        private int add(int slot, long qpn, long index) {
            if (2 * (rows + 1) > row.length) {
                grow();
                return row(qpn, index);
            }
            if ((rows + 1) * N > times.length) {
                int from = times.length;
                times = Arrays.copyOf(times, from * 2);
                Arrays.fill(times, from, times.length, -1);
            }
            keyQpn[slot] = qpn;
            keyIndex[slot] = index;
            row[slot] = rows;
            return rows++;
        }

        private void grow() {
            long[] q = keyQpn, x = keyIndex;
            int[] r = row;
            keyQpn = new long[q.length * 2];
            keyIndex = new long[q.length * 2];
            row = new int[q.length * 2];
            Arrays.fill(row, -1);
            int mask = row.length - 1;
            for (int j = 0; j < r.length; j++) {
                if (r[j] < 0) continue;
                int i = hash(q[j], x[j]) & mask;
                while (row[i] >= 0) i = (i + 1) & mask;
                keyQpn[i] = q[j];
                keyIndex[i] = x[j];
                row[i] = r[j];
            }
        }

        private void times(String want, List<long[]> out) {
            boolean all = prefix.startsWith(want);
            if (!all && !want.startsWith(prefix)) return;
            for (int j = 0; j < row.length; j++) {
                if (row[j] < 0) continue;
                // a prefix longer than the adapter's reaches into the transaction's name: compare with that
                if (!all && !WqeTimeline.txn(prefix, keyQpn[j], keyIndex[j]).startsWith(want)) continue;
                out.add(Arrays.copyOfRange(times, row[j] * N, row[j] * N + N));
            }
        }
    }
}
