package nicsim.abi;

/**
 * An event queue entry (docs/device.md, Async events), 64 bytes: the type (EqeType's number) in byte 0, the
 * resource (QPN, CQN, SRQN or port, big-endian) in bytes 4..7, and in byte 63 WRITTEN and the owner bit (bit 0,
 * the ring pass's parity). One definition for the model and the drivers (DeviceHeader: NICSIM_EQE_*).
 */
public final class Eqe64 {
    private Eqe64() {}

    public static final int BYTES = 64, TYPE = 0, RESOURCE = 4, OWNER = 63;
    /** The owner byte's mark of an entry the adapter wrote. */
    public static final int WRITTEN = 0x80;
}
