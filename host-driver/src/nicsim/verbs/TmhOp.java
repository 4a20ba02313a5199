package nicsim.verbs;

/** The operation a tag-matching header names (enum ibv_tmh_op, infiniband/tm_types.h). */
public enum TmhOp {
    NO_TAG(0), RNDV(1), FIN(2), EAGER(3);

    private final int value;

    TmhOp(int value) { this.value = value; }

    /** libibverbs' number for this value. */
    public int value() { return value; }

    /** The constant whose number is {@code value}, or null (a header no sender writes). */
    public static TmhOp ofOrNull(int value) {
        for (TmhOp e : values()) if (e.value == value) return e;
        return null;
    }
}
