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
    public final Profile profile;
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

    public Host(int index, Simulator sim, Profile profile, Fabric fabric) { this(index, sim, profile, fabric, 0); }

    /**
     * Host {@code index}; with {@code lid} > 0 a fresh one taking over that fabric port from the host it
     * replaces (see {@link World#reset}).
     */
    Host(int index, Simulator sim, Profile profile, Fabric fabric, int lid) {
        this.index = index;
        this.sim = sim;
        this.profile = profile;
        this.scope = new Simulator.Scope("node" + index);
        Simulator.Scope before = sim.enter(scope); // everything it schedules, its clocks and lanes, are its own
        try {
            this.memory = new HostMemory(profile.bytes("host.memory.size"), profile.bytesInt("host.page.size"));
            this.bus = new PciBus(sim, PciBus.Config.from(profile), memory, "node" + index);
            Firmware[] fw = new Firmware[1];
            FirmwareConfig fwCfg = FirmwareConfig.from(profile);
            this.adapter = new Adapter(sim, AdapterConfig.from(profile), "node" + index + ".core",
                    a -> fw[0] = new Firmware(a, fwCfg));
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
