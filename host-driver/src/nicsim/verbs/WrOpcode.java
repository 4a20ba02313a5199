package nicsim.verbs;

/** Send work request opcode, with libibverbs' numbers (enum ibv_wr_opcode). */
public enum WrOpcode {
    RDMA_WRITE(0), RDMA_WRITE_WITH_IMM(1), SEND(2), SEND_WITH_IMM(3), RDMA_READ(4), ATOMIC_CMP_AND_SWP(5), 
    ATOMIC_FETCH_AND_ADD(6), LOCAL_INV(7), BIND_MW(8), SEND_WITH_INV(9),
    /** A driver-specific request (IBV_WR_DRIVER1): on nicsim, as on mlx5, a UMR setting an indirect mkey's layout. */
    DRIVER1(11);

    private final int value;

    WrOpcode(int value) { this.value = value; }

    /** libibverbs' number for this value. */
    public int value() { return value; }

    /** The constant whose libibverbs number is {@code value}. */
    public static WrOpcode of(int value) {
        for (WrOpcode e : values()) if (e.value == value) return e;
        throw new IllegalArgumentException("no WrOpcode has the value " + value);
    }
}
