package nicsim.verbs;

import nicsim.abi.Cmd;

/**
 * An XRC domain (ibv_xrcd): the XRC SRQs and XRC target QPs that may serve each other. Any context
 * of the same device may use it (as processes share one by opening the same file). Closing it while
 * an XRC SRQ or target QP still uses it is EBUSY, and it stays open.
 */
public final class Xrcd extends VerbsObject {
    final Context ctx;
    final int xrcdn;

    Xrcd(Context ctx) {
        super(ctx);
        this.ctx = ctx;
        this.xrcdn = (int) DriverCommand.run(ctx.driver, Cmd.ALLOC_XRCD, Cmd.EMPTY, new Cmd.Empty(), Cmd.HANDLE)
                .handle();
        made();
    }

    public int handle() { return xrcdn; }

    /** Refuses a domain of another device, or one closed (EINVAL naming {@code field}). */
    void checkUsableBy(Context user, String field) {
        if (isClosed()) throw new VerbsException(Errno.EINVAL, field + " is closed");
        if (user.driver != ctx.driver) throw new VerbsException(Errno.EINVAL, field + " belongs to another device");
    }

    @Override protected String describe() { return "Xrcd(" + xrcdn + ")"; }

    @Override protected void destroy() {
        DriverCommand.run(ctx.driver, Cmd.DEALLOC_XRCD, Cmd.HANDLE, new Cmd.Handle(xrcdn), Cmd.EMPTY);
    }
}
