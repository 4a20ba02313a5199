package nicsim.verbs;

import java.util.function.LongUnaryOperator;
import nicsim.abi.Cmd;
import nicsim.fabric.Packet;

/** A protection domain (ibv_pd). */
public final class ProtectionDomain extends VerbsObject {
    final Context ctx;
    final int pdn;

    ProtectionDomain(Context ctx) {
        super(ctx);
        this.ctx = ctx;
        this.pdn = (int) DriverCommand.run(ctx.driver, Cmd.ALLOC_PD, Cmd.EMPTY, new Cmd.Empty(), Cmd.HANDLE).handle();
        made();
    }

    public int handle() { return pdn; }

    public MemoryRegion regMr(HostBuffer buf, int access) { return regMr(buf.addr(), buf.length(), access); }

    /** IBV_ADVISE_MR_FLAG_FLUSH: {@link #adviseMr} returns once the pages are in. */
    public static final int ADVISE_MR_FLAG_FLUSH = 1;

    /** ibv_reg_mr: registers {@code length} bytes at virtual {@code addr}. */
    public MemoryRegion regMr(long addr, long length, int access) {
        checkOpen();
        return new MemoryRegion(this, addr, length, addr, access);
    }

    /**
     * ibv_advise_mr: the pages under each SGE (of an on-demand MR of this PD) are brought in ahead,
     * so the adapter's first access does not fault. PREFETCH and PREFETCH_WRITE bring them in;
     * PREFETCH_NO_FAULT brings in none that are not already present, so it changes nothing here.
     * It returns before they are in, or with {@link #ADVISE_MR_FLAG_FLUSH} once they are. No SGE,
     * or a flag other than FLUSH, is EINVAL (as the kernel's uverbs checks).
     */
    public void adviseMr(AdviseAdvice advice, int flags, Sge... sges) {
        checkOpen();
        if ((flags & ~ADVISE_MR_FLAG_FLUSH) != 0)
            throw new VerbsException(Errno.EINVAL, "adviseMr flags 0x" + Integer.toHexString(flags)
                    + ": only IBV_ADVISE_MR_FLAG_FLUSH (1)");
        if (sges.length == 0) throw new VerbsException(Errno.EINVAL, "adviseMr: no SGE");
        if (advice == AdviseAdvice.PREFETCH_NO_FAULT) return;
        int op = (flags & ADVISE_MR_FLAG_FLUSH) != 0 ? Cmd.ODP_PREFETCH_FLUSH : Cmd.ODP_PREFETCH;
        for (Sge s : sges) {
            try {
                var in = new Cmd.OdpPrefetch(pdn, s.lkey() & 0xFFFFFFFFL, s.addr(), s.length() & 0xFFFFFFFFL);
                DriverCommand.run(ctx.driver, op, Cmd.ODP_PREFETCH_IN, in, Cmd.EMPTY);
            } catch (VerbsException e) {
                throw new VerbsException(e.errno(), "adviseMr SGE " + s + ": " + e.getMessage());
            }
        }
    }

    /**
     * ibv_reg_mr(pd, NULL, SIZE_MAX, access) with ON_DEMAND: an implicit on-demand region, the
     * whole user address space ({@link MemoryRegion#IMPLICIT_LENGTH} bytes from 0): each 2 MB page
     * the adapter touches is brought in by the driver's fault handler, and a page nothing is mapped
     * at fails the access. Without ON_DEMAND it is EINVAL; without on-demand paging EOPNOTSUPP.
     */
    public MemoryRegion regMrImplicit(int access) { return regMrImplicitMapped(access, ctx.driver.host()::pa); }

    /**
     * As {@link #regMrImplicit}, for memory that is not this node's own: {@code pager} gives the
     * physical address of a 2 MB page (from its 2 MB-aligned virtual address), or -1 if nothing is
     * mapped there; it is asked when the adapter first touches the page.
     */
    public MemoryRegion regMrImplicitMapped(int access, LongUnaryOperator pager) {
        checkOpen();
        return new MemoryRegion(this, access, pager);
    }

    public MemoryRegion regMrIova(HostBuffer buf, long iova, int access) {
        return regMrIova(buf.addr(), buf.length(), iova, access);
    }

    /**
     * ibv_reg_mr_iova: registers {@code length} bytes at virtual {@code addr}, addressed by the adapter as {@code
     * iova} on.
     */
    public MemoryRegion regMrIova(long addr, long length, long iova, int access) {
        checkOpen();
        return new MemoryRegion(this, addr, length, iova, access);
    }

    /**
     * ibv_reg_mr for memory that is not this node's own simulated memory (an attached program's
     * buffer, mapped into host memory by {@link nicsim.host.HostMemory#attach}): {@code pa} gives
     * the physical address behind each virtual page of {@code [addr, addr + length)}.
     */
    public MemoryRegion regMrMapped(long addr, long length, long iova, int access, LongUnaryOperator pa) {
        checkOpen();
        return new MemoryRegion(this, addr, length, iova, access, pa);
    }

    /**
     * ibv_reg_dm_mr: a region over {@code length} bytes of device memory {@code dm} from {@code
     * offset}; {@code access} must include ZERO_BASED (the region's byte X is iova X), and may not
     * be ON_DEMAND. The device memory is not freed while the region lasts (EBUSY).
     */
    public MemoryRegion regDmMr(DeviceMemory dm, long offset, long length, int access) {
        checkOpen();
        if (dm.isClosed() || dm.ctx != ctx)
            throw new VerbsException(Errno.EINVAL, "regDmMr: the device memory is not an open one of this context");
        if ((access & AccessFlags.ZERO_BASED) == 0 || (access & AccessFlags.ON_DEMAND) != 0)
            throw new VerbsException(Errno.EINVAL,
                    String.format("regDmMr access 0x%x must be ZERO_BASED and not ON_DEMAND", access));
        if (offset < 0 || length < 0 || offset > dm.length() - length)
            throw new VerbsException(Errno.EINVAL, String.format(
                    "regDmMr of %d bytes at %d: outside the %d bytes of device memory", length, offset, dm.length()));
        return new MemoryRegion(this, dm, dm.physical() + offset, length, access);
    }

    public QueuePair createQp(QpInitAttr attr) {
        checkOpen();
        return new QueuePair(this, attr);
    }

    public SharedReceiveQueue createSrq(SrqInitAttr attr) {
        checkOpen();
        return new SharedReceiveQueue(this, attr);
    }

    /**
     * mlx5dv_create_mkey with MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT: an indirect mkey of up to
     * {@code maxEntries} pieces, whose layout a UMR sets ({@link SendWr#mrList},
     * {@link SendWr#mrInterleaved}). EOPNOTSUPP on a profile without indirect mkeys.
     */
    public Mkey createIndirectMkey(int maxEntries) {
        checkOpen();
        return new Mkey(this, maxEntries);
    }

    /** ibv_alloc_mw. */
    public MemoryWindow allocMw(MwType type) {
        checkOpen();
        return new MemoryWindow(this, type);
    }

    public AddressHandle createAh(AhAttr attr) {
        checkOpen();
        if (attr.portNum() != 1)
            throw new VerbsException(Errno.EINVAL,
                    "AhAttr.portNum " + attr.portNum() + " does not exist (port 1 only)");
        boolean mcast = Packet.multicastLid(attr.dlid());
        if (attr.dlid() <= 0 || attr.dlid() > 0xBFFF && !mcast)
            throw new VerbsException(Errno.EINVAL, "AhAttr.dlid " + attr.dlid()
                    + " is neither a unicast nor a multicast LID");
        if (mcast && !attr.isGlobal()) // the receivers find the group by the GRH's DGID
            throw new VerbsException(Errno.EINVAL, String.format("AhAttr.dlid 0x%x is a multicast LID: isGlobal "
                    + "and the group's MGID as dgid must go with it", attr.dlid()));
        return new AddressHandle(this, attr);
    }

    @Override protected String describe() { return "ProtectionDomain(" + pdn + ")"; }

    @Override protected void destroy() {
        DriverCommand.run(ctx.driver, Cmd.DEALLOC_PD, Cmd.HANDLE, new Cmd.Handle(pdn), Cmd.EMPTY);
    }
}
