package nicsim.verbs;

/** A tag-list operation on a tag-matching SRQ (enum ibv_ops_wr_opcode). */
public enum OpsWrOpcode {
    TAG_ADD(0), TAG_DEL(1), TAG_SYNC(2);

    private final int value;

    OpsWrOpcode(int value) { this.value = value; }

    /** libibverbs' number for this value. */
    public int value() { return value; }

    /** The constant whose libibverbs number is {@code value}. */
    public static OpsWrOpcode of(int value) {
        for (OpsWrOpcode e : values()) if (e.value == value) return e;
        throw new IllegalArgumentException("no OpsWrOpcode has the value " + value);
    }
}
