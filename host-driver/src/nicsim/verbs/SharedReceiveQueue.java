package nicsim.verbs;

import nicsim.adapter.BigEndian;
import nicsim.adapter.RecvWqeFormat;
import nicsim.driver.Driver;
import nicsim.driver.Host;
import nicsim.firmware.Cmd;

/**
 * A shared receive queue (ibv_srq): one receive ring in host memory that every attached QP takes
 * WQEs from. Posting writes the WQE and the doorbell record's counter (no MMIO, as mlx5). The limit
 * (modify with {@link SrqAttrMask#LIMIT}) arms SRQ_LIMIT_REACHED, which fires once.
 */
public final class SharedReceiveQueue extends VerbsObject {
    private final ProtectionDomain pd;
    private final Driver driver;
    private final Host host;
    final int srqn;
    private final int maxWr, maxSge, size, stride;
    private final long ring, dbrec;
    private final long[] wrid;
    private int head, tail, limit;

    SharedReceiveQueue(ProtectionDomain pd, SrqInitAttr a) {
        super(pd);
        this.pd = pd;
        this.driver = pd.ctx.driver;
        this.host = driver.host();
        var caps = driver.caps();
        if (a.maxWr() < 1 || a.maxWr() > caps.maxQpWr())
            throw new VerbsException(Errno.EINVAL, "SrqInitAttr.maxWr = " + a.maxWr() + " is out of range (1.." + caps.maxQpWr() + ")");
        if (a.maxSge() < 1 || a.maxSge() > caps.maxSge())
            throw new VerbsException(Errno.EINVAL, "SrqInitAttr.maxSge = " + a.maxSge() + " is out of range (1.." + caps.maxSge() + ")");
        if (a.srqLimit() < 0 || a.srqLimit() > a.maxWr())
            throw new VerbsException(Errno.EINVAL, "SrqInitAttr.srqLimit = " + a.srqLimit() + " exceeds maxWr " + a.maxWr());
        this.maxWr = a.maxWr();
        this.maxSge = a.maxSge();
        this.size = Integer.highestOneBit(Math.max(2, maxWr * 2 - 1));
        this.stride = Integer.highestOneBit(Math.max(16, maxSge * 32 - 1));
        this.ring = host.allocPhysical((long) size * stride, 4096);
        this.dbrec = host.allocPhysical(8, 8);
        this.wrid = new long[size];
        this.limit = a.srqLimit();
        this.srqn = (int) driver.command(Cmd.CREATE_SRQ, Cmd.CREATE_SRQ_IN, new Cmd.CreateSrq(pd.pdn, ring, Integer.numberOfTrailingZeros(size),
                Integer.numberOfTrailingZeros(stride), dbrec, limit), Cmd.HANDLE).handle();
        pd.ctx.srqs.put(srqn, this);
    }

    public int handle() { return srqn; }
    public int limit() { return limit; }

    /** ibv_post_srq_recv: too many SGEs is EINVAL, a full queue ENOMEM ({@link VerbsException#badWrIndex()} says which). */
    public void postRecv(RecvWr... wrs) {
        checkOpen();
        int posted = 0;
        try {
            for (RecvWr wr : wrs) {
                if (wr.sgList().size() > maxSge)
                    throw new VerbsException(Errno.EINVAL, "RecvWr.sgList has " + wr.sgList().size() + " SGEs; the SRQ allows " + maxSge, posted);
                if (((head - tail) & 0xFFFF) >= maxWr)
                    throw new VerbsException(Errno.ENOMEM, "postRecv: SRQ " + srqn + " is full (" + maxWr + " WRs)", posted);
                host.memory.write(ring + (long) stride * (head & (size - 1)), RecvWqeFormat.encode(QueuePair.toWqe(wr.sgList()), stride));
                wrid[head & (size - 1)] = wr.wrId();
                head = (head + 1) & 0xFFFF;
                posted++;
            }
        } finally {
            if (posted > 0) {
                byte[] rec = new byte[4];
                BigEndian.put32(rec, 0, head);
                host.memory.write(dbrec, rec);
                host.bus.cpuWork(host.profile.picos("host.post.cost") * posted);
            }
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

    /** A receive completion for WQE {@code counter}: its wr_id; the WQE's slot is free again. */
    long take(int counter) {
        long id = wrid[counter & (size - 1)];
        tail = (tail + 1) & 0xFFFF;
        return id;
    }

    @Override protected String describe() { return "SharedReceiveQueue(" + srqn + ")"; }

    @Override protected void destroy() {
        driver.command(Cmd.DESTROY_SRQ, Cmd.HANDLE, new Cmd.Handle(srqn), Cmd.EMPTY);
        pd.ctx.srqs.remove(srqn);
    }
}
