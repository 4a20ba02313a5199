package nicsim.abi;

/**
 * The half of a dynamically connected QP that CREATE_QP makes (its dc_type field): a DC target takes
 * requests from any initiator that knows its number and DC access key; a DC initiator connects to the
 * target each work request names. The device's code; the numbers are mlx5dv's.
 */
public enum DcRole {
    DCT(1), DCI(2);

    private final int value;

    DcRole(int value) { this.value = value; }

    /** The device's number for this role. */
    public int value() { return value; }

    /** The role whose device number is {@code value}. */
    public static DcRole of(int value) {
        for (DcRole e : values()) if (e.value == value) return e;
        throw new IllegalArgumentException("no DcRole has the value " + value);
    }
}
