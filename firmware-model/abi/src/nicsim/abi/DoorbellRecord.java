package nicsim.abi;

/**
 * A queue's doorbell record in host memory (docs/sources.md#mlx5-doorbells), where software publishes its counters
 * for the adapter to read, big-endian. One definition for the model and the drivers (DeviceHeader gives it to C as
 * NICSIM_DBREC_*).
 */
public final class DoorbellRecord {
    private DoorbellRecord() {}

    /** A QP's record: the receive producer counter at byte 0 (also an SRQ's), the send producer counter at 4. */
    public static final int RECV = 0, SEND = 4;
    /** A CQ's record: the consumer counter (bits 23..0) at byte 0, the last arm word (as the doorbell's) at 4. */
    public static final int CQ_CI = 0, CQ_ARM = 4;
    /** A record's bytes. */
    public static final int BYTES = 8;
}
