package nicsim.verbs;

import nicsim.abi.BigEndian;
import nicsim.abi.Cmd;
import nicsim.driver.Host;

/**
 * A memory region (ibv_mr). Registration pins the pages: the driver writes the physical address of
 * each page into a page list in host memory and hands it to the adapter with CREATE_MKEY. lkey and
 * rkey are the same mkey (index << 8 | key byte), as on mlx5 and rxe.
 *
 * <p>The adapter addresses the region by its IOVA (ibv_reg_mr_iova): byte X of the region is
 * {@code iova() + X}, for remote access and for the region's local scatter/gather entries alike.
 * ibv_reg_mr's IOVA is the address itself; a zero-based region's is 0.
 */
public final class MemoryRegion extends VerbsObject {
    private final ProtectionDomain pd;
    private final long addr, length, iova;
    private final int access, mkey;

    MemoryRegion(ProtectionDomain pd, long addr, long length, long iova, int access) { this(pd, addr, length, iova, access, pd.ctx.driver.host()::pa); }

    /** Registration where {@code pa} gives the physical page behind each virtual page (-1: not mapped). */
    MemoryRegion(ProtectionDomain pd, long addr, long length, long iova, int access, java.util.function.LongUnaryOperator pa) {
        super(pd);
        this.pd = pd;
        this.addr = addr;
        this.iova = (access & AccessFlags.ZERO_BASED) != 0 ? 0 : iova;
        this.length = length;
        this.access = access;
        if ((access & ~AccessFlags.ALL) != 0)
            throw new VerbsException(Errno.EINVAL, String.format("regMr access 0x%x has unknown bits 0x%x", access, access & ~AccessFlags.ALL));
        if ((access & (AccessFlags.REMOTE_WRITE | AccessFlags.REMOTE_ATOMIC)) != 0 && (access & AccessFlags.LOCAL_WRITE) == 0)
            throw new VerbsException(Errno.EINVAL, String.format("regMr access 0x%x: REMOTE_WRITE and REMOTE_ATOMIC need LOCAL_WRITE", access));

        if (length <= 0) throw new VerbsException(Errno.EINVAL, "regMr length " + length + " must be > 0");
        if ((access & AccessFlags.ON_DEMAND) != 0 && !pd.ctx.driver.odpSupported())
            throw new VerbsException(Errno.EOPNOTSUPP, "regMr access ON_DEMAND: profile " + pd.ctx.driver.host().profile.name()
                    + " has no on-demand paging (odpCaps() is empty)");
        Host host = pd.ctx.driver.host();
        int page = host.memory.pageSize();
        long first = Math.floorDiv(addr, page) * page;
        long pages = (addr + length - first + page - 1) / page;
        byte[] list = new byte[(int) (pages * 8)];
        for (long i = 0; i < pages; i++) {
            long physical = pa.applyAsLong(first + i * page);
            if (physical < 0) throw new VerbsException(Errno.EFAULT, String.format("regMr: address 0x%x is not mapped", first + i * page));
            // on demand: the page is not pinned, its entry marked not present; the adapter's first access faults it in
            BigEndian.put64(list, (int) i * 8, (access & AccessFlags.ON_DEMAND) != 0 ? physical | NOT_PRESENT : physical);
        }
        this.pageList = host.allocPhysical(list.length, 8);
        host.memory.write(pageList, list);
        this.mkey = (int) pd.ctx.driver.command(Cmd.CREATE_MKEY, Cmd.CREATE_MKEY_IN, new Cmd.CreateMkey(pd.pdn,
                this.iova, length, access & ~AccessFlags.ON_DEMAND, Integer.numberOfTrailingZeros(page), addr - first, pages,
                pageList), Cmd.HANDLE).handle();
        if ((access & AccessFlags.ON_DEMAND) != 0)
            pd.ctx.driver.odpRegistered(new nicsim.driver.Driver.OdpRegion(pd.pdn, mkey & 0xFFFFFFFFL, addr, length, this.iova));
        made();
    }

    private final long pageList;

    /** A page-list (MTT) entry's mark for a page not present: page addresses have bit 0 clear. */
    public static final long NOT_PRESENT = 1;

    public int lkey() { return mkey; }
    public int rkey() { return mkey; }
    public long addr() { return addr; }
    /** The address the adapter knows the region's first byte by (ibv_mr's iova). */
    public long iova() { return iova; }
    public long length() { return length; }
    public int access() { return access; }
    public ProtectionDomain pd() { return pd; }

    @Override protected String describe() { return String.format("MemoryRegion(key 0x%x)", mkey); }

    @Override protected void destroy() {
        pd.ctx.driver.command(Cmd.DESTROY_MKEY, Cmd.HANDLE, new Cmd.Handle(mkey & 0xFFFFFFFFL), Cmd.EMPTY);
        if ((access & AccessFlags.ON_DEMAND) != 0) pd.ctx.driver.odpDeregistered(mkey & 0xFFFFFFFFL);
    }
}
