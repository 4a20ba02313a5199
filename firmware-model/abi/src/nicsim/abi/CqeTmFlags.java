package nicsim.abi;

/**
 * The bits of a tag-matching CQE's app_info byte (byte 42, {@link Cqe64}): the TM-SRQ wants a TAG_SYNC; a
 * tag was matched; the matched message's data is all in memory. The device's own bits, which the verbs
 * library maps to ibv_wc_flags' IBV_WC_TM_*; their values are libibverbs' today.
 */
public final class CqeTmFlags {
    private CqeTmFlags() {}

    public static final int SYNC_REQ = 1 << 4, MATCH = 1 << 5, DATA_VALID = 1 << 6;
}
