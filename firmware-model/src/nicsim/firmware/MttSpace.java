package nicsim.firmware;

import java.util.Map;
import java.util.TreeMap;
import nicsim.host.FreeRanges;

/**
 * Which rows of the translation table (ICM) hold which MTT entries. An MR's entries have MTT
 * indices the MttWalker caches by, never given twice (a bump count, 2^32 of them: the walker's
 * cache is never invalidated), and rows of the table in host memory that go back to the free list
 * when the MR goes (destroyed, re-registered, or moved by an ODP invalidation), so a serve that
 * runs program after program never runs out of them. A row given back is reused only once no
 * translation fill that might still read it is on its way ({@link #settle}).
 */
final class MttSpace {
    /** MTT indices are 32 bits (the mkey context's mttBase). */
    static final long INDICES = 1L << 32;
    private FreeRanges rows = new FreeRanges(0);
    private long rowCount, next, rowsUsed;
    /** By first index: its first row and how many. */
    private final TreeMap<Long, long[]> runs = new TreeMap<>();
    /** Rows given back, not yet free: {first row, count}. */
    private final java.util.ArrayList<long[]> quarantined = new java.util.ArrayList<>();

    /** The table has {@code rows} rows, none used (INIT_HCA). */
    void reset(long rowCount) {
        this.rowCount = rowCount;
        rows = new FreeRanges(rowCount);
        runs.clear();
        quarantined.clear();
        next = 0;
        rowsUsed = 0;
    }

    long rows() { return rowCount; }
    long rowsUsed() { return rowsUsed; }

    /** Whether {@code n} entries can be given now. */
    boolean fits(long n) { return next + n <= INDICES && n <= rowCount - rowsUsed; }

    /** {@code n} (at least 1) consecutive entries: their first MTT index, or -1 (no run of free rows that long, or the indices are spent). */
    long take(long n) {
        n = Math.max(1, n);
        if (next + n > INDICES) return -1;
        long row = rows.take(n);
        if (row < 0) return -1;
        long first = next;
        next += n;
        runs.put(first, new long[]{row, n});
        rowsUsed += n;
        return first;
    }

    /** Gives back the entries from MTT index {@code first} (as {@link #take} gave them); nothing if none are. */
    void give(long first) {
        long[] r = runs.remove(first);
        if (r != null) quarantined.add(r);
    }

    /** No fill is on its way: the rows given back are free from now on. */
    void settle() {
        for (long[] r : quarantined) {
            rows.give(r[0], r[0] + r[1]);
            rowsUsed -= r[1];
        }
        quarantined.clear();
    }

    /** The table row of MTT index {@code index}, or -1 if no MR holds it. */
    long row(long index) {
        Map.Entry<Long, long[]> e = runs.floorEntry(index);
        if (e == null || index - e.getKey() >= e.getValue()[1]) return -1;
        return e.getValue()[0] + (index - e.getKey());
    }
}
