package nicsim.adapter;

/**
 * Register offsets inside a UAR (doorbell) page, mlx5-like (REFERENCE 3.1, 3.3, 3.5). One
 * definition for the model, the RTL and the driver.
 */
public final class UarLayout {
    private UarLayout() {}

    /** CQ arm doorbell: 64-bit write, (sn<<28 | cmd | ci) then the CQN, big-endian. */
    public static final int CQ_DOORBELL = 0x20;
    /** First BlueFlame register; a send doorbell is the first 8 bytes of the ctrl segment written here. */
    public static final int BF_OFFSET = 0x800;
    /** BlueFlame registers per UAR page. */
    public static final int BF_REGS = 4;
    /** The arm command bit in the CQ doorbell's first word: notify on solicited completions only. */
    public static final int CQ_ARM_SOLICITED = 1 << 24;
}
