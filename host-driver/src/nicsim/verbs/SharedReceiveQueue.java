package nicsim.verbs;

import nicsim.abi.Cmd;
import nicsim.driver.Driver;
import nicsim.provider.RecvRing;

/**
 * A shared receive queue (ibv_srq): one receive ring (the provider's {@link RecvRing}) that every
 * attached QP takes WQEs from. The limit (modify with {@link SrqAttrMask#LIMIT}) arms
 * SRQ_LIMIT_REACHED, which fires once. An XRC SRQ belongs to an XRC domain and has a CQ of its
 * own: no QP attaches to it; the XRC target QPs of its domain take WQEs from it for the requests
 * that name its number ({@link #srqNum()}), and its completions come to its CQ.
 */
public final class SharedReceiveQueue extends VerbsObject {
    private final ProtectionDomain pd;
    private final Driver driver;
    final int srqn;
    private final int maxWr, maxSge;
    private final SrqType type;
    private final Xrcd xrcd;
    private final CompletionQueue cq;
    private final RecvRing ring;
    private int limit;

    SharedReceiveQueue(ProtectionDomain pd, SrqInitAttr a) {
        super(pd);
        this.pd = pd;
        this.driver = pd.ctx.driver;
        var caps = driver.caps();
        if (a.maxWr() < 1 || a.maxWr() > caps.maxQpWr())
            throw new VerbsException(Errno.EINVAL, "SrqInitAttr.maxWr = " + a.maxWr() + " is out of range (1.." + caps.maxQpWr() + ")");
        if (a.maxSge() < 1 || a.maxSge() > caps.maxSge())
            throw new VerbsException(Errno.EINVAL, "SrqInitAttr.maxSge = " + a.maxSge() + " is out of range (1.." + caps.maxSge() + ")");
        if (a.srqLimit() < 0 || a.srqLimit() > a.maxWr())
            throw new VerbsException(Errno.EINVAL, "SrqInitAttr.srqLimit = " + a.srqLimit() + " exceeds maxWr " + a.maxWr());
        this.type = a.srqType();
        if (type == SrqType.TM) throw new VerbsException(Errno.EOPNOTSUPP, "SrqInitAttr.srqType TM: tag matching is not built yet");
        if (type == SrqType.XRC) {
            if (a.xrcd() == null) throw new VerbsException(Errno.EINVAL, "SrqInitAttr.xrcd is needed for an XRC SRQ");
            a.xrcd().checkUsableBy(pd.ctx, "SrqInitAttr.xrcd");
            if (a.cq() == null || a.cq().isClosed() || a.cq().ctx != pd.ctx)
                throw new VerbsException(Errno.EINVAL, "SrqInitAttr.cq: an XRC SRQ needs an open CQ of its own context");
        }
        this.xrcd = type == SrqType.XRC ? a.xrcd() : null;
        this.cq = type == SrqType.XRC ? a.cq() : null;
        this.maxWr = a.maxWr();
        this.maxSge = a.maxSge();
        this.ring = new RecvRing(driver.host(), Integer.highestOneBit(Math.max(2, maxWr * 2 - 1)),
                Integer.highestOneBit(Math.max(16, maxSge * 32 - 1)), maxWr);
        long dbrec = driver.host().allocPhysical(8, 8);
        ring.recordAt(dbrec);
        this.limit = a.srqLimit();
        int logSize = Integer.numberOfTrailingZeros(ring.size()), strideLog = Integer.numberOfTrailingZeros(ring.stride());
        this.srqn = (int) (type == SrqType.XRC
                ? driver.command(Cmd.CREATE_XRC_SRQ, Cmd.CREATE_XRC_SRQ_IN, new Cmd.CreateXrcSrq(pd.pdn, ring.base(), logSize, strideLog, dbrec,
                        limit, xrcd.xrcdn, cq.cqn), Cmd.HANDLE)
                : driver.command(Cmd.CREATE_SRQ, Cmd.CREATE_SRQ_IN, new Cmd.CreateSrq(pd.pdn, ring.base(), logSize, strideLog, dbrec, limit),
                        Cmd.HANDLE)).handle();
        pd.ctx.srqs.put(srqn, this);
    }

    public int handle() { return srqn; }
    /** ibv_get_srq_num: the number an XRC sender names in {@link SendWr#xrcRemoteSrqNum}. */
    public int srqNum() { return srqn; }
    public SrqType type() { return type; }
    public int limit() { return limit; }

    /** ibv_post_srq_recv: too many SGEs is EINVAL, a full queue ENOMEM ({@link VerbsException#badWrIndex()} says which). */
    public void postRecv(RecvWr... wrs) {
        checkOpen();
        int posted = 0;
        try {
            for (RecvWr wr : wrs) {
                if (wr.sgList().size() > maxSge)
                    throw new VerbsException(Errno.EINVAL, "RecvWr.sgList has " + wr.sgList().size() + " SGEs; the SRQ allows " + maxSge, posted);
                if (ring.full())
                    throw new VerbsException(Errno.ENOMEM, "postRecv: SRQ " + srqn + " is full (" + maxWr + " WRs)", posted);
                ring.put(QueuePair.toWqe(wr.sgList()), wr.wrId());
                posted++;
            }
        } finally {
            ring.publish(posted);
        }
    }

    /** ibv_modify_srq: LIMIT arms (or with 0 disarms) the limit event; resizing (MAX_WR) is not supported. */
    public void modify(SrqAttr attr, int mask) {
        checkOpen();
        if ((mask & ~(SrqAttrMask.MAX_WR | SrqAttrMask.LIMIT)) != 0)
            throw new VerbsException(Errno.EINVAL, String.format("modify SRQ: unknown mask bits 0x%x", mask));
        if ((mask & SrqAttrMask.MAX_WR) != 0) throw new VerbsException(Errno.EOPNOTSUPP, "modify SRQ: resizing (MAX_WR) is not supported");
        if ((mask & SrqAttrMask.LIMIT) != 0) {
            if (attr.srqLimit() < 0 || attr.srqLimit() > maxWr)
                throw new VerbsException(Errno.EINVAL, "SrqAttr.srqLimit = " + attr.srqLimit() + " exceeds maxWr " + maxWr);
            driver.command(Cmd.ARM_SRQ, Cmd.ARM_SRQ_IN, new Cmd.ArmSrq(srqn, attr.srqLimit()), Cmd.EMPTY);
            limit = attr.srqLimit();
        }
    }

    /** The scatter list of WQE {@code counter}, as posted. */
    java.util.List<nicsim.abi.WqeFormat.Sge> sges(int counter) { return ring.sges(counter); }

    /** A receive completion for WQE {@code counter}: its wr_id; the WQE's slot is free again. */
    long take(int counter) { return ring.take(counter); }

    @Override protected String describe() { return "SharedReceiveQueue(" + srqn + ")"; }

    @Override protected void destroy() {
        driver.command(Cmd.DESTROY_SRQ, Cmd.HANDLE, new Cmd.Handle(srqn), Cmd.EMPTY);
        pd.ctx.srqs.remove(srqn);
    }
}
