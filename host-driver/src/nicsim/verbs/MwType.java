package nicsim.verbs;

/** Memory window type (enum ibv_mw_type). */
public enum MwType {
    TYPE_1(1), TYPE_2(2);

    private final int value;

    MwType(int value) { this.value = value; }

    /** libibverbs' number for this value. */
    public int value() { return value; }

    /** The constant whose libibverbs number is {@code value}. */
    public static MwType of(int value) {
        for (MwType e : values()) if (e.value == value) return e;
        throw new IllegalArgumentException("no MwType has the value " + value);
    }
}
