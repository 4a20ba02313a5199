package nicsim.firmware;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Consumer;
import nicsim.abi.BigEndian;
import nicsim.abi.Cmd;
import nicsim.abi.Cqe64;
import nicsim.abi.Vendor;
import nicsim.abi.WqeLayout;
import nicsim.adapter.Adapter;
import nicsim.adapter.CqePorts;
import nicsim.adapter.MttPorts;
import nicsim.adapter.MttPorts.MkeyContext;
import nicsim.adapter.MttPorts.XlateReq;
import nicsim.adapter.MttPorts.XlateRsp;
import nicsim.adapter.WqePorts.WqeError;
import nicsim.fabric.Fabric;
import nicsim.fabric.Packet;
import nicsim.host.PciPort;
import nicsim.profile.Profile;
import nicsim.sim.ClockDomain;
import nicsim.sim.Counters;
import nicsim.sim.Simulator;
import nicsim.verbs.AccessFlags;
import nicsim.verbs.EventType;
import nicsim.verbs.Mtu;
import nicsim.verbs.QpState;
import nicsim.verbs.QpType;

/**
 * The adapter's firmware (Java only: what runs on the adapter's embedded processor): the
 * command interface ({@link Cmd}), the resource tables (UARs, PDs, mkeys, CQs, QPs), the async
 * event queue, and, per QP, the transport ({@link Qp}). It reaches host memory only by DMA through
 * the adapter's PCI port, translates every key through the {@code MttWalker}, writes completions
 * through the {@code CqeWriter}, and sends packets on the {@link Fabric}.
 *
 * <p>Its own work runs on one processor: each task (a command, a WQE start, a packet) takes the
 * profile's cycles and tasks queue behind one another ({@link #exec}).
 */
public final class Firmware implements nicsim.adapter.EmbeddedProcessor {
    final Simulator sim;
    final ClockDomain core;
    final Profile profile;
    final Adapter adapter;
    final Counters counters;
    /** Counters counted per packet or per DMA, held so the data path counts without a lookup. */
    final Counters.Ref packetsIn, packetsOut, dmaReadBytes, dmaWriteBytes;
    final long cmdLatency, wqeCycles, packetCycles;
    /** {@code link.transmit}: a packet goes on the wire as its first beat leaves the send engine (else once all of it has). */
    final boolean cutThroughTx;
    final int ackCoalesce, recvPrefetch;
    /** Longest message this port sends or accepts (max_msg_sz). */
    final long maxMsg;
    private final int maxQp, maxCq, maxMkey, maxPd, maxUar, maxQpWr, maxCqe;
    static final int MAX_SGE = 16, MAX_INLINE = 512, MAX_RD_ATOMIC = 16;

    private long cmdqAddr = -1;
    private int cmdErrors;
    private boolean cmdBusy;
    private boolean initialized;
    private long eqAddr;
    private int eqLogSize, eqProducer;
    private long mttAddr, mttEntries, mttNext;
    private final boolean fillByInterrupt;
    private int xlateVector = -1;
    private final java.util.ArrayDeque<HostFill> hostFills = new java.util.ArrayDeque<>();
    private long busyUntil;
    private Fabric fabric;
    private int lid;

    private final boolean[] uars;
    private final boolean[] pds;
    final Map<Long, Cq> cqs = new HashMap<>();
    final Map<Long, Qp> qps = new TreeMap<>();
    final Map<Long, Srq> srqs = new TreeMap<>();
    private final Map<Long, MkeyContext> mkeys = new HashMap<>();
    /** Memory windows by mkey index: {type, index of the MR it is bound to or -1}. */
    private final Map<Long, long[]> windows = new HashMap<>();
    private final Map<Integer, Consumer<List<XlateRsp>>> xlatePending = new HashMap<>();
    private final Map<Integer, List<XlateRsp>> xlateParts = new HashMap<>();
    private int nextTag, keySeed = 0x5a;
    private final List<String> log = new ArrayList<>();

    /** A completion queue as firmware knows it: where its doorbell record is, and how full it may be. */
    static final class Cq {
        final long cqn, ring, dbrec;
        final int size;
        long produced, knownCi;
        boolean error;
        final ArrayDeque<long[]> waiting = new ArrayDeque<>();
        final ArrayDeque<Boolean> waitingSolicited = new ArrayDeque<>();
        boolean refreshing, confirmedFull;
        int users;

        Cq(long cqn, long ring, int size, long dbrec) { this.cqn = cqn; this.ring = ring; this.size = size; this.dbrec = dbrec; }
    }

    public Firmware(Adapter adapter, Profile profile) {
        this.adapter = adapter;
        this.sim = adapter.simulator();
        this.core = adapter.core();
        this.profile = profile;
        this.counters = sim.counters();
        this.packetsIn = counters.ref("Firmware.packets_in");
        this.packetsOut = counters.ref("Firmware.packets_out");
        this.dmaReadBytes = counters.ref("Firmware.dma_read_bytes");
        this.dmaWriteBytes = counters.ref("Firmware.dma_write_bytes");
        this.cmdLatency = profile.picos("fw.command.latency");
        this.wqeCycles = profile.cycles("fw.wqe.cycles");
        this.packetCycles = profile.cycles("fw.packet.cycles");
        this.cutThroughTx = Fabric.cutThrough(profile, "link.transmit");
        this.ackCoalesce = profile.countInt("fw.ack.coalesce");
        this.maxMsg = profile.bytes("fw.max.msg.size");
        if (maxMsg < 1 || maxMsg > (1L << 31))
            throw new IllegalArgumentException("fw.max.msg.size " + maxMsg + " B must be from 1 B to 2 GiB (IBTA: a message is at most 2^31 bytes)");
        this.recvPrefetch = profile.countInt("fw.recv.prefetch");
        String fill = profile.has("mtt.fill") ? profile.text("mtt.fill") : "dma";
        if (!fill.equals("dma") && !fill.equals("interrupt"))
            throw new IllegalArgumentException("mtt.fill \"" + fill + "\" must be \"dma\" or \"interrupt\"");
        this.fillByInterrupt = fill.equals("interrupt");
        this.maxQp = profile.countInt("doorbell.queue.table.entries");
        this.sqSlots = new Qp[adapter.fetcher().config().sqEntries()];
        this.sqLoading = new Qp[sqSlots.length];
        this.sqEvicting = new Qp[sqSlots.length];
        this.maxCq = adapter.cqeWriter().config().cqEntries();
        this.maxMkey = MAX_MKEYS;
        this.walkerIndex = new long[adapter.mtt().config().mkeyEntries()];
        java.util.Arrays.fill(walkerIndex, -1);
        this.maxPd = 1 << 16;
        this.maxUar = (int) (profile.bytes("doorbell.window.size") / profile.bytes("uar.page.size"));
        this.maxQpWr = 1 << 15;
        this.maxCqe = 1 << 22;
        this.uars = new boolean[maxUar];
        this.pds = new boolean[maxPd];
    }

    public List<String> log() { return List.copyOf(log); }

    /** Joins the fabric; returns the port's LID. */
    public int attach(Fabric f) {
        this.fabric = f;
        this.lid = f.attach(this::onPacket);
        return lid;
    }

    public int lid() { return lid; }
    public Fabric fabric() { return fabric; }

    // ------------------------------------------------------------------ the processor

    /** Runs {@code task} after {@code cycles} of firmware time, queued behind earlier tasks. */
    void exec(long cycles, Runnable task) {
        long start = Math.max(sim.now(), busyUntil);
        long edge = core.picosOfCycle(core.nextEdgeCycleAtOrAfter(start));
        busyUntil = edge + core.cyclesToPicos(cycles);
        sim.schedule(busyUntil, task);
    }

    // ------------------------------------------------------------------ registers and commands

    @Override public void mmioWrite(long offset, byte[] data) {
        if (offset == Cmd.REG_XLATE_VECTOR && data.length == 4) {
            xlateVector = (int) BigEndian.get32(data, 0);
        } else if (offset == Cmd.REG_XLATE_FILL && data.length == 16) {
            hostFill(BigEndian.get64(data, 0), BigEndian.get64(data, 8));
        } else if (offset == Cmd.REG_CMDQ_ADDR && data.length == 8) {
            cmdqAddr = BigEndian.get64(data, 0);
        } else if (offset == Cmd.REG_CMD_DOORBELL && data.length == 4) {
            if (cmdqAddr < 0 || cmdBusy) {
                cmdErrors++;
                report(cmdqAddr < 0 ? "command doorbell before the command queue address was set"
                        : "command doorbell while a command is executing");
                return;
            }
            cmdBusy = true;
            adapter.port().dmaRead(cmdqAddr, Cmd.ENTRY_BYTES, r -> {
                if (r.status() != PciPort.DmaStatus.OK) {
                    cmdBusy = false;
                    cmdErrors++;
                    report(String.format("command entry at 0x%x unreadable: %s", cmdqAddr, r.status()));
                    return;
                }
                readInput(r.data());
            });
        } else {
            cmdErrors++;
            report(String.format("MMIO write of %d bytes at BAR0+0x%x: no such initialization register", data.length, offset));
        }
    }

    @Override public byte[] mmioRead(long offset, int length) {
        byte[] out = new byte[length];
        if (offset == Cmd.REG_XLATE_MISS && length == 8) {
            if (!hostFills.isEmpty()) BigEndian.put64(out, 0, 1L << 63 | hostFills.peekFirst().index);
            return out;
        }
        long v = offset == Cmd.REG_FW_REV ? Cmd.FW_REV : offset == Cmd.REG_CMD_ERRORS ? cmdErrors : 0;
        if (length >= 4) BigEndian.put32(out, 0, v);
        return out;
    }

    private void report(String what) {
        log.add(what);
        adapter.report(what);
    }

    private void readInput(byte[] entry) {
        int opcode = (int) BigEndian.get32(entry, Cmd.ENTRY_OPCODE);
        int inLen = (int) BigEndian.get32(entry, Cmd.ENTRY_IN_LEN), outLen = (int) BigEndian.get32(entry, Cmd.ENTRY_OUT_LEN);
        long inAddr = BigEndian.get64(entry, Cmd.ENTRY_IN_ADDR), outAddr = BigEndian.get64(entry, Cmd.ENTRY_OUT_ADDR);
        if (inLen < 0 || inLen > 4096 || outLen < Cmd.OUT_HEADER_WORDS * 8 || outLen > 4096) {
            cmdErrors++;
            report(String.format("command %s: mailbox lengths in %d / out %d out of range", Cmd.opcodeName(opcode), inLen, outLen));
            if (outLen >= Cmd.OUT_HEADER_WORDS * 8 && outLen <= 4096)
                finish(outAddr, outLen, Cmd.output(Cmd.Syndrome.BAD_INPUT_LENGTH, inLen, Cmd.EMPTY, null));
            else cmdBusy = false;
            return;
        }
        Consumer<byte[]> run = in -> sim.scheduleIn(cmdLatency, () -> {
            byte[] out;
            try {
                out = execute(opcode, in);
            } catch (Fail f) {
                out = Cmd.output(f.syndrome, f.detail, Cmd.EMPTY, null);
            }
            counters.counter("Firmware.commands").inc();
            if (out.length > outLen) out = Cmd.output(Cmd.Syndrome.BAD_OUTPUT_LENGTH, out.length, Cmd.EMPTY, null);
            finish(outAddr, outLen, out);
        });
        if (inLen == 0) run.accept(new byte[0]);
        else adapter.port().dmaRead(inAddr, inLen, r -> {
            if (r.status() != PciPort.DmaStatus.OK) finish(outAddr, outLen, Cmd.output(Cmd.Syndrome.MAILBOX_DMA, inAddr, Cmd.EMPTY, null));
            else run.accept(r.data());
        });
    }

    private void finish(long outAddr, int outLen, byte[] out) {
        Cmd.Status st = Cmd.Status.of((int) (BigEndian.get64(out, 0) >>> 32));
        if (st != Cmd.Status.OK) counters.counter("Firmware.commands_failed").inc();
        adapter.port().dmaWrite(outAddr, out, r -> {});
        adapter.port().dmaWrite(cmdqAddr + Cmd.ENTRY_OWNER, new byte[]{0}, r -> cmdBusy = false);
    }

    /** A command refused: its syndrome and the offending value. */
    static final class Fail extends RuntimeException {
        final Cmd.Syndrome syndrome;
        final long detail;

        Fail(Cmd.Syndrome s, long detail) {
            super(s.text, null, false, false);
            this.syndrome = s;
            this.detail = detail;
        }
    }

    private static <T> T in(nicsim.sim.Layout<T> l, byte[] in) {
        if (in.length != Cmd.bytes(l)) throw new Fail(Cmd.Syndrome.BAD_INPUT_LENGTH, in.length);
        try {
            return Cmd.decode(l, in, 0);
        } catch (IllegalArgumentException e) {
            throw new Fail(Cmd.Syndrome.BAD_ATTRIBUTE, 0);
        }
    }

    private static <T> byte[] ok(nicsim.sim.Layout<T> l, T result) { return Cmd.output(Cmd.Syndrome.NONE, 0, l, result); }

    private byte[] execute(int opcode, byte[] input) {
        if (opcode != Cmd.INIT_HCA && opcode != Cmd.QUERY_HCA_CAP && !initialized) throw new Fail(Cmd.Syndrome.NOT_INITIALIZED, opcode);
        switch (opcode) {
            case Cmd.QUERY_HCA_CAP -> {
                in(Cmd.EMPTY, input);
                return ok(Cmd.HCA_CAP, new Cmd.HcaCap(maxQp - 1, maxCq - 1, maxMkey - 1, maxPd - 1, maxUar - 1, maxQpWr, maxCqe, MAX_SGE,
                        MAX_INLINE, Mtu.of(Integer.numberOfTrailingZeros(fabric == null ? 4096 : fabric.maxMtu()) - 7).value(), lid,
                        MAX_RD_ATOMIC, maxMsg));
            }
            case Cmd.INIT_HCA -> {
                Cmd.InitHca h = in(Cmd.INIT_HCA_IN, input);
                if (initialized) throw new Fail(Cmd.Syndrome.ALREADY_INITIALIZED, 0);
                if ((h.eqAddr() & 63) != 0 || (h.mttAddr() & 7) != 0) throw new Fail(Cmd.Syndrome.BAD_ADDRESS, h.eqAddr());
                if (h.eqLogSize() < 1 || h.eqLogSize() > 16) throw new Fail(Cmd.Syndrome.BAD_QUEUE_SIZE, h.eqLogSize());
                eqAddr = h.eqAddr();
                eqLogSize = (int) h.eqLogSize();
                mttAddr = h.mttAddr();
                mttEntries = h.mttEntries();
                qpcAddr = h.qpcAddr() == 0 ? -1 : h.qpcAddr();
                mkcAddr = h.mkcAddr() == 0 ? -1 : h.mkcAddr();
                mttNext = 0;
                initialized = true;
                uars[0] = true; // UAR 0 belongs to the driver itself
                return ok(Cmd.EMPTY, null);
            }
            case Cmd.ALLOC_UAR -> {
                in(Cmd.EMPTY, input);
                for (int i = 1; i < uars.length; i++) if (!uars[i]) { uars[i] = true; return ok(Cmd.HANDLE, new Cmd.Handle(i)); }
                throw new Fail(Cmd.Syndrome.OUT_OF_UARS, maxUar);
            }
            case Cmd.DEALLOC_UAR -> {
                long u = in(Cmd.HANDLE, input).handle();
                if (u <= 0 || u >= uars.length || !uars[(int) u]) throw new Fail(Cmd.Syndrome.UNKNOWN_UAR, u);
                for (Qp q : qps.values()) if (q.uar == u) throw new Fail(Cmd.Syndrome.UAR_IN_USE, u);
                uars[(int) u] = false;
                return ok(Cmd.EMPTY, null);
            }
            case Cmd.ALLOC_PD -> {
                in(Cmd.EMPTY, input);
                for (int i = 1; i < pds.length; i++) if (!pds[i]) { pds[i] = true; return ok(Cmd.HANDLE, new Cmd.Handle(i)); }
                throw new Fail(Cmd.Syndrome.OUT_OF_PDS, maxPd);
            }
            case Cmd.DEALLOC_PD -> {
                long pd = in(Cmd.HANDLE, input).handle();
                checkPd(pd);
                for (Qp q : qps.values()) if (q.pd == pd) throw new Fail(Cmd.Syndrome.PD_IN_USE, pd);
                for (MkeyContext m : mkeys.values()) if (m.pd() == pd) throw new Fail(Cmd.Syndrome.PD_IN_USE, pd);
                pds[(int) pd] = false;
                return ok(Cmd.EMPTY, null);
            }
            case Cmd.CREATE_MKEY -> { return createMkey(in(Cmd.CREATE_MKEY_IN, input)); }
            case Cmd.ALLOC_MW -> {
                Cmd.AllocMw a = in(Cmd.ALLOC_MW_IN, input);
                checkPd(a.pd());
                if (a.type() != 1 && a.type() != 2) throw new Fail(Cmd.Syndrome.BAD_MW_TYPE, a.type());
                long index = -1;
                for (long i = 1; i < maxMkey; i++) if (!mkeys.containsKey(i)) { index = i; break; }
                if (index < 0) throw new Fail(Cmd.Syndrome.OUT_OF_MKEYS, maxMkey);
                keySeed = (keySeed * 37 + 11) & 0xff;
                // type 1 is usable (VALID) at once, with no range until bound; type 2 starts FREE (rxe_alloc_mw)
                MkeyContext m = new MkeyContext(index, a.type() == 1 ? MttPorts.STATE_VALID : MttPorts.STATE_FREE, keySeed, a.pd(), 0, 0,
                        0, 0, 0, 12, 0, 0);
                mkeys.put(index, m);
                windows.put(index, new long[]{a.type(), -1});
                publish(m);
                return ok(Cmd.HANDLE, new Cmd.Handle(index << 8 | keySeed));
            }
            case Cmd.DEALLOC_MW -> {
                long key = in(Cmd.HANDLE, input).handle();
                MkeyContext m = mkeys.get(key >>> 8);
                if (m == null || !windows.containsKey(key >>> 8)) throw new Fail(Cmd.Syndrome.UNKNOWN_MKEY, key);
                unbind(key >>> 8);
                mkeys.remove(key >>> 8);
                windows.remove(key >>> 8);
                publish(new MkeyContext(key >>> 8, MttPorts.STATE_NONE, 0, 0, 0, 0, 0, 0, 0, 12, 0, 0));
                return ok(Cmd.EMPTY, null);
            }
            case Cmd.DESTROY_MKEY -> {
                long key = in(Cmd.HANDLE, input).handle();
                MkeyContext m = mkeys.get(key >>> 8);
                if (m == null || m.key() != (key & 0xff) || windows.containsKey(key >>> 8)) throw new Fail(Cmd.Syndrome.UNKNOWN_MKEY, key);
                for (long[] w : windows.values()) if (w[1] == (key >>> 8)) throw new Fail(Cmd.Syndrome.MR_HAS_WINDOWS, key);
                mkeys.remove(key >>> 8);
                publish(new MkeyContext(key >>> 8, MttPorts.STATE_NONE, 0, 0, 0, 0, 0, 0, 0, 12, 0, 0));
                return ok(Cmd.EMPTY, null);
            }
            case Cmd.CREATE_CQ -> { return createCq(in(Cmd.CREATE_CQ_IN, input)); }
            case Cmd.DESTROY_CQ -> {
                long cqn = in(Cmd.HANDLE, input).handle();
                Cq cq = cqs.get(cqn);
                if (cq == null) throw new Fail(Cmd.Syndrome.UNKNOWN_CQ, cqn);
                if (cq.users > 0) throw new Fail(Cmd.Syndrome.CQ_IN_USE, cqn);
                cqs.remove(cqn);
                adapter.destroyCq(cqn);
                return ok(Cmd.EMPTY, null);
            }
            case Cmd.CREATE_QP -> { return createQp(in(Cmd.CREATE_QP_IN, input)); }
            case Cmd.DESTROY_QP -> {
                long qpn = in(Cmd.HANDLE, input).handle();
                Qp q = qps.remove(qpn);
                if (q == null) throw new Fail(Cmd.Syndrome.UNKNOWN_QP, qpn);
                q.destroy();
                q.scq.users--;
                q.rcq.users--;
                if (q.srq != null) q.srq.users--;
                qpIndexUsed.remove((int) (qpn & (maxQp - 1)));
                int slot = sqSlot(qpn);
                boolean resident = sqSlots[slot] == q;
                adapter.destroySq(qpn, resident);
                if (resident) sqSlots[slot] = null;
                if (sqLoading[slot] == q) sqLoading[slot] = null;
                java.util.ArrayDeque<Qp> w = sqWaiting.get(slot);
                if (w != null) w.remove(q);
                tryLoad(slot);
                return ok(Cmd.EMPTY, null);
            }
            case Cmd.CREATE_SRQ -> {
                Cmd.CreateSrq c = in(Cmd.CREATE_SRQ_IN, input);
                checkPd(c.pd());
                if (c.logSize() < 1 || c.logSize() > 15 || c.strideLog() < 4) throw new Fail(Cmd.Syndrome.BAD_QUEUE_SIZE, c.logSize());
                if (c.limit() > 1L << c.logSize()) throw new Fail(Cmd.Syndrome.BAD_LIMIT, c.limit());
                if ((c.ring() & 15) != 0 || (c.dbrec() & 3) != 0) throw new Fail(Cmd.Syndrome.BAD_ADDRESS, c.ring());
                long srqn = -1;
                for (long i = 1; i < 1 << 16; i++) if (!srqs.containsKey(i)) { srqn = i; break; }
                if (srqn < 0) throw new Fail(Cmd.Syndrome.OUT_OF_SRQS, 1 << 16);
                srqs.put(srqn, new Srq(this, srqn, c.pd(), new RecvRing(adapter.port(), c.ring(), 1 << c.logSize(), (int) c.strideLog(),
                        c.dbrec(), recvPrefetch), (int) c.limit()));
                return ok(Cmd.HANDLE, new Cmd.Handle(srqn));
            }
            case Cmd.ARM_SRQ -> {
                Cmd.ArmSrq a = in(Cmd.ARM_SRQ_IN, input);
                Srq q = srqs.get(a.srqn());
                if (q == null) throw new Fail(Cmd.Syndrome.UNKNOWN_SRQ, a.srqn());
                if (a.limit() > q.ring.size) throw new Fail(Cmd.Syndrome.BAD_LIMIT, a.limit());
                q.limit = (int) a.limit();
                return ok(Cmd.EMPTY, null);
            }
            case Cmd.DESTROY_SRQ -> {
                long srqn = in(Cmd.HANDLE, input).handle();
                Srq q = srqs.get(srqn);
                if (q == null) throw new Fail(Cmd.Syndrome.UNKNOWN_SRQ, srqn);
                if (q.users > 0) throw new Fail(Cmd.Syndrome.SRQ_IN_USE, srqn);
                srqs.remove(srqn);
                return ok(Cmd.EMPTY, null);
            }
            case Cmd.MODIFY_QP -> {
                Cmd.QpAttrs a = in(Cmd.QP_ATTRS, input);
                Qp q = qps.get(a.qpn());
                if (q == null) throw new Fail(Cmd.Syndrome.UNKNOWN_QP, a.qpn());
                q.modify(a);
                return ok(Cmd.EMPTY, null);
            }
            case Cmd.QUERY_QP -> {
                long qpn = in(Cmd.HANDLE, input).handle();
                Qp q = qps.get(qpn);
                if (q == null) throw new Fail(Cmd.Syndrome.UNKNOWN_QP, qpn);
                return ok(Cmd.QP_ATTRS, q.query());
            }
            default -> throw new Fail(Cmd.Syndrome.BAD_OPCODE, opcode);
        }
    }

    void checkPd(long pd) {
        if (pd <= 0 || pd >= pds.length || !pds[(int) pd]) throw new Fail(Cmd.Syndrome.UNKNOWN_PD, pd);
    }

    private void checkUar(long uar) {
        if (uar <= 0 || uar >= uars.length || !uars[(int) uar]) throw new Fail(Cmd.Syndrome.UNKNOWN_UAR, uar);
    }

    private byte[] createMkey(Cmd.CreateMkey c) {
        checkPd(c.pd());
        if (c.pageShift() < 12 || c.pageShift() > 21) throw new Fail(Cmd.Syndrome.BAD_PAGE_SHIFT, c.pageShift());
        if ((c.access() & ~AccessFlags.ALL) != 0) throw new Fail(Cmd.Syndrome.BAD_ACCESS, c.access());
        if ((c.pageList() & 7) != 0) throw new Fail(Cmd.Syndrome.BAD_ADDRESS, c.pageList());
        if (mttNext + c.pages() > mttEntries) throw new Fail(Cmd.Syndrome.OUT_OF_MTT, c.pages());
        long index = -1;
        for (long i = 1; i < maxMkey; i++) if (!mkeys.containsKey(i)) { index = i; break; }
        if (index < 0) throw new Fail(Cmd.Syndrome.OUT_OF_MKEYS, maxMkey);
        keySeed = (keySeed * 37 + 11) & 0xff; // the key byte changes on every registration
        long mttBase = mttNext;
        mttNext += Math.max(1, c.pages());
        MkeyContext m = new MkeyContext(index, MttPorts.STATE_VALID, keySeed, c.pd(), 0, 0, c.start(), c.length(),
                c.access() & 0x3f, c.pageShift(), c.pageOffset(), mttBase);
        mkeys.put(index, m);
        // copy the page list into the adapter's translation table in host memory (ICM), then publish the context
        long pages = c.pages();
        adapter.port().dmaRead(c.pageList(), (int) (pages * 8), r -> {
            if (r.status() == PciPort.DmaStatus.OK) adapter.port().dmaWrite(mttAddr + mttBase * 8, r.data(), w -> {});
            else report(String.format("MR page list at 0x%x unreadable: %s", c.pageList(), r.status()));
        });
        publish(m);
        return ok(Cmd.HANDLE, new Cmd.Handle(index << 8 | keySeed));
    }

    private byte[] createCq(Cmd.CreateCq c) {
        checkUar(c.uar());
        if (c.logSize() < 1 || c.logSize() > 22) throw new Fail(Cmd.Syndrome.BAD_QUEUE_SIZE, c.logSize());
        if ((c.ring() & 63) != 0 || (c.dbrec() & 7) != 0) throw new Fail(Cmd.Syndrome.BAD_ADDRESS, c.ring());
        if (c.vector() >= Cmd.MSIX_VECTORS) throw new Fail(Cmd.Syndrome.BAD_VECTOR, c.vector());
        long cqn = -1;
        for (long i = 1; i < maxCq; i++) if (!cqs.containsKey(i)) { cqn = i; break; }
        if (cqn < 0) throw new Fail(Cmd.Syndrome.OUT_OF_CQS, maxCq);
        cqs.put(cqn, new Cq(cqn, c.ring(), 1 << c.logSize(), c.dbrec()));
        adapter.createCq(cqn, (int) c.uar(), c.ring(), (int) c.logSize(), (int) c.vector());
        return ok(Cmd.HANDLE, new Cmd.Handle(cqn));
    }

    private byte[] createQp(Cmd.CreateQp c) {
        QpType type;
        try {
            type = QpType.of((int) c.type());
        } catch (IllegalArgumentException e) {
            throw new Fail(Cmd.Syndrome.BAD_QP_TYPE, c.type());
        }
        if (type != QpType.RC && type != QpType.UC && type != QpType.UD) throw new Fail(Cmd.Syndrome.BAD_QP_TYPE, c.type());
        checkPd(c.pd());
        checkUar(c.uar());
        Cq scq = cqs.get(c.sendCq()), rcq = cqs.get(c.recvCq());
        if (scq == null) throw new Fail(Cmd.Syndrome.UNKNOWN_CQ, c.sendCq());
        if (rcq == null) throw new Fail(Cmd.Syndrome.UNKNOWN_CQ, c.recvCq());
        if (c.sqLogSize() < 1 || c.sqLogSize() > 15) throw new Fail(Cmd.Syndrome.BAD_QUEUE_SIZE, c.sqLogSize());
        if (c.rqLogSize() > 15 || c.rqStrideLog() < 4) throw new Fail(Cmd.Syndrome.BAD_QUEUE_SIZE, c.rqLogSize());
        if ((c.sqAddr() & 63) != 0 || (c.rqAddr() & 15) != 0 || (c.dbrec() & 7) != 0) throw new Fail(Cmd.Syndrome.BAD_ADDRESS, c.sqAddr());
        // QPNs index the doorbell decoder's queue table by their low bits: one live QP per entry. The
        // fetcher's fewer slots are a direct-mapped cache of send-queue contexts (see onSqMiss).
        long qpn = -1;
        for (int k = 0; k < maxQp - 1; k++) {
            int idx = 1 + (qpIndexCursor + k) % (maxQp - 1);
            if (!qpIndexUsed.contains(idx)) {
                qpIndexCursor = idx;
                qpn = (long) maxQp * (1 + (qpSerial++ % 255)) + idx;
                break;
            }
        }
        if (qpn < 0 || qpn > 0xFFFFFF) throw new Fail(Cmd.Syndrome.OUT_OF_QPS, maxQp);
        Srq srq = null;
        if (c.srq() != 0) {
            srq = srqs.get(c.srq());
            if (srq == null) throw new Fail(Cmd.Syndrome.UNKNOWN_SRQ, c.srq());
            if (srq.pd != c.pd()) throw new Fail(Cmd.Syndrome.UNKNOWN_PD, c.pd());
            srq.users++;
        }
        Qp q = new Qp(this, qpn, type, c, scq, rcq, srq);
        qps.put(qpn, q);
        qpIndexUsed.add((int) (qpn & (maxQp - 1)));
        scq.users++;
        rcq.users++;
        adapter.addQpQueue(qpn, (int) c.uar());
        if (qpcAddr >= 0) adapter.port().dmaWrite(qpcAddr + (qpn & (maxQp - 1)) * QPC_BYTES, new byte[QPC_BYTES], r -> {});
        int slot = sqSlot(qpn);
        if (sqSlots[slot] == null && sqLoading[slot] == null) {
            sqLoading[slot] = q;
            adapter.loadSq(qpn, q.sqAddr, q.sqLogSize, 0, 0);
        }
        return ok(Cmd.HANDLE, new Cmd.Handle(qpn));
    }

    private int qpSerial, qpIndexCursor;
    private final java.util.Set<Integer> qpIndexUsed = new java.util.HashSet<>();

    // ------------------------------------------------------------------ the send-queue context cache

    /** Bytes of one QP context in host memory (ICM), read on a context-cache miss. */
    static final int QPC_BYTES = 256;
    private long qpcAddr = -1;
    /** Which QP's send queue each fetcher slot holds, and which one is being loaded into it. */
    private final Qp[] sqSlots, sqLoading, sqEvicting;
    private final Map<Integer, java.util.ArrayDeque<Qp>> sqWaiting = new HashMap<>();

    int sqSlot(long qpn) { return (int) (qpn & (sqSlots.length - 1)); }

    boolean sqResident(Qp q) { return sqSlots[sqSlot(q.qpn)] == q; }

    /**
     * A doorbell reached the fetcher for a QP whose context it does not hold: read the context from
     * host memory and load it, evicting the slot's QP once that one has nothing left to fetch; then
     * ring the doorbell again from inside.
     */
    @Override public void onSqMiss(long qpn, int producer) {
        Qp q = qps.get(qpn);
        if (q == null) return;
        q.sqProducerSeen = producer;
        int slot = sqSlot(qpn);
        if (sqSlots[slot] == q) { // loaded while this doorbell was on its way: ring again
            adapter.reRing(qpn, (int) q.uar, q.sqProducerSeen);
            return;
        }
        if (sqLoading[slot] == q) return; // the re-ring after loading carries the newest producer
        java.util.ArrayDeque<Qp> w = sqWaiting.computeIfAbsent(slot, k -> new java.util.ArrayDeque<>());
        if (!w.contains(q)) w.add(q);
        counters.counter("Firmware.sq_context_misses").inc();
        tryLoad(slot);
    }

    /** Loads the next waiting QP into {@code slot} if the slot is free, or its QP is idle (every posted WQEBB delivered). */
    void tryLoad(int slot) {
        java.util.ArrayDeque<Qp> w = sqWaiting.get(slot);
        if (w == null || w.isEmpty() || sqLoading[slot] != null) return;
        Qp cur = sqSlots[slot];
        if (cur != null && !cur.sqIdle()) return; // evict only a queue with nothing in flight
        Qp next = w.poll();
        sqLoading[slot] = next;
        sqEvicting[slot] = cur;
        if (cur != null) counters.counter("Firmware.sq_context_evictions").inc();
        Runnable load = () -> adapter.loadSq(next.qpn, next.sqAddr, next.sqLogSize, next.sqDelivered, next.sqDelivered);
        if (qpcAddr < 0) load.run();
        else adapter.port().dmaRead(qpcAddr + (next.qpn & (maxQp - 1)) * QPC_BYTES, QPC_BYTES, r -> load.run());
    }

    /** The fetcher took the context of {@code qpn}. */
    @Override public void onSqLoaded(long qpn) {
        Qp q = qps.get(qpn);
        if (q == null) return;
        int slot = sqSlot(qpn);
        if (sqLoading[slot] == q) sqLoading[slot] = null;
        Qp evicted = sqEvicting[slot];
        sqEvicting[slot] = null;
        sqSlots[slot] = q;
        if (q.sqProducerSeen != q.sqDelivered) adapter.reRing(qpn, (int) q.uar, q.sqProducerSeen);
        // a doorbell the evicted queue got on the very edge its context was replaced is lost in the fetcher: treat it as a miss
        if (evicted != null && evicted != q && !evicted.sqIdle() && qps.containsKey(evicted.qpn)) onSqMiss(evicted.qpn, evicted.sqProducerSeen);
        tryLoad(slot);
    }

    /**
     * Whether the fetcher may take {@code c} now: a context replacing another queue's waits until that
     * queue has nothing in flight (checked on the edge it would be taken, so a fetch never loses its slot).
     */
    @Override public boolean mayLoad(nicsim.adapter.WqePorts.SqConfig c) {
        if (c.valid() == 0) return true;
        Qp cur = sqSlots[sqSlot(c.qpn())];
        return cur == null || cur.qpn == c.qpn() || cur.sqIdle();
    }

    /** A QP went back to RESET: its send queue restarts at WQEBB 0. */
    void sqReset(Qp q) {
        q.skipUpTo(-1);
        q.sqDelivered = 0;
        q.sqProducerSeen = 0;
        if (sqResident(q) || sqLoading[sqSlot(q.qpn)] == q) adapter.loadSq(q.qpn, q.sqAddr, q.sqLogSize, 0, 0);
    }

    // ------------------------------------------------------------------ the atomic unit

    /** Atomics under way, by host address; each holds the ones waiting for that address, in arrival order. */
    private final Map<Long, ArrayDeque<Consumer<Runnable>>> atomicsAt = new HashMap<>();

    /**
     * The adapter's atomic unit: one atomic at a time per 8-byte host address, whatever QP it came on,
     * so atomics are atomic with respect to each other (IBV_ATOMIC_HCA). {@code op} starts when the
     * address is free, with a release to run once its write is issued (a read issued after a posted
     * write sees it: PCI does not let a read pass a posted write).
     */
    void atomicAt(long pa, Consumer<Runnable> op) {
        ArrayDeque<Consumer<Runnable>> waiting = atomicsAt.get(pa);
        if (waiting != null) { waiting.add(op); return; }
        atomicsAt.put(pa, new ArrayDeque<>());
        op.accept(() -> releaseAtomic(pa));
    }

    private void releaseAtomic(long pa) {
        Consumer<Runnable> next = atomicsAt.get(pa).poll();
        if (next == null) atomicsAt.remove(pa);
        else next.accept(() -> releaseAtomic(pa));
    }

    // ------------------------------------------------------------------ the mkey context cache

    /** MRs and windows an adapter holds in all; the MttWalker's table holds mtt.mkey.entries of them at a time. */
    static final int MAX_MKEYS = 1 << 18;
    /** Bytes of one mkey context in host memory (ICM), read on a miss. */
    static final int MKC_BYTES = 64;
    private long mkcAddr = -1;
    /** Which mkey index each walker table entry holds (-1: none), and translations in flight per entry. */
    private final long[] walkerIndex;
    private final Map<Integer, Integer> walkerBusy = new HashMap<>();
    private final java.util.ArrayDeque<Object[]> xlateQueue = new java.util.ArrayDeque<>();
    private boolean loadingMkey;

    private int walkerSlot(long index) { return (int) (index & (walkerIndex.length - 1)); }

    /**
     * Writes an mkey context: to host memory (ICM), and into the walker's table if the walker holds
     * that index or the entry is free. A context of state NONE (a destroyed key) frees the entry.
     */
    private void publish(MkeyContext m) {
        int slot = walkerSlot(m.index());
        if (mkcAddr >= 0 && m.state() != MttPorts.STATE_NONE) adapter.port().dmaWrite(mkcAddr + m.index() * MKC_BYTES, new byte[MKC_BYTES], r -> {});
        if (walkerIndex[slot] == m.index() || walkerIndex[slot] < 0) {
            adapter.mkeyWrite(m);
            walkerIndex[slot] = m.state() == MttPorts.STATE_NONE ? -1 : m.index();
        }
    }

    /** Sends queued translations to the walker, loading an mkey context first when the walker does not hold it. */
    private void pumpXlate() {
        while (!xlateQueue.isEmpty() && !loadingMkey) {
            Object[] q = xlateQueue.peek();
            XlateReq r = (XlateReq) q[0];
            long index = r.mkey() >>> 8;
            int slot = walkerSlot(index);
            MkeyContext m = mkeys.get(index);
            if (m != null && walkerIndex[slot] != index) {
                // a miss: the entry's current key must have no translation in flight before it is replaced
                if (walkerBusy.getOrDefault(slot, 0) > 0) return;
                loadingMkey = true;
                counters.counter("Firmware.mkey_context_misses").inc();
                Runnable load = () -> {
                    MkeyContext now = mkeys.get(index);
                    if (now != null) {
                        adapter.mkeyWrite(now);
                        walkerIndex[slot] = index;
                    }
                    loadingMkey = false;
                    pumpXlate();
                };
                if (mkcAddr < 0) load.run();
                else adapter.port().dmaRead(mkcAddr + index * MKC_BYTES, MKC_BYTES, x -> load.run());
                return;
            }
            xlateQueue.poll();
            walkerBusy.merge(slot, 1, Integer::sum);
            xlateSlot.put((int) r.tag(), slot);
            adapter.translate(r);
        }
    }

    private final Map<Integer, Integer> xlateSlot = new HashMap<>();

    // ------------------------------------------------------------------ memory windows

    private void unbind(long index) {
        long[] w = windows.get(index);
        if (w != null) w[1] = -1;
    }

    /**
     * Binds window {@code mwKey} (index, and the new key byte in its low 8 bits) to {@code length}
     * bytes at {@code addr} of MR {@code mrKey} for {@code qp}, with {@code access}: the checks of
     * rxe's bind (docs/sources.md#rxe-keys-and-memory-windows). Returns 0, or the vendor syndrome of the failed check (MW_BIND_ERR).
     */
    int bindWindow(Qp qp, long mwKey, long mrKey, long addr, long length, int access) {
        long[] w = windows.get(mwKey >>> 8);
        MkeyContext mw = mkeys.get(mwKey >>> 8), mr = mkeys.get(mrKey >>> 8);
        if (w == null || mw == null) return Vendor.MW_UNKNOWN;
        if (w[0] == 2 && mw.state() != MttPorts.STATE_FREE) return Vendor.MW_NOT_FREE;
        if (w[0] == 1 && (access & MttPorts.ZERO_BASED) != 0) return Vendor.MW_TYPE1_ZERO_BASED;
        if (mw.pd() != qp.pd) return Vendor.MW_PD;
        if (mr == null || windows.containsKey(mrKey >>> 8) || mr.key() != (mrKey & 0xff) || mr.length() == 0) return Vendor.MW_BAD_MR;
        if ((mr.access() & MttPorts.ZERO_BASED) != 0 || (mr.access() & MttPorts.MW_BIND) == 0) return Vendor.MW_MR_NO_BIND;
        if ((access & (MttPorts.REMOTE_WRITE | MttPorts.REMOTE_ATOMIC)) != 0 && (mr.access() & MttPorts.LOCAL_WRITE) == 0) return Vendor.MW_MR_NO_BIND;
        if (addr < mr.start() || length > mr.length() || addr - mr.start() > mr.length() - length) return Vendor.MW_RANGE;
        long offInMr = addr - mr.start() + mr.pageOffset(), pageMask = (1L << mr.pageShift()) - 1;
        MkeyContext bound = new MkeyContext(mw.index(), MttPorts.STATE_VALID, mwKey & 0xff, mw.pd(), qp.qpn & 0xFFFFFF, w[0] == 2 ? 1 : 0,
                addr, length, access & 0x1f, mr.pageShift(), offInMr & pageMask, mr.mttBase() + (offInMr >> mr.pageShift()));
        mkeys.put(mw.index(), bound);
        w[1] = mr.index();
        publish(bound);
        return 0;
    }

    /** LOCAL_INV or SEND_WITH_INV of {@code key} by {@code qp}: only a bound type-2 window (nicsim's MRs are not fast-registered). Returns 0 or a vendor syndrome. */
    int invalidate(Qp qp, long key) {
        long[] w = windows.get(key >>> 8);
        MkeyContext m = mkeys.get(key >>> 8);
        if (m == null || m.key() != (key & 0xff)) return Vendor.INV_UNKNOWN;
        if (w == null) return Vendor.INV_NOT_WINDOW;
        if (w[0] == 1) return Vendor.INV_TYPE1;
        if (m.state() != MttPorts.STATE_VALID || m.pd() != qp.pd) return Vendor.INV_UNKNOWN;
        MkeyContext free = new MkeyContext(m.index(), MttPorts.STATE_FREE, m.key(), m.pd(), 0, 0, 0, 0, 0, 12, 0, 0);
        mkeys.put(m.index(), free);
        w[1] = -1;
        publish(free);
        return 0;
    }

    // ------------------------------------------------------------------ events from the adapter

    /** A fetched, checked send WQE. */
    @Override public void onWqe(long qpn, int index, byte[] bytes) {
        Qp q = qps.get(qpn);
        if (q == null) {
            report(String.format("WQE %d for QP 0x%x, which does not exist", index, qpn));
            return;
        }
        q.requester.onWqe(index, bytes);
    }

    /**
     * The fetcher refused a WQE (bad control segment or failed ring read) and stopped the queue. The
     * WQE completes in error and the QP stops; the fetch restarts right after it, so the WQEs posted
     * behind it are fetched and flushed, each with its own completion. When only the opcode was
     * wrong, the control segment's DS says where the next WQE starts. Otherwise nothing does: the
     * fetch goes on a WQEBB at a time up to the producer seen now, and a WQEBB it refuses there is
     * not a WQE (the rest of the refused one) but skipped, counted and reported, with no completion.
     */
    @Override public void onWqeError(WqeError e) {
        Qp q = qps.get(e.qpn());
        if (q == null) return;
        int index = (int) e.index() & 0xFFFF, posted = (q.sqProducerSeen - index) & 0xFFFF;
        int next;
        if (q.skipping(index)) {
            counters.counter("Firmware.wqebbs_skipped").inc();
            report(String.format("WQEBB %d of QP 0x%x skipped looking for the WQE after a refused one (%s)", index, q.qpn, e));
            next = index + 1;
        } else {
            int opcode = WqeLayout.opcode(e.ctrl()), ds = WqeLayout.ds(e.ctrl());
            boolean dmaError = e.reason() == WqeError.Code.DMA_ERROR;
            q.requester.localError(index, opcode, dmaError ? Cqe64.SYNDROME_GENERAL_ERR : Cqe64.SYNDROME_LOC_QP_OP_ERR, (int) e.code(), 0, 0);
            boolean sized = e.reason() == WqeError.Code.BAD_OPCODE && ds != 0 && WqeLayout.qpn(e.ctrl()) == q.qpn
                    && WqeLayout.index(e.ctrl()) == index && WqeLayout.wqebbs(ds) <= posted;
            if (sized) next = index + WqeLayout.wqebbs(ds);
            else {
                q.skipUpTo(q.sqProducerSeen);
                next = index + 1;
            }
        }
        if (posted == 0) next = q.sqProducerSeen; // (never: the fetcher is not ahead of the doorbells firmware saw)
        q.sqDelivered = next & 0xFFFF;
        if (sqResident(q)) adapter.loadSq(q.qpn, q.sqAddr, q.sqLogSize, q.sqDelivered, q.sqProducerSeen);
    }

    /** A decoded send doorbell (a kick: a QP in ERR re-reads its receive queue to flush new receives). */
    @Override public void onDoorbell(long qpn, int producer) {
        Qp q = qps.get(qpn);
        if (q == null) return;
        q.sqProducerSeen = producer;
        q.onDoorbell();
    }

    /** The CQE writer could not write a completion. */
    @Override public void onCqError(long cqn, CqePorts.CqError.Code code) {
        Cq cq = cqs.get(cqn);
        if (cq == null || cq.error) return;
        cq.error = true;
        counters.counter("Firmware.cq_overflows").inc();
        event(EventType.CQ_ERR, cqn);
        for (Qp q : qps.values())
            if (q.scq == cq || q.rcq == cq) {
                event(EventType.QP_FATAL, q.qpn);
                q.toError();
            }
    }

    private void onPacket(Packet p) {
        packetsIn.inc();
        Qp q = qps.get(p.destQp());
        if (q == null) {
            counters.counter("Firmware.packets_no_qp").inc();
            return;
        }
        q.responder.onPacket(p);
    }

    // ------------------------------------------------------------------ services for the transport

    /** Sends a packet; returns when its last bit leaves the adapter's port. */
    long send(Packet p) { return send(p, 0); }

    /** Sends a packet whose bytes the send engine feeds to the link in {@code feedPicos}; returns when its last bit leaves. */
    long send(Packet p, long feedPicos) {
        packetsOut.inc();
        adapter.traceLinkBytes(p.wireBytes());
        return fabric.send(p, feedPicos);
    }

    /** Translates through the MttWalker; the callback gets the chunks, or one failed response. */
    void translate(long mkey, long va, long length, int access, long pd, long qpn, Consumer<List<XlateRsp>> done) {
        int tag = nextTag;
        nextTag = (nextTag + 1) & 0xFFFF;
        xlatePending.put(tag, done);
        xlateParts.put(tag, new ArrayList<>());
        xlateQueue.add(new Object[]{new XlateReq(mkey & 0xFFFFFFFFL, va, length, access, pd, qpn & 0xFFFFFF, tag)});
        pumpXlate();
    }

    /** A response from the MttWalker. */
    @Override public void onXlate(XlateRsp r) {
        List<XlateRsp> parts = xlateParts.get((int) r.tag());
        if (parts == null) return;
        parts.add(r);
        if (r.last() != 0) {
            xlateParts.remove((int) r.tag());
            Integer slot = xlateSlot.remove((int) r.tag());
            if (slot != null) walkerBusy.merge(slot, -1, Integer::sum);
            xlatePending.remove((int) r.tag()).accept(parts);
            pumpXlate();
        }
    }

    /** A translation miss waiting for the host's interrupt handler. */
    private record HostFill(long index, Consumer<long[]> done) {}

    /**
     * An MTT entry the walker's cache missed: read it from the translation table in host memory
     * ({@code mtt.fill = "dma"}), or ask the host for it by interrupt ({@code "interrupt"}: the
     * handler reads {@link Cmd#REG_XLATE_MISS} and writes the entry to {@link Cmd#REG_XLATE_FILL}).
     */
    @Override public void onMttFill(long index, Consumer<long[]> done) {
        if (index >= mttEntries) { done.accept(new long[]{0, 1}); return; }
        if (fillByInterrupt) {
            if (xlateVector < 0) {
                counters.counter("Firmware.xlate_fills_unanswerable").inc();
                report("translation miss at MTT index " + index + " with mtt.fill = interrupt, but no host handler registered (REG_XLATE_VECTOR)");
                done.accept(new long[]{0, 1});
                return;
            }
            hostFills.add(new HostFill(index, done));
            counters.counter("Firmware.xlate_host_interrupts").inc();
            if (hostFills.size() == 1) adapter.port().msix(xlateVector);
            return;
        }
        adapter.port().dmaRead(mttAddr + index * 8, 8, r -> done.accept(r.status() == PciPort.DmaStatus.OK
                ? new long[]{BigEndian.get64(r.data(), 0), 0} : new long[]{0, 1}));
    }

    /** The host's answer to the oldest translation miss; the next one, if any, interrupts again. */
    private void hostFill(long index, long entry) {
        HostFill f = hostFills.peekFirst();
        if (f == null || f.index != index) {
            counters.counter("Firmware.xlate_fills_refused").inc();
            report(String.format("REG_XLATE_FILL for MTT index %d, but the oldest miss waiting is %s", index,
                    f == null ? "none" : "index " + f.index));
            return;
        }
        hostFills.pollFirst();
        f.done.accept(new long[]{entry, 0});
        if (!hostFills.isEmpty()) adapter.port().msix(xlateVector);
    }

    /**
     * Writes a completion to {@code cq}, in order. When the ring might be full by firmware's count,
     * it first re-reads the consumer index from the CQ's doorbell record, so the writer sees an
     * overflow only when software really has not consumed.
     */
    void complete(Cq cq, long[] cqe, boolean solicited) {
        if (cq.error) { counters.counter("Firmware.cqes_lost").inc(); return; }
        cq.waiting.add(cqe);
        cq.waitingSolicited.add(solicited);
        drainCq(cq);
    }

    private void drainCq(Cq cq) {
        while (!cq.waiting.isEmpty() && !cq.refreshing) {
            if (cq.produced - cq.knownCi >= cq.size && !cq.confirmedFull) {
                cq.refreshing = true;
                adapter.port().dmaRead(cq.dbrec, 4, r -> {
                    cq.refreshing = false;
                    long ci = r.status() == PciPort.DmaStatus.OK ? BigEndian.get32(r.data(), 0) & 0xFFFFFF : cq.knownCi;
                    long delta = (ci - cq.knownCi) & 0xFFFFFF;
                    boolean moved = delta != 0;
                    cq.knownCi += delta;
                    if (moved) adapter.cqConsumerIndex(cq.cqn, ci);
                    else cq.confirmedFull = true; // still full: the writer sees it and reports the overflow
                    drainCq(cq);
                });
                return;
            }
            cq.produced++;
            adapter.postCqe(cq.cqn, cq.waiting.poll(), cq.waitingSolicited.poll());
        }
    }

    /** Posts an async event into the event queue (64-byte EQEs: byte 0 type, bytes 4..7 the resource, byte 63 owner). */
    void event(EventType type, long resource) {
        counters.counter("Firmware.events").inc();
        log.add("event " + type + " for 0x" + Long.toHexString(resource));
        if (!initialized) return;
        byte[] eqe = new byte[64];
        eqe[0] = (byte) type.value();
        BigEndian.put32(eqe, 4, resource);
        int size = 1 << eqLogSize;
        eqe[63] = (byte) (((eqProducer & size) != 0 ? 1 : 0) | 0x80);
        long addr = eqAddr + (long) (eqProducer & (size - 1)) * 64;
        eqProducer++;
        adapter.port().dmaWrite(addr, eqe, r -> {});
        adapter.port().msix(0); // the event queue's vector, after its entry (posted writes stay in order)
    }

    static int psnDiff(int a, int b) { return ((a - b) << 8) >> 8; }

    static boolean isReadOrAtomic(int op) {
        return op == WqeLayout.OP_RDMA_READ || op == WqeLayout.OP_ATOMIC_CS || op == WqeLayout.OP_ATOMIC_FA;
    }


    static QpState state(long v) { return QpState.values()[(int) v]; }


}
