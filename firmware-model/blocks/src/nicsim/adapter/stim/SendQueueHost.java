package nicsim.adapter.stim;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import nicsim.abi.Cmd;
import nicsim.abi.Cqe64;
import nicsim.abi.UarLayout;
import nicsim.abi.WqeFormat;
import nicsim.abi.WqeLayout;
import nicsim.adapter.Adapter;
import nicsim.adapter.AdapterConfig;
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
    /** The adapter's stand-in firmware: it set the queue up and keeps the WQEs delivered. */
    public final NopFirmware firmware;
    private final long qpn, ring;
    private final int uar, logSize;
    private final Random rnd;
    private final List<byte[]> posted = new ArrayList<>();
    private final List<Long> doorbellTimes = new ArrayList<>();
    private final List<Integer> interrupts = new ArrayList<>();
    private int producer;
    private long cqn = -1, cqRing;
    private int cqLogSize, consumer, armSn;
    /** Runs inside the interrupt, at the simulated time the MSI-X message arrives. */
    public Runnable interruptHook;

    public SendQueueHost(Profile profile, long qpn, int uar, long ring, int logSize, long seed) {
        this(profile, qpn, uar, ring, logSize, seed, -1, 0, 0, 0);
    }

    /**
     * As above, with a CQ {@code cqn} of 2^cqLogSize entries at {@code cqRing} for the send queue's
     * completions, raising MSI-X {@code vector} (programmed and unmasked here, as a driver would).
     */
    public SendQueueHost(Profile profile, long qpn, int uar, long ring, int logSize, long seed,
                         long cqn, long cqRing, int cqLogSize, int vector) {
        this.profile = profile;
        this.qpn = qpn;
        this.uar = uar;
        this.ring = ring;
        this.logSize = logSize;
        this.rnd = new Random(seed);
        mem = new HostMemory(1L << 30, HostMemory.Config.from(profile).pageBytes());
        PciBus.Config busCfg = PciBus.Config.from(profile);
        bus = new PciBus(sim, busCfg, mem);
        NopFirmware[] nop = new NopFirmware[1];
        adapter = new Adapter(sim, AdapterConfig.from(profile), "core", a -> nop[0] = new NopFirmware(a));
        firmware = nop[0];
        int fn = bus.attach(adapter);
        bus.configWrite32(fn, ConfigSpace.BAR0, (int) BAR0);
        bus.configWrite32(fn, ConfigSpace.BAR0 + 4, 0);
        bus.configWrite32(fn, ConfigSpace.COMMAND, ConfigSpace.CMD_MEMORY_SPACE | ConfigSpace.CMD_BUS_MASTER);
        if (cqn >= 0) {
            this.cqn = cqn;
            this.cqRing = cqRing;
            this.cqLogSize = cqLogSize;
            // every entry starts INVALID with owner 0 (mlx5 initialises op_own to 0xF0)
            for (int i = 0; i < 1 << cqLogSize; i++)
                mem.write(cqRing + (long) i * Cqe64.BYTES + Cqe64.OP_OWN, new byte[]{(byte) 0xF0});
            bus.configWrite32(fn, ConfigSpace.MSIX_CAP, ConfigSpace.MSIX_ENABLE << 16);
            bus.onInterrupt((address, data) -> {
                interrupts.add(data);
                if (interruptHook != null) interruptHook.run();
            });
            byte[] entry = ByteBuffer.allocate(16).order(ByteOrder.LITTLE_ENDIAN)
                    .putInt((int) busCfg.msiAddress()).putInt(0).putInt(vector).putInt(0).array();
            bus.mmioWrite(BAR0 + Cmd.REG_MSIX_TABLE + 16L * vector, entry);
            adapter.createCq(cqn, uar, cqRing, cqLogSize, vector);
        }
        firmware.createSq(qpn, uar, ring, logSize, cqn);
        sim.runUntilIdle();
    }

    /** WQEs the adapter fetched and checked, in order. */
    public List<Adapter.Wqe> wqes() { return firmware.wqes(); }

    /** MSI-X messages the host received (their data: the vector). */
    public List<Integer> interrupts() { return List.copyOf(interrupts); }

    /** Posts a NOP; {@code signaled} asks for a completion (CQ_UPDATE). */
    public void postNop(boolean signaled) { post(WqeLayout.OP_NOP, 0, signaled ? Cqe64.CQ_UPDATE : 0); }

    /**
     * Takes every CQE software owns, by the owner-bit rule of docs/sources.md#mlx5-cq-ownership, and advances the
     * consumer index.
     */
    public List<Cqe64.View> pollCq() {
        List<Cqe64.View> out = new ArrayList<>();
        int size = 1 << cqLogSize;
        while (true) {
            byte[] e = mem.read(cqRing + (long) (consumer & (size - 1)) * Cqe64.BYTES, Cqe64.BYTES);
            Cqe64.View v = Cqe64.parse(e);
            if (v.opcode() == Cqe64.INVALID || v.owner() != ((consumer & size) != 0 ? 1 : 0)) return out;
            out.add(v);
            consumer++;
        }
    }

    /** Arms the CQ (mlx5_arm_cq): the 64-bit CQ doorbell with sequence, command and consumer index, then the CQN. */
    public void armCq(boolean solicitedOnly) {
        int w0 = (armSn & 3) << 28 | (solicitedOnly ? UarLayout.CQ_ARM_SOLICITED : 0) | (consumer & 0xFFFFFF);
        byte[] arm = {(byte) (w0 >>> 24), (byte) (w0 >> 16), (byte) (w0 >> 8), (byte) w0,
                (byte) (cqn >>> 24), (byte) (cqn >> 16), (byte) (cqn >> 8), (byte) cqn};
        bus.mmioWrite(BAR0 + adapter.cqDoorbellOffset(uar), arm);
    }

    /** After an event is handled the arm sequence advances, as mlx5_cq_event does. */
    public void eventHandled() { armSn++; }

    /** Every WQE posted so far, as written into the ring. */
    public List<byte[]> posted() { return List.copyOf(posted); }

    /** When each doorbell's MMIO write left the host (simulated picoseconds). */
    public List<Long> doorbellTimes() { return List.copyOf(doorbellTimes); }

    /** Posts a well-formed WQE of {@code opcode} with {@code dataSegments} seeded SGEs and no flags. */
    public void post(int opcode, int dataSegments) { post(opcode, dataSegments, 0); }

    /**
     * Posts a well-formed WQE (built with {@link WqeFormat}, as the driver will) at the producer
     * counter: seeded SGEs, remote address and immediate; an atomic gets its one 8-byte SGE.
     * {@code fmCeSe} is ctrl byte 11 (CQ_UPDATE asks for a completion).
     */
    public void post(int opcode, int dataSegments, int fmCeSe) {
        List<WqeFormat.Sge> sges = new ArrayList<>();
        boolean atomic = opcode == WqeLayout.OP_ATOMIC_CS || opcode == WqeLayout.OP_ATOMIC_FA;
        for (int i = 0; i < (atomic ? 1 : dataSegments); i++)
            sges.add(new WqeFormat.Sge(0x1_0000_0000L + rnd.nextInt(1 << 20) * 64L, atomic ? 8 : 1 + rnd.nextInt(4096),
                    0x100 + rnd.nextInt(1 << 16)));
        WqeFormat.SendWqe w = new WqeFormat.SendWqe(opcode, producer & 0xFFFF, qpn, fmCeSe, rnd.nextInt(), null,
                0x2_0000_0000L + rnd.nextInt(1 << 20) * 8L, rnd.nextInt(), rnd.nextLong(), rnd.nextLong(), sges, null);
        byte[] wqe = WqeFormat.encode(w, false);
        int bbs = wqe.length / WqeLayout.WQEBB;
        for (int b = 0; b < bbs; b++) writeBb(b, wqe);
        posted.add(wqe);
        producer += bbs;
    }

    /**
     * Posts raw WQE bytes (whole WQEBBs) as given, to test how malformed WQEs are handled; only the
     * ctrl segment's WQE index is set to the producer counter.
     */
    public void postRaw(byte[] wqe) {
        if (wqe.length == 0 || wqe.length % WqeLayout.WQEBB != 0)
            throw new IllegalArgumentException("raw WQE of " + wqe.length + " bytes: whole WQEBBs only");
        byte[] w = wqe.clone();
        w[1] = (byte) (producer >> 8);
        w[2] = (byte) producer;
        for (int b = 0; b < w.length / 64; b++) writeBb(b, w);
        posted.add(w);
        producer += w.length / 64;
    }

    /** Writes WQEBB {@code b} of {@code wqe} into its ring slot, counted from the producer. */
    private void writeBb(int b, byte[] wqe) {
        long slot = (producer + b) & ((1 << logSize) - 1);
        mem.write(ring + slot * WqeLayout.WQEBB, Arrays.copyOfRange(wqe, b * 64, b * 64 + 64));
    }

    /** Runs until nothing is left to do. */
    public void run() { sim.runUntilIdle(1_000_000_000_000L); }

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
    public void postBlueFlame(int opcode, int dataSegments) {
        post(opcode, dataSegments);
        byte[] wqe = posted.get(posted.size() - 1);
        doorbellTimes.add(sim.now());
        for (int off = 0; off < wqe.length; off += 64)
            bus.mmioWrite(BAR0 + adapter.sendDoorbellOffset(uar) + off, Arrays.copyOfRange(wqe, off, off + 64));
    }

    /** Posts {@code n} WQEs (1 or 2 WQEBBs) with random legal opcodes other than NOP, rings once, runs until idle. */
    public void round(int n) {
        for (int i = 0; i < n; i++)
            post(WqeLayout.OPCODES.get(1 + rnd.nextInt(WqeLayout.OPCODES.size() - 1)), 1 + rnd.nextInt(3));
        ringDoorbell();
        sim.runUntilIdle(1_000_000_000_000L);
    }
}
