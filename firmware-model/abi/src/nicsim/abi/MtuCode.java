package nicsim.abi;

/**
 * A path MTU as the device encodes it (MODIFY_QP's path_mtu, QUERY_HCA_CAP's maxMtu): the IB
 * enumeration, 1 for 256 bytes up to 5 for 4096. The verbs library maps libibverbs' ibv_mtu to it.
 */
public enum MtuCode {
    MTU_256(1), MTU_512(2), MTU_1024(3), MTU_2048(4), MTU_4096(5);

    private final int value;

    MtuCode(int value) { this.value = value; }

    /** The device's number for this MTU. */
    public int value() { return value; }

    /** The MTU in bytes (256 << (value - 1)). */
    public int bytes() { return 128 << value; }

    /** The MTU whose device number is {@code value}. */
    public static MtuCode of(int value) {
        for (MtuCode e : values()) if (e.value == value) return e;
        throw new IllegalArgumentException("no MtuCode has the value " + value);
    }
}
