package nicsim.verbs;

/** Shared receive queue attributes (struct ibv_srq_attr). */
public final class SrqAttr {
    private int maxWr, maxSge, srqLimit;

    public SrqAttr maxWr(int v) { maxWr = v; return this; }
    public SrqAttr maxSge(int v) { maxSge = v; return this; }
    public SrqAttr srqLimit(int v) { srqLimit = v; return this; }
    public int maxWr() { return maxWr; }
    public int maxSge() { return maxSge; }
    public int srqLimit() { return srqLimit; }
}
