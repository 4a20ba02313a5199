package nicsim.verbs;

/** ibv_srq_attr_mask bits. */
public final class SrqAttrMask {
    private SrqAttrMask() {}

    public static final int MAX_WR = 1, LIMIT = 2;
}
