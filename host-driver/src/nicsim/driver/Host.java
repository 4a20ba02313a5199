package nicsim.driver;

import java.util.function.Supplier;
import nicsim.adapter.Adapter;
import nicsim.adapter.AdapterConfig;
import nicsim.fabric.Fabric;
import nicsim.firmware.Firmware;
import nicsim.firmware.FirmwareConfig;
import nicsim.firmware.Management;
import nicsim.host.HostMemory;
import nicsim.host.PciBus;
import nicsim.profile.Profile;
import nicsim.profile.Require;
import nicsim.sim.Simulator;

/**
 * One simulated machine: host memory, a PCI bus, one adapter on it joined to the fabric, and the
 * driver that probes it. Programs see virtual addresses: a process's memory is mapped at
 * {@link #VA_BASE} + the physical address, so every key translation the adapter does is a real
 * walk from virtual to physical pages.
 */
public final class Host {
    public static final long BAR0 = 0xE000_0000L;
    public static final long VA_BASE = 0x7f00_0000_0000L;

    public final int index;
    public final Simulator sim;
    /** The profile the host was made from; its figures are read once, into {@link #config}. */
    public final Profile profile;
    public final Config config;
    public final HostMemory memory;
    public final PciBus bus;
    public final Adapter adapter;
    /** The adapter's firmware (its embedded processor). */
    public final Firmware firmware;
    /**
     * Whose events the host's and its adapter's are: a fault in one is this node's
     * ({@link Simulator#takeFault}), and once the host is {@link World#reset} none of them runs again.
     */
    public final Simulator.Scope scope;
    private Driver driver;

    /**
     * Everything a host takes from the profile, read and checked once, before any part of it exists: its memory (in
     * pages of the firmware's {@code host.page.size}), the CPU time of the driver's work ({@code host.post.cost} per
     * WQE built, {@code host.poll.cost} per CQE taken, {@code host.interrupt.cost} per interrupt handled,
     * {@code host.odp.fault.cost} per on-demand page brought in, -1: no on-demand paging), a function-level reset's
     * duration ({@code pci.flr.time}, 0: a conventional PCI function without one), and its bus's, adapter's and
     * firmware's own {@code Config}s.
     */
    public record Config(long memoryBytes, long postCostPs, long pollCostPs, long interruptCostPs,
            long odpFaultCostPs, long flrTimePs, PciBus.Config bus, AdapterConfig adapter, FirmwareConfig firmware) {
        /** PCIe r4.0 sec. 6.6.2: a function-level reset completes within 100 ms. */
        public static final long FLR_LIMIT_PS = 100_000_000_000L;

        public Config {
            // the host keeps its low 1 MiB unused; the driver's rings and mailboxes need room above it
            Require.atLeast("host.memory.size", memoryBytes, 2 << 20, "B");
            if (memoryBytes % firmware.hostPageBytes() != 0)
                throw Require.bad("host.memory.size", memoryBytes + " B",
                        "a multiple of host.page.size (" + firmware.hostPageBytes() + " B)");
            Require.atLeast("host.post.cost", postCostPs, 0, "ps");
            Require.atLeast("host.poll.cost", pollCostPs, 0, "ps");
            Require.atLeast("host.interrupt.cost", interruptCostPs, 0, "ps");
            Require.atLeast("host.odp.fault.cost", odpFaultCostPs, -1, "ps");
            Require.range("pci.flr.time", flrTimePs, 0, FLR_LIMIT_PS, "ps");
        }

        public static Config from(Profile p) {
            String odp = "host.odp.fault.cost"; // absent: no on-demand paging; present, a cost, so not negative
            return new Config(p.bytes("host.memory.size"), p.picos("host.post.cost"), p.picos("host.poll.cost"),
                    p.picos("host.interrupt.cost"), p.has(odp) ? Require.atLeast(odp, p.picos(odp), 0, "ps") : -1,
                    p.has("pci.flr.time") ? p.picos("pci.flr.time") : 0, PciBus.Config.from(p), AdapterConfig.from(p),
                    FirmwareConfig.from(p));
        }

        /** The host's page size (the firmware's, which checks it). */
        public long pageBytes() { return firmware.hostPageBytes(); }

        /** Whether programs may register on-demand MRs: the profile says what a page fault costs the driver. */
        public boolean odp() { return odpFaultCostPs >= 0; }

        /** Whether the firmware takes indirect mkeys: the profile says what a UMR's KLM writes cost. */
        public boolean umr() { return firmware.umrKlmCycles() >= 0; }
    }

    public Host(int index, Simulator sim, Profile profile, Fabric fabric) {
        this(index, sim, profile, Config.from(profile), fabric, 0);
    }

    /**
     * Host {@code index} of {@code profile}, whose figures {@code cfg} holds; with {@code lid} > 0 a fresh one taking
     * over that fabric port from the host it replaces (see {@link World#reset}).
     */
    Host(int index, Simulator sim, Profile profile, Config cfg, Fabric fabric, int lid) {
        this.index = index;
        this.sim = sim;
        this.profile = profile;
        this.config = cfg;
        this.scope = new Simulator.Scope("node" + index);
        Simulator.Scope before = sim.enter(scope); // everything it schedules, its clocks and lanes, are its own
        try {
            this.memory = new HostMemory(cfg.memoryBytes(), (int) cfg.pageBytes());
            this.bus = new PciBus(sim, cfg.bus(), memory, "node" + index);
            Firmware[] fw = new Firmware[1];
            this.adapter = new Adapter(sim, cfg.adapter(), "node" + index + ".core",
                    a -> fw[0] = new Firmware(a, cfg.firmware()));
            this.firmware = fw[0];
            bus.attach(adapter);
            // the GUID and description the adapter's flash would hold; the SMA reports them
            firmware.management().identity(Management.nodeGuid(index), "node" + index + " nicsim0");
            if (lid > 0) firmware.reattach(fabric, lid);
            else firmware.attach(fabric);
            memory.allocate(1 << 20, 1 << 20); // keep physical page 0 and its neighbours unused, as a real host does
        } finally {
            sim.leave(before);
        }
    }

    /** Runs {@code work} (a program's request to this node) in its scope: what it schedules is this node's. */
    public <T> T within(Supplier<T> work) {
        Simulator.Scope before = sim.enter(scope);
        try {
            return work.get();
        } finally {
            sim.leave(before);
        }
    }

    /** The driver, probing the adapter on first use. */
    public Driver driver() {
        if (driver == null) driver = new Driver(this);
        return driver;
    }

    /** Whether the Java driver has probed the adapter (another driver must then leave it alone). */
    public boolean probed() { return driver != null; }

    /** The kernel's QP counters on the port: its mode is kept before the driver probes; counters need the driver. */
    private final QpCounters qpCounters = new QpCounters(this);

    public QpCounters qpCounters() { return qpCounters; }

    /** A transparent huge page's size: the kernel backs large anonymous mappings with pages of 2 MB. */
    public static final long HUGE_PAGE = 2 << 20;

    /**
     * Bus addresses for a program's pages mapped for DMA: page-aligned, and aligned to {@link #HUGE_PAGE} when the
     * mapping is at least that long, as the kernel backs a large buffer with huge pages (and an IOMMU aligns a
     * large mapping), so a buffer aligned to 2 MB can be registered in 2 MB translation pages.
     */
    public long allocPinned(long length) {
        return allocPhysical(length, length >= HUGE_PAGE ? HUGE_PAGE : memory.pageSize());
    }

    /** Physical memory for the driver's own structures (rings, mailboxes), zeroed. */
    public long allocPhysical(long length, long alignment) { return memory.allocate(length, alignment); }

    /** Gives back what {@link #allocPhysical} gave (a ring, a page list, a doorbell record): its memory is freed. */
    public void freePhysical(long addr, long length) { memory.release(addr, length); }

    public long va(long pa) { return VA_BASE + pa; }

    /** The physical address behind a virtual one, or -1 if it is not mapped. */
    public long pa(long va) {
        long pa = va - VA_BASE;
        return pa >= 0 && pa < memory.size() ? pa : -1;
    }
}
