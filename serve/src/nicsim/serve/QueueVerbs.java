package nicsim.serve;

import java.util.ArrayList;
import java.util.List;
import nicsim.verbs.CompletionQueue;
import nicsim.verbs.DcType;
import nicsim.verbs.Errno;
import nicsim.verbs.OpsWr;
import nicsim.verbs.OpsWrOpcode;
import nicsim.verbs.ProtectionDomain;
import nicsim.verbs.QpAttr;
import nicsim.verbs.QpInitAttr;
import nicsim.verbs.QpType;
import nicsim.verbs.QueuePair;
import nicsim.verbs.RecvWr;
import nicsim.verbs.Sge;
import nicsim.verbs.SharedReceiveQueue;
import nicsim.verbs.SrqAttr;
import nicsim.verbs.SrqAttrMask;
import nicsim.verbs.SrqInitAttr;
import nicsim.verbs.SrqType;
import nicsim.verbs.VerbsException;
import nicsim.verbs.Xrcd;

/**
 * A device context's queues: QPs and SRQs made, moved, queried and posted to, as the program asks.
 * What a queue was created with is kept in its handle's record, for the queries that give it back.
 */
final class QueueVerbs {
    /** What a QP was created with, as create_qp answered it (query_qp's init attributes give it back). */
    record QpCaps(int maxSendWr, int maxRecvWr, int maxSendSge, int maxRecvSge, int maxInline, boolean sqSigAll) {}

    /** What an SRQ was created with, as create_srq answered it (query_srq gives it back). */
    record SrqCaps(int maxWr, int maxSge) {}

    /** A refused post: its errno, and the first request not posted. */
    static final class Refused extends RuntimeException {
        final int errno, badIndex;

        Refused(VerbsException e, int badIndex) {
            super(e.getMessage());
            this.errno = e.errno();
            this.badIndex = badIndex;
        }
    }

    private final Session session;
    private final SendRequests sends;

    QueueVerbs(Session session) {
        this.session = session;
        this.sends = new SendRequests(session);
    }

    Wire.Out handle(Wire.Op op, Wire.In in) {
        return switch (op) {
            case CREATE_QP -> createQp(in);
            case MODIFY_QP -> {
                WireLayout.ModifyQpRequest q = in.read(WireLayout.ModifyQpRequest.class);
                QueuePair qp = session.get(q.qp(), QueuePair.class);
                QpAttr attr = QpAttrs.decode(q.attr(), q.attrMask());
                qp.modify(attr, q.attrMask());
                session.host.qpCounters().modified(qp.qpNum(), q.attrMask(), attr.qpState().value(),
                        session.requester());
                yield new Wire.Out();
            }
            case QUERY_QP -> queryQp(in);
            case POST_SEND -> {
                WireLayout.PostRequest p = in.read(WireLayout.PostRequest.class);
                yield sends.post(session.get(p.target(), QueuePair.class), p.n(), in);
            }
            case POST_RECV -> postRecv(in, false);
            case CREATE_SRQ -> createSrq(in);
            case MODIFY_SRQ -> modifySrq(in);
            case QUERY_SRQ -> {
                int h = Session.handle(in);
                SharedReceiveQueue srq = session.get(h, SharedReceiveQueue.class);
                SrqCaps caps = session.handles.attrs(h, SrqCaps.class);
                yield new Wire.Out(new WireLayout.SrqAttr(caps.maxWr(), caps.maxSge(), srq.limit()));
            }
            case POST_SRQ_RECV -> postRecv(in, true);
            case POST_SRQ_OPS -> postSrqOps(in);
            default -> throw new IllegalStateException(op + " is not a queue's");
        };
    }

    /** The staging area of inline bytes goes back to host memory (the context closes). */
    void release() { sends.release(); }

    private Wire.Out createQp(Wire.In in) {
        WireLayout.CreateQpRequest q = in.read(WireLayout.CreateQpRequest.class);
        ProtectionDomain pd = session.getOrNull(q.pd(), ProtectionDomain.class);
        Xrcd xrcd = session.getOrNull(q.xrcd(), Xrcd.class);
        QpType type = QpType.of(q.qpType());
        CompletionQueue scq = session.getOrNull(q.sendCq(), CompletionQueue.class);
        CompletionQueue rcq = session.getOrNull(q.recvCq(), CompletionQueue.class);
        SharedReceiveQueue srq = session.getOrNull(q.srq(), SharedReceiveQueue.class);
        int sendWr = q.maxSendWr(), recvWr = q.maxRecvWr();
        int sendSge = Math.max(1, q.maxSendSge()), recvSge = Math.max(1, q.maxRecvSge());
        int inline = q.maxInlineData();
        boolean sigAll = q.sqSigAll();
        int dc = q.dcType();
        long dctKey = q.dctAccessKey();
        QpInitAttr init = new QpInitAttr().qpType(type).sendCq(scq).recvCq(rcq).srq(srq).xrcd(xrcd)
                .maxSendWr(Math.max(1, sendWr)).maxRecvWr(srq != null ? 1 : Math.max(1, recvWr)).maxSendSge(sendSge)
                .maxRecvSge(recvSge).maxInlineData(inline).sqSigAll(sigAll);
        if (dc != 0) init.dcType(dcType(dc)).dctAccessKey(dctKey);
        if (pd == null && type != QpType.XRC_RECV)
            throw new VerbsException(Errno.EINVAL, "create_qp of a " + type + " QP needs a PD");
        QueuePair qp = pd == null ? session.context().createQp(init) : pd.createQp(init);
        boolean noRecv = srq != null || type == QpType.XRC_SEND || type == QpType.XRC_RECV || dc != 0;
        QpCaps caps = new QpCaps(qp.maxSendWr(), noRecv ? 0 : qp.maxRecvWr(), sendSge, recvSge, qp.maxInlineData(),
                sigAll);
        int h = session.handles.add(qp, caps);
        session.traffic.own(session.host, qp.qpNum());
        return new Wire.Out(new WireLayout.CreateQpReply(h, qp.qpNum(), wire(caps)));
    }

    /** mlx5dv_dc_type {@code v}, or EINVAL naming it. */
    private static DcType dcType(int v) {
        try {
            return DcType.of(v);
        } catch (IllegalArgumentException e) {
            throw new VerbsException(Errno.EINVAL, "create_qp dc_type " + v
                    + " is neither MLX5DV_DCTYPE_DCT (1) nor MLX5DV_DCTYPE_DCI (2)");
        }
    }

    private Wire.Out queryQp(Wire.In in) {
        int h = in.read(WireLayout.QueryQpRequest.class).qp(); // all attributes are given, whatever the mask
        QueuePair qp = session.get(h, QueuePair.class);
        QpCaps caps = session.handles.attrs(h, QpCaps.class);
        return new Wire.Out(new WireLayout.QueryQpReply(QpAttrs.encode(qp.query()), wire(caps), caps.sqSigAll()));
    }

    /** What the QP got, as the replies carry it. */
    private static WireLayout.QpCaps wire(QpCaps caps) {
        return new WireLayout.QpCaps(caps.maxSendWr(), caps.maxRecvWr(), caps.maxSendSge(), caps.maxRecvSge(),
                caps.maxInline());
    }

    /** {@code num_sge} scatter/gather entries. */
    static List<Sge> sges(Wire.In in) {
        int n = in.count("num_sge", WireCodec.bytes(WireLayout.Sge.class));
        List<Sge> l = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            WireLayout.Sge s = in.read(WireLayout.Sge.class);
            l.add(new Sge(s.addr(), s.length(), s.lkey()));
        }
        return l;
    }

    private Wire.Out postRecv(Wire.In in, boolean shared) {
        WireLayout.PostRequest p = in.read(WireLayout.PostRequest.class);
        int h = p.target();
        Object target = shared ? session.get(h, SharedReceiveQueue.class) : session.get(h, QueuePair.class);
        int n = in.items(p.n(), WireCodec.bytes(WireLayout.RecvWr.class) + 4, "work requests");
        RecvWr[] wrs = new RecvWr[n];
        for (int i = 0; i < n; i++)
            wrs[i] = new RecvWr().wrId(in.read(WireLayout.RecvWr.class).wrId()).sgList(sges(in));
        return posted(() -> {
            if (target instanceof SharedReceiveQueue s) s.postRecv(wrs); else ((QueuePair) target).postRecv(wrs);
        });
    }

    /** A post's reply: nothing, or (status and) the index of the first request refused. */
    static Wire.Out posted(Runnable post) {
        try {
            post.run();
            return new Wire.Out();
        } catch (VerbsException e) {
            throw new Refused(e, Math.max(0, e.badWrIndex()));
        }
    }

    private Wire.Out createSrq(Wire.In in) {
        WireLayout.CreateSrqRequest q = in.read(WireLayout.CreateSrqRequest.class);
        ProtectionDomain pd = session.get(q.pd(), ProtectionDomain.class);
        int maxWr = q.maxWr(), maxSge = Math.max(1, q.maxSge()), limit = q.srqLimit();
        SrqType type = SrqType.of(q.srqType());
        Xrcd xrcd = session.getOrNull(q.xrcd(), Xrcd.class);
        CompletionQueue cq = session.getOrNull(q.cq(), CompletionQueue.class);
        int maxTags = q.tmMaxNumTags(), maxOps = q.tmMaxOps();
        SharedReceiveQueue srq = pd.createSrq(new SrqInitAttr().maxWr(maxWr).maxSge(maxSge).srqLimit(limit)
                .srqType(type).xrcd(xrcd).cq(cq).tmMaxNumTags(maxTags).tmMaxOps(maxOps));
        int h = session.handles.add(srq, new SrqCaps(maxWr, maxSge));
        return new Wire.Out(new WireLayout.CreateSrqReply(h, maxWr, maxSge, srq.srqNum()));
    }

    /** ibv_post_srq_ops: the handles of the TAG_ADDs come back, in order, or the errno and the index refused. */
    private Wire.Out postSrqOps(Wire.In in) {
        WireLayout.PostRequest p = in.read(WireLayout.PostRequest.class);
        SharedReceiveQueue srq = session.get(p.target(), SharedReceiveQueue.class);
        int n = in.items(p.n(), WireCodec.bytes(WireLayout.SrqOp.class) + 4, "operations");
        OpsWr[] ops = new OpsWr[n];
        for (int i = 0; i < n; i++) {
            WireLayout.SrqOp w = in.read(WireLayout.SrqOp.class);
            OpsWr o = new OpsWr().wrId(w.wrId());
            int opcode = w.opcode();
            try {
                o.opcode(OpsWrOpcode.of(opcode));
            } catch (IllegalArgumentException e) {
                throw new VerbsException(Errno.EINVAL, "post_srq_ops opcode " + opcode
                        + " is not TAG_ADD, TAG_DEL or TAG_SYNC", i);
            }
            o.flags(w.flags()).unexpectedCnt(w.unexpectedCnt()).handle(w.handle()).recvWrId(w.recvWrId()).tag(w.tag())
                    .mask(w.mask());
            ops[i] = o.sgList(sges(in).toArray(new Sge[0]));
        }
        posted(() -> srq.postSrqOps(ops)); // a refusal goes back with the index of the operation refused
        Wire.Out ok = new Wire.Out();
        for (OpsWr o : ops) ok.u32(o.opcode() == OpsWrOpcode.TAG_ADD ? o.handle() : 0);
        return ok;
    }

    private Wire.Out modifySrq(Wire.In in) {
        WireLayout.ModifySrqRequest q = in.read(WireLayout.ModifySrqRequest.class);
        SharedReceiveQueue srq = session.get(q.srq(), SharedReceiveQueue.class);
        int mask = q.srqAttrMask();
        int maxWr = q.maxWr(), limit = q.srqLimit(); // each counts only under its mask bit
        if ((mask & SrqAttrMask.MAX_WR) != 0 && maxWr < 0) throw Wire.beyondAnyLimit("modify_srq max_wr", maxWr);
        if ((mask & SrqAttrMask.LIMIT) != 0 && limit < 0) throw Wire.beyondAnyLimit("modify_srq srq_limit", limit);
        srq.modify(new SrqAttr().maxWr(maxWr).srqLimit(limit), mask);
        return new Wire.Out();
    }
}
