package nicsim.verbs;

/** Shared receive queue type (enum ibv_srq_type). */
public enum SrqType {
    BASIC(0), XRC(1), TM(2);

    private final int value;

    SrqType(int value) { this.value = value; }

    /** libibverbs' number for this value. */
    public int value() { return value; }

    /** The constant whose libibverbs number is {@code value}. */
    public static SrqType of(int value) {
        for (SrqType e : values()) if (e.value == value) return e;
        throw new IllegalArgumentException("no SrqType has the value " + value);
    }
}
