package nicsim.serve;

import java.util.function.IntConsumer;
import nicsim.verbs.Errno;
import nicsim.verbs.VerbsException;

/**
 * A user context's own requests on the PCI face (UCTX_CMD, UCTX_IMPORT, UCTX_CQ_CHANNEL), and what it may not do of
 * a whole function's: the kernel (the Java driver) holds the function, and the context reaches the adapter only
 * through its commands, its UAR pages and its device memory. A whole function's driver asking one is malformed.
 */
final class UctxRequests {
    private UctxRequests() {}

    /**
     * UCTX_CMD, UCTX_IMPORT or UCTX_CQ_CHANNEL of {@code user} ({@code null}: a whole function's driver, which has
     * none); a CQ's interrupt goes to {@code interrupted}, the implicit regions' paging to {@code pages}.
     */
    static Wire.Out handle(UserContext user, Wire.Op op, Wire.In in, IntConsumer interrupted, ImplicitPages pages) {
        return switch (op) {
            case UCTX_CMD -> command(user, in, interrupted, pages);
            case UCTX_IMPORT -> {
                if (user == null) throw new Wire.Malformed("UCTX_IMPORT on a PCI function");
                WireLayout.UctxImportRequest q = in.read(WireLayout.UctxImportRequest.class);
                yield new Wire.Out(new WireLayout.UctxImportReply(user.imported(q.kind(), q.handle() & 0xFFFF_FFFFL)));
            }
            case UCTX_CQ_CHANNEL -> {
                if (user == null) throw new Wire.Malformed("UCTX_CQ_CHANNEL on a PCI function");
                WireLayout.CqChannelRequest q = in.read(WireLayout.CqChannelRequest.class);
                user.channel(q.cqn() & 0xFFFF_FFFFL, q.channel());
                yield new Wire.Out();
            }
            default -> throw new IllegalArgumentException(op + " is no user context's request");
        };
    }

    /**
     * What a user context may not do: write config space, or read BAR0 but its device memory (its writes
     * are checked where every posted write is, {@link PciDevice}'s mmioWrite).
     */
    static void check(UserContext user, Wire.Op op, Wire.In in) {
        if (op == Wire.Op.PCI_CONFIG_WRITE)
            throw new VerbsException(Errno.EPERM, op
                    + " on a user context: config space and registers are the kernel's");
        if (op != Wire.Op.PCI_MMIO_READ) return;
        // the request stays whole for PciDevice.handle
        WireLayout.BarAccess q = in.copy().read(WireLayout.BarAccess.class);
        long offset = q.offset();
        int length = q.length();
        if (!user.inOwnDm(offset, length))
            throw new VerbsException(Errno.EPERM, String.format("BAR0 read of %d bytes at 0x%x on a user context: "
                    + "only its device memory may be read, registers are the kernel's", length, offset));
    }

    /** UCTX_CMD (opcode, n, n input words, output words wanted): the output header and words. */
    private static Wire.Out command(UserContext user, Wire.In in, IntConsumer interrupted, ImplicitPages pages) {
        if (user == null) throw new Wire.Malformed("UCTX_CMD on a PCI function: its commands go through its mailbox");
        WireLayout.UctxCmdRequest q = in.read(WireLayout.UctxCmdRequest.class);
        int opcode = q.opcode(), n = q.inputWords();
        if (n > 512) throw new VerbsException(Errno.EINVAL, "UCTX_CMD of " + n + " input words: at most 512");
        long[] words = new long[n];
        for (int i = 0; i < n; i++) words[i] = in.u64("input word");
        int nout = in.count32("output words");
        if (nout > 510) throw new VerbsException(Errno.EINVAL, "UCTX_CMD for " + nout + " output words: at most 510");
        Wire.Out out = new Wire.Out();
        for (long w : user.run(opcode, words, nout, interrupted, pages)) out.u64(w);
        return out;
    }
}
