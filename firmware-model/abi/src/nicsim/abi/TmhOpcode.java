package nicsim.abi;

/**
 * The operation byte of a tag-matching header, as the device reads it off a message's first bytes
 * (the TMH the sender's library writes; mlx5 parses it in hardware). The verbs library maps
 * libibverbs' ibv_tmh_op to it; the numbers are infiniband/tm_types.h's.
 */
public enum TmhOpcode {
    NO_TAG(0), RNDV(1), FIN(2), EAGER(3);

    private final int value;

    TmhOpcode(int value) { this.value = value; }

    /** The header's number for this operation. */
    public int value() { return value; }

    /** The operation whose number is {@code value}, or null (a header no sender writes). */
    public static TmhOpcode ofOrNull(int value) {
        for (TmhOpcode e : values()) if (e.value == value) return e;
        return null;
    }
}
