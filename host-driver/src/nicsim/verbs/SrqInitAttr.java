package nicsim.verbs;

/** Shared receive queue creation attributes (struct ibv_srq_init_attr). */
public final class SrqInitAttr {
    private int maxWr, maxSge, srqLimit;
    private SrqType srqType = SrqType.BASIC;
    private Xrcd xrcd;
    private CompletionQueue cq;
    private int tmMaxNumTags, tmMaxOps;

    public SrqInitAttr maxWr(int v) { maxWr = v; return this; }
    public SrqInitAttr maxSge(int v) { maxSge = v; return this; }
    public SrqInitAttr srqLimit(int v) { srqLimit = v; return this; }
    public int maxWr() { return maxWr; }
    public int maxSge() { return maxSge; }
    public int srqLimit() { return srqLimit; }
    /** ibv_srq_init_attr_ex's srq_type, xrcd and cq: an XRC SRQ needs both. */
    public SrqInitAttr srqType(SrqType v) { srqType = v; return this; }
    public SrqInitAttr xrcd(Xrcd v) { xrcd = v; return this; }
    public SrqInitAttr cq(CompletionQueue v) { cq = v; return this; }
    public SrqType srqType() { return srqType; }
    public Xrcd xrcd() { return xrcd; }
    public CompletionQueue cq() { return cq; }
    /** A tag-matching SRQ's list size and outstanding tag-list operations (ibv_srq_init_attr_ex's tm_cap). */
    public SrqInitAttr tmMaxNumTags(int v) { tmMaxNumTags = v; return this; }
    public SrqInitAttr tmMaxOps(int v) { tmMaxOps = v; return this; }
    public int tmMaxNumTags() { return tmMaxNumTags; }
    public int tmMaxOps() { return tmMaxOps; }
}
