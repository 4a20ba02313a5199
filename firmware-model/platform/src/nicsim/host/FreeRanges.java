package nicsim.host;

import java.util.Arrays;

/**
 * Free space (of a DMA channel's SRAM slice, device memory, MTT rows): disjoint ranges [start, end) in address
 * order, none touching the next. Taking is first fit, from the lowest address; giving back joins a range with its
 * neighbours. A channel holds a handful of jobs, so a scan of a few primitive slots beats a tree.
 */
public final class FreeRanges {
    private long[] start = new long[8], end = new long[8];
    private int n;

    public FreeRanges(long size) {
        start[0] = 0;
        end[0] = size;
        n = 1;
    }

    /** Takes {@code length} bytes from the first range that holds them: their start, or -1 when none does. */
    public long take(long length) {
        for (int i = 0; i < n; i++) {
            long at = start[i];
            if (end[i] - at < length) continue;
            if (end[i] - at == length) remove(i);
            else start[i] = at + length;
            return at;
        }
        return -1;
    }

    /**
     * Takes {@code length} bytes starting at a multiple of {@code align} (a power of two), first fit: their start, or
     * -1.
     */
    public long takeAligned(long length, long align) {
        for (int i = 0; i < n; i++) {
            long at = (start[i] + align - 1) & -align, from = start[i], to = end[i];
            if (to - at < length) continue;
            remove(i);
            if (at > from) give(from, at);
            if (at + length < to) give(at + length, to);
            return at;
        }
        return -1;
    }

    /** Frees [{@code from}, {@code to}), which no free range overlaps. */
    public void give(long from, long to) {
        int i = 0; // the first range after the one freed
        while (i < n && start[i] < from) i++;
        boolean joinsBefore = i > 0 && end[i - 1] == from, joinsAfter = i < n && start[i] == to;
        if (joinsBefore && joinsAfter) {
            end[i - 1] = end[i];
            remove(i);
        } else if (joinsBefore) end[i - 1] = to;
        else if (joinsAfter) start[i] = from;
        else insert(i, from, to);
    }

    private void remove(int i) {
        System.arraycopy(start, i + 1, start, i, n - i - 1);
        System.arraycopy(end, i + 1, end, i, n - i - 1);
        n--;
    }

    private void insert(int i, long from, long to) {
        if (n == start.length) {
            start = Arrays.copyOf(start, 2 * n);
            end = Arrays.copyOf(end, 2 * n);
        }
        System.arraycopy(start, i, start, i + 1, n - i);
        System.arraycopy(end, i, end, i + 1, n - i);
        start[i] = from;
        end[i] = to;
        n++;
    }
}
