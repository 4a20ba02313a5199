package nicsim.abi;

import java.util.Locale;

/**
 * What a q counter set counts (mlx5's ALLOC_Q_COUNTER: a set of counters the driver allocates and binds
 * queue pairs to, each QP's context naming its set): the transport events of the QPs bound to it, each
 * counted as the adapter counts it for itself, and under the same name (`rdma statistic show` lists
 * "Firmware." + the name in lower case). QUERY_Q_COUNTER answers them in this order, one 64-bit word each.
 * Events that belong to no one QP (commands, MADs, translation misses, the DC target's pool) are the
 * adapter's only.
 */
public enum QCounter {
    PACKETS_IN, PACKETS_OUT, DMA_READ_BYTES, DMA_WRITE_BYTES,
    RETRANSMITS, TIMEOUTS, RNR_NAKS, RNR_SENT, PSN_NAKS, PSN_GAPS, DUPLICATES, READ_RESPONSES_IGNORED,
    REQUESTER_ERRORS, RESPONDER_ERRORS, FLUSHED,
    PACKETS_DROPPED_STATE, PACKETS_DROPPED_TYPE, PACKETS_DROPPED_PATH,
    UC_NO_RECEIVE, UD_NO_RECEIVE, UD_TOO_LONG, UD_TOO_LONG_FOR_RECEIVE, QKEY_MISMATCH,
    CQE_SCATTERS, CQE_SCATTER_BYTES, ODP_RNR_SENT, ODP_RECEIVES_DROPPED;

    /** Its name in the adapter's counter list and in `rdma statistic qp show`. */
    public String counterName() { return "Firmware." + name().toLowerCase(Locale.ROOT); }

    /** The adapter's q counter sets (an ASIC's table, as ConnectX-class adapters have a few hundred). */
    public static final int MAX_SETS = 256;
}
