package nicsim.abi;

/**
 * The type of an event queue entry, the device's code for an asynchronous event (as mlx5's EQE types
 * are): the verbs library maps it to libibverbs' ibv_event_type. The numbers are libibverbs' today.
 */
public enum EqeType {
    CQ_ERR(0), QP_FATAL(1), QP_REQ_ERR(2), QP_ACCESS_ERR(3), COMM_EST(4), SQ_DRAINED(5), PATH_MIG(6),
    PATH_MIG_ERR(7), DEVICE_FATAL(8), PORT_ACTIVE(9), PORT_ERR(10), LID_CHANGE(11), PKEY_CHANGE(12), SM_CHANGE(13),
    SRQ_ERR(14), SRQ_LIMIT_REACHED(15), QP_LAST_WQE_REACHED(16), CLIENT_REREGISTER(17), GID_CHANGE(18);

    private final int value;

    EqeType(int value) { this.value = value; }

    /** The device's number for this type. */
    public int value() { return value; }

    /**
     * An affiliated error event: the adapter has moved the QP it names to ERR
     * (docs/sources.md#where-the-device-moves-a-qp).
     */
    public boolean movesQpToError() { return this == QP_FATAL || this == QP_REQ_ERR || this == QP_ACCESS_ERR; }

    /** The type whose device number is {@code value}. */
    public static EqeType of(int value) {
        for (EqeType e : values()) if (e.value == value) return e;
        throw new IllegalArgumentException("no EqeType has the value " + value);
    }
}
