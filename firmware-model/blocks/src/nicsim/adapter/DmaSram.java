package nicsim.adapter;

/**
 * A {@link DmaCore}'s SRAM: a reference per beat, in pages of 2^PAGE_SHIFT beats made when a beat there is first
 * kept (null: every beat there reads blank): payload moved as a copy keeps none, so most of SRAM is never made or
 * touched.
 */
final class DmaSram {
    static final int PAGE_SHIFT = 8, PAGE_MASK = (1 << PAGE_SHIFT) - 1;
    private final long[][][] pages;
    // the beats of each page of SRAM that are not blank: a page of none is skipped as one never made
    private final int[] pageKept;

    DmaSram(long beats) {
        pages = new long[(int) ((beats + PAGE_MASK) >>> PAGE_SHIFT)][][];
        pageKept = new int[pages.length];
    }

    /** Whether the page of beat {@code at} holds only blank beats. */
    boolean pageBlank(int at) {
        return pages[at >>> PAGE_SHIFT] == null || pageKept[at >>> PAGE_SHIFT] == 0;
    }

    /** The words SRAM beat {@code at} holds (null: blank). */
    long[] slot(int at) {
        long[][] page = pages[at >>> PAGE_SHIFT];
        return page == null ? null : page[at & PAGE_MASK];
    }

    /** Beat {@code at} holds {@code data} (null: blank). */
    void keep(int at, long[] data) {
        long[][] page = pages[at >>> PAGE_SHIFT];
        if (page == null) {
            if (data == null) return;
            page = pages[at >>> PAGE_SHIFT] = new long[1 << PAGE_SHIFT][];
        }
        long[] old = page[at & PAGE_MASK];
        if (old == null && data != null) pageKept[at >>> PAGE_SHIFT]++;
        else if (old != null && data == null) pageKept[at >>> PAGE_SHIFT]--;
        page[at & PAGE_MASK] = data;
    }

    /** Beats {@code [from, to)} blank. */
    void clear(int from, int to) {
        while (from < to) {
            int end = Math.min(to, (from | PAGE_MASK) + 1);
            int p = from >>> PAGE_SHIFT;
            long[][] page = pages[p];
            if (page != null && pageKept[p] > 0) {
                for (int at = from & PAGE_MASK, stop = ((end - 1) & PAGE_MASK) + 1; at < stop; at++)
                    if (page[at] != null) { page[at] = null; pageKept[p]--; }
            }
            from = end;
        }
    }
}
