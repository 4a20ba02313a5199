package nicsim.abi;

/**
 * Register offsets inside a UAR (doorbell) page, mlx5-like (docs/sources.md#mlx5-sizes,
 * docs/sources.md#mlx5-doorbells, docs/sources.md#mlx5-cq-ownership). One definition for the model, the RTL and
 * the driver.
 */
public final class UarLayout {
    private UarLayout() {}

    /** CQ arm doorbell: 64-bit write, (sn<<28 | cmd | ci) then the CQN, big-endian. */
    public static final int CQ_DOORBELL = 0x20;
    /**
     * First BlueFlame register. A send doorbell is 8 bytes written here in the ctrl segment's format:
     * big-endian (opmod, index, opcode) then (qpn, ds). As mlx5 writes it (the last WQE's ctrl
     * segment, or the head of a BlueFlame write) the producer counter is index + that WQE's WQEBBs;
     * with ds 0 the index is the producer counter itself (nicsim's plain doorbell).
     */
    public static final int BF_OFFSET = 0x800;
    /** BlueFlame registers per UAR page. */
    public static final int BF_REGS = 4;
    /** The arm command bit in the CQ doorbell's first word: notify on solicited completions only. */
    public static final int CQ_ARM_SOLICITED = 1 << 24;
    /** The CQ doorbell's first word: the arm sequence number's shift (2 bits) and the consumer counter's mask. */
    public static final int CQ_ARM_SN_SHIFT = 28, CQ_CI_MASK = 0xFFFFFF;
    /** The CQ doorbell's words: the arm word (as above), then the CQN, both big-endian. */
    public static final int CQ_DOORBELL_ARM = 0, CQ_DOORBELL_CQN = 4;
}
