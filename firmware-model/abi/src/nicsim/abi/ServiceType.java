package nicsim.abi;

/**
 * A QP's service type as CREATE_QP names it to the device (mlx5's QPC "st"): the device's own code,
 * to which the verbs library maps libibverbs' ibv_qp_type. DRIVER is a DC initiator or target
 * ({@link DcRole}). The numbers are libibverbs' today, so the mailboxes carry what they always did.
 */
public enum ServiceType {
    RC(2), UC(3), UD(4), XRC_SEND(9), XRC_RECV(10), DRIVER(0xff);

    private final int value;

    ServiceType(int value) { this.value = value; }

    /** The device's number for this service type. */
    public int value() { return value; }

    /** The service type whose device number is {@code value}. */
    public static ServiceType of(int value) {
        for (ServiceType e : values()) if (e.value == value) return e;
        throw new IllegalArgumentException("no ServiceType has the value " + value);
    }
}
