package nicsim.host;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.function.Consumer;
import java.util.function.LongConsumer;
import nicsim.host.PciPort.DmaStatus;
import nicsim.host.PciPort.Incoming;
import nicsim.host.PciPort.Into;
import nicsim.host.PciPort.ReadResult;
import nicsim.profile.Profile;
import nicsim.profile.Require;
import nicsim.sim.Arrival;
import nicsim.sim.Counters;
import nicsim.sim.Simulator;

/**
 * The host's root complex and the link to its adapters. The host side issues configuration
 * accesses, posted MMIO writes and non-posted MMIO reads; a device issues DMA and MSI-X through the
 * {@link PciPort} it is given. All timing comes from {@link PciLink} and the profile.
 *
 * <p>An MMIO access that no enabled BAR decodes is an Unsupported Request: it is counted, kept in
 * {@link #unsupportedRequests()}, and returned to the caller; it never reaches a device. A DMA to
 * an address outside host memory likewise completes with UNSUPPORTED_REQUEST.
 */
public final class PciBus {
    /** The result of a host MMIO access. */
    public enum MmioStatus { OK, UNSUPPORTED_REQUEST }

    /** A finished MMIO read: data is all ones for an unsupported request, as on real hardware. */
    public record MmioReadResult(MmioStatus status, byte[] data, long completedAt) {}

    /** A record of one unsupported request. */
    public record UnsupportedRequest(long timePicos, String kind, long address, int length) {
        @Override public String toString() {
            return String.format("unsupported request: %s of %d bytes at 0x%x (t=%d ps)", kind, length, address,
                    timePicos);
        }
    }

    /** Receives MSI/MSI-X messages that reach the host's message window. */
    public interface InterruptHandler { void message(long address, int data); }

    private static final long MSI_WINDOW = 1 << 20;

    private final Simulator sim;
    private final HostMemory memory;
    private final PciLink link;
    private final Stats stats;
    // TLPs land in the order they crossed the link: each kind costs the event queue one entry
    private final Simulator.Lane writes, readsServed, readsDone;
    private final long memoryReadLatency;
    private final long mmioWriteCost;
    private final long mmioReadCost;
    private final long mmioReadResponse;
    private final long msiBase;
    private final List<PciFunction> functions = new ArrayList<>();
    private final List<MsixTable> msix = new ArrayList<>();
    private final List<UnsupportedRequest> unsupported = new ArrayList<>();
    private InterruptHandler interrupts = (a, d) -> { };
    /** Where the host lets devices DMA (an IOMMU's mappings); null: all of host memory. */
    private Iommu iommu;

    /** An IOMMU's answer: whether a device may DMA to or from {@code [addr, addr + length)}. */
    public interface Iommu { boolean maps(long addr, long length); }
    private final ArrayDeque<CpuOp> cpuQueue = new ArrayDeque<>();
    private boolean cpuBusy;
    private long dmaSeq;

    /**
     * The bus's parameters, from the profile: its link's ({@code pci.*}), host memory's read latency, what an MMIO
     * write and read cost the CPU, how long a device takes to answer an MMIO read, and the address MSI messages go to.
     */
    public record Config(PciLink.Config link, long memoryReadLatencyPs, long mmioWriteCostPs, long mmioReadCostPs,
            long mmioReadResponsePs, long msiAddress) {
        public Config {
            Require.atLeast("host.memory.read.latency", memoryReadLatencyPs, 0, "ps");
            Require.atLeast("host.mmio.write.cost", mmioWriteCostPs, 0, "ps");
            Require.atLeast("host.mmio.read.cost", mmioReadCostPs, 0, "ps");
            Require.atLeast("pci.mmio.read.response", mmioReadResponsePs, 0, "ps");
            if (msiAddress < 0 || msiAddress > 0xFFFF_FFFFL - MSI_WINDOW + 1)
                throw Require.bad("host.msi.address", "0x" + Long.toHexString(msiAddress),
                        "a 32-bit address with room for the 1 MiB message window above it");
        }

        public static Config from(Profile p) {
            return new Config(PciLink.Config.from(p), p.picos("host.memory.read.latency"),
                    p.picos("host.mmio.write.cost"), p.picos("host.mmio.read.cost"), p.picos("pci.mmio.read.response"),
                    p.count("host.msi.address"));
        }
    }

    public PciBus(Simulator sim, Config cfg, HostMemory memory) { this(sim, cfg, memory, ""); }

    /** A host's bus whose counters are under {@code node} (e.g. "node0"; "" at the top). */
    public PciBus(Simulator sim, Config cfg, HostMemory memory, String node) {
        this.sim = sim;
        this.memory = memory;
        this.link = new PciLink(cfg.link());
        this.stats = new Stats(sim.counters().scope(node));
        this.writes = sim.lane();
        this.readsServed = sim.lane();
        this.readsDone = sim.lane();
        this.memoryReadLatency = cfg.memoryReadLatencyPs();
        this.mmioWriteCost = cfg.mmioWriteCostPs();
        this.mmioReadCost = cfg.mmioReadCostPs();
        this.mmioReadResponse = cfg.mmioReadResponsePs();
        this.msiBase = cfg.msiAddress();
    }

    /** The bus's counters, held so a TLP counts without a lookup by name. */
    private static final class Stats {
        final Counters.Ref mmioWrites, mmioReads, cpuWorkPicos, unsupportedRequests, dmaBlocked,
                dmaWrites, dmaWriteBytes, dmaReads, dmaReadBytes, msixBlocked, msixMasked, msixSent;

        Stats(Counters c) {
            mmioWrites = c.ref(PciStat.MMIO_WRITES);
            mmioReads = c.ref(PciStat.MMIO_READS);
            cpuWorkPicos = c.ref(PciStat.CPU_WORK_PICOS);
            unsupportedRequests = c.ref(PciStat.UNSUPPORTED_REQUESTS);
            dmaBlocked = c.ref(PciStat.DMA_BLOCKED);
            dmaWrites = c.ref(PciStat.DMA_WRITES);
            dmaWriteBytes = c.ref(PciStat.DMA_WRITE_BYTES);
            dmaReads = c.ref(PciStat.DMA_READS);
            dmaReadBytes = c.ref(PciStat.DMA_READ_BYTES);
            msixBlocked = c.ref(PciStat.MSIX_BLOCKED);
            msixMasked = c.ref(PciStat.MSIX_MASKED);
            msixSent = c.ref(PciStat.MSIX_SENT);
        }
    }

    public PciLink link() { return link; }
    public HostMemory memory() { return memory; }
    public Simulator simulator() { return sim; }
    public List<UnsupportedRequest> unsupportedRequests() { return List.copyOf(unsupported); }
    public void onInterrupt(InterruptHandler h) { interrupts = h; }

    /**
     * From now on devices reach only what {@code mapped} maps (null: all of host memory again); a
     * DMA elsewhere is an unsupported request, reported as the bus reports one, as an IOMMU fault is.
     */
    public void iommu(Iommu mapped) { iommu = mapped; }

    /** Whether a device's DMA of {@code [addr, addr + length)} reaches memory. */
    private boolean reaches(long addr, long length) {
        return memory.inBounds(addr, length) && (iommu == null || iommu.maps(addr, length));
    }

    /** Attaches a function; returns its index for configuration accesses. */
    public int attach(PciFunction f) {
        int index = functions.size();
        functions.add(f);
        msix.add(f.config().msixVectors() > 0 ? new MsixTable(f.config().msixVectors()) : null);
        f.connect(new Port(index));
        return index;
    }

    public MsixTable msixTable(int function) { return msix.get(function); }

    // ---- configuration space (boot-time, modelled as immediate)
    /** Function {@code function}'s configuration space, as the driver programmed it. */
    public ConfigSpace configSpace(int function) { return fn(function).config(); }
    public int configRead32(int function, int offset) { return fn(function).config().read32(offset); }
    public void configWrite32(int function, int offset, int value) { fn(function).config().write32(offset, value); }

    private PciFunction fn(int i) {
        if (i < 0 || i >= functions.size())
            throw new IllegalArgumentException("no PCI function " + i + " (have " + functions.size() + ")");
        return functions.get(i);
    }

    // ---- host MMIO
    /**
     * A posted write from the CPU. Returns at once with the decode result; the device sees the
     * write after the CPU issue cost, serialization and link latency. The CPU issues MMIO in
     * program order through a one-entry posted-write buffer: the next access cannot leave before
     * this write is on the wire (a CPU cannot flood a slow bus), nor sooner than its own issue cost.
     */
    public MmioStatus mmioWrite(long addr, byte[] data) {
        stats.mmioWrites.inc();
        Target t = decode(addr, data.length);
        if (t == null) return unsupported("MMIO write", addr, data.length);
        byte[] copy = data.clone();
        cpu(mmioWriteCost, release -> {
            // the TLP claims the link when it leaves the CPU, so a DMA ready earlier goes first
            long arrive = link.send(PciLink.Direction.DOWNSTREAM, sim.now(), copy.length, link.overheadPosted());
            release.accept(arrive - link.latencyPicos());
            sim.post(arrive, Simulator.Priority.DELIVERY, () -> {
                if (t.inMsixTable) msix.get(t.function).write(t.offset - tableStart(t.function), copy);
                else functions.get(t.function).mmioWrite(t.bar, t.offset, copy);
            });
        });
        return MmioStatus.OK;
    }

    /**
     * A non-posted read from the CPU; {@code done} runs when the completion reaches the CPU. An
     * uncached read stalls the CPU: no later MMIO leaves before the data is back.
     */
    public void mmioRead(long addr, int length, Consumer<MmioReadResult> done) {
        stats.mmioReads.inc();
        Target t = decode(addr, length);
        if (t == null) unsupported("MMIO read", addr, length);
        cpu(mmioReadCost, release -> {
            long arrive = link.send(PciLink.Direction.DOWNSTREAM, sim.now(), 0, link.overheadRequest());
            if (t == null) {
                byte[] ones = new byte[length];
                Arrays.fill(ones, (byte) 0xff);
                long back = arrive + link.latencyPicos();
                release.accept(back);
                MmioReadResult refused = new MmioReadResult(MmioStatus.UNSUPPORTED_REQUEST, ones, back);
                sim.post(back, Simulator.Priority.DELIVERY, () -> done.accept(refused));
                return;
            }
            sim.post(arrive, Simulator.Priority.DELIVERY, () -> {
                byte[] data = t.inMsixTable ? msix.get(t.function).read(t.offset - tableStart(t.function), length)
                                            : functions.get(t.function).mmioRead(t.bar, t.offset, length);
                long back = link.send(PciLink.Direction.UPSTREAM, sim.now() + mmioReadResponse, data.length,
                        link.overheadCompletion());
                release.accept(back);
                MmioReadResult answer = new MmioReadResult(MmioStatus.OK, data, back);
                sim.post(back, Simulator.Priority.DELIVERY, () -> done.accept(answer));
            });
        });
    }

    /**
     * One host MMIO access waiting in the CPU: its issue cost and what it does when it leaves (given the op itself to
     * release the CPU with). The op is also both of its events: its leaving, then its release starting the next.
     */
    private final class CpuOp implements Runnable, LongConsumer {
        private final long cost;
        private final Consumer<LongConsumer> run;
        private long depart, at; // when it left the CPU; when it released it
        private boolean left;

        CpuOp(long cost, Consumer<LongConsumer> run) { this.cost = cost; this.run = run; }

        @Override public void run() {
            if (left) cpuNext(depart, at);
            else {
                left = true;
                run.accept(this);
            }
        }

        /** The CPU is free from {@code release} (not before now): the next access may start then. */
        @Override public void accept(long release) {
            at = Math.max(release, sim.now());
            sim.post(at, Simulator.Priority.DELIVERY, this);
        }
    }

    /**
     * CPU time spent on other work (building a WQE, polling a CQE) in program order with MMIO: a
     * later MMIO access leaves no sooner than {@code picos} after the previous one.
     */
    public void cpuWork(long picos) {
        stats.cpuWorkPicos.add(picos);
        cpu(picos, release -> release.accept(sim.now()));
    }

    private void cpu(long cost, Consumer<LongConsumer> run) {
        cpuQueue.add(new CpuOp(cost, run));
        if (!cpuBusy) cpuNext(sim.now(), sim.now());
    }

    /**
     * Starts the next queued access. It leaves one issue cost after the previous access left
     * ({@code issuedAt}), but never before the previous one released the CPU ({@code freeAt}: its
     * write on the wire, or its read data back).
     */
    private void cpuNext(long issuedAt, long freeAt) {
        CpuOp op = cpuQueue.poll();
        if (op == null) { cpuBusy = false; return; }
        cpuBusy = true;
        op.depart = Math.max(issuedAt + op.cost, freeAt);
        sim.post(op.depart, Simulator.Priority.DELIVERY, op);
    }

    /**
     * When the first of a completion's {@code length} data bytes, whose last arrives at {@code arrive}, comes in
     * (they come in evenly from then to {@code arrive}): a conventional PCI target hands each data phase over
     * as it crosses the bus; a PCIe completion is used only once its whole TLP is in and its LCRC checked.
     */
    private long dataHead(long arrive, int length) {
        return link.isPcie() ? arrive : arrive - link.serializePicos(length);
    }

    /**
     * A posted write TLP on its way to memory: its bytes land when it arrives, and it goes back to the
     * spares (a write of many TLPs allocates nothing per TLP). Its bytes are the writer's, not copied.
     */
    private final class WriteTlp implements Runnable {
        long addr;
        byte[] data;
        int from, length;
        WriteTlp nextSpare; // the spare under this one

        @Override public void run() {
            memory.write(addr, data, from, length);
            data = null;
            if (spareWriteCount < 1024) {
                nextSpare = spareWrite;
                spareWrite = this;
                spareWriteCount++;
            }
        }
    }

    // the spare write TLPs, last in first out, linked through their own field: no deque and array of its own to
    // touch (with many nodes each object a write touches is a cold line at the node's turn)
    private WriteTlp spareWrite;
    private int spareWriteCount;

    private WriteTlp writeTlp(long addr, byte[] data, int from, int length) {
        WriteTlp t = spareWrite;
        if (t == null) t = new WriteTlp();
        else {
            spareWrite = t.nextSpare;
            t.nextSpare = null;
            spareWriteCount--;
        }
        t.addr = addr;
        t.data = data;
        t.from = from;
        t.length = length;
        return t;
    }

    private MmioStatus unsupported(String kind, long addr, int length) {
        UnsupportedRequest ur = new UnsupportedRequest(sim.now(), kind, addr, length);
        unsupported.add(ur);
        stats.unsupportedRequests.inc();
        sim.trace().record("PciBus", "ur#" + unsupported.size(), "unsupported", ur.toString());
        return MmioStatus.UNSUPPORTED_REQUEST;
    }

    private record Target(int function, int bar, long offset, boolean inMsixTable) {}

    private Target decode(long addr, int length) {
        for (int i = 0; i < functions.size(); i++) {
            ConfigSpace c = functions.get(i).config();
            int bar = c.decode(addr);
            if (bar < 0) continue;
            long off = addr - c.barBase(bar);
            if (off + length > c.barSize(bar)) return null; // runs off the end of the BAR
            boolean inTable = msix.get(i) != null && bar == c.msixTableBar()
                    && off >= tableStart(i) && off + length <= tableStart(i) + msix.get(i).bytes();
            return new Target(i, bar, off, inTable);
        }
        return null;
    }

    private long tableStart(int function) { return functions.get(function).config().msixTableOffset(); }

    /** The device side of the bus for one function. */
    private final class Port implements PciPort {
        private final int function;

        Port(int function) { this.function = function; }

        @Override public Simulator simulator() { return sim; }

        private ConfigSpace config() { return functions.get(function).config(); }

        @Override public void dmaWrite(long hostAddr, byte[] data, Consumer<WriteResult> done) {
            write(hostAddr, data, 0, data.length, sim.now(), done, false, false);
        }

        @Override public void dmaWriteStreamed(long hostAddr, byte[] data, int offset, int length, long since,
                                              Consumer<WriteResult> done) {
            write(hostAddr, data, offset, length, fedSince(since), Objects.requireNonNull(done, "done"), true, false);
        }

        @Override public void dmaWriteStreamedPosted(long hostAddr, byte[] data, int offset, int length, long since) {
            if (!dmaWriteLands(hostAddr, length))
                throw new IllegalArgumentException(String.format(
                        "posted DMA write of %d B at 0x%x would not land: it needs a completion", length, hostAddr));
            write(hostAddr, data, offset, length, fedSince(since), null, true, true); // known to land
        }

        /**
         * When a streamed write holds the bus from: since its first byte on a conventional bus, now on PCIe (a TLP
         * leaves whole).
         */
        private long fedSince(long since) {
            if (since > sim.now())
                throw new IllegalArgumentException("streamed DMA write fed since " + since + " ps, after now ("
                        + sim.now() + " ps)");
            return link.isPcie() ? sim.now() : since;
        }

        @Override public byte[] inspect(long hostAddr, int length) {
            return config().busMasterEnabled() && reaches(hostAddr, length) ? memory.read(hostAddr, length) : null;
        }

        @Override public boolean dmaWriteLands(long hostAddr, int length) {
            return config().busMasterEnabled() && reaches(hostAddr, length);
        }

        /**
         * A DMA write whose bytes were fed from {@code since} on, the last of them now; {@code done}
         * null: no completion (see dmaWriteStreamedPosted). The bytes are {@code data[offset, offset + length)};
         * {@code handedOver}: the caller does not change them until the write has landed, so each TLP lands
         * its slice of them without a copy. {@code lands}: the caller found that it lands ({@link #dmaWriteLands}), so
         * neither the bus master bit nor the range is looked up again (a posted write is one TLP a call).
         */
        private void write(long hostAddr, byte[] data, int offset, int length, long since, Consumer<WriteResult> done,
                           boolean handedOver, boolean lands) {
            if (offset < 0 || length < 0 || offset + length > data.length)
                throw new IllegalArgumentException("DMA write of bytes [" + offset + ", " + (offset + length)
                        + ") of a " + data.length + " B buffer");
            long seq = ++dmaSeq;
            if (!lands && !config().busMasterEnabled()) {
                stats.dmaBlocked.inc();
                sim.scheduleIn(0, Simulator.Priority.DELIVERY,
                        () -> done.accept(new WriteResult(DmaStatus.BUS_MASTER_DISABLED, sim.now())));
                return;
            }
            stats.dmaWrites.inc();
            boolean traced = sim.trace().enabled("PciBus"); // asked once: a write is often a single TLP
            if (traced) sim.trace().record("PciBus", "dma#" + seq, "dma_write_issued",
                    String.format("0x%x +%d", hostAddr, length));
            long last = sim.now();
            boolean ok = lands || reaches(hostAddr, length);
            // max-payload pieces that do not cross a max-payload boundary (PciLink#splitWrite), without a list
            int mps = link.maxPayload();
            for (long a = hostAddr, end = hostAddr + length; a < end; ) {
                int len = (int) (Math.min(end, (a / mps + 1) * mps) - a);
                long arrive = link.sendFed(PciLink.Direction.UPSTREAM, since, sim.now(), len, link.overheadPosted());
                last = Math.max(last, arrive);
                if (ok) {
                    int from = offset + (int) (a - hostAddr);
                    WriteTlp t = writeTlp(a, data, from, len);
                    if (!handedOver) { t.data = Arrays.copyOfRange(data, from, from + len); t.from = 0; }
                    writes.post(arrive, Simulator.Priority.DELIVERY, t);
                }
                a += len;
            }
            stats.dmaWriteBytes.add(length);
            if (!ok) unsupported("DMA write", hostAddr, length);
            long end = last;
            DmaStatus st = ok ? DmaStatus.OK : DmaStatus.UNSUPPORTED_REQUEST;
            if (done == null && !traced) return; // nothing to tell
            writes.post(end, Simulator.Priority.DELIVERY, () -> {
                if (traced) sim.trace().record("PciBus", "dma#" + seq, "dma_write_done", st.name());
                if (done != null) done.accept(new WriteResult(st, end));
            });
        }

        @Override public void dmaRead(long hostAddr, int length, Consumer<ReadResult> done) {
            read(hostAddr, length, false, done);
        }

        @Override public void dmaReadStreamed(long hostAddr, int length, Consumer<ReadResult> done) {
            read(hostAddr, length, true, done);
        }

        @Override public void dmaReadStreamed(long hostAddr, int length, Into into, Consumer<ReadResult> done) {
            read(hostAddr, length, true, Objects.requireNonNull(into, "into"), done);
        }

        @Override public void dmaReadStreamed(long hostAddr, int length, Into into, IntoAnswer answer) {
            read(hostAddr, length, true, Objects.requireNonNull(into, "into"), null,
                    Objects.requireNonNull(answer, "answer"));
        }

        private void read(long hostAddr, int length, boolean streamed, Consumer<ReadResult> done) {
            read(hostAddr, length, streamed, null, done);
        }

        private void read(long hostAddr, int length, boolean streamed, Into into, Consumer<ReadResult> done) {
            read(hostAddr, length, streamed, into, done, null);
        }

        /**
         * A DMA read; with {@code into}, the bytes it keeps go there and the result's data is empty. It is
         * answered through {@code done}, or with no result through {@code answer} (then {@code done} is null).
         */
        private void read(long hostAddr, int length, boolean streamed, Into into, Consumer<ReadResult> done,
                          IntoAnswer answer) {
            long seq = ++dmaSeq;
            if (!config().busMasterEnabled()) {
                stats.dmaBlocked.inc();
                sim.scheduleIn(0, Simulator.Priority.DELIVERY, () -> {
                    long now = sim.now();
                    Incoming none = new Incoming(new int[]{0}, new Arrival[]{new Arrival(now, now, 0)});
                    if (answer != null) answer.answered(DmaStatus.BUS_MASTER_DISABLED, none);
                    else done.accept(new ReadResult(DmaStatus.BUS_MASTER_DISABLED, new byte[0], now,
                            streamed ? none : null));
                });
                return;
            }
            stats.dmaReads.inc();
            stats.dmaReadBytes.add(length);
            if (sim.trace().enabled("PciBus")) sim.trace()
                    .record("PciBus", "dma#" + seq, "dma_read_issued", String.format("0x%x +%d", hostAddr, length));
            boolean ok = reaches(hostAddr, length);
            if (!ok) unsupported("DMA read", hostAddr, length);
            ReadOp op = readOp(seq, hostAddr, length, ok, streamed, into, done, answer);
            // max-read-request pieces (PciLink#splitRead), each a request TLP served in issue order
            int mrrs = link.maxReadRequest();
            for (long a = hostAddr, end = hostAddr + length; a < end; a = Math.min(end, (a / mrrs + 1) * mrrs)) {
                long atHost = link.send(PciLink.Direction.UPSTREAM, sim.now(), 0, link.overheadRequest());
                op.remaining++;
                readsServed.post(atHost + memoryReadLatency, Simulator.Priority.DELIVERY, op);
            }
        }

        @Override public boolean msix(int vector) {
            MsixTable t = msix.get(function);
            if (t == null || vector < 0 || vector >= t.vectors())
                throw new IllegalArgumentException("MSI-X vector " + vector + " does not exist on function " + function
                        + " (" + (t == null ? 0 : t.vectors()) + " vectors)");
            if (!config().msixEnabled() || !config().busMasterEnabled()) {
                stats.msixBlocked.inc();
                return false;
            }
            if (t.masked(vector) || config().msixFunctionMasked()) {
                t.setPending(vector, true);
                stats.msixMasked.inc();
                return false;
            }
            long addr = t.address(vector);
            int data = t.data(vector);
            long arrive = link.send(PciLink.Direction.UPSTREAM, sim.now(), 4, link.overheadPosted());
            stats.msixSent.inc();
            sim.schedule(arrive, Simulator.Priority.DELIVERY, () -> {
                if (addr >= msiBase && addr < msiBase + MSI_WINDOW) interrupts.message(addr, data);
                else if (memory.inBounds(addr, 4)) memory.writeInt(addr, data); // aimed at memory: just written
                else unsupported("MSI-X write", addr, 4);
            });
            return true;
        }
    }

    private static final byte[] NO_BYTES = new byte[0];
    private static final long[] NO_PARTS = new long[0];

    /** Reads answered without a result ({@link PciPort.IntoAnswer}), served and done: the next such read's. */
    private ReadOp spareRead; // the last, linked through their own field as the spare write TLPs are

    private ReadOp readOp(long seq, long hostAddr, int length, boolean ok, boolean streamed, Into into,
                          Consumer<ReadResult> done, PciPort.IntoAnswer answer) {
        ReadOp op = answer != null ? spareRead : null;
        if (op == null) op = new ReadOp();
        else {
            spareRead = op.nextSpare;
            op.nextSpare = null;
        }
        op.set(seq, hostAddr, length, ok, streamed, into, done, answer);
        return op;
    }

    /**
     * One DMA read in flight: its request TLPs are served in the order issued (one lane, increasing
     * times), each run of this object serving the next; the completions' offsets and arrivals are
     * kept in arrays, so a read of many TLPs allocates per read, not per TLP. A read answered without a
     * result ({@code answer}) allocates nothing: it is its own {@link PciPort.Times}, and once answered it
     * is the next such read (its event has let go of it: posted events keep no action once run).
     */
    private final class ReadOp implements Runnable, PciPort.Times {
        long seq, hostAddr;
        int length;
        boolean ok, streamed;
        Into into;
        Consumer<ReadResult> done; // answered with a result, or
        PciPort.IntoAnswer answer; // without one
        byte[] result;
        int remaining; // requests not yet served
        long next; // the address of the next request to serve
        long lastArrival;
        // completions so far, three longs each in one array (with many nodes each object a read touches is a cold
        // line at the node's turn): completion k carries length(k) bytes from start(k) on, arriving from
        // parts[3k + 1] (its data's head) to parts[3k + 2]
        int completions;
        long[] parts = NO_PARTS;
        ReadOp nextSpare; // the spare under this one

        void set(long seq, long hostAddr, int length, boolean ok, boolean streamed, Into into,
                 Consumer<ReadResult> done, PciPort.IntoAnswer answer) {
            this.seq = seq;
            this.hostAddr = hostAddr;
            this.length = length;
            this.ok = ok;
            this.streamed = streamed;
            this.into = into;
            this.done = done;
            this.answer = answer;
            this.next = hostAddr;
            this.lastArrival = sim.now();
            this.remaining = 0;
            this.completions = 0;
            this.result = ok && into == null ? new byte[length] : NO_BYTES;
            // completions split at multiples of the smaller of completion size and max read request (both
            // powers of two); a failed read answers each request with one empty completion
            int chunk = ok ? Math.min(link.completionSize(), link.maxReadRequest()) : link.maxReadRequest();
            int n = length == 0 ? 0 : (int) ((hostAddr + length - 1) / chunk - hostAddr / chunk + 1);
            // a spare's array serves when large enough (a read with a result is never a spare)
            if (parts.length < 3 * n) parts = new long[3 * n];
        }

        /** The root complex serves the next request: memory is read now, not when it was issued. */
        @Override public void run() {
            int mrrs = link.maxReadRequest(), cs = link.completionSize();
            long addr = next, end = Math.min(hostAddr + length, (addr / mrrs + 1) * mrrs);
            next = end;
            int len = (int) (end - addr);
            if (ok && into == null) memory.read(addr, result, (int) (addr - hostAddr), len);
            else if (ok) { // only the bytes the reader keeps
                long lo = Math.max(addr, into.from()), hi = Math.min(addr + len, into.from() + into.length());
                if (lo < hi) memory.read(lo, into.into(), into.at() + (int) (lo - into.from()), (int) (hi - lo));
            }
            long arrival = sim.now();
            if (!ok) arrival = completion(addr, 0);
            else for (long c = addr; c < end; ) { // completion-size pieces, aligned (PciLink#splitCompletions)
                long cEnd = Math.min(end, (c / cs + 1) * cs);
                arrival = completion(c, (int) (cEnd - c));
                c = cEnd;
            }
            lastArrival = Math.max(lastArrival, arrival);
            if (--remaining > 0) return;
            DmaStatus st = ok ? DmaStatus.OK : DmaStatus.UNSUPPORTED_REQUEST;
            if (answer != null) { // streamed: answered as soon as its bytes are known
                if (sim.trace().enabled("PciBus"))
                    sim.trace().record("PciBus", "dma#" + seq, "dma_read_done", st.name());
                PciPort.IntoAnswer a = answer;
                answer = null;
                into = null;
                a.answered(st, this);
                nextSpare = spareRead; // the reader is done with its times
                spareRead = this;
                return;
            }
            long finished = lastArrival;
            Consumer<ReadResult> d = done;
            Incoming in = streamed ? incoming() : null;
            Runnable finish = () -> {
                if (sim.trace().enabled("PciBus")) sim.trace()
                        .record("PciBus", "dma#" + seq, "dma_read_done", st.name());
                d.accept(new ReadResult(st, result, finished, in));
            };
            // a streamed read is answered as soon as its bytes are known: its reader takes each when it comes in
            if (streamed) finish.run();
            else readsDone.post(finished, Simulator.Priority.DELIVERY, finish);
        }

        /** A completion of {@code len} bytes from {@code addr} leaves now; returns when its last byte is in. */
        private long completion(long addr, int len) {
            long arrival = link.send(PciLink.Direction.DOWNSTREAM, sim.now(), len, link.overheadCompletion());
            // not expected: the count above is exact
            if (3 * completions == parts.length) parts = Arrays.copyOf(parts, 3 * (2 * completions + 1));
            int at = 3 * completions++;
            parts[at] = (addr - hostAddr) << 32 | len;
            parts[at + 1] = dataHead(arrival, len);
            parts[at + 2] = arrival;
            return arrival;
        }

        /** Completion k's first byte's offset in the read. */
        private int start(int k) { return (int) (parts[3 * k] >>> 32); }

        /** Completion k's bytes. */
        private int length(int k) { return (int) parts[3 * k]; }

        /** The completions' offsets and arrivals, for a streamed read's result. */
        private Incoming incoming() {
            Arrival[] arrivals = new Arrival[completions];
            int[] starts = new int[completions];
            for (int k = 0; k < completions; k++) {
                arrivals[k] = new Arrival(parts[3 * k + 1], parts[3 * k + 2], length(k));
                starts[k] = start(k);
            }
            return new Incoming(starts, arrivals);
        }

        /** As {@link Incoming#head}: the completions so far. */
        @Override public long head() {
            long h = Long.MAX_VALUE;
            for (int k = 0; k < completions; k++) h = Math.min(h, parts[3 * k + 1]);
            return h;
        }

        /** As {@link Incoming#by}: the completions so far. */
        @Override public long by(long n) {
            int k = 0;
            while (k + 1 < completions && start(k + 1) < n) k++;
            return Arrival.by(parts[3 * k + 1], parts[3 * k + 2], length(k), n - start(k));
        }

        /** As {@link #by} of each count, a completion's counts stepped forward ({@link Arrival#byEach}). */
        @Override public void byEach(long step, long[] at, int count) {
            for (int k = 0, i = 0; i < count; ) {
                long n = (i + 1) * step;
                while (k + 1 < completions && start(k + 1) < n) k++;
                // the counts up to the next completion's start are this one's
                int m = k + 1 < completions ? (int) Math.min(count - i, (start(k + 1) - n) / step + 1) : count - i;
                Arrival.byEach(parts[3 * k + 1], parts[3 * k + 2], length(k), n - start(k), step, at, i, m);
                i += m;
            }
        }
    }
}
