package nicsim.serve;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Consumer;
import java.util.function.IntConsumer;
import nicsim.abi.BigEndian;
import nicsim.abi.Cmd;
import nicsim.abi.EqeType;
import nicsim.driver.Driver;
import nicsim.verbs.DeviceCodes;
import nicsim.verbs.Errno;
import nicsim.verbs.VerbsException;

/**
 * What the kernel keeps of one process's user context on an adapter it brought up (the Java
 * driver probed it), as mlx5's DEVX does for commands a provider builds itself: the commands are
 * the device's own, run through the kernel's command queue; the objects they make are the
 * context's, and only its commands may name or destroy them; its UAR pages are the only BAR0 it
 * may write; a CQ's MSI-X vector is the kernel's to choose, and its interrupts are handed to the
 * context. When the process goes, what it left is destroyed, newest first. Simulator thread only.
 */
final class UserContext {
    /** Each creating command's destroying one; the handle is output word 0, and the destroy's input word 0. */
    private static final Map<Integer, Integer> DESTROYS = Map.ofEntries(
            Map.entry(Cmd.ALLOC_UAR, Cmd.DEALLOC_UAR), Map.entry(Cmd.ALLOC_PD, Cmd.DEALLOC_PD),
            Map.entry(Cmd.CREATE_MKEY, Cmd.DESTROY_MKEY), Map.entry(Cmd.CREATE_IMPLICIT_MKEY, Cmd.DESTROY_MKEY),
            Map.entry(Cmd.CREATE_INDIRECT_MKEY, Cmd.DESTROY_MKEY),
            Map.entry(Cmd.ALLOC_MW, Cmd.DEALLOC_MW), Map.entry(Cmd.CREATE_CQ, Cmd.DESTROY_CQ),
            Map.entry(Cmd.CREATE_QP, Cmd.DESTROY_QP), Map.entry(Cmd.CREATE_SRQ, Cmd.DESTROY_SRQ),
            Map.entry(Cmd.CREATE_XRC_SRQ, Cmd.DESTROY_SRQ), Map.entry(Cmd.CREATE_TM_SRQ, Cmd.DESTROY_SRQ),
            Map.entry(Cmd.ALLOC_XRCD, Cmd.DEALLOC_XRCD), Map.entry(Cmd.ALLOC_DM, Cmd.DEALLOC_DM));
    /** Commands that act on one object named by input word 0, of the kind its creating command makes. */
    private static final Map<Integer, Integer> ACTS_ON = Map.of(Cmd.MODIFY_QP, Cmd.DESTROY_QP, Cmd.QUERY_QP,
            Cmd.DESTROY_QP, Cmd.RESIZE_CQ, Cmd.DESTROY_CQ, Cmd.ARM_SRQ, Cmd.DESTROY_SRQ, Cmd.QUERY_SRQ, Cmd.DESTROY_SRQ,
            Cmd.REREG_MKEY, Cmd.DESTROY_MKEY, Cmd.ATTACH_MCAST, Cmd.DESTROY_QP, Cmd.DETACH_MCAST, Cmd.DESTROY_QP);
    /** Commands that change the adapter as a whole: the kernel's alone. */
    private static final List<Integer> KERNEL_ONLY = List.of(Cmd.INIT_HCA, Cmd.TEARDOWN_HCA, Cmd.MODIFY_PORT);
    private static final int CREATE_CQ_VECTOR = 3, CREATE_MKEY_LENGTH = 2, MODIFY_QP_STATE = 3;

    private final Driver driver;
    /** Processes holding it: the opener, and those that imported it (ibv_import_device); it goes with the last. */
    private int holders = 1;
    /**
     * Its objects by kind and handle ({@link #key}): ordered so that one kind's handles lie together (device
     * memory is found by offset from the nearest allocation below it); {@link Obj#made} says which is newest.
     */
    private final TreeMap<Long, Obj> objects = new TreeMap<>();
    /** Objects made so far: the next one's {@link Obj#made}. */
    private long made;
    /** The libibverbs session whose completion channels its CQs' events go to, or null. */
    private final Session session;

    private record Vector(int number, IntConsumer handler) {}

    /**
     * What the kernel keeps of one of its objects: the command that destroys it and its handle, when it
     * was made, an MR's or device memory's length (0 for others), the kernel's paging of an implicit
     * on-demand MR (else null), a CQ's interrupt handler and vector (else null) and its completion channel
     * (its number in the session; null until one is named).
     */
    private static final class Obj {
        final int destroy;
        final long handle, made, length;
        final ImplicitPages pages;
        final Vector vector;
        Integer channel;

        Obj(int destroy, long handle, long made, long length, ImplicitPages pages, Vector vector) {
            this.destroy = destroy;
            this.handle = handle;
            this.made = made;
            this.length = length;
            this.pages = pages;
            this.vector = vector;
        }
    }

    /** The process that opened it: its QPs' owner for the kernel's QP counters. */
    private final int pid;

    /**
     * A context on {@code driver}'s adapter, opened by process {@code pid}; {@code session}'s completion
     * channels take its CQs' events.
     */
    UserContext(Driver driver, Session session, int pid) {
        this.driver = driver;
        this.session = session;
        this.pid = pid;
        this.asyncEvents = this::asyncEvent;
        if (session != null) driver.onEvent(asyncEvents);
    }

    /**
     * The adapter's async events (its event queue's, as the kernel takes them) for this context's
     * objects, and the port's, written to the session's async file naming the object by its number.
     */
    private void asyncEvent(long[] e) {
        int type = DeviceCodes.verbs(EqeType.of((int) e[0])).value(); // the device's type as libibverbs numbers it
        long resource = e[1] & 0xFFFFFF;
        Integer kind = eventKind(type);
        if (kind == null || objects.containsKey(key(kind, resource))) session.events.asyncEvent(resource, type);
    }

    /** Its listener on the kernel's event queue. */
    private final Consumer<long[]> asyncEvents;

    /** The destroying command of the kind of object an event of libibverbs' {@code type} names; null: a port's. */
    private static Integer eventKind(int type) {
        return switch (type) {
            case 0 /* CQ_ERR */ -> Cmd.DESTROY_CQ;
            case 1, 2, 3, 4, 5, 6, 7, 16 /* QP events, LAST_WQE_REACHED */ -> Cmd.DESTROY_QP;
            case 14, 15 /* SRQ_ERR, SRQ_LIMIT_REACHED */ -> Cmd.DESTROY_SRQ;
            default -> null;
        };
    }

    /** UCTX_CQ_CHANNEL: CQ {@code cqn}'s events go to completion channel {@code channel} of the session. */
    void channel(long cqn, int channel) {
        if (!objects.containsKey(key(Cmd.DESTROY_CQ, cqn)))
            throw new VerbsException(Errno.EPERM, String.format("CQ 0x%x is not this context's", cqn));
        if (session == null) throw new VerbsException(Errno.EINVAL, "this user context names no libibverbs session");
        session.events.channel(channel); // EINVAL unless the program registered it
        objects.get(key(Cmd.DESTROY_CQ, cqn)).channel = channel;
    }

    /** Another process holds it now (it imported the context): objects are shared, as a uverbs file's are. */
    UserContext join() {
        holders++;
        return this;
    }

    /** A process let go of it: whether it was the last (then {@link #release} destroys what is left). */
    boolean leave() { return --holders == 0; }

    /** Whether QP {@code qpn} is one of its objects (the watchdog names a C driver's QPs so). */
    boolean ownsQp(long qpn) { return objects.containsKey(key(Cmd.DESTROY_QP, qpn)); }

    /**
     * The handles of its objects that {@code destroy} destroys (QPNs for DESTROY_QP, say), oldest first, for
     * RDMA_RES.
     */
    List<Long> owned(int destroy) {
        List<Obj> kind = new ArrayList<>(objects.subMap(key(destroy, 0), key(destroy + 1, 0)).values());
        kind.sort(Comparator.comparingLong(o -> o.made));
        List<Long> out = new ArrayList<>();
        for (Obj o : kind) out.add(o.handle);
        return out;
    }

    /** Whether it belongs to libibverbs session {@code s}. */
    boolean of(Session s) { return session == s; }

    /**
     * UCTX_IMPORT: whether the context has an object of the kind {@code destroy} destroys under
     * {@code handle} (ENOENT if none; EINVAL if the handle is another kind's, as uverbs answers), and
     * its length (an MR's or device memory's; 0 for others).
     */
    long imported(int destroy, long handle) {
        Obj o = objects.get(key(destroy, handle));
        if (o == null) {
            for (int d : DESTROYS.values())
                if (objects.containsKey(key(d, handle)))
                    throw new VerbsException(Errno.EINVAL, String.format("0x%x is a handle of another kind", handle));
            throw new VerbsException(Errno.ENOENT, String.format("no object of this context has handle 0x%x", handle));
        }
        return o.length;
    }

    /** CQ {@code cqn}'s vector fired: the waits of the process that made it, and its channel, if any, are told. */
    private void fired(long cqn, int asked, IntConsumer interrupt) {
        interrupt.accept(asked);
        Obj cq = objects.get(key(Cmd.DESTROY_CQ, cqn));
        if (cq != null && cq.channel != null && session != null) session.events.cqEvent(cq.channel, cqn);
    }

    private static long key(int destroy, long handle) { return (long) destroy << 32 | handle & 0xFFFF_FFFFL; }

    /** Whether it may write BAR0 {@code [offset, offset + length)}: one of its UAR pages, or its device memory. */
    boolean mayWrite(long offset, int length) {
        var caps = driver.caps();
        long page = caps.uarPageSize(), rel = offset - caps.uarBase();
        boolean inPage = rel >= 0 && page > 0 && rel % page + length <= page;
        if (inPage && objects.containsKey(key(Cmd.DEALLOC_UAR, rel / page))) return true;
        return inOwnDm(offset, length);
    }

    /**
     * Whether BAR0 {@code [offset, offset + length)} lies in device memory it allocated: it may write and
     * read there, as mlx5 maps a provider's device memory into the process.
     */
    boolean inOwnDm(long offset, int length) {
        long rel = offset - driver.caps().dmBase();
        if (rel < 0 || rel > 0xFFFF_FFFFL) return false;
        // an allocation's handle is its offset from dmBase: the nearest one at or below rel
        var a = objects.floorEntry(key(Cmd.DEALLOC_DM, rel));
        Obj dm = a == null ? null : a.getValue();
        return dm != null && dm.destroy == Cmd.DEALLOC_DM && rel + length <= dm.handle + dm.length;
    }

    /**
     * Runs command {@code opcode} with input words {@code in} for this context, from the process whose
     * waits {@code interrupt} wakes and whose memory {@code pages} maps: its output header and {@code
     * nout} words. EPERM for a command that is the kernel's, or that names an object of another context.
     */
    long[] run(int opcode, long[] in, int nout, IntConsumer interrupt, ImplicitPages pages) {
        if (opcode == Cmd.QUERY_HCA_CAP) return cachedCaps(nout);
        if (KERNEL_ONLY.contains(opcode))
            throw new VerbsException(Errno.EPERM, Cmd.opcodeName(opcode) + " is the kernel's command, not a context's");
        Integer destroyOf = DESTROYS.containsValue(opcode) ? Integer.valueOf(opcode) : ACTS_ON.get(opcode);
        if (destroyOf != null && (in.length == 0 || !objects.containsKey(key(destroyOf, in[0]))))
            throw new VerbsException(Errno.EPERM, String.format("%s of 0x%x: not an object of this context",
                    Cmd.opcodeName(opcode), in.length == 0 ? -1 : in[0]));
        Vector v = null;
        long[] cqn = null;
        if (opcode == Cmd.CREATE_CQ && in.length > CREATE_CQ_VECTOR) {
            int asked = (int) in[CREATE_CQ_VECTOR];
            cqn = new long[]{-1};
            long[] named = cqn;
            IntConsumer h = x -> fired(named[0], asked, interrupt);
            v = new Vector(driver.claimVector(h), h);
            in = in.clone();
            in[CREATE_CQ_VECTOR] = v.number();
        }
        long[] out = execute(opcode, in, nout);
        boolean ok = out[0] >>> 32 == 0;
        Integer destroy = DESTROYS.get(opcode);
        if (ok && destroy != null) {
            long handle = out[Cmd.OUT_HEADER_WORDS];
            // device memory's length is its input word 0; an MR's, CREATE_MKEY's word 2
            long length = opcode == Cmd.ALLOC_DM ? in[0] : opcode == Cmd.CREATE_MKEY ? in[CREATE_MKEY_LENGTH] : 0;
            ImplicitPages paged = opcode == Cmd.CREATE_IMPLICIT_MKEY ? pages : null;
            objects.put(key(destroy, handle), new Obj(destroy, handle & 0xFFFF_FFFFL, made++, length, paged, v));
            if (paged != null) // the kernel pages for it, as mlx5_ib does for implicit ODP
                driver.implicitRegistered(handle >>> 8, pages.pager(handle));
            if (opcode == Cmd.CREATE_QP && session != null) session.traffic.own(driver.host(), handle);
            if (cqn != null) cqn[0] = handle;
        } else if (v != null) {
            driver.releaseVector(v.number(), v.handler());
        }
        if (ok && DESTROYS.containsValue(opcode)) gone(opcode, in[0]);
        if (ok && opcode == Cmd.MODIFY_QP && in.length > MODIFY_QP_STATE) // the kernel's auto-mode counter binding
            driver.host().qpCounters().modified(in[0], in[1], (int) in[MODIFY_QP_STATE], pid);
        return out;
    }

    /**
     * QUERY_HCA_CAP, answered from what the kernel read at probe time (as mlx5_ib answers a provider's
     * query from its cached capabilities): the adapter runs no command for it.
     */
    private long[] cachedCaps(int nout) {
        byte[] caps = Cmd.encode(Cmd.HCA_CAP, driver.caps());
        long[] out = new long[Cmd.OUT_HEADER_WORDS + nout];
        for (int i = 0; i < nout && 8 * i + 8 <= caps.length; i++)
            out[Cmd.OUT_HEADER_WORDS + i] = BigEndian.get64(caps, 8 * i);
        return out;
    }

    private void gone(int destroy, long handle) {
        Obj o = objects.remove(key(destroy, handle));
        if (destroy == Cmd.DESTROY_QP) driver.host().qpCounters().destroyed(handle);
        if (o == null) return;
        if (o.pages != null) {
            driver.implicitDeregistered(handle >>> 8);
            o.pages.drop(handle);
        }
        if (o.vector != null) driver.releaseVector(o.vector.number(), o.vector.handler());
    }

    /** Its commands the adapter refused as malformed, not yet told. */
    private final List<String> refusals = new ArrayList<>();

    /** Its commands refused as malformed since last asked (the sanitizer's reports). */
    List<String> takeRefusals() {
        List<String> out = new ArrayList<>(refusals);
        refusals.clear();
        return out;
    }

    private long[] execute(int opcode, long[] in, int nout) {
        byte[] bytes = new byte[in.length * 8];
        for (int i = 0; i < in.length; i++) BigEndian.put64(bytes, 8 * i, in[i]);
        var refused = driver.host().firmware.refusedCommands();
        int before = refused.size();
        byte[] raw = driver.raw(opcode, bytes, (Cmd.OUT_HEADER_WORDS + nout) * 8);
        refusals.addAll(refused.subList(before, refused.size()));
        long[] out = new long[Cmd.OUT_HEADER_WORDS + nout];
        for (int i = 0; i < out.length; i++) out[i] = BigEndian.get64(raw, 8 * i);
        return out;
    }

    /** Objects it still has. */
    int objectsLeft() { return objects.size(); }

    /** Destroys what it left, newest first (QPs before their CQs and PD): the commands the adapter refused. */
    List<String> release() {
        driver.removeEventListener(asyncEvents);
        List<String> refused = new ArrayList<>();
        List<Obj> left = new ArrayList<>(objects.values());
        left.sort(Comparator.comparingLong((Obj o) -> o.made).reversed());
        for (Obj o : left) {
            int destroy = o.destroy;
            long handle = o.handle;
            long[] out = execute(destroy, new long[]{handle}, 0);
            if (out[0] >>> 32 != 0)
                refused.add(String.format("%s of 0x%x: status 0x%x", Cmd.opcodeName(destroy), handle, out[0] >>> 32));
            gone(destroy, handle);
        }
        objects.clear();
        return refused;
    }
}
