package nicsim.verbs;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import nicsim.abi.Cmd;
import nicsim.abi.Cqe64;
import nicsim.abi.WqeFormat;
import nicsim.driver.Driver;
import nicsim.provider.RecvRing;

/**
 * A shared receive queue (ibv_srq): one receive ring (the provider's {@link RecvRing}) that every
 * attached QP takes WQEs from. The limit (modify with {@link SrqAttrMask#LIMIT}) arms
 * SRQ_LIMIT_REACHED, which fires once. An XRC SRQ belongs to an XRC domain and has a CQ of its
 * own: no QP attaches to it; the XRC target QPs of its domain take WQEs from it for the requests
 * that name its number ({@link #srqNum()}), and its completions come to its CQ. A tag-matching
 * SRQ also has a CQ of its own and, in the adapter, a list of tagged buffers that
 * {@link #postSrqOps} adds to and deletes from; its ordinary buffers take the messages no tag
 * takes (docs/sources.md#tag-matching).
 */
public final class SharedReceiveQueue extends VerbsObject {
    private final ProtectionDomain pd;
    private final Driver driver;
    final int srqn;
    private final int maxWr, maxSge;
    private final SrqType type;
    private final Xrcd xrcd;
    private final CompletionQueue cq;
    private final RecvRing ring;
    private final long dbrec;
    private int limit;
    /**
     * A tag-matching SRQ's tagged buffers by handle (their receive wr_ids), and its signaled operations awaiting
     * completion by index.
     */
    private final Map<Integer, Long> tagged = new HashMap<>();
    private final Map<Integer, Long> opsPending = new HashMap<>();
    private final int tmMaxNumTags, tmMaxOps;
    private int opSerial;

    SharedReceiveQueue(ProtectionDomain pd, SrqInitAttr a) {
        super(pd);
        this.pd = pd;
        this.driver = pd.ctx.driver;
        var caps = driver.caps();
        if (a.maxWr() < 1 || a.maxWr() > caps.maxQpWr())
            throw new VerbsException(Errno.EINVAL,
                    "SrqInitAttr.maxWr = " + a.maxWr() + " is out of range (1.." + caps.maxQpWr() + ")");
        if (a.maxSge() < 1 || a.maxSge() > caps.maxSge())
            throw new VerbsException(Errno.EINVAL,
                    "SrqInitAttr.maxSge = " + a.maxSge() + " is out of range (1.." + caps.maxSge() + ")");
        if (a.srqLimit() < 0 || a.srqLimit() > a.maxWr())
            throw new VerbsException(Errno.EINVAL,
                    "SrqInitAttr.srqLimit = " + a.srqLimit() + " exceeds maxWr " + a.maxWr());
        this.type = a.srqType();
        if (type == SrqType.TM) {
            if (a.cq() == null || a.cq().isClosed() || a.cq().ctx != pd.ctx)
                throw new VerbsException(Errno.EINVAL,
                        "SrqInitAttr.cq: a tag-matching SRQ needs an open CQ of its own context");
            if (a.tmMaxNumTags() < 1)
                throw new VerbsException(Errno.EINVAL,
                        "SrqInitAttr.tmMaxNumTags = " + a.tmMaxNumTags() + ": at least 1");
            if (a.tmMaxOps() < 1)
                throw new VerbsException(Errno.EINVAL, "SrqInitAttr.tmMaxOps = " + a.tmMaxOps() + ": at least 1");
        }
        this.tmMaxNumTags = a.tmMaxNumTags();
        this.tmMaxOps = a.tmMaxOps();
        if (type == SrqType.XRC) {
            if (a.xrcd() == null) throw new VerbsException(Errno.EINVAL, "SrqInitAttr.xrcd is needed for an XRC SRQ");
            a.xrcd().checkUsableBy(pd.ctx, "SrqInitAttr.xrcd");
            if (a.cq() == null || a.cq().isClosed() || a.cq().ctx != pd.ctx)
                throw new VerbsException(Errno.EINVAL,
                        "SrqInitAttr.cq: an XRC SRQ needs an open CQ of its own context");
        }
        this.xrcd = type == SrqType.XRC ? a.xrcd() : null;
        this.cq = type == SrqType.XRC || type == SrqType.TM ? a.cq() : null;
        this.maxWr = a.maxWr();
        this.maxSge = a.maxSge();
        this.ring = new RecvRing(driver.host(), Integer.highestOneBit(Math.max(2, maxWr * 2 - 1)),
                Integer.highestOneBit(Math.max(16, maxSge * 32 - 1)), maxWr);
        this.dbrec = driver.host().allocPhysical(8, 8);
        ring.recordAt(dbrec);
        this.limit = a.srqLimit();
        int logSize = Integer.numberOfTrailingZeros(ring.size());
        int strideLog = Integer.numberOfTrailingZeros(ring.stride());
        try {
            long handle;
            if (type == SrqType.XRC) {
                var in = new Cmd.CreateXrcSrq(pd.pdn, ring.base(), logSize, strideLog, dbrec, limit, xrcd.xrcdn,
                        cq.cqn);
                handle = DriverCommand.run(driver, Cmd.CREATE_XRC_SRQ, Cmd.CREATE_XRC_SRQ_IN, in, Cmd.HANDLE).handle();
            } else if (type == SrqType.TM) {
                var in = new Cmd.CreateTmSrq(pd.pdn, ring.base(), logSize, strideLog, dbrec, limit, cq.cqn,
                        tmMaxNumTags, tmMaxOps);
                handle = DriverCommand.run(driver, Cmd.CREATE_TM_SRQ, Cmd.CREATE_TM_SRQ_IN, in, Cmd.HANDLE).handle();
            } else {
                var in = new Cmd.CreateSrq(pd.pdn, ring.base(), logSize, strideLog, dbrec, limit);
                handle = DriverCommand.run(driver, Cmd.CREATE_SRQ, Cmd.CREATE_SRQ_IN, in, Cmd.HANDLE).handle();
            }
            this.srqn = (int) handle;
        } catch (RuntimeException e) {
            ring.free();
            driver.host().freePhysical(dbrec, 8);
            throw e;
        }
        pd.ctx.srqs.put(srqn, this);
        made();
    }

    public int handle() { return srqn; }
    /** ibv_get_srq_num: the number an XRC sender names in {@link SendWr#xrcRemoteSrqNum}. */
    public int srqNum() { return srqn; }
    public SrqType type() { return type; }
    /**
     * The armed limit (ibv_query_srq's srq_limit): 0 if none is armed, or once SRQ_LIMIT_REACHED fired (the
     * adapter's word).
     */
    public int limit() {
        checkOpen();
        limit = (int) DriverCommand.run(driver, Cmd.QUERY_SRQ, Cmd.HANDLE, new Cmd.Handle(srqn), Cmd.HANDLE).handle();
        return limit;
    }

    /**
     * ibv_post_srq_recv: too many SGEs is EINVAL, a full queue ENOMEM ({@link VerbsException#badWrIndex()} says
     * which).
     */
    public void postRecv(RecvWr... wrs) {
        checkOpen();
        int posted = 0;
        try {
            for (RecvWr wr : wrs) {
                if (wr.sgList().size() > maxSge)
                    throw new VerbsException(Errno.EINVAL,
                            "RecvWr.sgList has " + wr.sgList().size() + " SGEs; the SRQ allows " + maxSge, posted);
                if (ring.full())
                    throw new VerbsException(Errno.ENOMEM,
                            "postRecv: SRQ " + srqn + " is full (" + maxWr + " WRs)", posted);
                ring.put(QueuePair.toWqe(wr.sgList()), wr.wrId());
                posted++;
            }
        } finally {
            ring.publish(posted);
        }
    }

    /**
     * ibv_post_srq_ops on a tag-matching SRQ. TAG_ADD needs one SGE and gets the entry's handle
     * ({@link OpsWr#handle()}); TAG_DEL names one (if a message took that buffer first, the delete
     * completes with TM_ERR, signaled or not); every operation reports software's unexpected count. A
     * full tag list or more signaled operations outstanding than tmMaxOps is ENOMEM, with
     * {@link VerbsException#badWrIndex()} naming the first not posted.
     */
    public void postSrqOps(OpsWr... wrs) {
        checkOpen();
        if (type != SrqType.TM)
            throw new VerbsException(Errno.EINVAL,
                    "postSrqOps on SRQ " + srqn + ", which is not a tag-matching SRQ", 0);
        for (int i = 0; i < wrs.length; i++) {
            OpsWr w = wrs[i];
            boolean add = w.opcode() == OpsWrOpcode.TAG_ADD, signaled = (w.flags() & OpsWr.SIGNALED) != 0;
            if (add && w.sgList().size() != 1)
                throw new VerbsException(Errno.EINVAL,
                        "OpsWr TAG_ADD needs one SGE (the tagged buffer), has " + w.sgList().size(), i);
            if (signaled && opsPending.size() >= tmMaxOps)
                throw new VerbsException(Errno.ENOMEM, "postSrqOps: " + tmMaxOps + " signaled operations of SRQ "
                        + srqn + " not yet completed", i);
            int index = opSerial++ & 0xFFFF;
            // its lkey and address are checked by the adapter when a message comes
            Sge sge = add ? w.sgList().get(0) : null;
            long out;
            try {
                out = DriverCommand.run(driver, Cmd.TM_OP, Cmd.TM_OP_IN, new Cmd.TmOp(srqn, w.opcode().value(),
                        signaled ? 1 : 0, w.handle(), w.unexpectedCnt() & 0xFFFFFFFFL, w.tag(), w.mask(),
                        add ? sge.addr() : 0, add ? sge.length() & 0xFFFFFFFFL : 0, add ? sge.lkey() & 0xFFFFFFFFL : 0,
                        index), Cmd.HANDLE).handle();
            } catch (VerbsException e) {
                throw new VerbsException(e.errno(), e.getMessage(), i);
            }
            if (add) {
                w.handle((int) out);
                tagged.put((int) out, w.recvWrId());
            }
            // a message took the buffer first: TM_ERR comes
            boolean deleteFailed = w.opcode() == OpsWrOpcode.TAG_DEL && out == 0;
            if (w.opcode() == OpsWrOpcode.TAG_DEL && !deleteFailed) tagged.remove(w.handle());
            if (signaled || deleteFailed) opsPending.put(index, w.wrId());
        }
    }

    /** The tagged buffers of this SRQ not yet taken or deleted. */
    public int taggedBuffers() { return tagged.size(); }

    /**
     * A tag-matching SRQ's completion, as the adapter wrote it, turned into the work completion libibverbs
     * reports.
     */
    WorkCompletion tmCompletion(Cqe64.View v, byte[] e) {
        Cqe64.TmView t = Cqe64.parseTm(e);
        int qpn = (int) v.qpn();
        boolean error = v.opcode() == Cqe64.RESP_ERR;
        WcStatus status = error ? DeviceCodes.status(v.syndrome()) : WcStatus.SUCCESS;
        String why = error ? QueuePair.why(v, e) : "";
        switch (t.kind()) {
            case Cqe64.TM_ADD, Cqe64.TM_DEL, Cqe64.TM_SYNC -> {
                Long wrId = opsPending.remove(v.wqeCounter());
                if (wrId == null) return null;
                WcOpcode op = t.kind() == Cqe64.TM_ADD ? WcOpcode.TM_ADD
                        : t.kind() == Cqe64.TM_DEL ? WcOpcode.TM_DEL : WcOpcode.TM_SYNC;
                return new WorkCompletion(wrId, status, op, 0, 0, 0, 0,
                        DeviceCodes.tmFlagsUp(t.flags()) & WcFlags.TM_SYNC_REQ, v.vendorSyndrome(), why, 0, 0, 0, 0);
            }
            case Cqe64.TM_MATCHED -> {
                boolean dataIn = (DeviceCodes.tmFlagsUp(t.flags()) & WcFlags.TM_DATA_VALID) != 0 || error;
                Long wrId = dataIn ? tagged.remove(v.wqeCounter()) : tagged.get(v.wqeCounter());
                if (wrId == null) return null;
                // an error other than a short rendezvous buffer (which software finishes) took the QP to ERR in the
                // adapter
                QueuePair qp = pd.ctx.qps.get(qpn);
                if (error && status != WcStatus.TM_RNDV_INCOMPLETE && qp != null) qp.movedByDevice(QpState.ERR);
                // an error CQE's first bytes are the failed check's address and key
                return new WorkCompletion(wrId, status, WcOpcode.TM_RECV, error ? 0 : (int) v.byteCount(), qpn, 0, 0,
                        t.flags(), v.vendorSyndrome(), why, 0, 0, error ? 0 : t.tag(), error ? 0 : t.priv());
            }
            default -> {
                // an ordinary buffer: NO_TAG, or a tagged message no tagged buffer took (unexpected), or an
                // untagged one
                WorkCompletion wc = QueuePair.received(take(v.wqeCounter()), v, e);
                if (error || (t.kind() != Cqe64.TM_NO_TAG && t.kind() != Cqe64.TM_UNEXPECTED)) return wc;
                // as mlx5 reports them: TM_NO_TAG, or TM_RECV with neither MATCH nor DATA_VALID for an unexpected
                // message
                WcOpcode op = t.kind() == Cqe64.TM_NO_TAG ? WcOpcode.TM_NO_TAG : WcOpcode.TM_RECV;
                return new WorkCompletion(wc.wrId(), wc.status(), op, wc.byteLen(), wc.qpNum(), wc.srcQp(),
                        wc.immData(), wc.wcFlags() | (DeviceCodes.tmFlagsUp(t.flags()) & WcFlags.TM_SYNC_REQ), 0, "",
                        wc.slid(), 0, 0, 0);
            }
        }
    }

    /** ibv_modify_srq: LIMIT arms (or with 0 disarms) the limit event; resizing (MAX_WR) is not supported. */
    public void modify(SrqAttr attr, int mask) {
        checkOpen();
        if ((mask & ~(SrqAttrMask.MAX_WR | SrqAttrMask.LIMIT)) != 0)
            throw new VerbsException(Errno.EINVAL, String.format("modify SRQ: unknown mask bits 0x%x", mask));
        if ((mask & SrqAttrMask.MAX_WR) != 0) // as mlx5: resizing an SRQ is EINVAL
            throw new VerbsException(Errno.EINVAL, "modify SRQ: resizing (IBV_SRQ_MAX_WR) is not supported");
        if ((mask & SrqAttrMask.LIMIT) != 0) {
            if (attr.srqLimit() < 0 || attr.srqLimit() > maxWr)
                throw new VerbsException(Errno.EINVAL,
                        "SrqAttr.srqLimit = " + attr.srqLimit() + " exceeds maxWr " + maxWr);
            DriverCommand.run(driver, Cmd.ARM_SRQ, Cmd.ARM_SRQ_IN, new Cmd.ArmSrq(srqn, attr.srqLimit()), Cmd.EMPTY);
            limit = attr.srqLimit();
        }
    }

    /** The scatter list of WQE {@code counter}, as posted. */
    List<WqeFormat.Sge> sges(int counter) { return ring.sges(counter); }

    /** A receive completion for WQE {@code counter}: its wr_id; the WQE's slot is free again. */
    long take(int counter) { return ring.take(counter); }

    @Override protected String describe() { return "SharedReceiveQueue(" + srqn + ")"; }

    @Override protected void destroy() {
        DriverCommand.run(driver, Cmd.DESTROY_SRQ, Cmd.HANDLE, new Cmd.Handle(srqn), Cmd.EMPTY);
        pd.ctx.srqs.remove(srqn);
        ring.free();
        driver.host().freePhysical(dbrec, 8);
    }
}
