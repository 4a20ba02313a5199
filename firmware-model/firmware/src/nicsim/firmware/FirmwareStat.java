package nicsim.firmware;

import java.util.Arrays;
import java.util.Locale;
import nicsim.abi.QCounter;
import nicsim.sim.Counters;

/**
 * The firmware's counters, by name in one place (as rxe's {@code rxe_counters}): counted through
 * {@link Stats}, so that a misspelt name does not compile rather than make a new counter. Each is
 * dumped as "Firmware." + its name in lower case, joining the dump on its first count.
 */
enum FirmwareStat {
    COMMANDS,
    COMMANDS_FAILED,
    CQ_OVERFLOWS,
    CQ_RECORDS_MALFORMED,
    CQE_SCATTER_BYTES,
    CQE_SCATTERS,
    CQES_LOST,
    DC_CNAKS,
    DC_CNAKS_SENT,
    DC_CONNECTS,
    DC_DCRS_GIVEN,
    DC_DCRS_RECLAIMED,
    DC_DISCONNECTS,
    DC_DROPPED_UNCONNECTED,
    DC_IDLE_DISCONNECTS,
    DC_KEY_VIOLATIONS,
    DC_RECONNECTS,
    DMA_READ_BYTES,
    DMA_WRITE_BYTES,
    DUPLICATES,
    EVENTS,
    FLUSHED,
    LINK_DOWNS,
    LINK_UPS,
    MADS_ANSWERED,
    MADS_FROM_DRIVER,
    MADS_IN,
    MADS_LOOPED_BACK,
    MADS_MALFORMED,
    MADS_PASSED_UP,
    MADS_TO_DRIVER,
    MADS_UNCLAIMED,
    MCAST_DELIVERED,
    MCAST_LOOPBACK,
    MCAST_NO_GROUP,
    MKEY_CONTEXT_MISSES,
    ODP_FAULT_WAIT_PS,
    ODP_FAULTS_RESOLVED,
    ODP_IMPLICIT_OUT_OF_ROWS,
    ODP_INVALIDATIONS,
    ODP_PAGE_FAULTS,
    ODP_PREFETCHES,
    ODP_RECEIVES_DROPPED,
    ODP_RNR_SENT,
    PACKETS_DROPPED_PATH,
    PACKETS_DROPPED_STATE,
    PACKETS_DROPPED_TYPE,
    PACKETS_IN,
    PACKETS_NO_QP,
    PACKETS_OUT,
    PSN_GAPS,
    PSN_NAKS,
    QKEY_MISMATCH,
    READ_RESPONSES_IGNORED,
    RECV_RECORDS_MALFORMED,
    REQUESTER_ERRORS,
    RESPONDER_ERRORS,
    RETRANSMITS,
    RNR_NAKS,
    RNR_SENT,
    SQ_CONTEXT_EVICTIONS,
    SQ_CONTEXT_MISSES,
    STRIDE_FILLERS,
    STRIDED_RECEIVES,
    TIMEOUTS,
    TM_MATCHED,
    TM_RENDEZVOUS,
    TM_UNEXPECTED,
    UC_NO_RECEIVE,
    UD_NO_RECEIVE,
    UD_TOO_LONG,
    UD_TOO_LONG_FOR_RECEIVE,
    UMR_LAYOUTS,
    WQEBBS_SKIPPED,
    XLATE_FILLS_REFUSED,
    XLATE_FILLS_UNANSWERABLE,
    XLATE_HOST_INTERRUPTS,
    XLATE_LINE_HITS,
    XLATE_TABLE_READS;

    /** The counter's name in the dump. */
    String counterName() { return "Firmware." + name().toLowerCase(Locale.ROOT); }

    /** Each counter's place in a q counter set (QCounter's ordinal), or -1: the adapter's alone. */
    private static final int[] IN_SET = new int[values().length];

    static {
        Arrays.fill(IN_SET, -1);
        for (QCounter c : QCounter.values()) IN_SET[valueOf(c.name()).ordinal()] = c.ordinal();
    }

    /** Its place in a q counter set's words (QUERY_Q_COUNTER), or -1 if a QP's set does not count it. */
    int inSet() { return IN_SET[ordinal()]; }

    /** The firmware's counters of one adapter. */
    static final class Stats {
        private final Counters.Ref[] refs = new Counters.Ref[values().length];

        Stats(Counters counters) {
            for (FirmwareStat s : values()) refs[s.ordinal()] = counters.ref(s.counterName());
        }

        void inc(FirmwareStat s) { refs[s.ordinal()].inc(); }

        void add(FirmwareStat s, long n) { refs[s.ordinal()].add(n); }

        /** The counter itself, for a part that counts on a hot path. */
        Counters.Ref ref(FirmwareStat s) { return refs[s.ordinal()]; }
    }
}
