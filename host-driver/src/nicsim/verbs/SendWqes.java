package nicsim.verbs;

import java.util.ArrayList;
import java.util.List;
import nicsim.abi.BigEndian;
import nicsim.abi.WqeFormat;
import nicsim.abi.WqeLayout;
import nicsim.driver.Host;

/**
 * A QP's send requests described as the device's WQEs: each {@link SendWr} checked as the verbs spec
 * and mlx5 check it (opcode for the QP type, SGE count, inline size, atomic length and alignment, a
 * window's bind, a UMR's layout) and encoded by {@link WqeFormat}, refused with the errno libibverbs
 * gives and the index of the request ({@link VerbsException#badWrIndex()}) before anything is
 * written. The ring's place is the caller's ({@link QueuePair#postSend}).
 */
final class SendWqes {
    private final QpType type;
    private final DcType dcType;
    private final int qpn, maxSendSge, maxInline;
    private final boolean sqSigAll;
    private final long maxMsgSize;
    private final Host host;

    SendWqes(QpType type, DcType dcType, int qpn, int maxSendSge, int maxInline, boolean sqSigAll, long maxMsgSize,
            Host host) {
        this.type = type;
        this.dcType = dcType;
        this.qpn = qpn;
        this.maxSendSge = maxSendSge;
        this.maxInline = maxInline;
        this.sqSigAll = sqSigAll;
        this.maxMsgSize = maxMsgSize;
        this.host = host;
    }

    private static int mlx5Opcode(WrOpcode op) {
        return switch (op) {
            case RDMA_WRITE -> WqeLayout.OP_RDMA_WRITE;
            case RDMA_WRITE_WITH_IMM -> WqeLayout.OP_RDMA_WRITE_IMM;
            case SEND -> WqeLayout.OP_SEND;
            case SEND_WITH_IMM -> WqeLayout.OP_SEND_IMM;
            case RDMA_READ -> WqeLayout.OP_RDMA_READ;
            case ATOMIC_CMP_AND_SWP -> WqeLayout.OP_ATOMIC_CS;
            case ATOMIC_FETCH_AND_ADD -> WqeLayout.OP_ATOMIC_FA;
            case LOCAL_INV -> WqeLayout.OP_LOCAL_INVAL;
            case SEND_WITH_INV -> WqeLayout.OP_SEND_INVAL;
            case BIND_MW, DRIVER1 -> WqeLayout.OP_UMR;
        };
    }

    /**
     * A layout UMR (mrList, mrInterleaved): checked here as mlx5dv's builders check it, then encoded for the
     * adapter.
     */
    private byte[] umr(SendWr wr, int i, int head) {
        if (type != QpType.RC)
            throw new VerbsException(Errno.EINVAL,
                    "mrList/mrInterleaved on a " + type + " QP: UMR is posted on RC QPs", i);
        if (wr.mkey() == null)
            throw new VerbsException(Errno.EINVAL,
                    "SendWr opcode DRIVER1 needs mrList(...) or mrInterleaved(...)", i);
        int umrAccess = AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE | AccessFlags.REMOTE_READ
                | AccessFlags.REMOTE_ATOMIC;
        if ((wr.mkeyAccess() & ~umrAccess) != 0)
            throw new VerbsException(Errno.EINVAL, String.format(
                    "UMR access 0x%x: only local write and remote access flags", wr.mkeyAccess()), i);
        boolean inter = !wr.interleaved().isEmpty();
        int n = inter ? wr.interleaved().size() : wr.mrPieces().size();
        if (n == 0) throw new VerbsException(Errno.EINVAL, "UMR layout with no entries", i);
        if (n + (inter ? 1 : 0) > wr.mkey().maxEntries())
            throw new VerbsException(Errno.ENOMEM, "UMR layout of " + n + " entries"
                    + (inter ? " (+1 for the repeat block)" : "")
                    + " on an mkey created for " + wr.mkey().maxEntries(), i);
        if (n > WqeFormat.MAX_LAYOUT_ENTRIES) // mlx5 too: the layout must fit the WQE
            throw new VerbsException(Errno.ENOMEM, "UMR layout of " + n + " entries: a WQE holds at most "
                    + WqeFormat.MAX_LAYOUT_ENTRIES, i);
        if (inter && wr.repeatCount() < 1)
            throw new VerbsException(Errno.EINVAL,
                    "mrInterleaved repeatCount " + wr.repeatCount() + " must be at least 1", i);
        List<WqeFormat.Klm> klms = new ArrayList<>();
        if (inter) {
            for (MrInterleaved m : wr.interleaved()) {
                if (m.bytesCount() <= 0 || m.bytesSkip() < 0 || m.bytesCount() + m.bytesSkip() > 0xFFFF)
                    throw new VerbsException(Errno.EINVAL, "MrInterleaved " + m
                            + ": bytesCount 1.., and bytesCount + bytesSkip at most 65535", i);
                klms.add(new WqeFormat.Klm(m.addr(), m.bytesCount(), m.lkey(), m.bytesCount() + m.bytesSkip()));
            }
        } else {
            for (Sge s : wr.mrPieces()) {
                if (s.length() == 0) throw new VerbsException(Errno.EINVAL, "mrList piece " + s + " has no bytes", i);
                klms.add(new WqeFormat.Klm(s.addr(), s.length(), s.lkey(), 0));
            }
        }
        boolean signaled = sqSigAll || (wr.sendFlags() & SendFlags.SIGNALED) != 0;
        var layout = new WqeFormat.MkeyLayout(DeviceCodes.accessDown(wr.mkeyAccess()), inter ? wr.repeatCount() : 0,
                List.copyOf(klms));
        return WqeFormat.encode(WqeFormat.SendWqe.layout(head, qpn, signaled ? WqeFormat.CQ_UPDATE : 0,
                wr.mkey().lkey(), layout), DeviceCodes.device(type));
    }

    /** {@code wr}, the {@code i}th of its post, as the WQE that goes at ring index {@code head}. */
    byte[] build(SendWr wr, int i, int head) {
        WrOpcode op = wr.opcode();
        if (!WqeLayout.allowedOn(DeviceCodes.device(type), mlx5Opcode(op)))
            throw new VerbsException(Errno.EINVAL, "SendWr.opcode " + op + " is not allowed on a " + type + " QP", i);
        if (op == WrOpcode.BIND_MW) {
            if (wr.mw() == null || wr.bindMr() == null)
                throw new VerbsException(Errno.EINVAL, "BIND_MW SendWr needs bindMw(mw, rkey, mr, ...)", i);
            if (!wr.sgList().isEmpty() || wr.immData() != 0)
                throw new VerbsException(Errno.EINVAL, "BIND_MW SendWr may not carry SGEs or immediate data", i);
            if ((wr.bindRkey() >>> 8) != (wr.mw().rkey() >>> 8))
                throw new VerbsException(Errno.EINVAL, String.format(
                        "BIND_MW rkey 0x%x must keep the window's index (rkey 0x%x)",
                        wr.bindRkey(), wr.mw().rkey()), i);
            // remote access flags, and LOCAL_WRITE, which mlx5 accepts (a window is reached by its rkey only: it
            // changes nothing)
            int windowAccess = AccessFlags.REMOTE_WRITE | AccessFlags.REMOTE_READ | AccessFlags.REMOTE_ATOMIC
                    | AccessFlags.ZERO_BASED;
            if ((wr.bindAccess() & ~(windowAccess | AccessFlags.LOCAL_WRITE)) != 0)
                throw new VerbsException(Errno.EINVAL,
                        String.format("BIND_MW access 0x%x: only remote access flags", wr.bindAccess()), i);
            boolean signaled = sqSigAll || (wr.sendFlags() & SendFlags.SIGNALED) != 0;
            long mrAndAccess = (long) wr.bindMr().lkey() << 32 | DeviceCodes.accessDown(wr.bindAccess() & windowAccess);
            return WqeFormat.encode(new WqeFormat.SendWqe(WqeLayout.OP_UMR, head, qpn,
                    signaled ? WqeFormat.CQ_UPDATE : 0, 0, null, wr.bindAddr(), wr.bindRkey(), wr.bindLength(),
                    mrAndAccess, List.of(), null, wr.xrcRemoteSrqNum()), DeviceCodes.device(type));
        }
        if (op == WrOpcode.DRIVER1) return umr(wr, i, head);
        if (op == WrOpcode.LOCAL_INV) {
            boolean signaled = sqSigAll || (wr.sendFlags() & SendFlags.SIGNALED) != 0;
            return WqeFormat.encode(new WqeFormat.SendWqe(WqeLayout.OP_LOCAL_INVAL, head, qpn,
                    signaled ? WqeFormat.CQ_UPDATE : 0, wr.invalidateRkey(), null, 0, 0, 0, 0, List.of(), null,
                    wr.xrcRemoteSrqNum()), DeviceCodes.device(type));
        }
        boolean inline = (wr.sendFlags() & SendFlags.INLINE) != 0;
        if (wr.sgList().size() > maxSendSge)
            throw new VerbsException(Errno.EINVAL,
                    "SendWr.sgList has " + wr.sgList().size() + " SGEs; the QP allows " + maxSendSge, i);
        long total = 0;
        List<Sge> sgl = wr.sgList();
        for (int k = 0; k < sgl.size(); k++) total += sgl.get(k).length() & 0xFFFFFFFFL; // indexed: no iterator a post
        if (total > maxMsgSize)
            throw new VerbsException(Errno.EINVAL, "SendWr length " + total + " exceeds the maximum message size "
                    + maxMsgSize, i);
        boolean atomic = op == WrOpcode.ATOMIC_CMP_AND_SWP || op == WrOpcode.ATOMIC_FETCH_AND_ADD;
        if (atomic && (wr.sgList().size() != 1 || wr.sgList().get(0).length() != 8))
            throw new VerbsException(Errno.EINVAL, "atomic SendWr needs one 8-byte SGE, got " + wr.sgList(), i);
        if (atomic && (wr.remoteAddr() & 7) != 0)
            throw new VerbsException(Errno.EINVAL,
                    String.format("atomic SendWr.remoteAddr 0x%x is not 8-byte aligned", wr.remoteAddr()), i);
        byte[] inl = null;
        if (inline) {
            if (op != WrOpcode.SEND && op != WrOpcode.SEND_WITH_IMM
                    && op != WrOpcode.RDMA_WRITE && op != WrOpcode.RDMA_WRITE_WITH_IMM)
                throw new VerbsException(Errno.EINVAL,
                        "SendFlags.INLINE is only for SEND and RDMA_WRITE, not " + op, i);
            if (total > maxInline)
                throw new VerbsException(Errno.EINVAL, "inline SendWr of " + total
                        + " bytes exceeds the QP's maxInlineData " + maxInline, i);
            inl = new byte[(int) total];
            int at = 0;
            for (Sge s : wr.sgList()) {
                long pa = host.pa(s.addr());
                if (pa < 0)
                    throw new VerbsException(Errno.EFAULT,
                            String.format("inline SGE address 0x%x is not mapped", s.addr()), i);
                host.memory.read(pa, inl, at, s.length());
                at += s.length();
            }
        }
        WqeFormat.Av av = null;
        if (type == QpType.UD) {
            if (wr.ah() == null) throw new VerbsException(Errno.EINVAL, "UD SendWr needs ah", i);
            AhAttr ah = wr.ah().attr();
            if (ah.isGlobal()) {
                byte[] g = ah.dgid();
                av = WqeFormat.Av.global(wr.remoteQpn() & 0xFFFFFF, wr.remoteQkey(), ah.dlid(),
                        BigEndian.get64(g, 0), BigEndian.get64(g, 8));
            } else av = new WqeFormat.Av(wr.remoteQpn() & 0xFFFFFF, wr.remoteQkey(), ah.dlid());
        }
        if (dcType == DcType.DCI) {
            if (wr.dcAh() == null)
                throw new VerbsException(Errno.EINVAL, "DCI SendWr needs dcAddr(ah, remoteDctn, remoteDcKey)", i);
            if (wr.dcAh().isClosed())
                throw new VerbsException(Errno.EINVAL, "DCI SendWr.dcAddr: the address handle is closed", i);
            av = WqeFormat.Av.dc(wr.dcRemoteDctn() & 0xFFFFFF, wr.dcAh().attr().dlid(), wr.dcRemoteKey());
        }
        boolean signaled = sqSigAll || (wr.sendFlags() & SendFlags.SIGNALED) != 0;
        boolean fenced = (wr.sendFlags() & SendFlags.FENCE) != 0
                && (type == QpType.RC || type == QpType.XRC_SEND || dcType == DcType.DCI);
        int fm = (signaled ? WqeFormat.CQ_UPDATE : 0)
                | ((wr.sendFlags() & SendFlags.SOLICITED) != 0 ? WqeFormat.SOLICITED : 0)
                | (fenced ? WqeFormat.FENCE : 0);
        List<WqeFormat.Sge> sges = inline ? List.of() : QueuePair.toWqe(wr.sgList());
        long swapAdd = op == WrOpcode.ATOMIC_CMP_AND_SWP ? wr.swap() : wr.compareAdd();
        long cmp = op == WrOpcode.ATOMIC_CMP_AND_SWP ? wr.compareAdd() : 0;
        int immOrInv = op == WrOpcode.SEND_WITH_INV ? wr.invalidateRkey() : wr.immData();
        try {
            return WqeFormat.encode(new WqeFormat.SendWqe(mlx5Opcode(op), head, qpn, fm, immOrInv, av,
                    wr.remoteAddr(), wr.rkey(), swapAdd, cmp, sges, inl, wr.xrcRemoteSrqNum()),
                    DeviceCodes.device(type));
        } catch (IllegalArgumentException e) {
            throw new VerbsException(Errno.EINVAL, "SendWr does not fit one WQE: " + e.getMessage(), i);
        }
    }
}
