package nicsim.verbs;

/** A shared receive queue (ibv_srq). Not built yet: {@link ProtectionDomain#createSrq} refuses with EOPNOTSUPP. */
public final class SharedReceiveQueue extends VerbsObject {
    private SharedReceiveQueue(ProtectionDomain pd) { super(pd); }

    public void postRecv(RecvWr... wrs) { throw new VerbsException(Errno.EOPNOTSUPP, "SRQs are not built yet"); }

    public void modify(SrqAttr attr, int mask) { throw new VerbsException(Errno.EOPNOTSUPP, "SRQs are not built yet"); }

    @Override protected String describe() { return "SharedReceiveQueue"; }
    @Override protected void destroy() {}
}
