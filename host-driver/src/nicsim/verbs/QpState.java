package nicsim.verbs;

/** Queue pair states, with libibverbs' numbers (enum ibv_qp_state). */
public enum QpState {
    RESET(0), INIT(1), RTR(2), RTS(3), SQD(4), SQE(5), ERR(6);

    private final int value;

    QpState(int value) { this.value = value; }

    public int value() { return value; }

    /** The constant whose libibverbs number is {@code value}. */
    public static QpState of(int value) {
        for (QpState e : values()) if (e.value == value) return e;
        throw new IllegalArgumentException("no QpState has the value " + value);
    }
}
