package nicsim.verbs;

/** Path MTU, with libibverbs' numbers (enum ibv_mtu); bytes() is the size. */
public enum Mtu {
    MTU_256(1), MTU_512(2), MTU_1024(3), MTU_2048(4), MTU_4096(5);

    private final int value;

    Mtu(int value) { this.value = value; }

    /** libibverbs' number for this value. */
    public int value() { return value; }

    /** The MTU in bytes (256 << (value - 1)). */
    public int bytes() { return 128 << value; }

    /** The constant whose libibverbs number is {@code value}. */
    public static Mtu of(int value) {
        for (Mtu e : values()) if (e.value == value) return e;
        throw new IllegalArgumentException("no Mtu has the value " + value);
    }
}
