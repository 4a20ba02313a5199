package nicsim.verbs;

/** Shared receive queue creation attributes (struct ibv_srq_init_attr). */
public final class SrqInitAttr {
    private int maxWr, maxSge, srqLimit;

    public SrqInitAttr maxWr(int v) { maxWr = v; return this; }
    public SrqInitAttr maxSge(int v) { maxSge = v; return this; }
    public SrqInitAttr srqLimit(int v) { srqLimit = v; return this; }
    public int maxWr() { return maxWr; }
    public int maxSge() { return maxSge; }
    public int srqLimit() { return srqLimit; }
}
