package nicsim.verbs;

import java.util.function.LongUnaryOperator;
import nicsim.abi.BigEndian;
import nicsim.abi.Cmd;
import nicsim.abi.MttEntry;
import nicsim.driver.Driver;
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
    /** ibv_rereg_mr's flags (enum ibv_rereg_mr_flags). */
    public static final int REREG_CHANGE_TRANSLATION = 1, REREG_CHANGE_PD = 2, REREG_CHANGE_ACCESS = 4;

    private ProtectionDomain pd;
    private long addr, length, iova;
    private int access, mkey;
    private boolean implicit;
    /** The device memory the region is over, or null: host memory. */
    private final DeviceMemory dm;

    MemoryRegion(ProtectionDomain pd, long addr, long length, long iova, int access) {
        this(pd, addr, length, iova, access, pd.ctx.driver.host()::pa);
    }

    /** Registration where {@code pa} gives the physical address behind each virtual page (-1: not mapped). */
    MemoryRegion(ProtectionDomain pd, long addr, long length, long iova, int access, LongUnaryOperator pa) {
        super(pd);
        this.dm = null;
        register(pd, addr, length, iova, access, pa, false);
        made();
    }

    /** An implicit on-demand region over the whole address space (ProtectionDomain#regMrImplicitMapped). */
    MemoryRegion(ProtectionDomain pd, int access, LongUnaryOperator pager) {
        super(pd);
        this.dm = null;
        if ((access & AccessFlags.ON_DEMAND) == 0)
            throw new VerbsException(Errno.EINVAL,
                    String.format("regMr of the whole address space: access 0x%x lacks ON_DEMAND", access));
        checkAccess(pd, access);
        long pages = IMPLICIT_LENGTH >>> MttEntry.IMPLICIT_PAGE_SHIFT;
        Cmd.CreateMkey c = new Cmd.CreateMkey(pd.pdn, 0, IMPLICIT_LENGTH,
                DeviceCodes.accessDown(access & ~AccessFlags.ON_DEMAND),
                MttEntry.IMPLICIT_PAGE_SHIFT, 0, pages, 0);
        int key = (int) DriverCommand.run(pd.ctx.driver, Cmd.CREATE_IMPLICIT_MKEY, Cmd.CREATE_MKEY_IN, c, Cmd.HANDLE)
                .handle();
        this.pd = pd;
        this.length = IMPLICIT_LENGTH;
        this.access = access;
        this.mkey = key;
        this.implicit = true;
        pd.ctx.driver.implicitRegistered((key & 0xFFFFFFFFL) >>> 8, pager);
        pd.ctx.driver.odpRegistered(new Driver.OdpRegion(pd.pdn, key & 0xFFFFFFFFL, 0, IMPLICIT_LENGTH, 0));
        made();
    }

    /** The bytes an implicit region covers from address 0: the user address space of x86-64 and aarch64 (47 bits). */
    public static final long IMPLICIT_LENGTH = MttEntry.IMPLICIT_LENGTH;

    /** Whether it is an implicit region ({@link ProtectionDomain#regMrImplicit}). */
    public boolean implicit() { return implicit; }

    private static void checkAccess(ProtectionDomain pd, int access) {
        if ((access & ~AccessFlags.ALL) != 0)
            throw new VerbsException(Errno.EINVAL,
                    String.format("regMr access 0x%x has unknown bits 0x%x", access, access & ~AccessFlags.ALL));
        boolean remoteWrites = (access & (AccessFlags.REMOTE_WRITE | AccessFlags.REMOTE_ATOMIC)) != 0;
        if (remoteWrites && (access & AccessFlags.LOCAL_WRITE) == 0)
            throw new VerbsException(Errno.EINVAL,
                    String.format("regMr access 0x%x: REMOTE_WRITE and REMOTE_ATOMIC need LOCAL_WRITE", access));
        if ((access & AccessFlags.ON_DEMAND) != 0 && !pd.ctx.driver.odpSupported())
            throw new VerbsException(Errno.EOPNOTSUPP, "regMr access ON_DEMAND: profile "
                    + pd.ctx.driver.host().profile.name() + " has no on-demand paging (odpCaps() is empty)");
    }

    /**
     * A zero-based region over device memory {@code dm}: {@code addr} is the physical address of its first byte
     * (ibv_reg_dm_mr).
     */
    MemoryRegion(ProtectionDomain pd, DeviceMemory dm, long addr, long length, int access) {
        super(pd);
        this.dm = dm;
        register(pd, addr, length, 0, access, physical -> physical, false);
        dm.regions++;
        made();
    }

    /**
     * Gives the adapter the translation of {@code length} bytes at {@code addr} (addressed as
     * {@code iova}) in {@code pd} with {@code access}: a new key (CREATE_MKEY), or with {@code
     * keep} this region's key again (REREG_MKEY); the region then is that.
     */
    private void register(ProtectionDomain pd, long addr, long length, long iova, int access, LongUnaryOperator pa,
                          boolean keep) {
        checkAccess(pd, access);
        if (length < 0 || (length == 0 && dm == null)) // mlx5 registers device memory of length 0
            throw new VerbsException(Errno.EINVAL, "regMr length " + length + " must be > 0");
        long zeroBasedIova = (access & AccessFlags.ZERO_BASED) != 0 ? 0 : iova;
        Host host = pd.ctx.driver.host();
        int small = host.memory.pageSize();
        long smallFirst = Math.floorDiv(addr, small) * small;
        long smallPages = Math.max(1, (addr + length - smallFirst + small - 1) / small);
        long[] physical = new long[Math.toIntExact(smallPages)];
        for (int i = 0; i < physical.length; i++) {
            physical[i] = pa.applyAsLong(smallFirst + (long) i * small);
            if (physical[i] < 0) throw new VerbsException(Errno.EFAULT,
                    String.format("regMr: address 0x%x is not mapped", smallFirst + (long) i * small));
        }
        // pinned memory goes in the largest pages it allows, up to the adapter's maxPageShift (ib_umem_find_best_pgsz);
        // on demand, pages fault one by one
        int most = (int) pd.ctx.driver.caps().maxPageShift();
        int shift = (access & AccessFlags.ON_DEMAND) != 0 ? Integer.numberOfTrailingZeros(small)
                : bestPageShift(smallFirst, physical, small, most);
        long page = 1L << shift, first = Math.floorDiv(addr, page) * page;
        long pages = Math.max(1, (addr + length - first + page - 1) / page);
        byte[] list = new byte[(int) (pages * 8)];
        for (long i = 0; i < pages; i++) {
            long va = Math.max(first + i * page, smallFirst);
            long at = physical[(int) ((va - smallFirst) / small)] - (va & (page - 1));
            // on demand: the page is not pinned, its entry marked not present; the adapter's first access faults it in
            BigEndian.put64(list, (int) i * 8, (access & AccessFlags.ON_DEMAND) != 0 ? at | MttEntry.NOT_PRESENT : at);
        }
        long listAt = host.allocPhysical(list.length, 8);
        host.memory.write(listAt, list);
        Cmd.CreateMkey c = new Cmd.CreateMkey(pd.pdn, zeroBasedIova, length,
                DeviceCodes.accessDown(access & ~AccessFlags.ON_DEMAND),
                shift, addr - first, pages, listAt);
        int key;
        // the firmware copies the list into its translation table before it answers: the list is needed until then
        try {
            key = keep ? mkey : (int) DriverCommand.run(pd.ctx.driver, Cmd.CREATE_MKEY, Cmd.CREATE_MKEY_IN, c,
                    Cmd.HANDLE).handle();
            if (keep)
                DriverCommand.run(pd.ctx.driver, Cmd.REREG_MKEY, Cmd.REREG_MKEY_IN,
                        new Cmd.ReregMkey(mkey & 0xFFFFFFFFL, c), Cmd.EMPTY);
        } finally {
            host.freePhysical(listAt, list.length);
        }
        this.pd = pd;
        this.addr = addr;
        this.length = length;
        this.iova = zeroBasedIova;
        this.access = access;
        this.mkey = key;
        if ((access & AccessFlags.ON_DEMAND) != 0)
            pd.ctx.driver.odpRegistered(new Driver.OdpRegion(pd.pdn, mkey & 0xFFFFFFFFL, addr, length, this.iova));
    }

    /** The adapter's largest page: translations of up to 2 MB (CREATE_MKEY's pageShift 12..21). */
    public static final int MAX_PAGE_SHIFT = Cmd.MAX_PAGE_SHIFT;

    /**
     * The largest page (log2, up to {@code most} and {@link #MAX_PAGE_SHIFT}) in which the small pages at {@code
     * first} ({@code physical[i]} backing {@code first + i * small}) lie as whole aligned blocks: every
     * small page sits at the same offset in its large page, virtually and physically, and the small
     * pages of one large page are physically contiguous. The largest such page needs the fewest
     * translation entries, as mlx5's driver chooses (mlx5_umem_find_best_pgsz).
     */
    static int bestPageShift(long first, long[] physical, int small, int most) {
        int base = Integer.numberOfTrailingZeros(small);
        for (int shift = Math.min(most, MAX_PAGE_SHIFT); shift > base; shift--) {
            long big = 1L << shift;
            boolean fits = true;
            for (int i = 0; i < physical.length && fits; i++) {
                long va = first + (long) i * small;
                fits = ((physical[i] ^ va) & (big - 1)) == 0
                        && (i == 0 || (va & (big - 1)) == 0 || physical[i] == physical[i - 1] + small);
            }
            if (fits) return shift;
        }
        return base;
    }

    /**
     * ibv_rereg_mr: gives the region a new translation ({@link #REREG_CHANGE_TRANSLATION}: {@code
     * length} bytes at {@code addr}), protection domain ({@link #REREG_CHANGE_PD}) or access ({@link
     * #REREG_CHANGE_ACCESS}), keeping what the flags do not name, and its keys, as a ConnectX does:
     * a peer and posted work go on naming it. A refused change leaves the region as it was.
     */
    public void rereg(int flags, ProtectionDomain newPd, long newAddr, long newLength, int newAccess) {
        reregMapped(flags, newPd, newAddr, newLength, newAccess, pd.ctx.driver.host()::pa);
    }

    /** As {@link #rereg}, for memory that is not the node's own ({@link ProtectionDomain#regMrMapped}). */
    public void reregMapped(int flags, ProtectionDomain newPd, long newAddr, long newLength, int newAccess,
                            LongUnaryOperator pa) {
        checkOpen();
        if (dm != null)
            throw new VerbsException(Errno.EINVAL,
                    "rereg of a region over device memory (ibv_rereg_mr takes IBV_MR_TYPE_MR only)");
        if (implicit) throw new VerbsException(Errno.EINVAL, "rereg of an implicit on-demand region");
        if ((flags & ~(REREG_CHANGE_TRANSLATION | REREG_CHANGE_PD | REREG_CHANGE_ACCESS)) != 0)
            throw new VerbsException(Errno.EINVAL, String.format("rereg flags 0x%x has unknown bits", flags));
        ProtectionDomain p = (flags & REREG_CHANGE_PD) != 0 ? newPd : pd;
        if (p == null || p.isClosed() || p.ctx != pd.ctx)
            throw new VerbsException(Errno.EINVAL, "rereg: the new PD is not an open PD of this context");
        boolean move = (flags & REREG_CHANGE_TRANSLATION) != 0;
        int acc = (flags & REREG_CHANGE_ACCESS) != 0 ? newAccess : access;
        if (((acc ^ access) & AccessFlags.ON_DEMAND) != 0)
            throw new VerbsException(Errno.EINVAL, "rereg: a region cannot become or stop being ON_DEMAND");
        boolean odp = (access & AccessFlags.ON_DEMAND) != 0;
        ProtectionDomain oldPd = pd;
        if (odp) pd.ctx.driver.odpDeregistered(mkey & 0xFFFFFFFFL); // registered again, with its new range, by register
        try {
            register(p, move ? newAddr : addr, move ? newLength : length, move ? newAddr : iova, acc, pa, true);
        } catch (RuntimeException e) {
            if (odp) pd.ctx.driver.odpRegistered(new Driver.OdpRegion(pd.pdn, mkey & 0xFFFFFFFFL, addr, length, iova));
            throw e;
        }
        if (p != oldPd) reparent(p);
    }


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
        DriverCommand.run(pd.ctx.driver, Cmd.DESTROY_MKEY, Cmd.HANDLE, new Cmd.Handle(mkey & 0xFFFFFFFFL), Cmd.EMPTY);
        if ((access & AccessFlags.ON_DEMAND) != 0) pd.ctx.driver.odpDeregistered(mkey & 0xFFFFFFFFL);
        if (implicit) pd.ctx.driver.implicitDeregistered((mkey & 0xFFFFFFFFL) >>> 8);
        if (dm != null) dm.regions--;
    }
}
