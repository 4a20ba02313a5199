package nicsim.verbs;

/**
 * The two halves of a dynamically connected QP (mlx5dv's enum mlx5dv_dc_type): a DC target takes
 * requests from any initiator that knows its number and DC access key; a DC initiator connects to
 * the target each work request names.
 */
public enum DcType {
    DCT(1), DCI(2);

    private final int value;

    DcType(int value) { this.value = value; }

    public int value() { return value; }

    /** The constant whose mlx5dv number is {@code value}. */
    public static DcType of(int value) {
        for (DcType e : values()) if (e.value == value) return e;
        throw new IllegalArgumentException("no DcType has the value " + value);
    }
}
