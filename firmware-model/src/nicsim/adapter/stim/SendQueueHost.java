package nicsim.adapter.stim;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import nicsim.adapter.Adapter;
import nicsim.adapter.WqeLayout;
import nicsim.host.ConfigSpace;
import nicsim.host.HostMemory;
import nicsim.host.PciBus;
import nicsim.profile.Profile;
import nicsim.sim.Simulator;

/**
 * A host that probes the {@link Adapter} over PCI, sets up one send queue, posts WQEs into the ring
 * in its memory and rings send doorbells, the way the driver (not built yet) will. Used by tests
 * and by the command line's demo; seeded, so runs repeat exactly.
 */
public final class SendQueueHost {
    public static final long BAR0 = 0xE000_0000L;

    public final Profile profile;
    public final Simulator sim = new Simulator();
    public final HostMemory mem;
    public final PciBus bus;
    public final Adapter adapter;
    private final long qpn, ring;
    private final int uar, logSize;
    private final Random rnd;
    private final List<byte[]> posted = new ArrayList<>();
    private final List<Long> doorbellTimes = new ArrayList<>();
    private int producer;

    public SendQueueHost(Profile profile, long qpn, int uar, long ring, int logSize, long seed) {
        this.profile = profile;
        this.qpn = qpn;
        this.uar = uar;
        this.ring = ring;
        this.logSize = logSize;
        this.rnd = new Random(seed);
        mem = new HostMemory(1L << 30, profile.bytesInt("host.page.size"));
        bus = new PciBus(sim, profile, mem);
        adapter = new Adapter(sim, profile);
        int fn = bus.attach(adapter);
        bus.configWrite32(fn, ConfigSpace.BAR0, (int) BAR0);
        bus.configWrite32(fn, ConfigSpace.BAR0 + 4, 0);
        bus.configWrite32(fn, ConfigSpace.COMMAND, ConfigSpace.CMD_MEMORY_SPACE | ConfigSpace.CMD_BUS_MASTER);
        adapter.createSq(qpn, uar, ring, logSize);
        sim.runUntilIdle();
    }

    /** Every WQE posted so far, as written into the ring. */
    public List<byte[]> posted() { return List.copyOf(posted); }

    /** When each doorbell's MMIO write left the host (simulated picoseconds). */
    public List<Long> doorbellTimes() { return List.copyOf(doorbellTimes); }

    /** Writes a WQE of {@code ds} 16-byte units with seeded contents at the producer counter. */
    public void post(int opcode, int ds) {
        int bbs = WqeLayout.wqebbs(ds);
        byte[] wqe = new byte[bbs * WqeLayout.WQEBB];
        rnd.nextBytes(wqe);
        System.arraycopy(WqeLayout.ctrl(opcode, producer & 0xFFFF, qpn, ds), 0, wqe, 0, 8);
        for (int b = 0; b < bbs; b++)
            mem.write(ring + (long) ((producer + b) & ((1 << logSize) - 1)) * WqeLayout.WQEBB, Arrays.copyOfRange(wqe, b * 64, b * 64 + 64));
        posted.add(wqe);
        producer += bbs;
    }

    /** Rings the send doorbell on UAR page {@code page} with the producer counter. */
    public void ringDoorbell(int page) {
        doorbellTimes.add(sim.now());
        bus.mmioWrite(BAR0 + adapter.sendDoorbellOffset(page), WqeLayout.ctrl(0, producer & 0xFFFF, qpn, 0));
    }

    public void ringDoorbell() { ringDoorbell(uar); }

    /**
     * Posts a WQE and rings with BlueFlame, as mlx5 does for a single small WQE: the whole WQE is
     * written, in 64-byte chunks, to the UAR's BlueFlame buffer (it is in the ring too).
     */
    public void postBlueFlame(int opcode, int ds) {
        post(opcode, ds);
        byte[] wqe = posted.get(posted.size() - 1);
        doorbellTimes.add(sim.now());
        for (int off = 0; off < wqe.length; off += 64)
            bus.mmioWrite(BAR0 + adapter.sendDoorbellOffset(uar) + off, Arrays.copyOfRange(wqe, off, off + 64));
    }

    /** Posts {@code n} WQEs of 1 or 2 WQEBBs with random legal opcodes, rings once, runs until idle. */
    public void round(int n) {
        for (int i = 0; i < n; i++) post(WqeLayout.OPCODES.get(1 + rnd.nextInt(WqeLayout.OPCODES.size() - 1)), 1 + rnd.nextInt(8));
        ringDoorbell();
        sim.runUntilIdle(1_000_000_000_000L);
    }
}
