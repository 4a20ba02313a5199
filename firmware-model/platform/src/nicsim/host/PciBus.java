package nicsim.host;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.Consumer;
import java.util.function.LongConsumer;
import nicsim.host.PciPort.Into;
import nicsim.host.PciPort.ReadResult;
import nicsim.profile.Profile;
import nicsim.profile.Require;
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

    static final long MSI_WINDOW = 1 << 20;

    private final Simulator sim;
    private final HostMemory memory;
    private final PciLink link;
    final Stats stats;
    // TLPs land in the order they crossed the link: each kind costs the event queue one entry
    final Simulator.Lane writes, readsServed, readsDone;
    final long memoryReadLatency;
    private final long mmioWriteCost;
    private final long mmioReadCost;
    private final long mmioReadResponse;
    final long msiBase;
    final List<PciFunction> functions = new ArrayList<>();
    final List<MsixTable> msix = new ArrayList<>();
    private final List<UnsupportedRequest> unsupported = new ArrayList<>();
    InterruptHandler interrupts = (a, d) -> { };
    /** Where the host lets devices DMA (an IOMMU's mappings); null: all of host memory. */
    private Iommu iommu;

    /** An IOMMU's answer: whether a device may DMA to or from {@code [addr, addr + length)}. */
    public interface Iommu { boolean maps(long addr, long length); }
    private final ArrayDeque<CpuOp> cpuQueue = new ArrayDeque<>();
    private boolean cpuBusy;
    long dmaSeq;

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
    static final class Stats {
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
    boolean reaches(long addr, long length) {
        return memory.inBounds(addr, length) && (iommu == null || iommu.maps(addr, length));
    }

    /** Attaches a function; returns its index for configuration accesses. */
    public int attach(PciFunction f) {
        int index = functions.size();
        functions.add(f);
        msix.add(f.config().msixVectors() > 0 ? new MsixTable(f.config().msixVectors()) : null);
        f.connect(new PciDmaPort(this, index));
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
     * release the CPU with; null: nothing, it is CPU work that releases the CPU as it leaves). The op is also both of
     * its events: its leaving, then its release starting the next.
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
                if (run != null) run.accept(this);
                else accept(sim.now()); // CPU work left the CPU, releasing it now
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
        cpu(picos, null);
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
    long dataHead(long arrive, int length) {
        return link.isPcie() ? arrive : arrive - link.serializePicos(length);
    }

    /**
     * A posted write TLP on its way to memory: its bytes land when it arrives, and it goes back to the
     * spares (a write of many TLPs allocates nothing per TLP). Its bytes are the writer's, not copied.
     */
    final class WriteTlp implements Runnable {
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

    WriteTlp writeTlp(long addr, byte[] data, int from, int length) {
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

    MmioStatus unsupported(String kind, long addr, int length) {
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

    /** Reads answered without a result ({@link PciPort.IntoAnswer}), served and done: the next such read's. */
    PciReadOp spareRead; // the last, linked through their own field as the spare write TLPs are

    PciReadOp readOp(long seq, long hostAddr, int length, boolean ok, boolean streamed, Into into,
                       Consumer<ReadResult> done, PciPort.IntoAnswer answer) {
        PciReadOp op = answer != null ? spareRead : null;
        if (op == null) op = new PciReadOp(this);
        else {
            spareRead = op.nextSpare;
            op.nextSpare = null;
        }
        op.set(seq, hostAddr, length, ok, streamed, into, done, answer);
        return op;
    }
}
