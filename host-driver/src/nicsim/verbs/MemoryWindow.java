package nicsim.verbs;

import nicsim.abi.Cmd;

/**
 * A memory window (ibv_mw): a remote key over part of an MR, bound by a BIND_MW work request
 * ({@link SendWr#bindMw}) and, for type 2, unbound by LOCAL_INV or a peer's SEND_WITH_INV. A type-2
 * window is bound to the QP that bound it: only that QP's peer can use it.
 */
public final class MemoryWindow extends VerbsObject {
    private final ProtectionDomain pd;
    private final MwType type;
    private int rkey;

    MemoryWindow(ProtectionDomain pd, MwType type) {
        super(pd);
        this.pd = pd;
        this.type = type;
        this.rkey = (int) DriverCommand.run(pd.ctx.driver, Cmd.ALLOC_MW, Cmd.ALLOC_MW_IN,
                new Cmd.AllocMw(pd.pdn, type.value()), Cmd.HANDLE).handle();
        made();
    }

    public MwType type() { return type; }

    /** The rkey the window was allocated or last bound with. */
    public int rkey() { return rkey; }

    /** The next rkey for a bind: same index, the key byte advanced (ibv_inc_rkey). */
    public int nextRkey() { return (rkey & ~0xff) | ((rkey + 1) & 0xff); }

    void bound(int newRkey) { rkey = newRkey; }

    @Override protected String describe() { return String.format("MemoryWindow(rkey 0x%x)", rkey); }

    @Override protected void destroy() {
        DriverCommand.run(pd.ctx.driver, Cmd.DEALLOC_MW, Cmd.HANDLE, new Cmd.Handle(rkey & 0xFFFFFFFFL), Cmd.EMPTY);
    }
}
