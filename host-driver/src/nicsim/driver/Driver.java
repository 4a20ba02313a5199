package nicsim.driver;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;
import java.util.function.IntConsumer;
import java.util.function.LongUnaryOperator;
import nicsim.abi.BigEndian;
import nicsim.abi.Cmd;
import nicsim.abi.Eqe64;
import nicsim.abi.EqeType;
import nicsim.abi.MttEntry;
import nicsim.abi.UarLayout;
import nicsim.host.ConfigSpace;
import nicsim.sim.Layout;

/**
 * The host driver: it reaches the adapter only through the PCI model. Probe reads config space,
 * sizes and assigns BAR0, enables memory space and bus mastering and MSI-X, then brings the
 * adapter up through its command interface ({@link Cmd}): the command entry and mailboxes live in
 * host memory, and each command is one MMIO doorbell. A command is synchronous for the caller: the
 * simulation runs until the adapter hands the entry back. A command the firmware refuses becomes a
 * {@link ErrnoException} with mlx5's errno for its status and the firmware's syndrome in words.
 */
public final class Driver {
    public static final int EQ_LOG_SIZE = 8, MTT_ENTRIES = 1 << 20;
    /** Simulated time a command may take before the driver gives up (as mlx5's command timeout). */
    public static final long COMMAND_TIMEOUT = 60_000_000_000L;

    private final Host host;
    private final long bar0;
    private final long entry, inBox, outBox;
    private final long eqRing;
    private int eqConsumer;
    private final Cmd.HcaCap caps;
    /**
     * The handlers of each MSI-X vector: vector 0's (the event queue's) and those reserved stay alone; CQs share the
     * rest.
     */
    private final Map<Integer, List<IntConsumer>> vectors = new HashMap<>();
    private final Set<Integer> reserved = new HashSet<>();
    private long fills;
    private final ArrayDeque<long[]> events = new ArrayDeque<>();
    private final List<Consumer<long[]>> eventListeners = new ArrayList<>();
    private long commands, eqInterrupts;
    /** The port's state as the event queue last told it: ACTIVE from INIT_HCA until a PORT_ERR. */
    private boolean portActive = true;

    /** Whether the port is ACTIVE, as the adapter's PORT_ERR and PORT_ACTIVE events said last (query_port's state). */
    public boolean portActive() { return portActive; }

    /** MSI-X interrupts the async event queue has raised. */
    public long eqInterrupts() { return eqInterrupts; }

    Driver(Host host) {
        this.host = host;
        var bus = host.bus;
        int vendorDevice = bus.configRead32(0, ConfigSpace.VENDOR_ID);
        if ((vendorDevice & 0xffff) != Cmd.PCI_VENDOR || (vendorDevice >>> 16) != Cmd.PCI_DEVICE)
            throw new IllegalStateException(
                    String.format("no nicsim adapter at function 0: vendor/device 0x%08x", vendorDevice));
        bus.configWrite32(0, ConfigSpace.BAR0, 0xFFFF_FFFF);
        long size = (~(bus.configRead32(0, ConfigSpace.BAR0) & 0xFFFF_FFF0L) & 0xFFFF_FFFFL) + 1;
        if (size < 4096) throw new IllegalStateException("BAR0 sizing gave " + size + " bytes");
        bar0 = Host.BAR0;
        bus.configWrite32(0, ConfigSpace.BAR0, (int) bar0);
        bus.configWrite32(0, ConfigSpace.BAR0 + 4, 0);
        bus.configWrite32(0, ConfigSpace.COMMAND, ConfigSpace.CMD_MEMORY_SPACE | ConfigSpace.CMD_BUS_MASTER);
        bus.configWrite32(0, ConfigSpace.MSIX_CAP, ConfigSpace.MSIX_ENABLE << 16);
        bus.onInterrupt((address, data) -> {
            List<IntConsumer> hs = vectors.get(data);
            if (hs != null) for (IntConsumer h : List.copyOf(hs)) h.accept(data);
        });
        // MSI-X vector 0 belongs to the async event queue: the handler takes the new entries at once
        vectors.put(0, List.of(v -> { eqInterrupts++; events(); }));
        reserved.add(0);
        bus.mmioWrite(bar0 + Cmd.REG_MSIX_TABLE, ByteBuffer.allocate(16).order(ByteOrder.LITTLE_ENDIAN)
                .putInt((int) host.config.bus().msiAddress()).putInt(0).putInt(0).putInt(0).array());
        entry = host.allocPhysical(Cmd.ENTRY_BYTES, 64);
        inBox = host.allocPhysical(4096, 4096);
        outBox = host.allocPhysical(4096, 4096);
        byte[] a = new byte[8];
        BigEndian.put64(a, 0, entry);
        mmio(Cmd.REG_CMDQ_ADDR, a);
        caps = command(Cmd.QUERY_HCA_CAP, Cmd.EMPTY, new Cmd.Empty(), Cmd.HCA_CAP);
        eqRing = host.allocPhysical((long) Eqe64.BYTES << EQ_LOG_SIZE, 4096);
        long mtt = host.allocPhysical(8L * MTT_ENTRIES, 4096);
        long qpc = host.allocPhysical(256L * (caps.maxQp() + 1), 4096); // the adapter's context tables (ICM)
        long mkc = host.allocPhysical(64L * (caps.maxMkey() + 1), 4096);
        command(Cmd.INIT_HCA, Cmd.INIT_HCA_IN, new Cmd.InitHca(eqRing, EQ_LOG_SIZE, mtt, MTT_ENTRIES, qpc, mkc),
                Cmd.EMPTY);
        // translation misses the adapter asks the host to fill (KVIA): the handler answers from the driver's own table
        int xlate = reserveVector(v -> fillTranslation(mtt));
        byte[] vec = new byte[4];
        BigEndian.put32(vec, 0, xlate);
        mmio(Cmd.REG_XLATE_VECTOR, vec);
    }

    public Host host() { return host; }
    /** The host physical address BAR0 is mapped at. */
    public long bar0() { return bar0; }
    public Cmd.HcaCap caps() { return caps; }
    public long commandsIssued() { return commands; }

    /** A posted MMIO write to BAR0 + {@code offset}. */
    public void mmio(long offset, byte[] data) { host.bus.mmioWrite(bar0 + offset, data); }

    /**
     * The translation-miss interrupt ({@code mtt.fill = "interrupt"}): after the handler's entry
     * cost, read which MTT entry the adapter misses and write it back from the table in host memory.
     */
    private void fillTranslation(long mttTable) {
        host.bus.cpuWork(host.config.interruptCostPs());
        host.bus.mmioRead(bar0 + Cmd.REG_XLATE_MISS, 8, r -> {
            long miss = BigEndian.get64(r.data(), 0);
            if (miss >= 0) return; // bit 63 clear: nothing is waiting
            long index = miss & Long.MAX_VALUE;
            long entry = BigEndian.get64(host.memory.read(mttTable + index * 8, 8), 0);
            if ((entry & MttEntry.NOT_PRESENT) != 0) { // on-demand paging: bring the page in, then mark it present
                entry = (entry & MttEntry.IMPLICIT) != 0 ? implicitPage(entry) : entry & ~MttEntry.NOT_PRESENT;
                if (host.config.odp()) host.bus.cpuWork(host.config.odpFaultCostPs());
                byte[] e = new byte[8];
                BigEndian.put64(e, 0, entry);
                host.memory.write(mttTable + index * 8, e);
                pageFaults++;
            }
            byte[] fill = new byte[16];
            BigEndian.put64(fill, 0, index);
            BigEndian.put64(fill, 8, entry);
            mmio(Cmd.REG_XLATE_FILL, fill);
            fills++;
        });
    }

    /** Each implicit on-demand MR's pager, by mkey index: a 2 MB page's physical address from its virtual one. */
    private final Map<Long, LongUnaryOperator> pagers = new HashMap<>();

    public void implicitRegistered(long mkeyIndex, LongUnaryOperator pager) {
        pagers.put(mkeyIndex, pager);
    }

    public void implicitDeregistered(long mkeyIndex) { pagers.remove(mkeyIndex); }

    /**
     * An implicit MR's page the adapter names by address: its physical address from the MR's pager,
     * or (nothing mapped there, or the MR is gone) IMPLICIT alone, which fails the access.
     */
    private long implicitPage(long entry) {
        long va = MttEntry.implicitPage(entry);
        var pager = pagers.get(MttEntry.implicitMkeyIndex(entry));
        long pa = pager == null ? -1 : pager.applyAsLong(va);
        if (pa < 0) implicitMisses++;
        return pa >= 0 ? pa : MttEntry.IMPLICIT;
    }

    /** Implicit ODP pages nothing was mapped at. */
    private long implicitMisses;

    /**
     * An on-demand MR as the driver must know it to invalidate its pages: PD, lkey, its host range and the address the
     * adapter knows it by.
     */
    public record OdpRegion(long pd, long lkey, long addr, long length, long iova) {}

    private final List<OdpRegion> odp = new ArrayList<>();

    public void odpRegistered(OdpRegion r) { odp.add(r); }

    public void odpDeregistered(long lkey) { odp.removeIf(r -> r.lkey() == lkey); }

    /**
     * The OS takes the host pages of [addr, addr + length) away: every on-demand MR over them has
     * the adapter's translation of those pages invalidated first (ODP_INVALIDATE). Pinned MRs keep
     * theirs. Returns the regions invalidated.
     */
    public int evict(long addr, long length) {
        int n = 0;
        for (OdpRegion r : List.copyOf(odp)) {
            long from = Math.max(addr, r.addr()), to = Math.min(addr + length, r.addr() + r.length());
            if (from >= to) continue;
            command(Cmd.ODP_INVALIDATE, Cmd.ODP_PREFETCH_IN,
                    new Cmd.OdpPrefetch(r.pd(), r.lkey(), r.iova() + (from - r.addr()), to - from), Cmd.EMPTY);
            n++;
        }
        return n;
    }

    /** On-demand paging needs the profile's cost of bringing a page in (its fault handler's work). */
    public boolean odpSupported() { return host.config.odp(); }

    /** Indirect mkeys need the profile's cost of a UMR's KLM writes (the firmware refuses them otherwise). */
    public boolean umrSupported() { return host.config.umr(); }

    /** Pages of on-demand MRs this driver's handler has brought in. */
    public long pageFaults() { return pageFaults; }

    /** Pages of implicit on-demand MRs the adapter touched where nothing was mapped (their accesses failed). */
    public long implicitMisses() { return implicitMisses; }

    private long pageFaults;

    /** Translation misses this driver's interrupt handler has filled. */
    public long translationFills() { return fills; }

    /** Runs one command; returns its result or throws ErrnoException with the firmware's status and syndrome. */
    public <I, O> O command(int opcode, Layout<I> inLayout, I input, Layout<O> outLayout) {
        byte[] in = Cmd.encode(inLayout, input);
        int outLen = Cmd.OUT_HEADER_WORDS * 8 + Cmd.bytes(outLayout);
        byte[] out = raw(opcode, in, outLen);
        long head = BigEndian.get64(out, 0);
        Cmd.Status status = Cmd.Status.of((int) (head >>> 32));
        if (status != Cmd.Status.OK) {
            int synd = (int) (head & 0xFFFF_FFFFL);
            String why = synd < Cmd.Syndrome.values().length ? Cmd.Syndrome.values()[synd].text : "syndrome " + synd;
            throw new ErrnoException(status.errno == 0 ? LinuxErrno.EIO : status.errno,
                    String.format("%s failed: %s (status %s, value 0x%x)", Cmd.opcodeName(opcode), why, status,
                            BigEndian.get64(out, 8)));
        }
        return Cmd.decode(outLayout, out, Cmd.OUT_HEADER_WORDS * 8);
    }

    /** Writes a command entry and input mailbox, rings the command doorbell, and waits for the adapter. */
    public byte[] raw(int opcode, byte[] in, int outLen) {
        commands++;
        var mem = host.memory;
        mem.write(inBox, in);
        mem.write(outBox, new byte[outLen]);
        byte[] e = new byte[Cmd.ENTRY_BYTES];
        BigEndian.put32(e, Cmd.ENTRY_OPCODE, opcode);
        BigEndian.put32(e, Cmd.ENTRY_IN_LEN, in.length);
        BigEndian.put64(e, Cmd.ENTRY_IN_ADDR, inBox);
        BigEndian.put64(e, Cmd.ENTRY_OUT_ADDR, outBox);
        BigEndian.put32(e, Cmd.ENTRY_OUT_LEN, outLen);
        e[Cmd.ENTRY_OWNER] = Cmd.OWNER_HW;
        mem.write(entry, e);
        mmio(Cmd.REG_CMD_DOORBELL, new byte[]{0, 0, 0, 1});
        try {
            host.sim.runUntil(() -> mem.read(entry + Cmd.ENTRY_OWNER, 1)[0] == 0, COMMAND_TIMEOUT, host.scope);
        } catch (IllegalStateException timeout) {
            throw new ErrnoException(LinuxErrno.ETIMEDOUT,
                    Cmd.opcodeName(opcode) + ": the adapter did not answer: " + timeout.getMessage());
        }
        return mem.read(outBox, outLen);
    }

    /** Takes an MSI-X vector of {@code handler}'s own for good (the translation handler's: it must never be shared). */
    public int reserveVector(IntConsumer handler) {
        int v = 1;
        while (vectors.containsKey(v)) v++;
        if (v >= Cmd.MSIX_VECTORS) throw new IllegalStateException("no MSI-X vector left to reserve");
        reserved.add(v);
        program(v, handler);
        return v;
    }

    /**
     * Adds {@code handler} to the least shared MSI-X vector not reserved (programmed and unmasked in
     * the adapter's table on first use). Once there are more CQs than vectors, CQs share vectors:
     * each handler then tells by its CQ whether the interrupt was its own. Give it back with
     * {@link #releaseVector} when the CQ goes.
     */
    public int claimVector(IntConsumer handler) {
        int best = -1;
        for (int v = 1; v < Cmd.MSIX_VECTORS; v++) {
            if (reserved.contains(v)) continue;
            List<IntConsumer> hs = vectors.get(v);
            if (hs == null || hs.isEmpty()) { best = v; break; }
            if (best < 0 || hs.size() < vectors.get(best).size()) best = v;
        }
        if (best < 0) throw new IllegalStateException("every MSI-X vector is reserved");
        program(best, handler);
        return best;
    }

    /** Whether vector {@code v} serves more than one handler. */
    public boolean vectorShared(int v) {
        List<IntConsumer> hs = vectors.get(v);
        return hs != null && hs.size() > 1;
    }

    /** {@code handler} no longer takes vector {@code v}'s interrupts. */
    public void releaseVector(int v, IntConsumer handler) {
        List<IntConsumer> hs = vectors.get(v);
        if (hs != null) hs.remove(handler);
    }

    private void program(int v, IntConsumer handler) {
        List<IntConsumer> hs = vectors.computeIfAbsent(v, k -> new ArrayList<>(1));
        if (!hs.isEmpty()) { hs.add(handler); return; }
        hs.add(handler);
        host.bus.mmioWrite(bar0 + Cmd.REG_MSIX_TABLE + 16L * v, ByteBuffer.allocate(16).order(ByteOrder.LITTLE_ENDIAN)
                .putInt((int) host.config.bus().msiAddress()).putInt(0).putInt(v).putInt(0).array());
    }

    /**
     * BAR0 offset of a UAR page's send doorbell (BlueFlame register 0), from the BAR layout the device's profile
     * documents.
     */
    public long sendDoorbell(int uar) { return uarPage(uar) + UarLayout.BF_OFFSET; }

    /** BAR0 offset of a UAR page's CQ doorbell. */
    public long cqDoorbell(int uar) { return uarPage(uar) + UarLayout.CQ_DOORBELL; }

    private long uarPage(int uar) { return caps.uarBase() + uar * caps.uarPageSize(); }

    /**
     * Calls {@code listener} with each async event as the driver takes it from the event queue
     * (on the queue's interrupt), before any program polls it: the verbs library keeps its view
     * of an object's state in step with what the adapter did to it.
     */
    public void onEvent(Consumer<long[]> listener) { eventListeners.add(listener); }

    public void removeEventListener(Consumer<long[]> listener) { eventListeners.remove(listener); }

    /**
     * Takes the async events the adapter has written into the event queue: {type, resource} each, for a context to
     * claim. A port's event is every context's: its listeners hear it, and it is not kept here.
     */
    public ArrayDeque<long[]> events() {
        int size = 1 << EQ_LOG_SIZE;
        while (true) {
            byte[] e = host.memory.read(eqRing + (long) (eqConsumer & (size - 1)) * Eqe64.BYTES, Eqe64.BYTES);
            int owner = e[Eqe64.OWNER] & 1;
            if ((e[Eqe64.OWNER] & Eqe64.WRITTEN) == 0 || owner != ((eqConsumer & size) != 0 ? 1 : 0)) break;
            long[] event = {e[Eqe64.TYPE] & 0xff, BigEndian.get32(e, Eqe64.RESOURCE)};
            int type = (int) event[0];
            boolean port = type == EqeType.PORT_ERR.value() || type == EqeType.PORT_ACTIVE.value();
            if (port) portActive = type == EqeType.PORT_ACTIVE.value();
            else events.add(event);
            eqConsumer++;
            for (var l : List.copyOf(eventListeners)) l.accept(event);
        }
        return events;
    }
}
