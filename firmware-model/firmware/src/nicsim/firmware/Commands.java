package nicsim.firmware;

import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;
import nicsim.abi.BigEndian;
import nicsim.abi.Cmd;
import nicsim.abi.Cqe64;
import nicsim.abi.CqeTmFlags;
import nicsim.abi.DcRole;
import nicsim.abi.EqeType;
import nicsim.abi.MtuCode;
import nicsim.abi.ServiceType;
import nicsim.abi.Vendor;
import nicsim.abi.WqeFormat;
import nicsim.host.PciPort;
import nicsim.sim.Layout;

/**
 * The command interface ({@link Cmd}): the driver writes a command entry in host memory and rings
 * {@link Cmd#REG_CMD_DOORBELL}; firmware reads the entry and its input mailbox by DMA, executes
 * the command against the resource tables after the profile's command latency, writes the output
 * mailbox and hands the entry back. One command at a time.
 */
final class Commands {
    static final int MAX_SGE = 16, MAX_INLINE = 512, MAX_RD_ATOMIC = 16;

    private final Firmware fw;
    private final MemoryCommands memory;
    private final long latency;
    private long queueAddr = -1;
    private int errors;
    private boolean busy, initialized;
    /** A CQ's ring holds cqe + 1 entries rounded up to a power of two, 2^22 at most (as mlx5's log_max_cq_sz). */
    private final int maxQp, maxQpWr = 1 << 15, maxCqe = (1 << 22) - 1;
    private final Table<Boolean> uars, pds;
    /** XRC domains by number. */
    private final Table<XrcDomain> xrcds = new Table<>(1, 1 << 16, Cmd.Syndrome.OUT_OF_XRCDS, false);

    /** An XRC domain: how many XRC SRQs and target QPs use it (it is not freed under them). */
    private static final class XrcDomain {
        int users;
    }
    // QPNs index the doorbell decoder's queue table by their low bits: one live QP per entry
    private int qpSerial, qpIndexCursor;
    private final Set<Integer> qpIndexUsed = new HashSet<>();

    Commands(Firmware fw, int maxQp, int maxUar) {
        this.fw = fw;
        this.memory = new MemoryCommands(fw, this);
        this.latency = fw.cfg.commandLatencyPs();
        this.maxQp = maxQp;
        this.uars = new Table<>(1, maxUar, Cmd.Syndrome.OUT_OF_UARS, false);
        this.pds = new Table<>(1, 1 << 16, Cmd.Syndrome.OUT_OF_PDS, false);
    }

    /** Whether INIT_HCA has run and no TEARDOWN_HCA since. */
    boolean initialized() { return initialized; }

    /**
     * {@link Cmd#REG_CMD_ERRORS}: register writes, command doorbells and entries refused before a command could run.
     */
    int errors() { return errors; }

    /** A write to no initialization register counts as an error too. */
    void refusedWrite() { errors++; }

    /** {@link Cmd#REG_CMDQ_ADDR}. */
    void setQueue(long addr) { queueAddr = addr; }

    /** {@link Cmd#REG_CMD_DOORBELL}: reads the command entry. */
    void doorbell() {
        if (queueAddr < 0 || busy) {
            errors++;
            fw.report(queueAddr < 0 ? "command doorbell before the command queue address was set"
                    : "command doorbell while a command is executing");
            return;
        }
        busy = true;
        fw.adapter.port().dmaRead(queueAddr, Cmd.ENTRY_BYTES, r -> {
            if (r.status() != PciPort.DmaStatus.OK) {
                busy = false;
                errors++;
                fw.report(String.format("command entry at 0x%x unreadable: %s", queueAddr, r.status()));
                return;
            }
            readInput(r.data());
        });
    }

    private void readInput(byte[] entry) {
        int opcode = (int) BigEndian.get32(entry, Cmd.ENTRY_OPCODE);
        int inLen = (int) BigEndian.get32(entry, Cmd.ENTRY_IN_LEN);
        int outLen = (int) BigEndian.get32(entry, Cmd.ENTRY_OUT_LEN);
        long inAddr = BigEndian.get64(entry, Cmd.ENTRY_IN_ADDR), outAddr = BigEndian.get64(entry, Cmd.ENTRY_OUT_ADDR);
        if (inLen < 0 || inLen > 4096 || outLen < Cmd.OUT_HEADER_WORDS * 8 || outLen > 4096) {
            errors++;
            fw.report(String.format("command %s: mailbox lengths in %d / out %d out of range", Cmd.opcodeName(opcode),
                    inLen, outLen));
            if (outLen >= Cmd.OUT_HEADER_WORDS * 8 && outLen <= 4096)
                finish(outAddr, outLen, Cmd.output(Cmd.Syndrome.BAD_INPUT_LENGTH, inLen, Cmd.EMPTY, null));
            else busy = false;
            return;
        }
        // a tag-list operation takes the path mlx5 gives it (a send queue of the SRQ's own), not a firmware command's
        long delay = opcode == Cmd.TM_OP && fw.tm != null ? fw.tm.opLatency() : latency;
        Consumer<byte[]> run = in -> fw.sim.scheduleIn(delay, () -> {
            answer = out -> {
                if (out.length > outLen) out = Cmd.output(Cmd.Syndrome.BAD_OUTPUT_LENGTH, out.length, Cmd.EMPTY, null);
                finish(outAddr, outLen, out);
            };
            byte[] out;
            try {
                out = execute(opcode, in);
            } catch (CommandRefused f) {
                out = Cmd.output(f.syndrome, f.detail, Cmd.EMPTY, null);
                if (MALFORMED.contains(f.syndrome.status))
                    refusals.add(String.format("at %.3f us: %s refused: %s, syndrome %s (%s), value 0x%x",
                            fw.sim.now() / 1e6, Cmd.opcodeName(opcode), f.syndrome.status, f.syndrome, f.syndrome.text,
                            f.detail));
            }
            fw.stats.inc(FirmwareStat.COMMANDS);
            if (out != null) answer.accept(out); // null: the command answers later, when what it waits for is done
        });
        if (inLen == 0) run.accept(new byte[0]);
        else fw.adapter.port().dmaRead(inAddr, inLen, r -> {
            if (r.status() != PciPort.DmaStatus.OK)
                finish(outAddr, outLen, Cmd.output(Cmd.Syndrome.MAILBOX_DMA, inAddr, Cmd.EMPTY, null));
            else run.accept(r.data());
        });
    }

    /**
     * Each command refused as malformed so far, for the sanitizer: when, which, its status, syndrome and
     * the value it named. A refusal of the adapter's state (busy, out of room, a QP in the wrong state)
     * is not a driver's malformed command, and is not kept.
     */
    final List<String> refusals = new ArrayList<>();
    private static final Set<Cmd.Status> MALFORMED = EnumSet.of(Cmd.Status.BAD_OP,
            Cmd.Status.BAD_PARAM, Cmd.Status.BAD_RESOURCE, Cmd.Status.BAD_INDEX, Cmd.Status.BAD_SIZE,
            Cmd.Status.BAD_INPUT_LEN, Cmd.Status.BAD_OUTPUT_LEN);

    /** How the running command answers: its output mailbox, once its output is known. */
    private Consumer<byte[]> answer;

    private void finish(long outAddr, int outLen, byte[] out) {
        Cmd.Status st = Cmd.Status.of((int) (BigEndian.get64(out, 0) >>> 32));
        if (st != Cmd.Status.OK) fw.stats.inc(FirmwareStat.COMMANDS_FAILED);
        fw.adapter.port().dmaWrite(outAddr, out, r -> {});
        fw.adapter.port().dmaWrite(queueAddr + Cmd.ENTRY_OWNER, new byte[]{0}, r -> busy = false);
    }

    static <T> T in(Layout<T> l, byte[] in) {
        if (in.length != Cmd.bytes(l)) throw new CommandRefused(Cmd.Syndrome.BAD_INPUT_LENGTH, in.length);
        try {
            return Cmd.decode(l, in, 0);
        } catch (IllegalArgumentException e) {
            throw new CommandRefused(Cmd.Syndrome.BAD_ATTRIBUTE, 0);
        }
    }

    static <T> byte[] ok(Layout<T> l, T result) { return Cmd.output(Cmd.Syndrome.NONE, 0, l, result); }

    static byte[] ok() { return ok(Cmd.EMPTY, null); }

    static byte[] handle(long h) { return ok(Cmd.HANDLE, new Cmd.Handle(h)); }

    private byte[] execute(int opcode, byte[] input) {
        if (opcode != Cmd.INIT_HCA && opcode != Cmd.QUERY_HCA_CAP && !initialized)
            throw new CommandRefused(Cmd.Syndrome.NOT_INITIALIZED, opcode);
        return switch (opcode) {
            case Cmd.QUERY_HCA_CAP -> { in(Cmd.EMPTY, input); yield ok(Cmd.HCA_CAP, capabilities()); }
            case Cmd.INIT_HCA -> { init(in(Cmd.INIT_HCA_IN, input)); yield ok(); }
            case Cmd.TEARDOWN_HCA -> { in(Cmd.EMPTY, input); teardown(); yield ok(); }
            case Cmd.ALLOC_UAR -> { in(Cmd.EMPTY, input); yield handle(uars.add(true)); }
            case Cmd.DEALLOC_UAR -> { deallocUar(in(Cmd.HANDLE, input).handle()); yield ok(); }
            case Cmd.ALLOC_PD -> { in(Cmd.EMPTY, input); yield handle(pds.add(true)); }
            case Cmd.DEALLOC_PD -> { deallocPd(in(Cmd.HANDLE, input).handle()); yield ok(); }
            case Cmd.CREATE_CQ -> handle(createCq(in(Cmd.CREATE_CQ_IN, input)));
            case Cmd.RESIZE_CQ -> resizeCq(in(Cmd.RESIZE_CQ_IN, input));
            case Cmd.DESTROY_CQ -> destroyCq(in(Cmd.HANDLE, input).handle());
            case Cmd.CREATE_QP -> handle(createQp(in(Cmd.CREATE_QP_IN, input)));
            case Cmd.DESTROY_QP -> { destroyQp(in(Cmd.HANDLE, input).handle()); yield ok(); }
            case Cmd.MODIFY_QP -> {
                Cmd.QpAttrs a = in(Cmd.QP_ATTRS, input);
                qp(a.qpn()).modify(a);
                yield ok();
            }
            case Cmd.QUERY_QP -> ok(Cmd.QP_ATTRS, qp(in(Cmd.HANDLE, input).handle()).query());
            case Cmd.CREATE_SRQ -> handle(createSrq(in(Cmd.CREATE_SRQ_IN, input)));
            case Cmd.CREATE_XRC_SRQ -> handle(createXrcSrq(in(Cmd.CREATE_XRC_SRQ_IN, input)));
            case Cmd.CREATE_TM_SRQ -> handle(createTmSrq(in(Cmd.CREATE_TM_SRQ_IN, input)));
            case Cmd.TM_OP -> handle(tmOp(in(Cmd.TM_OP_IN, input)));
            case Cmd.ALLOC_XRCD -> { in(Cmd.EMPTY, input); yield handle(xrcds.add(new XrcDomain())); }
            case Cmd.DEALLOC_XRCD -> { deallocXrcd(in(Cmd.HANDLE, input).handle()); yield ok(); }
            case Cmd.ARM_SRQ -> {
                Cmd.ArmSrq a = in(Cmd.ARM_SRQ_IN, input);
                Srq q = srq(a.srqn());
                if (a.limit() > q.ring.size) throw new CommandRefused(Cmd.Syndrome.BAD_LIMIT, a.limit());
                q.limit = (int) a.limit();
                yield ok();
            }
            // its limit: 0 once the event fired
            case Cmd.QUERY_SRQ -> handle(srq(in(Cmd.HANDLE, input).handle()).limit);
            case Cmd.DESTROY_SRQ -> { destroySrq(in(Cmd.HANDLE, input).handle()); yield ok(); }
            case Cmd.ATTACH_MCAST -> { fw.multicast.attach(in(Cmd.MCAST_ATTACH_IN, input)); yield ok(); }
            case Cmd.DETACH_MCAST -> { fw.multicast.detach(in(Cmd.MCAST_ATTACH_IN, input)); yield ok(); }
            case Cmd.MODIFY_PORT -> ok(Cmd.PORT_CAPS, new Cmd.PortCaps(fw.management.modifyPort(in(Cmd.MODIFY_PORT_IN,
                    input))));
            case Cmd.ALLOC_Q_COUNTER, Cmd.DEALLOC_Q_COUNTER, Cmd.QUERY_Q_COUNTER, Cmd.SET_QP_COUNTER ->
                    fw.qCounters.execute(opcode, input);
            default -> memory.execute(opcode, input, answer);
        };
    }

    // ------------------------------------------------------------------ the adapter

    private Cmd.HcaCap capabilities() {
        int maxMtu = fw.fabric == null ? 4096 : fw.fabric.maxMtu();
        return new Cmd.HcaCap(maxQp - 1, fw.cqs.limit() - 1, fw.keys.limit() - 1, pds.limit() - 1, uars.limit() - 1,
                maxQpWr, maxCqe, MAX_SGE, MAX_INLINE, MtuCode.of(Integer.numberOfTrailingZeros(maxMtu) - 7).value(),
                fw.lid(), MAX_RD_ATOMIC, fw.maxMsg,
                fw.adapter.deviceMemory().size(), fw.adapter.parameters().doorbell().windowBase(),
                fw.adapter.parameters().doorbell().pageSize(),
                fw.adapter.parameters().dm().barOffsetBytes(), fw.adapter.blueFlameBytes(),
                maxPageShift(), fw.management.smLid(),
                fw.management.guid());
    }

    /**
     * The largest translation page (log2) a driver should register pinned memory in: the profile's
     * {@code mtt.page.max}, up to 2 MB; 4 KiB pages without it (the adapter takes 12..21 either way).
     */
    private int maxPageShift() {
        long most = fw.cfg.mttPageMaxBytes();
        if (most == 0) return Cmd.MIN_PAGE_SHIFT;
        return Math.max(Cmd.MIN_PAGE_SHIFT, Math.min(Cmd.MAX_PAGE_SHIFT, 63 - Long.numberOfLeadingZeros(most)));
    }

    private void init(Cmd.InitHca h) {
        if (initialized) throw new CommandRefused(Cmd.Syndrome.ALREADY_INITIALIZED, 0);
        if ((h.eqAddr() & 63) != 0 || (h.mttAddr() & 7) != 0)
            throw new CommandRefused(Cmd.Syndrome.BAD_ADDRESS, h.eqAddr());
        if (h.eqLogSize() < 1 || h.eqLogSize() > 16)
            throw new CommandRefused(Cmd.Syndrome.BAD_QUEUE_SIZE, h.eqLogSize());
        fw.events.init(h.eqAddr(), (int) h.eqLogSize());
        fw.mttFill.tableAddr = h.mttAddr();
        fw.mttFill.space.reset(h.mttEntries());
        fw.sqContexts.qpcAddr = h.qpcAddr() == 0 ? -1 : h.qpcAddr();
        fw.keys.mkcAddr = h.mkcAddr() == 0 ? -1 : h.mkcAddr();
        initialized = true;
        uars.put(0, true); // UAR 0 belongs to the driver itself
        // a driver assumes its port ACTIVE until told otherwise: a link down already is its first event
        if (!fw.linkUp()) fw.event(EqeType.PORT_ERR, Firmware.PORT);
    }

    /** Adds the PDs, UARs (the driver's own UAR 0 among them) and XRC domains alive now to {@code into}. */
    void objects(Map<String, Integer> into) {
        into.put("PDs", pds.all().size());
        into.put("UARs", uars.all().size());
        into.put("XRCDs", xrcds.all().size());
    }

    /** The PDs alive, by number (for {@link Resources}). */
    List<Long> pds() {
        List<Long> out = new ArrayList<>();
        for (long n = 1; out.size() < pds.all().size() && n < pds.limit(); n++) if (pds.has(n)) out.add(n);
        return List.copyOf(out);
    }

    /** TEARDOWN_HCA: refused while any object lives; then the adapter waits for INIT_HCA again. */
    private void teardown() {
        long left = fw.qps.size() + fw.cqs.all().size() + fw.srqs.all().size() + fw.keys.live() + pds.all().size()
                + (uars.all().size() - 1) + xrcds.all().size() + fw.adapter.deviceMemory().allocations();
        if (left > 0) throw new CommandRefused(Cmd.Syndrome.OBJECTS_LEFT, left);
        uars.remove(0);
        fw.qCounters.clear();
        fw.events.stop();
        initialized = false;
    }

    // ------------------------------------------------------------------ UARs and PDs

    private void deallocUar(long u) {
        checkUar(u);
        for (Qp q : fw.qps.values()) if (q.uar == u) throw new CommandRefused(Cmd.Syndrome.UAR_IN_USE, u);
        uars.remove(u);
    }

    private void deallocPd(long pd) {
        checkPd(pd);
        for (Qp q : fw.qps.values()) if (q.pd == pd) throw new CommandRefused(Cmd.Syndrome.PD_IN_USE, pd);
        if (fw.keys.usePd(pd)) throw new CommandRefused(Cmd.Syndrome.PD_IN_USE, pd);
        pds.remove(pd);
    }

    void checkPd(long pd) {
        if (pd <= 0 || !pds.has(pd)) throw new CommandRefused(Cmd.Syndrome.UNKNOWN_PD, pd);
    }

    private void checkUar(long uar) {
        if (uar <= 0 || !uars.has(uar)) throw new CommandRefused(Cmd.Syndrome.UNKNOWN_UAR, uar);
    }

    // ------------------------------------------------------------------ CQs and SRQs

    private long createCq(Cmd.CreateCq c) {
        checkUar(c.uar());
        if (c.logSize() < 1 || c.logSize() > 22) throw new CommandRefused(Cmd.Syndrome.BAD_QUEUE_SIZE, c.logSize());
        if ((c.ring() & 63) != 0 || (c.dbrec() & 7) != 0) throw new CommandRefused(Cmd.Syndrome.BAD_ADDRESS, c.ring());
        if (c.vector() >= Cmd.MSIX_VECTORS) throw new CommandRefused(Cmd.Syndrome.BAD_VECTOR, c.vector());
        long cqn = fw.cqs.free();
        Cq cq = new Cq(fw, cqn, c.ring(), 1 << c.logSize(), c.dbrec());
        fw.cqs.put(cqn, cq);
        fw.adapter.createCq(cqn, (int) c.uar(), c.ring(), (int) c.logSize(), (int) c.vector());
        return cqn;
    }

    /** RESIZE_CQ answers once the CQ's ring has moved (Cq.resize). */
    private byte[] resizeCq(Cmd.ResizeCq c) {
        Cq cq = fw.cqs.get(c.cqn());
        if (cq == null) throw new CommandRefused(Cmd.Syndrome.UNKNOWN_CQ, c.cqn());
        if (c.logSize() < 1 || c.logSize() > 22) throw new CommandRefused(Cmd.Syndrome.BAD_QUEUE_SIZE, c.logSize());
        if ((c.ring() & 63) != 0) throw new CommandRefused(Cmd.Syndrome.BAD_ADDRESS, c.ring());
        Consumer<byte[]> a = answer;
        cq.resize(c.ring(), (int) c.logSize(),
                why -> a.accept(why == null ? ok() : Cmd.output(why, c.logSize(), Cmd.EMPTY, null)));
        return null;
    }

    /**
     * DESTROY_CQ answers once every completion posted to the CQ before it is in host memory (or
     * refused): the flushed receives of a QP just destroyed may still be on their way, and none may
     * reach the ring after the driver was told the CQ is gone (nor be taken for a later CQ's).
     */
    private byte[] destroyCq(long cqn) {
        Cq cq = fw.cqs.get(cqn);
        if (cq == null) throw new CommandRefused(Cmd.Syndrome.UNKNOWN_CQ, cqn);
        if (cq.users > 0) throw new CommandRefused(Cmd.Syndrome.CQ_IN_USE, cqn);
        fw.cqs.remove(cqn);
        cq.destroy();
        Consumer<byte[]> a = answer;
        fw.adapter.whenCqSettled(cqn, () -> {
            fw.adapter.destroyCq(cqn);
            a.accept(ok());
        });
        return null;
    }

    private Srq srq(long srqn) {
        Srq q = fw.srqs.get(srqn);
        if (q == null) throw new CommandRefused(Cmd.Syndrome.UNKNOWN_SRQ, srqn);
        return q;
    }

    private long createSrq(Cmd.CreateSrq c) {
        checkSrq(c.pd(), c.logSize(), c.strideLog(), c.limit(), c.ring(), c.dbrec());
        long srqn = fw.srqs.free();
        fw.srqs.put(srqn, new Srq(fw, srqn, c.pd(), ring(srqn, c.ring(), c.logSize(), c.strideLog(), c.dbrec()),
                (int) c.limit()));
        return srqn;
    }

    /**
     * An XRC SRQ: in an XRC domain, its receives completing to its own CQ, its WQEs taken by the XRC target QPs the
     * requests name it to.
     */
    private long createXrcSrq(Cmd.CreateXrcSrq c) {
        checkSrq(c.pd(), c.logSize(), c.strideLog(), c.limit(), c.ring(), c.dbrec());
        XrcDomain domain = xrcd(c.xrcd());
        Cq cq = fw.cqs.get(c.cq());
        if (cq == null) throw new CommandRefused(Cmd.Syndrome.UNKNOWN_CQ, c.cq());
        long srqn = fw.srqs.free();
        fw.srqs.put(srqn, new Srq(fw, srqn, c.pd(), ring(srqn, c.ring(), c.logSize(), c.strideLog(), c.dbrec()),
                (int) c.limit(), c.xrcd(), cq));
        domain.users++;
        cq.users++;
        return srqn;
    }

    /** A tag-matching SRQ: its tag list in the adapter, its receives and tag-list completions to its own CQ. */
    private long createTmSrq(Cmd.CreateTmSrq c) {
        if (fw.tm == null) throw new CommandRefused(Cmd.Syndrome.TM_NOT_SUPPORTED, 0);
        checkSrq(c.pd(), c.logSize(), c.strideLog(), c.limit(), c.ring(), c.dbrec());
        if (c.maxTags() < 1 || c.maxTags() > fw.tm.maxTags())
            throw new CommandRefused(Cmd.Syndrome.BAD_ATTRIBUTE, c.maxTags());
        if (c.maxOps() < 1 || c.maxOps() > fw.tm.maxOps())
            throw new CommandRefused(Cmd.Syndrome.BAD_ATTRIBUTE, c.maxOps());
        Cq cq = fw.cqs.get(c.cq());
        if (cq == null) throw new CommandRefused(Cmd.Syndrome.UNKNOWN_CQ, c.cq());
        long srqn = fw.srqs.free();
        fw.srqs.put(srqn, new Srq(fw, srqn, c.pd(), ring(srqn, c.ring(), c.logSize(), c.strideLog(), c.dbrec()),
                (int) c.limit(), 0, cq, new TagMatching((int) c.maxTags(), (int) c.maxOps())));
        cq.users++;
        return srqn;
    }

    /**
     * A tag-list operation; its completion (asked for, or a failed TAG_DEL) goes to the SRQ's CQ.
     * Returns a TAG_ADD's handle, and for a TAG_DEL 1 if the entry was deleted, 0 if a message had taken it.
     */
    private long tmOp(Cmd.TmOp c) {
        Srq s = srq(c.srqn());
        if (s.tm == null || c.opcode() > 2) throw new CommandRefused(Cmd.Syndrome.BAD_TM_OP, c.opcode());
        s.tm.report((int) c.unexpectedCnt());
        long handle = 0;
        int syndrome = 0, kind;
        switch ((int) c.opcode()) {
            case 0 -> {
                handle = s.tm.add(c.tag(), c.mask(), new WqeFormat.Sge(c.addr(), (int) c.length(), (int) c.lkey()));
                if (handle < 0) throw new CommandRefused(Cmd.Syndrome.TM_LIST_FULL, s.tm.maxTags);
                kind = Cqe64.TM_ADD;
            }
            case 1 -> {
                // the output says whether it went: a failure's completion follows
                if (s.tm.delete((int) c.handle())) handle = 1;
                else syndrome = Cqe64.SYNDROME_TM_ERR;
                kind = Cqe64.TM_DEL;
            }
            default -> kind = Cqe64.TM_SYNC;
        }
        if ((c.flags() & 1) != 0 || syndrome != 0)
            fw.complete(s.cq, Cqe64.tmOp(s.srqn, (int) c.opIndex(), kind, s.tm.syncRequired() ? CqeTmFlags.SYNC_REQ : 0,
                    syndrome, syndrome == 0 ? 0 : Vendor.TM_TAG_TAKEN), false);
        return handle;
    }

    private void checkSrq(long pd, long logSize, long strideLog, long limit, long ring, long dbrec) {
        checkPd(pd);
        if (logSize < 1 || logSize > 15 || strideLog < 4)
            throw new CommandRefused(Cmd.Syndrome.BAD_QUEUE_SIZE, logSize);
        if (limit > 1L << logSize) throw new CommandRefused(Cmd.Syndrome.BAD_LIMIT, limit);
        if ((ring & 15) != 0 || (dbrec & 3) != 0) throw new CommandRefused(Cmd.Syndrome.BAD_ADDRESS, ring);
    }

    private RecvRingReader ring(long srqn, long ring, long logSize, long strideLog, long dbrec) {
        return new RecvRingReader(fw, String.format("srqn 0x%x", srqn), ring, 1 << logSize, (int) strideLog, dbrec);
    }

    private void destroySrq(long srqn) {
        Srq q = srq(srqn);
        if (q.users > 0) throw new CommandRefused(Cmd.Syndrome.SRQ_IN_USE, srqn);
        fw.srqs.remove(srqn);
        if (q.xrc()) xrcds.get(q.xrcd).users--;
        if (q.cq != null) q.cq.users--;
    }

    // ------------------------------------------------------------------ XRC domains

    private XrcDomain xrcd(long xrcd) {
        XrcDomain d = xrcd <= 0 ? null : xrcds.get(xrcd);
        if (d == null) throw new CommandRefused(Cmd.Syndrome.UNKNOWN_XRCD, xrcd);
        return d;
    }

    private void deallocXrcd(long xrcd) {
        if (xrcd(xrcd).users > 0) throw new CommandRefused(Cmd.Syndrome.XRCD_IN_USE, xrcd);
        xrcds.remove(xrcd);
    }

    // ------------------------------------------------------------------ QPs

    private Qp qp(long qpn) {
        Qp q = fw.qp(qpn);
        if (q == null) throw new CommandRefused(Cmd.Syndrome.UNKNOWN_QP, qpn);
        return q;
    }

    private long createQp(Cmd.CreateQp c) {
        ServiceType type = qpType(c);
        boolean target = type == ServiceType.XRC_RECV, initiator = type == ServiceType.XRC_SEND;
        boolean dct = type == ServiceType.DRIVER && c.dcType() == DcRole.DCT.value();
        boolean dci = type == ServiceType.DRIVER && !dct;
        // an XRC target has no PD (its field names the XRC domain), no CQs and no queues; an initiator no receive side
        XrcDomain domain = target ? xrcd(c.xrcd()) : null;
        if (!target) checkPd(c.pd());
        checkUar(c.uar());
        Cq scq = fw.cqs.get(c.sendCq()), rcq = fw.cqs.get(c.recvCq());
        if (scq == null && !target && !(dct && c.sendCq() == 0))
            throw new CommandRefused(Cmd.Syndrome.UNKNOWN_CQ, c.sendCq());
        if (rcq == null && !target && !((initiator || dci) && c.recvCq() == 0))
            throw new CommandRefused(Cmd.Syndrome.UNKNOWN_CQ, c.recvCq());
        checkQueues(c, dct);
        int special = c.type() == Cmd.QPT_SMI || c.type() == Cmd.QPT_GSI ? (int) c.type() : -1;
        if (special >= 0 && fw.management.owner(special) != null)
            throw new CommandRefused(Cmd.Syndrome.SPECIAL_QP_TAKEN, special);
        long qpn = nextQpn();
        Srq srq = c.srq() == 0 ? null : qpSrq(c, type, target || initiator || dci);
        Qp q = new Qp(fw, qpn, type, c, scq, rcq, srq);
        if (special >= 0) fw.management.own(special, q);
        fw.addQp(q);
        qpIndexUsed.add((int) (qpn & (maxQp - 1)));
        if (scq != null) scq.users++;
        if (rcq != null) rcq.users++;
        if (target) {
            domain.users++;
            return qpn;
        }
        if (dct) return qpn; // no send queue
        fw.adapter.addQpQueue(qpn, (int) c.uar());
        fw.sqContexts.created(q);
        return qpn;
    }

    /**
     * The QP's type; a DRIVER QP is a DC half: DCT (answers only, from an SRQ) or DCI (sends only). A special QP
     * (QPT_SMI, QPT_GSI) is a UD QP bound to the port's QP0 or QP1 (docs/device.md, "Management: QP0 and QP1").
     */
    private ServiceType qpType(Cmd.CreateQp c) {
        if (c.type() == Cmd.QPT_SMI || c.type() == Cmd.QPT_GSI) return ServiceType.UD;
        ServiceType type;
        try {
            type = ServiceType.of((int) c.type());
        } catch (IllegalArgumentException e) {
            throw new CommandRefused(Cmd.Syndrome.BAD_QP_TYPE, c.type());
        }
        if (type != ServiceType.DRIVER) return type;
        if (fw.dc == null) throw new CommandRefused(Cmd.Syndrome.DC_NOT_SUPPORTED, c.type());
        if (c.dcType() != DcRole.DCT.value() && c.dcType() != DcRole.DCI.value())
            throw new CommandRefused(Cmd.Syndrome.BAD_DC_TYPE, c.dcType());
        if (c.dcType() == DcRole.DCT.value() && c.srq() == 0) throw new CommandRefused(Cmd.Syndrome.DCT_NEEDS_SRQ, 0);
        return type;
    }

    /** The rings' sizes and alignments (a DC target has no send queue: its sqAddr field carries the DC access key). */
    private static void checkQueues(Cmd.CreateQp c, boolean dct) {
        if (c.sqLogSize() < 1 || c.sqLogSize() > 15)
            throw new CommandRefused(Cmd.Syndrome.BAD_QUEUE_SIZE, c.sqLogSize());
        if (c.rqLogSize() > 15 || c.rqStrideLog() < 4)
            throw new CommandRefused(Cmd.Syndrome.BAD_QUEUE_SIZE, c.rqLogSize());
        if ((c.sqAddr() & 63) != 0 && !dct || (c.rqAddr() & 15) != 0 || (c.dbrec() & 7) != 0)
            throw new CommandRefused(Cmd.Syndrome.BAD_ADDRESS, c.sqAddr());
    }

    /** A free QP number: one live QP per queue-table entry (the fetcher's fewer slots cache send-queue contexts). */
    private long nextQpn() {
        for (int k = 0; k < maxQp - 1; k++) {
            int idx = 1 + (qpIndexCursor + k) % (maxQp - 1);
            if (!qpIndexUsed.contains(idx)) {
                qpIndexCursor = idx;
                long qpn = (long) maxQp * (1 + (qpSerial++ % 255)) + idx;
                if (qpn > 0xFFFFFF) break;
                return qpn;
            }
        }
        throw new CommandRefused(Cmd.Syndrome.OUT_OF_QPS, maxQp);
    }

    /** The SRQ the new QP receives from ({@code noSrq}: an XRC or DC initiator or an XRC target may name none). */
    private Srq qpSrq(Cmd.CreateQp c, ServiceType type, boolean noSrq) {
        Srq srq = srq(c.srq());
        if (srq.xrc() || noSrq) throw new CommandRefused(Cmd.Syndrome.XRC_SRQ_MISUSE, c.srq());
        // tag matching is RC's alone
        if (srq.tm != null && type != ServiceType.RC) throw new CommandRefused(Cmd.Syndrome.BAD_TM_OP, c.type());
        if (srq.pd != c.pd()) throw new CommandRefused(Cmd.Syndrome.UNKNOWN_PD, c.pd());
        srq.users++;
        return srq;
    }

    private void destroyQp(long qpn) {
        Qp q = fw.removeQp(qpn);
        if (q == null) throw new CommandRefused(Cmd.Syndrome.UNKNOWN_QP, qpn);
        q.destroy();
        if (q.special >= 0) fw.management.own(q.special, null);
        fw.multicast.destroyed(qpn);
        fw.ledger.destroyed(qpn);
        if (q.scq != null) q.scq.users--;
        if (q.rcq != null) q.rcq.users--;
        if (q.srq != null) q.srq.users--;
        qpIndexUsed.remove((int) (qpn & (maxQp - 1)));
        if (q.type == ServiceType.XRC_RECV) xrcds.get(q.xrcd).users--;
        else if (q.dct == null) fw.sqContexts.destroyed(q);
    }
}
