package nicsim.verbs;

/** ibv_wc_flags bits. */
public final class WcFlags {
    private WcFlags() {}

    public static final int GRH = 1, WITH_IMM = 2, WITH_INV = 8;
    /**
     * Striding receive queues (mlx5's multi-packet RQ, whose CQE says these; nicsim's bits, above
     * libibverbs' own): a filler completion that only used up a WQE's last strides, and the
     * completion whose message took a WQE's last stride, releasing it.
     */
    public static final int STRIDE_FILLER = 1 << 8, STRIDE_BUFFER_CONSUMED = 1 << 9;
    /**
     * Tag matching (libibverbs' values): the TM-SRQ wants a TAG_SYNC; a tag was matched; the matched message's data is
     * all in memory.
     */
    public static final int TM_SYNC_REQ = 1 << 4, TM_MATCH = 1 << 5, TM_DATA_VALID = 1 << 6;
}
