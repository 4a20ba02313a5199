package nicsim.verbs;

/**
 * Queue pair transport types, with libibverbs' numbers (enum ibv_qp_type). DRIVER is a provider's
 * own type: here, as in mlx5, a DC initiator or target ({@link DcType}).
 */
public enum QpType {
    RC(2), UC(3), UD(4), XRC_SEND(9), XRC_RECV(10), DRIVER(0xff);

    private final int value;

    QpType(int value) { this.value = value; }

    public int value() { return value; }

    /** The constant whose libibverbs number is {@code value}. */
    public static QpType of(int value) {
        for (QpType e : values()) if (e.value == value) return e;
        throw new IllegalArgumentException("no QpType has the value " + value);
    }
}
