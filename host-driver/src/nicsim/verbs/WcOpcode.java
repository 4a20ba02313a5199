package nicsim.verbs;

/** Work completion opcode, with libibverbs' numbers (enum ibv_wc_opcode); receive opcodes have bit 0x80. */
public enum WcOpcode {
    SEND(0), RDMA_WRITE(1), RDMA_READ(2), COMP_SWAP(3), FETCH_ADD(4), BIND_MW(5), LOCAL_INV(6), RECV(128), 
    RECV_RDMA_WITH_IMM(129), TM_ADD(130), TM_DEL(131), TM_SYNC(132), TM_RECV(133), TM_NO_TAG(134),
    /** A driver-specific completion (IBV_WC_DRIVER1): mlx5dv's MLX5DV_WC_UMR, a layout UMR done. */
    DRIVER1(135);

    private final int value;

    WcOpcode(int value) { this.value = value; }

    /** libibverbs' number for this value. */
    public int value() { return value; }

    /** The constant whose libibverbs number is {@code value}. */
    public static WcOpcode of(int value) {
        for (WcOpcode e : values()) if (e.value == value) return e;
        throw new IllegalArgumentException("no WcOpcode has the value " + value);
    }
}
