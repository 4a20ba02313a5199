package nicsim.verbs;

/** ibv_wc_flags bits. */
public final class WcFlags {
    private WcFlags() {}

    public static final int GRH = 1, WITH_IMM = 2, WITH_INV = 8;
}
