package nicsim.verbs;

import static java.util.Map.entry;

import java.util.EnumMap;
import java.util.Map;
import nicsim.abi.AccessBits;
import nicsim.abi.Cqe64;
import nicsim.abi.CqeTmFlags;
import nicsim.abi.DcRole;
import nicsim.abi.EqeType;
import nicsim.abi.MtuCode;
import nicsim.abi.QpModifyMask;
import nicsim.abi.QpcState;
import nicsim.abi.ServiceType;
import nicsim.abi.TmhOpcode;

/**
 * Where libibverbs' numbers meet the device's: the one table between the public enums and flag sets of
 * this library and the device's own codes (nicsim.abi), as a provider maps ibv_qp_state to its QPC state
 * and its CQE syndromes to ibv_wc_status. {@code device(x)} takes a public value down, {@code verbs(x)} a
 * device's up; null stays null. A flag set is mapped bit by bit; a bit the table does not name passes as it
 * is, so the device refuses what it refused before. Today every pair has the same number on both sides:
 * the table is what lets either side change alone.
 */
public final class DeviceCodes {
    private DeviceCodes() {}

    /** One enum's pairs, both ways; null stays null. */
    private static final class Pairs<V extends Enum<V>, D extends Enum<D>> {
        private final Map<V, D> down;
        private final Map<D, V> up;

        Pairs(Class<V> v, Class<D> d) {
            down = new EnumMap<>(v);
            up = new EnumMap<>(d);
        }

        D down(V v) { return v == null ? null : down.get(v); }

        V up(D d) { return d == null ? null : up.get(d); }

        Pairs<V, D> pair(V v, D d) {
            if (down.put(v, d) != null || up.put(d, v) != null)
                throw new IllegalStateException(v + " or " + d + " is paired twice");
            return this;
        }
    }

    private static final Pairs<QpState, QpcState> STATES = new Pairs<>(QpState.class, QpcState.class)
            .pair(QpState.RESET, QpcState.RESET).pair(QpState.INIT, QpcState.INIT).pair(QpState.RTR, QpcState.RTR)
            .pair(QpState.RTS, QpcState.RTS).pair(QpState.SQD, QpcState.SQD).pair(QpState.SQE, QpcState.SQE)
            .pair(QpState.ERR, QpcState.ERR);

    private static final Pairs<QpType, ServiceType> TYPES = new Pairs<>(QpType.class, ServiceType.class)
            .pair(QpType.RC, ServiceType.RC).pair(QpType.UC, ServiceType.UC).pair(QpType.UD, ServiceType.UD)
            .pair(QpType.XRC_SEND, ServiceType.XRC_SEND).pair(QpType.XRC_RECV, ServiceType.XRC_RECV)
            .pair(QpType.DRIVER, ServiceType.DRIVER);

    private static final Pairs<DcType, DcRole> DC = new Pairs<>(DcType.class, DcRole.class)
            .pair(DcType.DCT, DcRole.DCT).pair(DcType.DCI, DcRole.DCI);

    private static final Pairs<Mtu, MtuCode> MTUS = new Pairs<>(Mtu.class, MtuCode.class)
            .pair(Mtu.MTU_256, MtuCode.MTU_256).pair(Mtu.MTU_512, MtuCode.MTU_512)
            .pair(Mtu.MTU_1024, MtuCode.MTU_1024).pair(Mtu.MTU_2048, MtuCode.MTU_2048)
            .pair(Mtu.MTU_4096, MtuCode.MTU_4096);

    private static final Pairs<TmhOp, TmhOpcode> TMH = new Pairs<>(TmhOp.class, TmhOpcode.class)
            .pair(TmhOp.NO_TAG, TmhOpcode.NO_TAG).pair(TmhOp.RNDV, TmhOpcode.RNDV).pair(TmhOp.FIN, TmhOpcode.FIN)
            .pair(TmhOp.EAGER, TmhOpcode.EAGER);

    private static final Pairs<EventType, EqeType> EVENTS = new Pairs<>(EventType.class, EqeType.class)
            .pair(EventType.CQ_ERR, EqeType.CQ_ERR).pair(EventType.QP_FATAL, EqeType.QP_FATAL)
            .pair(EventType.QP_REQ_ERR, EqeType.QP_REQ_ERR).pair(EventType.QP_ACCESS_ERR, EqeType.QP_ACCESS_ERR)
            .pair(EventType.COMM_EST, EqeType.COMM_EST).pair(EventType.SQ_DRAINED, EqeType.SQ_DRAINED)
            .pair(EventType.PATH_MIG, EqeType.PATH_MIG).pair(EventType.PATH_MIG_ERR, EqeType.PATH_MIG_ERR)
            .pair(EventType.DEVICE_FATAL, EqeType.DEVICE_FATAL).pair(EventType.PORT_ACTIVE, EqeType.PORT_ACTIVE)
            .pair(EventType.PORT_ERR, EqeType.PORT_ERR).pair(EventType.LID_CHANGE, EqeType.LID_CHANGE)
            .pair(EventType.PKEY_CHANGE, EqeType.PKEY_CHANGE).pair(EventType.SM_CHANGE, EqeType.SM_CHANGE)
            .pair(EventType.SRQ_ERR, EqeType.SRQ_ERR).pair(EventType.SRQ_LIMIT_REACHED, EqeType.SRQ_LIMIT_REACHED)
            .pair(EventType.QP_LAST_WQE_REACHED, EqeType.QP_LAST_WQE_REACHED)
            .pair(EventType.CLIENT_REREGISTER, EqeType.CLIENT_REREGISTER)
            .pair(EventType.GID_CHANGE, EqeType.GID_CHANGE);

    /** {public bit, device bit} of ibv_access_flags. */
    static final int[][] ACCESS = {{AccessFlags.LOCAL_WRITE, AccessBits.LOCAL_WRITE},
            {AccessFlags.REMOTE_WRITE, AccessBits.REMOTE_WRITE}, {AccessFlags.REMOTE_READ, AccessBits.REMOTE_READ},
            {AccessFlags.REMOTE_ATOMIC, AccessBits.REMOTE_ATOMIC}, {AccessFlags.MW_BIND, AccessBits.MW_BIND},
            {AccessFlags.ZERO_BASED, AccessBits.ZERO_BASED}, {AccessFlags.ON_DEMAND, AccessBits.ON_DEMAND}};

    /** {public bit, device bit} of ibv_qp_attr_mask. */
    static final int[][] MASK = {{QpAttrMask.STATE, QpModifyMask.STATE},
            {QpAttrMask.CUR_STATE, QpModifyMask.CUR_STATE},
            {QpAttrMask.EN_SQD_ASYNC_NOTIFY, QpModifyMask.EN_SQD_ASYNC_NOTIFY},
            {QpAttrMask.ACCESS_FLAGS, QpModifyMask.ACCESS_FLAGS}, {QpAttrMask.PKEY_INDEX, QpModifyMask.PKEY_INDEX},
            {QpAttrMask.PORT, QpModifyMask.PORT}, {QpAttrMask.QKEY, QpModifyMask.QKEY},
            {QpAttrMask.AV, QpModifyMask.AV},
            {QpAttrMask.PATH_MTU, QpModifyMask.PATH_MTU}, {QpAttrMask.TIMEOUT, QpModifyMask.TIMEOUT},
            {QpAttrMask.RETRY_CNT, QpModifyMask.RETRY_CNT}, {QpAttrMask.RNR_RETRY, QpModifyMask.RNR_RETRY},
            {QpAttrMask.RQ_PSN, QpModifyMask.RQ_PSN}, {QpAttrMask.MAX_QP_RD_ATOMIC, QpModifyMask.MAX_QP_RD_ATOMIC},
            {QpAttrMask.ALT_PATH, QpModifyMask.ALT_PATH}, {QpAttrMask.MIN_RNR_TIMER, QpModifyMask.MIN_RNR_TIMER},
            {QpAttrMask.SQ_PSN, QpModifyMask.SQ_PSN}, {QpAttrMask.MAX_DEST_RD_ATOMIC, QpModifyMask.MAX_DEST_RD_ATOMIC},
            {QpAttrMask.PATH_MIG_STATE, QpModifyMask.PATH_MIG_STATE}, {QpAttrMask.CAP, QpModifyMask.CAP},
            {QpAttrMask.DEST_QPN, QpModifyMask.DEST_QPN}};

    /** {public bit, device bit}: the tag-matching flags of a work completion and of a CQE's app_info byte. */
    static final int[][] TM_FLAGS = {{WcFlags.TM_SYNC_REQ, CqeTmFlags.SYNC_REQ}, {WcFlags.TM_MATCH, CqeTmFlags.MATCH},
            {WcFlags.TM_DATA_VALID, CqeTmFlags.DATA_VALID}};

    /**
     * The status of each device syndrome of an error CQE: each syndrome the status of its name (SYNDROME_X is X), as
     * mlx5's provider maps them; any other syndrome is GENERAL_ERR.
     */
    private static final Map<Integer, WcStatus> STATUS = Map.ofEntries(
            entry(Cqe64.SYNDROME_LOC_LEN_ERR, WcStatus.LOC_LEN_ERR),
            entry(Cqe64.SYNDROME_LOC_QP_OP_ERR, WcStatus.LOC_QP_OP_ERR),
            entry(Cqe64.SYNDROME_LOC_PROT_ERR, WcStatus.LOC_PROT_ERR),
            entry(Cqe64.SYNDROME_WR_FLUSH_ERR, WcStatus.WR_FLUSH_ERR),
            entry(Cqe64.SYNDROME_MW_BIND_ERR, WcStatus.MW_BIND_ERR),
            entry(Cqe64.SYNDROME_BAD_RESP_ERR, WcStatus.BAD_RESP_ERR),
            entry(Cqe64.SYNDROME_LOC_ACCESS_ERR, WcStatus.LOC_ACCESS_ERR),
            entry(Cqe64.SYNDROME_REM_INV_REQ_ERR, WcStatus.REM_INV_REQ_ERR),
            entry(Cqe64.SYNDROME_REM_ACCESS_ERR, WcStatus.REM_ACCESS_ERR),
            entry(Cqe64.SYNDROME_REM_OP_ERR, WcStatus.REM_OP_ERR),
            entry(Cqe64.SYNDROME_RETRY_EXC_ERR, WcStatus.RETRY_EXC_ERR),
            entry(Cqe64.SYNDROME_RNR_RETRY_EXC_ERR, WcStatus.RNR_RETRY_EXC_ERR),
            entry(Cqe64.SYNDROME_REM_ABORT_ERR, WcStatus.REM_ABORT_ERR),
            entry(Cqe64.SYNDROME_TM_ERR, WcStatus.TM_ERR),
            entry(Cqe64.SYNDROME_TM_RNDV_INCOMPLETE, WcStatus.TM_RNDV_INCOMPLETE),
            entry(Cqe64.SYNDROME_GENERAL_ERR, WcStatus.GENERAL_ERR));

    public static QpcState device(QpState s) { return STATES.down(s); }

    public static QpState verbs(QpcState s) { return STATES.up(s); }

    public static ServiceType device(QpType t) { return TYPES.down(t); }

    public static QpType verbs(ServiceType t) { return TYPES.up(t); }

    public static DcRole device(DcType t) { return DC.down(t); }

    public static DcType verbs(DcRole r) { return DC.up(r); }

    public static MtuCode device(Mtu m) { return MTUS.down(m); }

    public static Mtu verbs(MtuCode m) { return MTUS.up(m); }

    public static TmhOpcode device(TmhOp o) { return TMH.down(o); }

    public static TmhOp verbs(TmhOpcode o) { return TMH.up(o); }

    public static EqeType device(EventType e) { return EVENTS.down(e); }

    public static EventType verbs(EqeType e) { return EVENTS.up(e); }

    /** ibv_access_flags {@code flags} as the device's access bits. */
    public static int accessDown(int flags) { return bits(ACCESS, flags, 0, 1); }

    /** The device's access bits {@code bits} as ibv_access_flags. */
    public static int accessUp(int bits) { return bits(ACCESS, bits, 1, 0); }

    /** ibv_qp_attr_mask {@code mask} as MODIFY_QP's. */
    public static int maskDown(int mask) { return bits(MASK, mask, 0, 1); }

    /** MODIFY_QP's mask {@code mask} as an ibv_qp_attr_mask. */
    public static int maskUp(int mask) { return bits(MASK, mask, 1, 0); }

    /** A CQE's tag-matching bits (app_info) as ibv_wc_flags; the CQE's other bits are not flags and are left out. */
    public static int tmFlagsUp(int appInfo) { return named(TM_FLAGS, appInfo, 1, 0); }

    /** The ibv_wc_flags' tag-matching bits of {@code flags} as a CQE's app_info bits. */
    public static int tmFlagsDown(int flags) { return named(TM_FLAGS, flags, 0, 1); }

    /** The ibv_wc_status an error CQE's {@code syndrome} stands for (GENERAL_ERR for one the table does not name). */
    public static WcStatus status(int syndrome) { return STATUS.getOrDefault(syndrome, WcStatus.GENERAL_ERR); }

    /** {@code value}'s bits through {@code table} from column {@code from} to column {@code to}; others as they are. */
    private static int bits(int[][] table, int value, int from, int to) {
        int others = value;
        for (int[] p : table) others &= ~p[from];
        return others | named(table, value, from, to);
    }

    /** The bits of {@code value} that {@code table} names in column {@code from}, as column {@code to} has them. */
    private static int named(int[][] table, int value, int from, int to) {
        int out = 0;
        for (int[] p : table) if ((value & p[from]) != 0) out |= p[to];
        return out;
    }
}
