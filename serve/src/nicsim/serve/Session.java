package nicsim.serve;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;
import nicsim.driver.Host;
import nicsim.verbs.AccessFlags;
import nicsim.verbs.AddressHandle;
import nicsim.verbs.AdviseAdvice;
import nicsim.verbs.AhAttr;
import nicsim.verbs.Context;
import nicsim.verbs.Device;
import nicsim.verbs.DeviceMemory;
import nicsim.verbs.Errno;
import nicsim.verbs.EventType;
import nicsim.verbs.MemoryRegion;
import nicsim.verbs.Mkey;
import nicsim.verbs.MemoryWindow;
import nicsim.verbs.MwType;
import nicsim.verbs.ProtectionDomain;
import nicsim.verbs.QueuePair;
import nicsim.verbs.Sge;
import nicsim.verbs.SharedReceiveQueue;
import nicsim.verbs.VerbsException;
import nicsim.verbs.VerbsObject;
import nicsim.verbs.Xrcd;

/**
 * One attached program's device context: the verbs it asks for, run on its node's adapter through
 * the Java verbs library. Objects are named to the program by handles that are its own; a handle
 * of another program, or of nothing, is EINVAL. Its registered buffers are its own memory, attached
 * to the node's host memory so the adapter's DMA reaches them in place.
 *
 * <p>Runs on the simulator's thread only. A request either answers at once or, for a poll that
 * finds nothing or a read of the clock, leaves the program waiting ({@link Waits})
 * for the simulation to move.
 */
final class Session implements AutoCloseable {
    final int id;
    final Host host;
    /** The program that opened it (a child it forks may use it too: {@link #ends}). */
    final Program program;
    /** Connections to it: its program's, and those of children it forked that used it since. */
    int ends;
    private final Context ctx;
    /** The memory of each process using it, by pid: a buffer registered is the registering process's. */
    private final Map<Integer, ProcMemory> memories = new HashMap<>();
    /** Processes whose memory went (they exited) and whose connections were let go ({@link #memoryGone}). */
    private final Set<Integer> letGo = new HashSet<>();
    /** Its command file's number in the process that opened it (ibv_import_device is given a duplicate of it). */
    final int cmdFd;
    /** The node's XRC domains shared through files, and this program's holds on them, by handle. */
    private final XrcDomains domains;
    /** Its objects by handle, one record each. */
    final Handles handles = new Handles();
    /** Its registered memory, attached to the node's host memory. */
    private final Registrations registrations;
    /** Its async file and completion channels. */
    final EventFiles events;
    /** Its CQs as it polls them, and what it waits for. */
    final Waits waits = new Waits(this);
    /** Its QPs and SRQs. */
    private final QueueVerbs queues = new QueueVerbs(this);
    /** What its QPs moved, in simulated time. */
    final Traffic traffic = new Traffic();
    long requests;

    /**
     * Why its adapter failed (null: it did not). From then on the server answers its every request EIO,
     * and closing it touches the old adapter no more ({@link #fatal}).
     */
    String fatal;

    /**
     * Its adapter faulted ({@code why}) and is being reset, as a device goes fatal under a real
     * program: IBV_EVENT_DEVICE_FATAL on its async file (element: the port, as the kernel names it),
     * and the request it waits in, if any, fails EIO. Then its event files end, as uverbs closes them on
     * disassociation: a thread blocked in ibv_get_cq_event or ibv_get_async_event wakes with EIO.
     */
    void fatal(String why) {
        fatal = why;
        Waits.Wait w = waits.waiting();
        waits.forget();
        if (w != null) w.replyTo().accept(new Wire.Out().u32(0).finish(Errno.EIO));
        events.asyncEvent(1, EventType.DEVICE_FATAL.value());
        events.end();
    }

    /** The process that sent the request being handled. */
    private int requester;

    /** The process whose request is being handled. */
    int requester() { return requester; }

    /**
     * The device context {@code program} opened on {@code host}'s adapter.
     */
    Session(int id, Host host, Program program, int cmdFd, XrcDomains domains, boolean ownRings) throws IOException {
        this.id = id;
        this.host = host;
        this.program = program;
        this.cmdFd = cmdFd;
        this.domains = domains;
        memories.put(program.pid, new ProcMemory(program.pid));
        this.registrations = new Registrations(host);
        this.ctx = ownRings ? null : new Device(host).open();
        this.events = new EventFiles(ctx, handles);
    }

    /**
     * Its Java verbs context; EOPNOTSUPP for a program whose provider drives the device itself (the C
     * driver, unless NICSIM_DRIVER=java): its objects are made by its own commands, and this session
     * answers only the device's queries.
     */
    Context context() {
        if (ctx == null) throw new VerbsException(Errno.EOPNOTSUPP, program + " drives the device through its C "
                + "driver: its objects are its own, not the Java verbs library's");
        return ctx;
    }

    /**
     * Runs one request of process {@code pid} from {@code from}; null when the program now waits (the
     * reply goes to {@code from} later).
     */
    Wire.Out handle(Wire.Op op, Wire.In in, Consumer<ByteBuffer> from, int pid) {
        requests++;
        requester = pid;
        return switch (op) {
            case HELLO, JOIN, EVENTS, CHANNEL, CONTEXTS, CM_OPEN, CM_EVENTS, CM_CMD, UMAD_OPEN, UMAD_EVENTS, UMAD_CMD ->
                throw new Wire.Malformed(op + " on a connection that is already a program's");
            case PCI_OPEN, PCI_CONFIG_READ, PCI_CONFIG_WRITE, PCI_MMIO_READ, PCI_MMIO_WRITE, PCI_DMA_MAP, PCI_DMA_UNMAP,
                 PCI_WAIT, UCTX_OPEN, UCTX_CMD, UCTX_CQ_CHANNEL, PCI_POSTED_RING, UCTX_IMPORT ->
                throw new Wire.Malformed(op + " on a libibverbs context, not a PCI function's connection");
            case QUERY_DEVICE -> DeviceQueries.device(host);
            case QUERY_PORT -> DeviceQueries.port(host, in.read(WireLayout.QueryPortRequest.class).port());
            case CREATE_CQ, DESTROY_CQ, POLL_CQ, RESIZE_CQ, REQ_NOTIFY_CQ, TIME -> waits.handle(op, in, from);
            case CREATE_QP, MODIFY_QP, QUERY_QP, POST_SEND, POST_RECV, CREATE_SRQ, MODIFY_SRQ, QUERY_SRQ,
                 POST_SRQ_RECV, POST_SRQ_OPS -> queues.handle(op, in);
            case DESTROY_QP -> destroy(in, QueuePair.class);
            case DESTROY_SRQ -> destroy(in, SharedReceiveQueue.class);
            case REG_MR, DEREG_MR, REREG_MR, REG_DM_MR, ADVISE_MR, ALLOC_DM, FREE_DM, MEMCPY_TO_DM, MEMCPY_FROM_DM ->
                memory(op, in);
            default -> objects(op, in);
        };
    }

    /** The protection domain's objects: PDs, AHs, XRC domains, mkeys, windows, and imports of them. */
    private Wire.Out objects(Wire.Op op, Wire.In in) {
        return switch (op) {
            case ALLOC_PD -> new Wire.Out(new WireLayout.Handle(add(context().allocPd())));
            case DEALLOC_PD -> destroy(in, ProtectionDomain.class);
            case IMPORT_PD -> { imported(handle(in), ProtectionDomain.class); yield new Wire.Out(); }
            case IMPORT_MR -> {
                MemoryRegion mr = imported(handle(in), MemoryRegion.class);
                yield new Wire.Out(new WireLayout.ImportMrReply(mr.lkey(), mr.rkey(), mr.length()));
            }
            case IMPORT_DM ->
                new Wire.Out(new WireLayout.ImportDmReply(imported(handle(in), DeviceMemory.class).length()));
            case CREATE_AH -> createAh(in);
            case MCAST -> {
                WireLayout.McastRequest q = in.read(WireLayout.McastRequest.class);
                QueuePair qp = get(q.qp(), QueuePair.class);
                byte[] gid = in.bytes(16, "gid");
                if (q.attach()) qp.attachMcast(gid, q.lid());
                else qp.detachMcast(gid, q.lid());
                yield new Wire.Out();
            }
            case DESTROY_AH -> destroy(in, AddressHandle.class);
            case OPEN_XRCD -> openXrcd(in);
            case CLOSE_XRCD -> closeXrcd(handle(in));
            case CREATE_MKEY -> createMkey(in);
            case DESTROY_MKEY -> destroy(in, Mkey.class);
            case ALLOC_MW -> allocMw(in);
            case DEALLOC_MW -> destroy(in, MemoryWindow.class);
            default -> throw new IllegalStateException(op + " has no handler");
        };
    }

    // ---- objects by handle ----

    private int add(Object o) { return handles.add(o, null); }

    /** The handle a request names its object by ({@link WireLayout.Handle}). */
    static int handle(Wire.In in) { return in.read(WireLayout.Handle.class).handle(); }

    <T> T get(int handle, Class<T> type) { return handles.get(handle, type); }

    private <T> T imported(int handle, Class<T> type) { return handles.imported(handle, type); }

    <T> T getOrNull(int handle, Class<T> type) { return handle == Wire.NONE ? null : get(handle, type); }

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

    private Wire.Out destroy(Wire.In in, Class<? extends VerbsObject> type) {
        int h = handle(in);
        VerbsObject o = get(h, type);
        if (o.hasChildren())
            throw new VerbsException(Errno.EBUSY, type.getSimpleName() + " handle " + h
                    + " still has objects made under it");
        o.close();
        handles.remove(h); // no event names it from now on
        return new Wire.Out();
    }

    // ---- XRC domains ----

    /**
     * ibv_open_xrcd: a domain of the program's own, or (given a file) the node's domain of that file,
     * shared with every program that opens it: its handle, then its number on the adapter.
     */
    private Wire.Out openXrcd(Wire.In in) {
        WireLayout.OpenXrcdRequest q = in.read(WireLayout.OpenXrcdRequest.class);
        if (!q.file()) {
            Xrcd own = context().openXrcd();
            return new Wire.Out(new WireLayout.OpenXrcdReply(add(own), own.handle()));
        }
        XrcDomains.Shared s = domains.open(q.dev(), q.ino(), q.oflags());
        // its number: a C driver names it so
        return new Wire.Out(new WireLayout.OpenXrcdReply(handles.add(s.xrcd, s), s.xrcd.handle()));
    }

    private Wire.Out closeXrcd(int h) {
        Xrcd x = get(h, Xrcd.class);
        XrcDomains.Shared s = handles.attrs(h, XrcDomains.Shared.class);
        if (s == null) x.close();
        else domains.close(s);
        handles.remove(h);
        return new Wire.Out();
    }

    // ---- memory regions and device memory ----

    private Wire.Out memory(Wire.Op op, Wire.In in) {
        return switch (op) {
            case REG_MR -> regMr(in);
            case DEREG_MR -> {
                int h = handle(in);
                registrations.deregister(get(h, MemoryRegion.class));
                handles.remove(h);
                yield new Wire.Out();
            }
            case REREG_MR -> reregMr(in);
            case REG_DM_MR -> {
                WireLayout.RegDmMrRequest q = in.read(WireLayout.RegDmMrRequest.class);
                ProtectionDomain pd = get(q.pd(), ProtectionDomain.class);
                DeviceMemory dm = get(q.dm(), DeviceMemory.class);
                MemoryRegion mr = pd.regDmMr(dm, q.dmOffset(), q.length(), q.access());
                yield new Wire.Out(new WireLayout.MrReply(add(mr), mr.lkey(), mr.rkey()));
            }
            case ADVISE_MR -> adviseMr(in);
            case ALLOC_DM -> {
                WireLayout.AllocDmRequest q = in.read(WireLayout.AllocDmRequest.class);
                if (q.length() <= 0 || q.length() > Integer.MAX_VALUE)
                    throw new VerbsException(Errno.EINVAL, "alloc_dm length " + Long.toUnsignedString(q.length()));
                yield new Wire.Out(new WireLayout.Handle(add(context().allocDm(q.length(), q.logAlignReq()))));
            }
            case FREE_DM -> destroy(in, DeviceMemory.class);
            default -> deviceMemory(op, in);
        };
    }

    private Wire.Out deviceMemory(Wire.Op op, Wire.In in) {
        WireLayout.DmCopyRequest q = in.read(WireLayout.DmCopyRequest.class);
        DeviceMemory dm = get(q.dm(), DeviceMemory.class);
        if (op == Wire.Op.MEMCPY_TO_DM) {
            dm.memcpyToDm(q.dmOffset(), in.bytes(q.length(), "data"));
            return new Wire.Out();
        }
        byte[] data = dm.memcpyFromDm(q.dmOffset(), q.length());
        return new Wire.Out().u32(data.length).bytes(data);
    }

    private Wire.Out adviseMr(Wire.In in) {
        WireLayout.AdviseMrRequest q = in.read(WireLayout.AdviseMrRequest.class);
        ProtectionDomain pd = get(q.pd(), ProtectionDomain.class);
        int advice = q.advice();
        AdviseAdvice a = Arrays.stream(AdviseAdvice.values()).filter(x -> x.value() == advice).findFirst()
                .orElseThrow(() -> new VerbsException(Errno.EOPNOTSUPP, "advise_mr advice " + advice
                        + " is not offered"));
        pd.adviseMr(a, q.flags(), QueueVerbs.sges(in).toArray(new Sge[0]));
        return new Wire.Out();
    }

    /** Attaches the program's pages under {@code [addr, addr + length)} to host memory and registers them. */
    private Wire.Out regMr(Wire.In in) {
        WireLayout.RegMrRequest q = in.read(WireLayout.RegMrRequest.class);
        ProtectionDomain pd = get(q.pd(), ProtectionDomain.class);
        long addr = q.addr(), length = q.length(), iova = q.iova();
        int access = q.access();
        // NULL and SIZE_MAX, on demand: implicit ODP
        boolean implicit = addr == 0 && length == -1 && (access & AccessFlags.ON_DEMAND) != 0;
        MemoryRegion mr = implicit
                ? registrations.registerImplicit(requesterMemory(), pd, access)
                : registrations.register(requesterMemory(), pd, addr, length, iova, access);
        return new Wire.Out(new WireLayout.MrReply(add(mr), mr.lkey(), mr.rkey()));
    }

    /** ibv_rereg_mr: the region keeps its handle and gets new keys. */
    private Wire.Out reregMr(Wire.In in) {
        WireLayout.ReregMrRequest q = in.read(WireLayout.ReregMrRequest.class);
        MemoryRegion mr = get(q.mr(), MemoryRegion.class);
        int flags = q.flags();
        ProtectionDomain pd = (flags & MemoryRegion.REREG_CHANGE_PD) != 0 ? get(q.pd(), ProtectionDomain.class) : null;
        registrations.rereg(requesterMemory(), mr, flags, pd, q.addr(), q.length(), q.access());
        return new Wire.Out(new WireLayout.MrKeys(mr.lkey(), mr.rkey()));
    }

    /** Whether QP {@code qpn} is one of this context's. */
    boolean ownsQp(long qpn) { return handles.qp((int) qpn) != null; }

    // ---- address handles, mkeys, windows ----

    private Wire.Out createAh(Wire.In in) {
        WireLayout.CreateAhRequest q = in.read(WireLayout.CreateAhRequest.class);
        ProtectionDomain pd = get(q.pd(), ProtectionDomain.class);
        AhAttr a = new AhAttr().dlid(q.dlid()).sl(q.sl()).portNum(q.portNum() == 0 ? 1 : q.portNum())
                .isGlobal(q.isGlobal()).dgid(in.bytes(16, "dgid"));
        return new Wire.Out(new WireLayout.Handle(add(pd.createAh(a))));
    }

    private Wire.Out createMkey(Wire.In in) {
        WireLayout.CreateMkeyRequest q = in.read(WireLayout.CreateMkeyRequest.class);
        ProtectionDomain pd = get(q.pd(), ProtectionDomain.class);
        int maxEntries = q.maxEntries();
        int flags = q.createFlags();
        if (flags != 1 /* MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT */)
            throw new VerbsException(Errno.EOPNOTSUPP, "mlx5dv_create_mkey create_flags 0x"
                    + Integer.toHexString(flags) + ": only INDIRECT");
        Mkey k = pd.createIndirectMkey(maxEntries);
        return new Wire.Out(new WireLayout.CreateMkeyReply(add(k), k.lkey()));
    }

    private Wire.Out allocMw(Wire.In in) {
        WireLayout.AllocMwRequest q = in.read(WireLayout.AllocMwRequest.class);
        ProtectionDomain pd = get(q.pd(), ProtectionDomain.class);
        int type = q.type();
        MwType t;
        try {
            t = MwType.of(type);
        } catch (IllegalArgumentException e) {
            throw new VerbsException(Errno.EINVAL, "alloc_mw type " + Integer.toUnsignedString(type)
                    + " is neither IBV_MW_TYPE_1 nor _2");
        }
        MemoryWindow mw = pd.allocMw(t);
        return new Wire.Out(new WireLayout.AllocMwReply(add(mw), mw.rkey()));
    }

    /** Releases what the program left behind (it exited, or was killed): QPs first, then the rest, then its memory. */
    @Override public void close() {
        waits.forget();
        if (fatal != null) { // the adapter it used was reset: its objects went with it; only memory is let go
            handles.clear();
            for (ProcMemory m : memories.values()) m.close();
            return;
        }
        try {
            if (ctx != null) ctx.close();
            for (Handles.Record r : handles.newestFirst()) // the node's shared domains: after the SRQs and QPs in them
                if (r.attrs instanceof XrcDomains.Shared s) domains.release(s);
        } finally { // the program's pages leave host memory even if the adapter refused a destroy
            registrations.releaseAll();
            queues.release();
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

    /**
     * Whether process {@code pid}'s memory is released (it exits: Linux removes a killed process's memory before its
     * files close) and its connections are not let go yet ({@link #letGo}).
     */
    boolean memoryGone(int pid) {
        ProcMemory m = memories.get(pid);
        return m != null && m.gone() && !letGo.contains(pid);
    }

    /** The processes using it whose memory is gone and whose connections are not let go yet. */
    List<Integer> memoryGone() {
        List<Integer> out = new ArrayList<>();
        for (int pid : memories.keySet()) if (memoryGone(pid)) out.add(pid);
        return out;
    }

    /** Whether a process using it has its memory gone and its connections not let go yet (no list made). */
    boolean anyMemoryGone() {
        for (int pid : memories.keySet()) if (memoryGone(pid)) return true;
        return false;
    }

    /** Process {@code pid}'s connections were let go as it exited: its gone memory stops nothing any more. */
    void letGo(int pid) { letGo.add(pid); }

    /** Its processes' memory, while simulated time moves: held, or settled ({@link ProcMemory#hold}). */
    void holdMemory(boolean hold) {
        for (ProcMemory m : memories.values()) if (hold) m.hold(); else m.settle();
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
