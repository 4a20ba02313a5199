package nicsim.serve;

import java.util.List;
import nicsim.verbs.AddressHandle;
import nicsim.verbs.Errno;
import nicsim.verbs.MemoryRegion;
import nicsim.verbs.MemoryWindow;
import nicsim.verbs.Mkey;
import nicsim.verbs.MrInterleaved;
import nicsim.verbs.QueuePair;
import nicsim.verbs.SendFlags;
import nicsim.verbs.SendWr;
import nicsim.verbs.Sge;
import nicsim.verbs.VerbsException;
import nicsim.verbs.WrOpcode;

/**
 * ibv_post_send's work requests read off the wire: the request, its address (AH, DC), its gather
 * list or inline bytes, and the UMR layout or window bind it carries. Inline bytes are staged in
 * host memory as they were when the program posted, for the adapter to copy into the WQE.
 */
final class SendRequests {
    /** Bytes of host memory a program's inline data is staged in, before the adapter copies it into the WQE. */
    static final int STAGING = 64 << 10;

    private final Session session;
    /** The staging area's physical address, or -1 before the first inline post. */
    private long staging = -1;

    SendRequests(Session session) { this.session = session; }

    /** Posts the request's work requests on {@code qp} (handle {@code h}); its reply. */
    Wire.Out post(int h, QueuePair qp, Wire.In in) {
        int n = in.count("work requests", 64);
        SendWr[] wrs = new SendWr[n];
        int stagedAt = 0;
        for (int i = 0; i < n; i++) {
            SendWr w = header(in);
            List<Sge> sg = QueueVerbs.sges(in);
            if ((w.sendFlags() & SendFlags.INLINE) != 0) {
                int len = 0;
                for (Sge s : sg) len += s.length();
                sg = stage(in.bytes(len, "inline data"), stagedAt, i);
                stagedAt += len;
            }
            wrs[i] = w.sgList(sg);
            memoryLayout(in, w);
            windowBind(in, w);
        }
        Wire.Out out = QueueVerbs.posted(() -> qp.postSend(wrs));
        return out;
    }

    /** The request's opcode, flags, remote address, atomic operands and destination. */
    private SendWr header(Wire.In in) {
        in.expect(WireLayout.SEND_WR);
        SendWr w = new SendWr().wrId(in.u64("wr_id")).opcode(WrOpcode.of(in.u32("opcode")));
        w.sendFlags(in.u32("send_flags")).immData(in.u32("imm_data")).remoteAddr(in.u64("remote_addr"))
                .rkey(in.u32("rkey")).compareAdd(in.u64("compare_add")).swap(in.u64("swap"));
        int ah = in.u32("ah");
        if (ah != Wire.NONE) w.ah(session.get(ah, AddressHandle.class));
        w.remoteQpn(in.u32("remote_qpn")).remoteQkey(in.u32("remote_qkey")).invalidateRkey(in.u32("invalidate_rkey"))
                .xrcRemoteSrqNum(in.u32("remote_srqn"));
        int dcAh = in.u32("dc_ah");
        int dctn = in.u32("dc_remote_dctn");
        long dcKey = in.u64("dc_remote_dc_key");
        if (dcAh != Wire.NONE) w.dcAddr(session.get(dcAh, AddressHandle.class), dctn, dcKey);
        return w;
    }

    /** The program's inline bytes staged at {@code at} of the staging area: the gather list that reads them. */
    private List<Sge> stage(byte[] data, int at, int index) {
        if (at + data.length > STAGING)
            throw new VerbsException(Errno.ENOMEM, "inline data of one post past " + STAGING + " bytes", index);
        if (staging < 0) staging = session.host.allocPhysical(STAGING, session.host.memory.pageSize());
        session.host.memory.write(staging + at, data);
        return data.length == 0 ? List.of() : List.of(new Sge(session.host.va(staging + at), data.length, 0));
    }

    /** A layout UMR (mlx5dv_wr_mr_list / _interleaved), if the request carries one. */
    private void memoryLayout(Wire.In in, SendWr w) {
        in.expect(WireLayout.UMR);
        int mkey = in.u32("mkey");
        int access = in.u32("access"), repeat = in.u32("repeat"), entries = in.count("entries", 20);
        Sge[] pieces = new Sge[entries];
        MrInterleaved[] inter = new MrInterleaved[entries];
        for (int k = 0; k < entries; k++) {
            in.expect(WireLayout.UMR_ENTRY);
            long addr = in.u64("addr");
            int len = in.u32("length"), lkey = in.u32("lkey"), skip = in.u32("skip");
            pieces[k] = new Sge(addr, len, lkey);
            inter[k] = new MrInterleaved(addr, len, skip, lkey);
        }
        if (mkey == Wire.NONE) return;
        Mkey m = session.get(mkey, Mkey.class);
        if (repeat == 0) w.mrList(m, access, pieces); else w.mrInterleaved(m, access, repeat, inter);
    }

    /** ibv_bind_mw, or IBV_WR_BIND_MW: a window bound to part of an MR (none: unbound). */
    private void windowBind(Wire.In in, SendWr w) {
        in.expect(WireLayout.WINDOW_BIND);
        int mw = in.u32("mw"), rkey = in.u32("rkey"), mr = in.u32("mr");
        long addr = in.u64("addr"), length = in.u64("length");
        int access = in.u32("access");
        if (w.opcode() != WrOpcode.BIND_MW) return;
        MemoryRegion region = mr == Wire.NONE ? null : session.get(mr, MemoryRegion.class);
        w.bindMw(session.get(mw, MemoryWindow.class), rkey, region, addr, length, access);
    }

    /** The staging area goes back to host memory (the context closes). */
    void release() {
        if (staging >= 0) session.host.freePhysical(staging, STAGING);
        staging = -1;
    }
}
