package nicsim.abi;

import static nicsim.abi.QpModifyMask.*;

import java.util.EnumMap;
import java.util.Map;

/**
 * Which QP state transitions are legal, with which attributes: the kernel's qp_state_table and
 * ib_modify_qp_is_ok as Linux enforces them (docs/sources.md#qp-state-transitions). A modify names its target
 * with STATE (without it the QP stays in its state: RTS to RTS, SQD to SQD); CUR_STATE is only
 * accepted from RTR, RTS, SQD or SQE; the pair must be in the table; every required attribute
 * must be given and nothing outside required + optional + STATE. XRC_SEND and XRC_RECV are the
 * kernel's XRC_INI and XRC_TGT. A DRIVER QP is a DC initiator or target, whose rows are mlx5's
 * (docs/sources.md#dc-transport): a DCI goes to RTS as an RC requester does, but names no
 * destination (each work request does); a DCT stops at RTR, where it answers requests.
 */
public final class QpTransitions {
    private QpTransitions() {}

    /** A modify the table refuses: the message names the states, the QP type and the attributes. */
    public static final class Rejected extends RuntimeException {
        public Rejected(String message) { super(message); }
    }

    /**
     * Where a send-queue error takes a QP (docs/sources.md#where-the-device-moves-a-qp): a connected reliable QP
     * goes to ERR, an unreliable one (UC, UD) only stops its send queue in SQE and goes on receiving. The firmware
     * moves the QP there; the verbs library reads the same rule off the error completion.
     */
    public static QpcState afterSendError(ServiceType type) {
        return type == ServiceType.UC || type == ServiceType.UD ? QpcState.SQE : QpcState.ERR;
    }

    private record Rule(int req, int opt) {}

    /** The table's columns: the QP types, with DRIVER split into its two DC halves. */
    private enum Kind {
        RC, UC, UD, XI, XT, DCI, DCT;

        static Kind of(ServiceType type, DcRole dc) {
            return switch (type) {
                case RC -> RC;
                case UC -> UC;
                case UD -> UD;
                case XRC_SEND -> XI;
                case XRC_RECV -> XT;
                case DRIVER -> {
                    if (dc == null) throw new Rejected("a DRIVER QP is a DC initiator or target: it needs a DcType");
                    yield dc == DcRole.DCI ? DCI : DCT;
                }
            };
        }
    }

    private static final Map<QpcState, Map<QpcState, Map<Kind, Rule>>> TABLE = new EnumMap<>(QpcState.class);

    private static void rule(QpcState cur, QpcState next, int req, int opt, Kind... kinds) {
        Map<Kind, Rule> m = TABLE.computeIfAbsent(cur, k -> new EnumMap<>(QpcState.class))
                .computeIfAbsent(next, k -> new EnumMap<>(Kind.class));
        for (Kind t : kinds.length == 0 ? Kind.values() : kinds) m.put(t, new Rule(req, opt));
    }

    private static final Kind RC = Kind.RC, UC = Kind.UC, UD = Kind.UD, XI = Kind.XI, XT = Kind.XT, DCI = Kind.DCI,
            DCT = Kind.DCT;

    static {
        QpcState RESET = QpcState.RESET, INIT = QpcState.INIT, RTR = QpcState.RTR, RTS = QpcState.RTS,
                SQD = QpcState.SQD, SQE = QpcState.SQE, ERR = QpcState.ERR;
        rule(RESET, RESET, 0, 0);
        rule(RESET, INIT, PKEY_INDEX | PORT | ACCESS_FLAGS, 0, RC, UC, XI, XT);
        rule(RESET, INIT, PKEY_INDEX | PORT | QKEY, 0, UD);
        rule(RESET, INIT, PKEY_INDEX | PORT, 0, DCI);
        rule(RESET, INIT, PKEY_INDEX | PORT | ACCESS_FLAGS, 0, DCT);
        rule(INIT, RESET, 0, 0);
        rule(INIT, INIT, 0, PKEY_INDEX | PORT | ACCESS_FLAGS, RC, UC, XI, XT);
        rule(INIT, INIT, 0, PKEY_INDEX | PORT | QKEY, UD);
        rule(INIT, INIT, 0, PKEY_INDEX | PORT, DCI);
        rule(INIT, INIT, 0, PKEY_INDEX | PORT | ACCESS_FLAGS, DCT);
        rule(INIT, RTR, AV | PATH_MTU | DEST_QPN | RQ_PSN | MAX_DEST_RD_ATOMIC | MIN_RNR_TIMER,
                ALT_PATH | ACCESS_FLAGS | PKEY_INDEX, RC, XT);
        rule(INIT, RTR, AV | PATH_MTU | DEST_QPN | RQ_PSN, ALT_PATH | ACCESS_FLAGS | PKEY_INDEX, UC, XI);
        rule(INIT, RTR, 0, PKEY_INDEX | QKEY, UD);
        rule(INIT, RTR, PATH_MTU, AV | PKEY_INDEX, DCI);
        rule(INIT, RTR, PATH_MTU | MIN_RNR_TIMER, AV | ACCESS_FLAGS | PKEY_INDEX, DCT);
        rule(INIT, ERR, 0, 0);
        rule(RTR, RESET, 0, 0);
        rule(RTR, RTS, TIMEOUT | RETRY_CNT | RNR_RETRY | SQ_PSN | MAX_QP_RD_ATOMIC,
                CUR_STATE | ALT_PATH | ACCESS_FLAGS | MIN_RNR_TIMER | PATH_MIG_STATE, RC);
        rule(RTR, RTS, SQ_PSN, CUR_STATE | ALT_PATH | ACCESS_FLAGS | PATH_MIG_STATE, UC);
        rule(RTR, RTS, SQ_PSN, CUR_STATE | QKEY, UD);
        rule(RTR, RTS, TIMEOUT | RETRY_CNT | RNR_RETRY | SQ_PSN | MAX_QP_RD_ATOMIC,
                CUR_STATE | ALT_PATH | ACCESS_FLAGS | PATH_MIG_STATE, XI);
        rule(RTR, RTS, TIMEOUT | SQ_PSN, CUR_STATE | ALT_PATH | ACCESS_FLAGS | MIN_RNR_TIMER | PATH_MIG_STATE, XT);
        rule(RTR, RTS, TIMEOUT | RETRY_CNT | RNR_RETRY | SQ_PSN | MAX_QP_RD_ATOMIC, CUR_STATE, DCI);
        rule(RTR, ERR, 0, 0);
        rule(RTS, RESET, 0, 0);
        rule(RTS, RTS, 0, CUR_STATE | ACCESS_FLAGS | ALT_PATH | PATH_MIG_STATE | MIN_RNR_TIMER, RC, XT);
        rule(RTS, RTS, 0, CUR_STATE | ACCESS_FLAGS | ALT_PATH | PATH_MIG_STATE, UC, XI);
        rule(RTS, RTS, 0, CUR_STATE | QKEY, UD);
        rule(RTS, RTS, 0, CUR_STATE, DCI);
        rule(RTS, SQD, 0, EN_SQD_ASYNC_NOTIFY, RC, UC, UD, XI, XT, DCI);
        rule(RTS, ERR, 0, 0);
        rule(SQD, RESET, 0, 0);
        rule(SQD, RTS, 0, CUR_STATE | ALT_PATH | ACCESS_FLAGS | MIN_RNR_TIMER | PATH_MIG_STATE, RC, XT);
        rule(SQD, RTS, 0, CUR_STATE | ALT_PATH | ACCESS_FLAGS | PATH_MIG_STATE, UC, XI);
        rule(SQD, RTS, 0, CUR_STATE | QKEY, UD);
        rule(SQD, RTS, 0, CUR_STATE, DCI);
        rule(SQD, SQD, 0, PORT | AV | TIMEOUT | RETRY_CNT | RNR_RETRY | MAX_QP_RD_ATOMIC | MAX_DEST_RD_ATOMIC
                | ALT_PATH | ACCESS_FLAGS | PKEY_INDEX | MIN_RNR_TIMER | PATH_MIG_STATE, RC);
        rule(SQD, SQD, 0, AV | ALT_PATH | ACCESS_FLAGS | PKEY_INDEX | PATH_MIG_STATE, UC);
        rule(SQD, SQD, 0, PKEY_INDEX | QKEY, UD);
        rule(SQD, SQD, 0, PORT | AV | TIMEOUT | RETRY_CNT | RNR_RETRY | MAX_QP_RD_ATOMIC | ALT_PATH | ACCESS_FLAGS
                | PKEY_INDEX | PATH_MIG_STATE, XI);
        rule(SQD, SQD, 0, PORT | AV | TIMEOUT | MAX_DEST_RD_ATOMIC | ALT_PATH | ACCESS_FLAGS | PKEY_INDEX
                | MIN_RNR_TIMER | PATH_MIG_STATE, XT);
        rule(SQD, SQD, 0, TIMEOUT | RETRY_CNT | RNR_RETRY | MAX_QP_RD_ATOMIC, DCI);
        rule(SQD, ERR, 0, 0);
        rule(SQE, RESET, 0, 0);
        rule(SQE, RTS, 0, 0, RC, XI, XT, DCI);
        rule(SQE, RTS, 0, CUR_STATE | ACCESS_FLAGS, UC);
        rule(SQE, RTS, 0, CUR_STATE | QKEY, UD);
        rule(SQE, ERR, 0, 0);
        rule(ERR, RESET, 0, 0);
        rule(ERR, ERR, 0, 0);
    }

    /** Whether the table has {@code cur -> next} at all (for any QP type). */
    public static boolean valid(QpcState cur, QpcState next) {
        return TABLE.getOrDefault(cur, Map.of()).containsKey(next);
    }

    /** The required attributes of a transition (excluding STATE). */
    public static int required(QpcState cur, QpcState next, ServiceType type) {
        return required(cur, next, type, null);
    }

    /** The required attributes of a transition of a {@code type} QP ({@code dc}: its DC half, for DRIVER). */
    public static int required(QpcState cur, QpcState next, ServiceType type, DcRole dc) {
        return rule(cur, next, type, dc).req();
    }

    /** The optional attributes of a transition. */
    public static int optional(QpcState cur, QpcState next, ServiceType type) {
        return optional(cur, next, type, null);
    }

    /** The optional attributes of a transition of a {@code type} QP ({@code dc}: its DC half, for DRIVER). */
    public static int optional(QpcState cur, QpcState next, ServiceType type, DcRole dc) {
        return rule(cur, next, type, dc).opt();
    }

    /** Whether the table has {@code cur -> next} for this QP (a DCT, for one, never sends: it has no RTS). */
    public static boolean valid(QpcState cur, QpcState next, ServiceType type, DcRole dc) {
        Map<Kind, Rule> m = TABLE.getOrDefault(cur, Map.of()).get(next);
        return m != null && m.containsKey(Kind.of(type, dc));
    }

    private static Rule rule(QpcState cur, QpcState next, ServiceType type, DcRole dc) {
        Map<Kind, Rule> m = TABLE.getOrDefault(cur, Map.of()).get(next);
        if (m == null) throw new Rejected(cur + " -> " + next + " is not a valid QP state transition");
        Rule r = m.get(Kind.of(type, dc));
        if (r == null)
            throw new Rejected(cur + " -> " + next + " is not a valid transition for a " + dc
                    + " (a DC target answers requests in RTR; it never sends)");
        return r;
    }

    /**
     * Checks a modify of a {@code type} QP in {@code cur} with attribute {@code mask} whose target
     * (when STATE is in the mask) is {@code next}; returns the state the QP ends in, or throws
     * {@link Rejected} (EINVAL) naming what is wrong. Changes nothing.
     */
    public static QpcState check(ServiceType type, QpcState cur, int mask, QpcState next) {
        return check(type, null, cur, mask, next);
    }

    /**
     * {@link #check(ServiceType, QpcState, int, QpcState)} for a QP with a DC half ({@code dc}; null unless
     * DRIVER).
     */
    public static QpcState check(ServiceType type, DcRole dc, QpcState cur, int mask, QpcState next) {
        QpcState target = (mask & STATE) != 0 ? next : cur;
        String name = dc == null ? type.toString() : dc.toString();
        if ((mask & CUR_STATE) != 0 && cur != QpcState.RTR && cur != QpcState.RTS && cur != QpcState.SQD
                && cur != QpcState.SQE)
            throw new Rejected("CUR_STATE is only accepted in RTR, RTS, SQD or SQE; the " + name + " QP is in " + cur);
        Rule r = rule(cur, target, type, dc);
        int missing = r.req() & ~mask;
        if (missing != 0)
            throw new Rejected(cur + " -> " + target + " for " + name + " requires " + QpModifyMask.names(r.req())
                    + "; missing: " + QpModifyMask.names(missing));
        int extra = mask & ~(r.req() | r.opt() | STATE);
        if (extra != 0)
            throw new Rejected(cur + " -> " + target + " for " + name + " does not accept "
                    + QpModifyMask.names(extra) + " (allowed: " + QpModifyMask.names(r.req() | r.opt() | STATE) + ")");
        return target;
    }
}
