package nicsim.verbs;

import nicsim.abi.Cmd;

/**
 * An indirect mkey (mlx5dv_create_mkey with MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT): a key with no
 * memory of its own until a UMR work request on an RC QP gives it a layout
 * ({@link SendWr#mrList} or {@link SendWr#mrInterleaved}); then it addresses the pieces as one
 * zero-based region, locally ({@link #lkey()}) and remotely ({@link #rkey()}, the same key). A new
 * layout needs the key invalidated first ({@link WrOpcode#LOCAL_INV}).
 */
public final class Mkey extends VerbsObject {
    private final ProtectionDomain pd;
    private final int key, maxEntries;

    Mkey(ProtectionDomain pd, int maxEntries) {
        super(pd);
        if (maxEntries < 1 || maxEntries > 0xFFFF)
            throw new VerbsException(Errno.EINVAL, "createIndirectMkey maxEntries " + maxEntries + " must be 1..65535");
        if (!pd.ctx.driver.umrSupported())
            throw new VerbsException(Errno.EOPNOTSUPP, "createIndirectMkey: profile "
                    + pd.ctx.driver.host().profile.name() + " has no indirect mkeys (UMR)");
        this.pd = pd;
        this.maxEntries = maxEntries;
        this.key = (int) DriverCommand.run(pd.ctx.driver, Cmd.CREATE_INDIRECT_MKEY, Cmd.CREATE_INDIRECT_MKEY_IN,
                new Cmd.CreateIndirectMkey(pd.pdn, maxEntries), Cmd.HANDLE).handle();
        made();
    }

    public int lkey() { return key; }

    public int rkey() { return key; }

    /** The KLM entries it was created for (an interleaved layout uses one of them for its repeat block). */
    public int maxEntries() { return maxEntries; }

    ProtectionDomain pd() { return pd; }

    @Override protected String describe() { return String.format("Mkey(0x%x)", key); }

    @Override protected void destroy() {
        DriverCommand.run(pd.ctx.driver, Cmd.DESTROY_MKEY, Cmd.HANDLE, new Cmd.Handle(key & 0xFFFFFFFFL), Cmd.EMPTY);
    }
}
