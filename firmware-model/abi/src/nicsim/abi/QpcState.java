package nicsim.abi;

/**
 * The state a QP context is in, as the device encodes it in MODIFY_QP's and QUERY_QP's mailboxes
 * (docs/device.md#qp-states). The device's own code, as mlx5's QPC state is: the verbs library
 * maps libibverbs' ibv_qp_state to it. The numbers are libibverbs' today, so the mailboxes carry
 * what they always did.
 */
public enum QpcState {
    RESET(0), INIT(1), RTR(2), RTS(3), SQD(4), SQE(5), ERR(6);

    private final int value;

    QpcState(int value) { this.value = value; }

    /** The device's number for this state. */
    public int value() { return value; }

    /** The state whose device number is {@code value}. */
    public static QpcState of(int value) {
        for (QpcState e : values()) if (e.value == value) return e;
        throw new IllegalArgumentException("no QpcState has the value " + value);
    }
}
