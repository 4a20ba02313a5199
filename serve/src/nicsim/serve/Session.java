package nicsim.serve;

import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import nicsim.driver.Host;
import nicsim.verbs.AddressHandle;
import nicsim.verbs.AdviseAdvice;
import nicsim.verbs.AhAttr;
import nicsim.verbs.CompletionChannel;
import nicsim.verbs.CompletionQueue;
import nicsim.verbs.Context;
import nicsim.verbs.DcType;
import nicsim.verbs.DeviceAttr;
import nicsim.verbs.DeviceMemory;
import nicsim.verbs.Errno;
import nicsim.verbs.MemoryRegion;
import nicsim.verbs.Mkey;
import nicsim.verbs.MemoryWindow;
import nicsim.verbs.MrInterleaved;
import nicsim.verbs.Mtu;
import nicsim.verbs.MwType;
import nicsim.verbs.OpsWr;
import nicsim.verbs.OpsWrOpcode;
import nicsim.verbs.PortAttr;
import nicsim.verbs.ProtectionDomain;
import nicsim.verbs.QpAttr;
import nicsim.verbs.QpAttrMask;
import nicsim.verbs.QpInitAttr;
import nicsim.verbs.QpState;
import nicsim.verbs.QpType;
import nicsim.verbs.QueuePair;
import nicsim.verbs.RecvWr;
import nicsim.verbs.SendFlags;
import nicsim.verbs.SendWr;
import nicsim.verbs.Sge;
import nicsim.verbs.SharedReceiveQueue;
import nicsim.verbs.SrqAttr;
import nicsim.verbs.SrqAttrMask;
import nicsim.verbs.SrqInitAttr;
import nicsim.verbs.SrqType;
import nicsim.verbs.VerbsException;
import nicsim.verbs.WorkCompletion;
import nicsim.verbs.WrOpcode;
import nicsim.verbs.Xrcd;

/**
 * One attached program's device context: the verbs it asks for, run on its node's adapter through
 * the Java verbs library. Objects are named to the program by handles that are its own; a handle
 * of another program, or of nothing, is EINVAL. Its registered buffers are its own memory, attached
 * to the node's host memory so the adapter's DMA reaches them in place.
 *
 * <p>Runs on the simulator's thread only. A request either answers at once or, for a poll that
 * finds nothing or a wait for a completion event, leaves the program {@linkplain #waiting() waiting}
 * for the simulation to move.
 */
final class Session implements AutoCloseable {
    /** Bytes of host memory a program's inline data is staged in, before the adapter copies it into the WQE. */
    private static final int STAGING = 64 << 10;

    final int id;
    final Host host;
    /** The program that opened it (a child it forks may use it too: {@link #ends}). */
    final Program program;
    /** Connections to it: its program's, and those of children it forked that used it since. */
    int ends;
    private final Context ctx;
    /** The memory of each process using it, by pid: a buffer registered is the registering process's. */
    private final Map<Integer, ProcMemory> memories = new HashMap<>();
    /** Its command file's number in the process that opened it (ibv_import_device is given a duplicate of it). */
    final int cmdFd;
    /** The node's XRC domains shared through files, and this program's holds on them, by handle. */
    private final XrcDomains domains;
    /** Its objects by handle, one record each. */
    private final Handles handles = new Handles();
    /** Its registered memory, attached to the node's host memory. */
    private final Registrations registrations;
    /** What a QP was created with, as create_qp answered it (query_qp's init attributes give it back). */
    private record QpCaps(int maxSendWr, int maxRecvWr, int maxSendSge, int maxRecvSge, int maxInline, boolean sqSigAll) {}

    /** What an SRQ was created with, as create_srq answered it (query_srq gives it back). */
    private record SrqCaps(int maxWr, int maxSge) {}

    /** Its async file and completion channels. */
    final EventFiles events;
    private long staging = -1;
    /** What its QPs moved, in simulated time. */
    final Traffic traffic = new Traffic();
    /** What the program waits for (a poll that found nothing, a completion event), or null. */
    private Wait wait;
    long requests;

    /** A request left open until the simulation gives it something. */
    record Wait(Wire.Op op, CompletionQueue cq, int max, java.util.function.Consumer<java.nio.ByteBuffer> replyTo,
                java.util.Set<CompletionQueue> readyBefore) {
        Wait(Wire.Op op, CompletionQueue cq, int max, java.util.function.Consumer<java.nio.ByteBuffer> replyTo) {
            this(op, cq, max, replyTo, java.util.Set.of());
        }
    }

    /** Empty polls answered at once, since it last waited, because another of its CQs had completions. */
    private int quickAnswers;

    /** Where the request being handled came from: a request left open is answered there. */
    private java.util.function.Consumer<java.nio.ByteBuffer> replyTo;
    /** The process that sent the request being handled. */
    private int requester;

    /**
     * The device context {@code program} opened on {@code host}'s adapter.
     */
    Session(int id, Host host, Program program, int cmdFd, XrcDomains domains) throws IOException {
        this.id = id;
        this.host = host;
        this.program = program;
        this.cmdFd = cmdFd;
        this.domains = domains;
        memories.put(program.pid, new ProcMemory(program.pid));
        this.registrations = new Registrations(host);
        this.ctx = new nicsim.verbs.Device(host).open();
        this.events = new EventFiles(ctx, handles);
    }

    Wait waiting() { return wait; }

    /**
     * Runs one request of process {@code pid} from {@code from}; null when the program now waits (the
     * reply goes to {@code from} later).
     */
    Wire.Out handle(Wire.Op op, Wire.In in, java.util.function.Consumer<java.nio.ByteBuffer> from, int pid) {
        requests++;
        replyTo = from;
        requester = pid;
        return switch (op) {
            case HELLO, JOIN, EVENTS, CHANNEL, CONTEXTS, CM_OPEN, CM_EVENTS, CM_CMD ->
                throw new Wire.Malformed(op + " on a connection that is already a program's");
            case PCI_OPEN, PCI_CONFIG_READ, PCI_CONFIG_WRITE, PCI_MMIO_READ, PCI_MMIO_WRITE, PCI_DMA_MAP, PCI_DMA_UNMAP,
                 PCI_WAIT -> throw new Wire.Malformed(op + " on a libibverbs context, not a PCI function's connection");
            case QUERY_DEVICE -> queryDevice();
            case QUERY_PORT -> queryPort(in.u32("port"));
            case ALLOC_PD -> new Wire.Out().u32(add(ctx.allocPd()));
            case DEALLOC_PD -> destroy(in, ProtectionDomain.class);
            case IMPORT_PD -> { imported(in.u32("pd"), ProtectionDomain.class); yield new Wire.Out(); }
            case IMPORT_MR -> {
                MemoryRegion mr = imported(in.u32("mr"), MemoryRegion.class);
                yield new Wire.Out().u32(mr.lkey()).u32(mr.rkey()).u64(mr.length());
            }
            case IMPORT_DM -> new Wire.Out().u64(imported(in.u32("dm"), DeviceMemory.class).length());
            case REG_MR -> regMr(in);
            case DEREG_MR -> deregMr(in.u32("mr"));
            case REREG_MR -> reregMr(in);
            case ALLOC_DM -> {
                long length = in.u64("length");
                int align = in.u32("log_align_req");
                if (length <= 0 || length > Integer.MAX_VALUE) throw new VerbsException(Errno.EINVAL, "alloc_dm length " + Long.toUnsignedString(length));
                yield new Wire.Out().u32(add(ctx.allocDm(length, align)));
            }
            case FREE_DM -> destroy(in, DeviceMemory.class);
            case MEMCPY_TO_DM -> {
                DeviceMemory dm = get(in.u32("dm"), DeviceMemory.class);
                long at = in.u64("dm_offset");
                dm.memcpyToDm(at, in.bytes(in.count32("length"), "data"));
                yield new Wire.Out();
            }
            case MEMCPY_FROM_DM -> {
                DeviceMemory dm = get(in.u32("dm"), DeviceMemory.class);
                long at = in.u64("dm_offset");
                byte[] data = dm.memcpyFromDm(at, in.count32("length"));
                yield new Wire.Out().u32(data.length).bytes(data);
            }
            case REG_DM_MR -> {
                ProtectionDomain pd = get(in.u32("pd"), ProtectionDomain.class);
                DeviceMemory dm = get(in.u32("dm"), DeviceMemory.class);
                long at = in.u64("dm_offset"), length = in.u64("length");
                MemoryRegion mr = pd.regDmMr(dm, at, length, in.u32("access"));
                yield new Wire.Out().u32(add(mr)).u32(mr.lkey()).u32(mr.rkey());
            }
            case CREATE_CQ -> createCq(in);
            case DESTROY_CQ -> destroyCq(in.u32("cq"));
            case POLL_CQ -> pollCq(in);
            case ADVISE_MR -> {
                ProtectionDomain pd = get(in.u32("pd"), ProtectionDomain.class);
                int advice = in.u32("advice"), flags = in.u32("flags");
                AdviseAdvice a = java.util.Arrays.stream(AdviseAdvice.values()).filter(x -> x.value() == advice).findFirst()
                        .orElseThrow(() -> new VerbsException(Errno.EOPNOTSUPP, "advise_mr advice " + advice + " is not offered"));
                pd.adviseMr(a, flags, sges(in).toArray(new Sge[0]));
                yield new Wire.Out();
            }
            case RESIZE_CQ -> {
                CompletionQueue cq = get(in.u32("cq"), CompletionQueue.class);
                cq.resize(in.count32("cqe"));
                yield new Wire.Out().u32(cq.cqe());
            }
            case REQ_NOTIFY_CQ -> {
                CompletionQueue cq = get(in.u32("cq"), CompletionQueue.class);
                cq.reqNotify(in.u32("solicited") != 0);
                yield new Wire.Out();
            }
            case CREATE_QP -> createQp(in);
            case MODIFY_QP -> modifyQp(in);
            case QUERY_QP -> queryQp(in);
            case DESTROY_QP -> destroy(in, QueuePair.class);
            case POST_SEND -> postSend(in);
            case POST_RECV -> postRecv(in, false);
            case CREATE_AH -> createAh(in);
            case DESTROY_AH -> destroy(in, AddressHandle.class);
            case CREATE_SRQ -> createSrq(in);
            case MODIFY_SRQ -> modifySrq(in);
            case QUERY_SRQ -> {
                int h = in.u32("srq");
                SharedReceiveQueue srq = get(h, SharedReceiveQueue.class);
                SrqCaps caps = handles.attrs(h, SrqCaps.class);
                yield new Wire.Out().u32(caps.maxWr()).u32(caps.maxSge()).u32(srq.limit());
            }
            case DESTROY_SRQ -> destroy(in, SharedReceiveQueue.class);
            case OPEN_XRCD -> openXrcd(in);
            case CLOSE_XRCD -> closeXrcd(in.u32("handle"));
            case POST_SRQ_RECV -> postRecv(in, true);
            case POST_SRQ_OPS -> postSrqOps(in);
            case CREATE_MKEY -> {
                ProtectionDomain pd = get(in.u32("pd"), ProtectionDomain.class);
                int maxEntries = in.count32("max_entries");
                int flags = in.u32("create_flags");
                if (flags != 1 /* MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT */)
                    throw new VerbsException(Errno.EOPNOTSUPP, "mlx5dv_create_mkey create_flags 0x" + Integer.toHexString(flags) + ": only INDIRECT");
                Mkey k = pd.createIndirectMkey(maxEntries);
                yield new Wire.Out().u32(add(k)).u32(k.lkey());
            }
            case DESTROY_MKEY -> destroy(in, Mkey.class);
            case ALLOC_MW -> {
                ProtectionDomain pd = get(in.u32("pd"), ProtectionDomain.class);
                int type = in.u32("type");
                MwType t;
                try {
                    t = MwType.of(type);
                } catch (IllegalArgumentException e) {
                    throw new VerbsException(Errno.EINVAL, "alloc_mw type " + Integer.toUnsignedString(type) + " is neither IBV_MW_TYPE_1 nor _2");
                }
                MemoryWindow mw = pd.allocMw(t);
                yield new Wire.Out().u32(add(mw)).u32(mw.rkey());
            }
            case DEALLOC_MW -> destroy(in, MemoryWindow.class);
            case TIME -> { // read at the next moment every program waits: then where its reading falls is no race
                wait = new Wait(Wire.Op.TIME, null, 0, replyTo);
                yield null;
            }
        };
    }

    // ---- objects by handle ----

    private int add(Object o) { return handles.add(o, null); }

    private <T> T get(int handle, Class<T> type) { return handles.get(handle, type); }

    private <T> T imported(int handle, Class<T> type) { return handles.imported(handle, type); }

    /** The memory of the process that sent this request (opened when it first registers a buffer). */
    private ProcMemory requesterMemory() {
        ProcMemory m = memories.get(requester);
        if (m != null) return m;
        try {
            m = new ProcMemory(requester);
        } catch (IOException e) {
            throw new VerbsException(Errno.EACCES, "cannot reach process " + requester + "'s memory: "
                    + e.getMessage());
        }
        memories.put(requester, m);
        return m;
    }

    private <T extends AutoCloseable> T getOrNull(int handle, Class<T> type) { return handle == Wire.NONE ? null : get(handle, type); }

    private Wire.Out destroy(Wire.In in, Class<? extends nicsim.verbs.VerbsObject> type) {
        int h = in.u32("handle");
        nicsim.verbs.VerbsObject o = get(h, type);
        if (o.hasChildren()) throw new VerbsException(Errno.EBUSY, type.getSimpleName() + " handle " + h + " still has objects made under it");
        o.close();
        handles.remove(h); // no event names it from now on
        return new Wire.Out();
    }

    // ---- XRC domains ----

    /** ibv_open_xrcd: a domain of the program's own, or (given a file) the node's domain of that file, shared with every program that opens it. */
    private Wire.Out openXrcd(Wire.In in) {
        boolean byFile = in.u32("file") != 0;
        long dev = in.u64("dev"), ino = in.u64("ino");
        int oflags = in.u32("oflags");
        if (!byFile) return new Wire.Out().u32(add(ctx.openXrcd()));
        XrcDomains.Shared s = domains.open(dev, ino, oflags);
        return new Wire.Out().u32(handles.add(s.xrcd, s));
    }

    private Wire.Out closeXrcd(int h) {
        Xrcd x = get(h, Xrcd.class);
        XrcDomains.Shared s = handles.attrs(h, XrcDomains.Shared.class);
        if (s == null) x.close();
        else domains.close(s);
        handles.remove(h);
        return new Wire.Out();
    }

    // ---- device ----

    private Wire.Out queryDevice() {
        DeviceAttr a = ctx.queryDevice();
        boolean tm = host.profile.has("tm.max.tags");
        long guid = nodeGuid(host.index);
        return new Wire.Out().u64(guid).u64(guid).u64(a.maxMrSize()).u64(host.memory.pageSize())
                .u32(a.vendorId()).u32(a.vendorPartId()).u32(0).u32(a.maxQp()).u32(a.maxQpWr()).u32(a.maxSge()).u32(a.maxCq())
                .u32(a.maxCqe()).u32(a.maxMr()).u32(a.maxPd()).u32(a.maxQpRdAtom()).u32(a.maxQpInitRdAtom())
                .u32(a.maxQp()).u32(a.maxQpWr()).u32(a.maxSge()).u32(a.maxQp()).u32(1 /* IBV_ATOMIC_HCA */).u32(1)
                .u32(0).string(a.fwVer())
                // tag matching (ibv_tm_caps): the profile's limits, for RC; none where the profile offers none
                .u32(tm ? host.profile.countInt("tm.max.tags") : 0).u32(tm ? host.profile.countInt("tm.max.ops") : 0)
                .u32(tm ? 1 : 0 /* max_sge */).u32(tm ? 64 : 0 /* max_rndv_hdr_size: TMH, RVH and 32 bytes of the sender's */)
                .u32(tm ? 1 : 0 /* IBV_TM_CAP_RC */)
                // on-demand paging (ibv_odp_caps)
                .u64(a.odpCaps().generalCaps()).u32(a.odpCaps().rcOdpCaps()).u32(a.odpCaps().ucOdpCaps()).u32(a.odpCaps().udOdpCaps())
                .u32(a.odpCaps().xrcOdpCaps())
                // completion timestamps: the core clock, free-running over 64 bits
                .u64(host.adapter.coreClockKhz()).u64(-1L)
                .u64(a.maxDmSize());
    }

    /** The node GUID nicsim gives adapter {@code node} (an OUI of none of the real vendors'). */
    static long nodeGuid(int node) { return 0x0002_1de5_0000_0000L | (node + 1); }

    private Wire.Out queryPort(int port) {
        PortAttr p = ctx.queryPort(port);
        return new Wire.Out().u32(p.state().value()).u32(p.maxMtu().value()).u32(p.activeMtu().value()).u32(1 /* gids */)
                .u32(0 /* port_cap_flags */).u32(p.maxMsgSz()).u32(p.lid()).u32(1)
                .u32(0).u32(1).u32(0).u32(2 /* 4X */).u32(32 /* EDR */).u32(5 /* LinkUp */).u32(1 /* InfiniBand */).u32(1);
    }

    // ---- memory regions ----

    /** Attaches the program's pages under {@code [addr, addr + length)} to host memory and registers them. */
    private Wire.Out regMr(Wire.In in) {
        ProtectionDomain pd = get(in.u32("pd"), ProtectionDomain.class);
        long addr = in.u64("addr"), length = in.u64("length"), iova = in.u64("iova");
        int access = in.u32("access");
        // NULL and SIZE_MAX, on demand: implicit ODP
        boolean implicit = addr == 0 && length == -1 && (access & nicsim.verbs.AccessFlags.ON_DEMAND) != 0;
        MemoryRegion mr = implicit
                ? registrations.registerImplicit(requesterMemory(), pd, access)
                : registrations.register(requesterMemory(), pd, addr, length, iova, access);
        return new Wire.Out().u32(add(mr)).u32(mr.lkey()).u32(mr.rkey());
    }

    /** ibv_rereg_mr: the region keeps its handle and gets new keys. */
    private Wire.Out reregMr(Wire.In in) {
        MemoryRegion mr = get(in.u32("mr"), MemoryRegion.class);
        int flags = in.u32("flags"), pdh = in.u32("pd");
        long addr = in.u64("addr"), length = in.u64("length");
        int access = in.u32("access");
        ProtectionDomain pd = (flags & MemoryRegion.REREG_CHANGE_PD) != 0 ? get(pdh, ProtectionDomain.class) : null;
        registrations.rereg(requesterMemory(), mr, flags, pd, addr, length, access);
        return new Wire.Out().u32(mr.lkey()).u32(mr.rkey());
    }

    private Wire.Out deregMr(int h) {
        registrations.deregister(get(h, MemoryRegion.class));
        handles.remove(h);
        return new Wire.Out();
    }

    // ---- completion queues and events ----

    private Wire.Out createCq(Wire.In in) {
        int cqe = in.count32("cqe");
        int fd = in.u32("channel");
        CompletionChannel ch = null;
        if (fd != Wire.NONE) ch = events.channel(fd);
        CompletionQueue cq = ctx.createCq(cqe, ch);
        int h = add(cq);
        return new Wire.Out().u32(h).u32(cq.cqe());
    }

    private Wire.Out destroyCq(int h) {
        CompletionQueue cq = get(h, CompletionQueue.class);
        cq.close();
        handles.remove(h);
        return new Wire.Out();
    }

    private Wire.Out pollCq(Wire.In in) {
        CompletionQueue cq = get(in.u32("cq"), CompletionQueue.class);
        int max = in.count32("max");
        if (max > 0 && !cq.ready()) {
            java.util.Set<CompletionQueue> ready = new java.util.HashSet<>();
            for (CompletionQueue other : handles.cqs()) if (other != cq && other.ready()) ready.add(other);
            // another of its CQs has completions: it polls its CQs in turn, so it looks there within a round
            if (!ready.isEmpty() && quickAnswers++ < handles.cqs().size()) return completions(cq, max);
            quickAnswers = 0; // a round went by without them: those it leaves are no reason to let it go on
            wait = new Wait(Wire.Op.POLL_CQ, cq, max, replyTo, ready);
            return null;
        }
        return completions(cq, max);
    }

    /** Error completions the program was given, with the model's reason (the first few, for the simulator's log). */
    final List<String> errors = new ArrayList<>();
    long errorCompletions;

    private Wire.Out completions(CompletionQueue cq, int max) {
        List<WorkCompletion> wcs = cq.poll(max);
        if (!wcs.isEmpty()) quickAnswers = 0;
        Wire.Out out = new Wire.Out().u32(wcs.size());
        for (WorkCompletion w : wcs) {
            traffic.completed(w, host.sim.now());
            if (w.status() != nicsim.verbs.WcStatus.SUCCESS && w.status() != nicsim.verbs.WcStatus.WR_FLUSH_ERR && errorCompletions++ < 8)
                errors.add(w.toString());
            out.u64(w.wrId()).u32(w.status().value()).u32(w.opcode().value()).u32(w.vendorErr()).u32(w.byteLen()).u32(w.immData())
                    .u32(w.qpNum()).u32(w.srcQp()).u32(w.wcFlags()).u32(0).u32(w.slid()).u32(0).u32(0).u64(w.tmTag()).u32(w.tmPriv())
                    .u64(w.timestamp());
        }
        return out;
    }

    /**
     * Whether what the program waits for has come: a completion on the CQ it polls, or on another of
     * its CQs that had none when it began to wait (a program polling its CQs in turn, as UCX polls
     * its receive and send CQs, must see it before simulated time goes further).
     */
    boolean waitSatisfied() {
        return wait != null && wait.cq() != null && (wait.cq().ready() || anotherCqReady(wait));
    }

    private boolean anotherCqReady(Wait w) {
        for (CompletionQueue other : handles.cqs())
            if (other != w.cq() && !w.readyBefore().contains(other) && !other.isClosed() && other.ready()) return true;
        return false;
    }

    /** Whether the program waits for a reading of the simulated clock. */
    boolean readingClock() { return wait != null && wait.op() == Wire.Op.TIME; }

    /** Answers the clock's reading, which ends the wait. */
    void answerClock() {
        Wait w = wait;
        wait = null;
        w.replyTo().accept(new Wire.Out().u64(host.sim.now()).finish(0));
    }

    /**
     * Answers the open poll if it is satisfied or, with {@code giveUp} (the simulation has nothing
     * more to do for now), empty, so the program can look elsewhere; whether it answered.
     */
    boolean answer(boolean giveUp) {
        Wait w = wait;
        if (w == null || w.cq() == null || !(w.cq().ready() || giveUp || anotherCqReady(w))) return false;
        wait = null;
        w.replyTo().accept(completions(w.cq(), w.max()).finish(0));
        return true;
    }

    /** Whether QP {@code qpn} is one of this context's. */
    boolean ownsQp(long qpn) { return handles.qp((int) qpn) != null; }

    // ---- queue pairs ----

    private Wire.Out createQp(Wire.In in) {
        ProtectionDomain pd = getOrNull(in.u32("pd"), ProtectionDomain.class);
        Xrcd xrcd = getOrNull(in.u32("xrcd"), Xrcd.class);
        QpType type = QpType.of(in.u32("qp_type"));
        CompletionQueue scq = getOrNull(in.u32("send_cq"), CompletionQueue.class), rcq = getOrNull(in.u32("recv_cq"), CompletionQueue.class);
        SharedReceiveQueue srq = getOrNull(in.u32("srq"), SharedReceiveQueue.class);
        int sendWr = in.count32("max_send_wr"), recvWr = in.count32("max_recv_wr"), sendSge = in.count32("max_send_sge"),
                recvSge = in.count32("max_recv_sge");
        int inline = in.count32("max_inline_data");
        boolean sigAll = in.u32("sq_sig_all") != 0;
        int dc = in.u32("dc_type");
        long dctKey = in.u64("dct_access_key");
        QpInitAttr init = new QpInitAttr().qpType(type).sendCq(scq).recvCq(rcq).srq(srq).xrcd(xrcd).maxSendWr(Math.max(1, sendWr))
                .maxRecvWr(srq != null ? 1 : Math.max(1, recvWr)).maxSendSge(Math.max(1, sendSge)).maxRecvSge(Math.max(1, recvSge))
                .maxInlineData(inline).sqSigAll(sigAll);
        if (dc != 0) init.dcType(dcType(dc)).dctAccessKey(dctKey);
        if (pd == null && type != QpType.XRC_RECV) throw new VerbsException(Errno.EINVAL, "create_qp of a " + type + " QP needs a PD");
        QueuePair qp = pd == null ? ctx.createQp(init) : pd.createQp(init);
        boolean noRecv = srq != null || type == QpType.XRC_SEND || type == QpType.XRC_RECV || dc != 0;
        QpCaps caps = new QpCaps(qp.maxSendWr(), noRecv ? 0 : qp.maxRecvWr(), Math.max(1, sendSge), Math.max(1, recvSge),
                qp.maxInlineData(), sigAll);
        int h = handles.add(qp, caps);
        return new Wire.Out().u32(h).u32(qp.qpNum()).u32(caps.maxSendWr()).u32(caps.maxRecvWr()).u32(caps.maxSendSge())
                .u32(caps.maxRecvSge()).u32(caps.maxInline());
    }

    /** mlx5dv_dc_type {@code v}, or EINVAL naming it. */
    private static DcType dcType(int v) {
        try {
            return DcType.of(v);
        } catch (IllegalArgumentException e) {
            throw new VerbsException(Errno.EINVAL, "create_qp dc_type " + v + " is neither MLX5DV_DCTYPE_DCT (1) nor MLX5DV_DCTYPE_DCI (2)");
        }
    }

    private Wire.Out modifyQp(Wire.In in) {
        QueuePair qp = get(in.u32("qp"), QueuePair.class);
        int mask = in.u32("attr_mask");
        // a field counts only under its mask bit: programs leave the others as they are (rdma-core's xsrq_pingpong: uninitialised)
        int state = in.u32("qp_state"), cur = in.u32("cur_qp_state");
        QpAttr a = new QpAttr();
        if ((mask & QpAttrMask.STATE) != 0) a.qpState(qpState(state, "qp_state"));
        if ((mask & QpAttrMask.CUR_STATE) != 0) a.curQpState(qpState(cur, "cur_qp_state"));
        int mtu = in.u32("path_mtu");
        if ((mask & QpAttrMask.PATH_MTU) != 0) a.pathMtu(Mtu.of(mtu));
        // librdmacm moves a QP to ERR with nothing but qp_state set (ucma_modify_qp_err): the rest is its stack
        int qkey = in.u32("qkey"), rqPsn = in.u32("rq_psn"), sqPsn = in.u32("sq_psn"), dest = in.u32("dest_qp_num");
        int access = in.u32("qp_access_flags"), pkey = in.u32("pkey_index"), port = in.u32("port_num");
        int rd = in.u32("max_rd_atomic"), destRd = in.u32("max_dest_rd_atomic"), rnrTimer = in.u32("min_rnr_timer");
        int timeout = in.u32("timeout"), retry = in.u32("retry_cnt"), rnrRetry = in.u32("rnr_retry");
        boolean draining = in.u32("sq_draining") != 0;
        int dlid = in.u32("ah dlid"), sl = in.u32("ah sl"), pathBits = in.u32("ah src_path_bits");
        in.u32("ah static_rate");
        in.u32("ah is_global"); // the fabric routes by LID; a GRH changes nothing here
        int ahPort = in.u32("ah port_num");
        if ((mask & QpAttrMask.QKEY) != 0) a.qkey(qkey);
        if ((mask & QpAttrMask.RQ_PSN) != 0) a.rqPsn(rqPsn);
        if ((mask & QpAttrMask.SQ_PSN) != 0) a.sqPsn(sqPsn);
        if ((mask & QpAttrMask.DEST_QPN) != 0) a.destQpNum(dest);
        if ((mask & QpAttrMask.ACCESS_FLAGS) != 0) a.qpAccessFlags(access);
        if ((mask & QpAttrMask.PKEY_INDEX) != 0) a.pkeyIndex(pkey);
        if ((mask & QpAttrMask.PORT) != 0) a.portNum(port);
        if ((mask & QpAttrMask.MAX_QP_RD_ATOMIC) != 0) a.maxRdAtomic(rd);
        if ((mask & QpAttrMask.MAX_DEST_RD_ATOMIC) != 0) a.maxDestRdAtomic(destRd);
        if ((mask & QpAttrMask.MIN_RNR_TIMER) != 0) a.minRnrTimer(rnrTimer);
        if ((mask & QpAttrMask.TIMEOUT) != 0) a.timeout(timeout);
        if ((mask & QpAttrMask.RETRY_CNT) != 0) a.retryCnt(retry);
        if ((mask & QpAttrMask.RNR_RETRY) != 0) a.rnrRetry(rnrRetry);
        if ((mask & QpAttrMask.EN_SQD_ASYNC_NOTIFY) != 0) a.enSqdAsyncNotify(draining);
        if ((mask & QpAttrMask.AV) != 0)
            a.ahAttr(new AhAttr().dlid(dlid).sl(sl).srcPathBits(pathBits).portNum(ahPort == 0 ? 1 : ahPort));
        qp.modify(a, mask);
        return new Wire.Out();
    }

    private static QpState qpState(int v, String field) {
        for (QpState s : QpState.values()) if (s.value() == v) return s;
        throw new VerbsException(Errno.EINVAL, "modify_qp " + field + " " + Integer.toUnsignedString(v) + " is no ibv_qp_state");
    }

    private Wire.Out queryQp(Wire.In in) {
        int h = in.u32("qp");
        QueuePair qp = get(h, QueuePair.class);
        in.u32("attr_mask");
        QpAttr a = qp.query();
        QpCaps caps = handles.attrs(h, QpCaps.class);
        return new Wire.Out().u32(a.qpState().value()).u32(a.curQpState().value()).u32(a.pathMtu().value()).u32(a.qkey()).u32(a.rqPsn())
                .u32(a.sqPsn()).u32(a.destQpNum()).u32(a.qpAccessFlags()).u32(a.pkeyIndex()).u32(a.portNum()).u32(a.maxRdAtomic())
                .u32(a.maxDestRdAtomic()).u32(a.minRnrTimer()).u32(a.timeout()).u32(a.retryCnt()).u32(a.rnrRetry())
                .u32(a.sqDraining() ? 1 : 0).u32(a.ahAttr().dlid()).u32(a.ahAttr().sl()).u32(a.ahAttr().srcPathBits()).u32(0)
                .u32(a.ahAttr().isGlobal() ? 1 : 0).u32(a.ahAttr().portNum())
                .u32(caps.maxSendWr()).u32(caps.maxRecvWr()).u32(caps.maxSendSge()).u32(caps.maxRecvSge()).u32(caps.maxInline())
                .u32(caps.sqSigAll() ? 1 : 0);
    }

    private static List<Sge> sges(Wire.In in) {
        int n = in.count("num_sge", 16);
        List<Sge> l = new ArrayList<>(n);
        for (int i = 0; i < n; i++) l.add(new Sge(in.u64("sge addr"), in.u32("sge length"), in.u32("sge lkey")));
        return l;
    }

    private Wire.Out postSend(Wire.In in) {
        int h = in.u32("qp");
        QueuePair qp = get(h, QueuePair.class);
        int n = in.count("work requests", 64);
        SendWr[] wrs = new SendWr[n];
        int stagedAt = 0;
        for (int i = 0; i < n; i++) {
            SendWr w = new SendWr().wrId(in.u64("wr_id")).opcode(WrOpcode.of(in.u32("opcode")));
            int flags = in.u32("send_flags");
            w.sendFlags(flags).immData(in.u32("imm_data")).remoteAddr(in.u64("remote_addr")).rkey(in.u32("rkey"))
                    .compareAdd(in.u64("compare_add")).swap(in.u64("swap"));
            int ah = in.u32("ah");
            if (ah != Wire.NONE) w.ah(get(ah, AddressHandle.class));
            w.remoteQpn(in.u32("remote_qpn")).remoteQkey(in.u32("remote_qkey")).invalidateRkey(in.u32("invalidate_rkey"))
                    .xrcRemoteSrqNum(in.u32("remote_srqn"));
            int dcAh = in.u32("dc ah");
            int dctn = in.u32("dc remote_dctn");
            long dcKey = in.u64("dc remote_dc_key");
            if (dcAh != Wire.NONE) w.dcAddr(get(dcAh, AddressHandle.class), dctn, dcKey);
            List<Sge> sg = sges(in);
            if ((flags & SendFlags.INLINE) != 0) {
                // the program's bytes as they were when it posted: staged in host memory for the WQE
                int len = 0;
                for (Sge s : sg) len += s.length();
                byte[] data = in.bytes(len, "inline data");
                if (stagedAt + len > STAGING) throw new VerbsException(Errno.ENOMEM, "inline data of one post past " + STAGING + " bytes", i);
                if (staging < 0) staging = host.allocPhysical(STAGING, host.memory.pageSize());
                host.memory.write(staging + stagedAt, data);
                sg = len == 0 ? List.of() : List.of(new Sge(host.va(staging + stagedAt), len, 0));
                stagedAt += len;
            }
            wrs[i] = w.sgList(sg);
            int mkey = in.u32("umr mkey");
            int access = in.u32("umr access"), repeat = in.u32("umr repeat"), entries = in.count("umr entries", 20);
            Sge[] pieces = new Sge[entries];
            MrInterleaved[] inter = new MrInterleaved[entries];
            for (int k = 0; k < entries; k++) {
                long addr = in.u64("umr addr");
                int len = in.u32("umr length"), lkey = in.u32("umr lkey"), skip = in.u32("umr skip");
                pieces[k] = new Sge(addr, len, lkey);
                inter[k] = new MrInterleaved(addr, len, skip, lkey);
            }
            if (mkey != Wire.NONE) { // a layout UMR (mlx5dv_wr_mr_list / _interleaved)
                Mkey m = get(mkey, Mkey.class);
                if (repeat == 0) w.mrList(m, access, pieces); else w.mrInterleaved(m, access, repeat, inter);
            }
            int mw = in.u32("bind mw"), bindRkey = in.u32("bind rkey"), bindMr = in.u32("bind mr");
            long bindAddr = in.u64("bind addr"), bindLength = in.u64("bind length");
            int bindAccess = in.u32("bind access");
            if (w.opcode() == WrOpcode.BIND_MW) // ibv_bind_mw, or IBV_WR_BIND_MW: a window bound to part of an MR (none: unbound)
                w.bindMw(get(mw, MemoryWindow.class), bindRkey, bindMr == Wire.NONE ? null : get(bindMr, MemoryRegion.class), bindAddr,
                        bindLength, bindAccess);
        }
        Wire.Out out = posted(() -> qp.postSend(wrs));
        long now = host.sim.now();
        boolean all = handles.attrs(h, QpCaps.class).sqSigAll();
        for (SendWr w : wrs) {
            long bytes = 0;
            for (Sge g : w.sgList()) bytes += g.length() & 0xFFFFFFFFL;
            traffic.posted(qp.qpNum(), qp.qpType().name(), w.wrId(), bytes, all || (w.sendFlags() & SendFlags.SIGNALED) != 0, now);
        }
        return out;
    }

    private Wire.Out postRecv(Wire.In in, boolean shared) {
        int h = in.u32(shared ? "srq" : "qp");
        Object target = shared ? get(h, SharedReceiveQueue.class) : get(h, QueuePair.class);
        int n = in.count("work requests", 12);
        RecvWr[] wrs = new RecvWr[n];
        for (int i = 0; i < n; i++) wrs[i] = new RecvWr().wrId(in.u64("wr_id")).sgList(sges(in));
        return posted(() -> {
            if (target instanceof SharedReceiveQueue s) s.postRecv(wrs); else ((QueuePair) target).postRecv(wrs);
        });
    }

    /** A post's reply: nothing, or (status and) the index of the first request refused. */
    private static Wire.Out posted(Runnable post) {
        try {
            post.run();
            return new Wire.Out();
        } catch (VerbsException e) {
            throw new Refused(e, Math.max(0, e.badWrIndex()));
        }
    }

    /** A refused post: its errno, and the first request not posted. */
    static final class Refused extends RuntimeException {
        final int errno, badIndex;

        Refused(VerbsException e, int badIndex) {
            super(e.getMessage());
            this.errno = e.errno();
            this.badIndex = badIndex;
        }
    }

    // ---- address handles and SRQs ----

    private Wire.Out createAh(Wire.In in) {
        ProtectionDomain pd = get(in.u32("pd"), ProtectionDomain.class);
        AhAttr a = new AhAttr().dlid(in.u32("dlid")).sl(in.u32("sl"));
        int port = in.u32("port_num");
        a.portNum(port == 0 ? 1 : port).isGlobal(in.u32("is_global") != 0);
        return new Wire.Out().u32(add(pd.createAh(a)));
    }

    private Wire.Out createSrq(Wire.In in) {
        ProtectionDomain pd = get(in.u32("pd"), ProtectionDomain.class);
        int maxWr = in.count32("max_wr"), maxSge = in.count32("max_sge"), limit = in.count32("srq_limit");
        SrqType type = SrqType.of(in.u32("srq_type"));
        Xrcd xrcd = getOrNull(in.u32("xrcd"), Xrcd.class);
        CompletionQueue cq = getOrNull(in.u32("cq"), CompletionQueue.class);
        int maxTags = in.count32("tm max_num_tags"), maxOps = in.count32("tm max_ops");
        SharedReceiveQueue srq = pd.createSrq(new SrqInitAttr().maxWr(maxWr).maxSge(Math.max(1, maxSge)).srqLimit(limit).srqType(type)
                .xrcd(xrcd).cq(cq).tmMaxNumTags(maxTags).tmMaxOps(maxOps));
        int h = handles.add(srq, new SrqCaps(maxWr, Math.max(1, maxSge)));
        return new Wire.Out().u32(h).u32(maxWr).u32(Math.max(1, maxSge)).u32(srq.srqNum());
    }

    /** ibv_post_srq_ops: the handles of the TAG_ADDs come back, in order, or the errno and the index of the one refused. */
    private Wire.Out postSrqOps(Wire.In in) {
        SharedReceiveQueue srq = get(in.u32("srq"), SharedReceiveQueue.class);
        int n = in.count("operations", 52);
        OpsWr[] ops = new OpsWr[n];
        for (int i = 0; i < n; i++) {
            OpsWr o = new OpsWr().wrId(in.u64("wr_id"));
            int opcode = in.u32("opcode");
            try {
                o.opcode(OpsWrOpcode.of(opcode));
            } catch (IllegalArgumentException e) {
                throw new VerbsException(Errno.EINVAL, "post_srq_ops opcode " + opcode + " is not TAG_ADD, TAG_DEL or TAG_SYNC", i);
            }
            o.flags(in.u32("flags")).unexpectedCnt(in.u32("unexpected_cnt")).handle(in.u32("handle")).recvWrId(in.u64("recv_wr_id"))
                    .tag(in.u64("tag")).mask(in.u64("mask"));
            o.sgList(sges(in).toArray(new Sge[0]));
            ops[i] = o;
        }
        posted(() -> srq.postSrqOps(ops)); // a refusal goes back with the index of the operation refused
        Wire.Out ok = new Wire.Out();
        for (OpsWr o : ops) ok.u32(o.opcode() == OpsWrOpcode.TAG_ADD ? o.handle() : 0);
        return ok;
    }

    private Wire.Out modifySrq(Wire.In in) {
        SharedReceiveQueue srq = get(in.u32("srq"), SharedReceiveQueue.class);
        int mask = in.u32("srq_attr_mask");
        int maxWr = in.u32("max_wr"), limit = in.u32("srq_limit"); // each counts only under its mask bit
        if ((mask & SrqAttrMask.MAX_WR) != 0 && maxWr < 0) throw Wire.beyondAnyLimit("modify_srq max_wr", maxWr);
        if ((mask & SrqAttrMask.LIMIT) != 0 && limit < 0) throw Wire.beyondAnyLimit("modify_srq srq_limit", limit);
        srq.modify(new SrqAttr().maxWr(maxWr).srqLimit(limit), mask);
        return new Wire.Out();
    }

    /** Releases everything the program left behind (it exited, or was killed): QPs first, then the rest, then its memory. */
    @Override public void close() {
        wait = null;
        try {
            ctx.close();
            for (Handles.Record r : handles.newestFirst()) // the node's shared domains: after the SRQs and QPs in them
                if (r.attrs instanceof XrcDomains.Shared s) domains.release(s);
        } finally { // the program's pages leave host memory even if the adapter refused a destroy
            registrations.releaseAll();
            if (staging >= 0) host.freePhysical(staging, STAGING);
            staging = -1;
            handles.clear();
            for (ProcMemory m : memories.values()) m.close();
        }
    }

    /** DMA writes the adapter has made into the registered memory of the processes using it so far. */
    long memoryWrites() {
        long n = 0;
        for (ProcMemory m : memories.values()) n += m.writes();
        return n;
    }

    /** DMA accesses to their memory that the kernel refused, and the first one. */
    String memoryFailures() {
        long n = 0;
        String first = null;
        for (ProcMemory m : memories.values()) {
            n += m.failures();
            if (first == null) first = m.firstFailure();
        }
        return n == 0 ? null : n + " (first: " + first + ")";
    }
}
