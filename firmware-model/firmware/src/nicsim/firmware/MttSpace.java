package nicsim.firmware;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.Map;
import java.util.TreeMap;
import nicsim.abi.MttEntry;
import nicsim.host.FreeRanges;

/**
 * Which rows of the translation table (ICM) hold which MTT entries. An MR's entries have MTT
 * indices the MttWalker caches by, never given twice (a bump count, 2^32 of them: the walker's
 * cache is never invalidated), and rows of the table in host memory that go back to the free list
 * when the MR goes (destroyed, re-registered, or moved by an ODP invalidation), so a serve that
 * runs program after program never runs out of them. A row given back is reused only once no
 * translation fill that might still read it is on its way ({@link #settle}).
 *
 * <p>An implicit on-demand MR (the whole address space) has a sparse run ({@link #takeSparse}):
 * indices for every page, and a row only for a page the adapter has touched ({@link #materialize}),
 * whose entry then names the page by its address for the host's fault handler to bring in.
 */
final class MttSpace {
    /** MTT indices are 32 bits (the mkey context's mttBase). */
    static final long INDICES = 1L << 32;
    private FreeRanges rows = new FreeRanges(0);
    private long rowCount, next, rowsUsed;
    /** By first index: its first row and how many (sparse: -1, first page's address, mkey index, page shift). */
    private final TreeMap<Long, long[]> runs = new TreeMap<>();
    /** The rows sparse runs' touched entries have, by index. */
    private final Map<Long, Long> sparseRows = new HashMap<>();
    /** Rows given back, not yet free: {first row, count}. */
    private final ArrayList<long[]> quarantined = new ArrayList<>();

    /**
     * The table has {@code rows} rows, none used (INIT_HCA). The indices go on from where they were:
     * after a TEARDOWN_HCA the walker's cache still holds the last driver's translations by index.
     */
    void reset(long rowCount) {
        this.rowCount = rowCount;
        rows = new FreeRanges(rowCount);
        runs.clear();
        sparseRows.clear();
        quarantined.clear();
        rowsUsed = 0;
    }

    long rows() { return rowCount; }
    long rowsUsed() { return rowsUsed; }

    /** Whether {@code n} entries can be given now. */
    boolean fits(long n) { return next + n <= INDICES && n <= rowCount - rowsUsed; }

    /**
     * {@code n} (at least 1) consecutive entries: their first MTT index, or -1 (no run of free rows that long, or the
     * indices are spent).
     */
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

    /**
     * {@code n} indices for an implicit MR whose entry 0 is the page at {@code va} of {@code 2^shift}
     * bytes, mkey index {@code mkeyIndex}; no rows until touched. The first index, or -1 (spent).
     */
    long takeSparse(long n, long va, long mkeyIndex, long shift) {
        if (next + n > INDICES) return -1;
        long first = next;
        next += n;
        runs.put(first, new long[]{-1, n, va, mkeyIndex, shift});
        return first;
    }

    /** Whether {@code n} indices can be had now for a sparse run. */
    boolean fitsSparse(long n) { return next + n <= INDICES; }

    /** Whether index {@code index} is in a sparse run. */
    boolean sparse(long index) {
        long[] r = runOf(index);
        return r != null && r[0] < 0;
    }

    /**
     * A row for entry {@code index} of a sparse run (it has none yet): the row, or -1 if the table
     * is full. Its entry (see {@link #implicitEntry}) is for the caller to write.
     */
    long materialize(long index) {
        long row = rows.take(1);
        if (row < 0) return -1;
        sparseRows.put(index, row);
        rowsUsed++;
        return row;
    }

    /**
     * What entry {@code index} of a sparse run holds until the host brings its page in: the page's
     * address and its MR's mkey index, marked IMPLICIT and NOT_PRESENT.
     */
    long implicitEntry(long index) {
        Map.Entry<Long, long[]> e = runs.floorEntry(index);
        long[] r = e.getValue();
        return MttEntry.implicitAbsent(r[2] + ((index - e.getKey()) << r[4]), r[3]);
    }

    /** Gives back the entries from MTT index {@code first} (as {@link #take} gave them); nothing if none are. */
    void give(long first) {
        long[] r = runs.remove(first);
        if (r == null) return;
        if (r[0] >= 0) {
            quarantined.add(r);
            return;
        }
        for (var it = sparseRows.entrySet().iterator(); it.hasNext(); ) {
            var x = it.next();
            if (x.getKey() < first || x.getKey() >= first + r[1]) continue;
            quarantined.add(new long[]{x.getValue(), 1});
            it.remove();
        }
    }

    /** No fill is on its way: the rows given back are free from now on. */
    void settle() {
        for (long[] r : quarantined) {
            rows.give(r[0], r[0] + r[1]);
            rowsUsed -= r[1];
        }
        quarantined.clear();
    }

    /** The table row of MTT index {@code index}, or -1 if no MR holds it (or it is a sparse run's, untouched). */
    long row(long index) {
        Map.Entry<Long, long[]> e = runEntry(index);
        if (e == null) return -1;
        if (e.getValue()[0] < 0) return sparseRows.getOrDefault(index, -1L);
        return e.getValue()[0] + (index - e.getKey());
    }

    /** The first index of {@code index}'s run and the run's length, or null if no MR holds it. */
    long[] run(long index) {
        Map.Entry<Long, long[]> e = runEntry(index);
        return e == null ? null : new long[]{e.getKey(), e.getValue()[1]};
    }

    /** The first index of the run holding {@code index} (an MR's mttBase), or -1 if no run holds it. */
    long runStart(long index) {
        Map.Entry<Long, long[]> e = runEntry(index);
        return e == null ? -1 : e.getKey();
    }

    private long[] runOf(long index) {
        Map.Entry<Long, long[]> e = runEntry(index);
        return e == null ? null : e.getValue();
    }

    /** The run holding {@code index}: its first index, and {its first row (-1: sparse), its length}; or null. */
    private Map.Entry<Long, long[]> runEntry(long index) {
        Map.Entry<Long, long[]> e = runs.floorEntry(index);
        return e == null || index - e.getKey() >= e.getValue()[1] ? null : e;
    }
}
