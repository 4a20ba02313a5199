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

    /** Posts the request's {@code count} work requests on {@code qp}; its reply. */
    Wire.Out post(QueuePair qp, int count, Wire.In in) {
        int n = in.items(count, WireCodec.bytes(WireLayout.SendWr.class), "work requests");
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
        WireLayout.SendWr r = in.read(WireLayout.SendWr.class);
        SendWr w = new SendWr().wrId(r.wrId()).opcode(WrOpcode.of(r.opcode()));
        w.sendFlags(r.sendFlags()).immData(r.immData()).remoteAddr(r.remoteAddr()).rkey(r.rkey())
                .compareAdd(r.compareAdd()).swap(r.swap());
        if (r.ah() != Wire.NONE) w.ah(session.get(r.ah(), AddressHandle.class));
        w.remoteQpn(r.remoteQpn()).remoteQkey(r.remoteQkey()).invalidateRkey(r.invalidateRkey())
                .xrcRemoteSrqNum(r.remoteSrqn());
        if (r.dcAh() != Wire.NONE)
            w.dcAddr(session.get(r.dcAh(), AddressHandle.class), r.dcRemoteDctn(), r.dcRemoteDcKey());
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
        WireLayout.Umr u = in.read(WireLayout.Umr.class);
        int entries = in.items(u.entries(), WireCodec.bytes(WireLayout.UmrEntry.class), "entries");
        Sge[] pieces = new Sge[entries];
        MrInterleaved[] inter = new MrInterleaved[entries];
        for (int k = 0; k < entries; k++) {
            WireLayout.UmrEntry e = in.read(WireLayout.UmrEntry.class);
            pieces[k] = new Sge(e.addr(), e.length(), e.lkey());
            inter[k] = new MrInterleaved(e.addr(), e.length(), e.skip(), e.lkey());
        }
        if (u.mkey() == Wire.NONE) return;
        Mkey m = session.get(u.mkey(), Mkey.class);
        if (u.repeat() == 0) w.mrList(m, u.access(), pieces); else w.mrInterleaved(m, u.access(), u.repeat(), inter);
    }

    /** ibv_bind_mw, or IBV_WR_BIND_MW: a window bound to part of an MR (none: unbound). */
    private void windowBind(Wire.In in, SendWr w) {
        WireLayout.WindowBind b = in.read(WireLayout.WindowBind.class);
        if (w.opcode() != WrOpcode.BIND_MW) return;
        MemoryRegion region = b.mr() == Wire.NONE ? null : session.get(b.mr(), MemoryRegion.class);
        w.bindMw(session.get(b.mw(), MemoryWindow.class), b.rkey(), region, b.addr(), b.length(), b.access());
    }

    /** The staging area goes back to host memory (the context closes). */
    void release() {
        if (staging >= 0) session.host.freePhysical(staging, STAGING);
        staging = -1;
    }
}
