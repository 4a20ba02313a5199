package nicsim.cosim.cli;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import nicsim.adapter.DoorbellMsg;
import nicsim.host.ConfigSpace;
import nicsim.host.HostMemory;
import nicsim.host.PciBus;
import nicsim.host.PciFunction;
import nicsim.host.PciPort;
import nicsim.profile.Profile;
import nicsim.sim.ClockDomain;
import nicsim.sim.Clocked;
import nicsim.sim.Simulator;
import nicsim.sim.StreamFifo;
import nicsim.wave.VcdWriter;

/**
 * The foundation's end-to-end demo, until the adapter model exists: a host probes a PCI function,
 * rings doorbells by MMIO, the function queues each decoded doorbell in the DoorbellFifo (the
 * block whose RTL twin the hw tests check in lockstep) and answers each with a 64-byte record
 * DMA-written into a host ring, then raises MSI-X. The host checks every record byte for byte.
 * Everything is timed by the profile; the FIFO's ports go to a compressed VCD.
 */
final class PlatformDemo {
    static final long BAR0 = 0xF000_0000L;
    static final int RECORD = 64;

    /** Summary of one run. */
    record Result(int doorbells, int verified, long firstLatency, long lastDone, long fifoPeak, List<String> errors) {}

    /** The demo function: doorbell register at BAR0+0x800, ring address at +0x0 and +0x8. */
    static final class EchoFunction implements PciFunction, Clocked {
        final ConfigSpace config = new ConfigSpace(0x1de5, 0x0001, 0x02070000, new long[]{1 << 20, 0, 0}, 1, 0, 0x1000);
        final ClockDomain core;
        final StreamFifo<DoorbellMsg> fifo;
        final ArrayDeque<DoorbellMsg> arrived = new ArrayDeque<>();
        PciPort port;
        long ringBase;
        int ringEntries;
        long written;
        boolean dmaBusy;
        int malformed;

        EchoFunction(ClockDomain core, int fifoDepth) {
            this.core = core;
            this.fifo = new StreamFifo<>("DoorbellFifo", core, fifoDepth, DoorbellMsg.LAYOUT);
            core.add(this);
        }

        @Override public ConfigSpace config() { return config; }
        @Override public void connect(PciPort p) { port = p; }
        @Override public byte[] mmioRead(int bar, long offset, int length) { return new byte[length]; }

        @Override public void mmioWrite(int bar, long offset, byte[] data) {
            ByteBuffer b = ByteBuffer.wrap(data).order(ByteOrder.LITTLE_ENDIAN);
            if (offset == 0x0 && data.length == 8) ringBase = b.getLong();
            else if (offset == 0x8 && data.length == 4) ringEntries = b.getInt();
            else if (offset == 0x800 && data.length == 8) {
                long v = b.getLong();
                arrived.add(DoorbellMsg.send(v & 0xFFFFFF, (v >>> 32) & 0xFFFF));
                core.wake();
            } else {
                malformed++;
                port.simulator().counters().counter("demo.malformed_mmio").inc();
            }
        }

        @Override public void drive() {
            if (arrived.isEmpty()) fifo.push().idle(); else fifo.push().push(arrived.peekFirst());
            fifo.pop().ready(!dmaBusy);
        }

        @Override public void update() {
            if (fifo.push().fire()) arrived.pollFirst();
            if (fifo.pop().fire()) {
                DoorbellMsg m = fifo.pop().payload();
                long slot = ringBase + (written % ringEntries) * RECORD;
                ByteBuffer rec = ByteBuffer.allocate(RECORD).order(ByteOrder.LITTLE_ENDIAN);
                rec.putInt((int) m.qpn()).putShort((short) m.index()).putShort((short) 1).putLong(core.cycle());
                for (int i = 16; i < RECORD; i++) rec.put((byte) (m.index() + i));
                written++;
                dmaBusy = true;
                port.dmaWrite(slot, rec.array(), r -> {
                    dmaBusy = false;
                    core.wake();
                    if (fifo.occupancy() == 0 && arrived.isEmpty()) port.msix(0);
                });
            }
        }

        @Override public boolean active() { return !arrived.isEmpty() || fifo.occupancy() > 0; }
    }

    static Result run(Profile profile, int doorbells, Path wave, PrintStream log) throws IOException {
        Simulator sim = new Simulator();
        sim.trace().enable("demo");
        ClockDomain core = sim.clockDomain("core", profile.periodPicos("core.clock"));
        HostMemory mem = new HostMemory(profile.bytes("host.memory.size"), profile.bytesInt("host.page.size"));
        PciBus bus = new PciBus(sim, profile, mem);
        EchoFunction fn = new EchoFunction(core, 8);
        int f = bus.attach(fn);
        VcdWriter vcd = wave == null ? null : VcdWriter.open(wave, "1ps");
        if (vcd != null) fn.fifo.trace(vcd, "TOP.DoorbellFifo");

        // probe: size BAR0, place it, enable memory and bus mastering, enable MSI-X and program vector 0
        bus.configWrite32(f, ConfigSpace.BAR0, 0xFFFF_FFFF);
        long size = (~(bus.configRead32(f, ConfigSpace.BAR0) & ~0xFL) + 1) & 0xFFFF_FFFFL;
        bus.configWrite32(f, ConfigSpace.BAR0, (int) BAR0);
        bus.configWrite32(f, ConfigSpace.BAR0 + 4, 0);
        bus.configWrite32(f, ConfigSpace.COMMAND, ConfigSpace.CMD_MEMORY_SPACE | ConfigSpace.CMD_BUS_MASTER);
        bus.configWrite32(f, ConfigSpace.MSIX_CAP, ConfigSpace.MSIX_ENABLE << 16);
        long[] irqAt = {-1};
        bus.onInterrupt((a, d) -> irqAt[0] = sim.now());
        bus.mmioWrite(BAR0 + 0x1000, le(profile.count("host.msi.address"), 0, 0x30, 0));
        log.printf("probe: BAR0 is %d KiB, placed at 0x%x; memory space, bus master and MSI-X enabled%n", size >> 10, BAR0);

        int entries = 64;
        long ring = mem.allocate((long) entries * RECORD, 4096);
        bus.mmioWrite(BAR0, ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(ring).array());
        bus.mmioWrite(BAR0 + 8, ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN).putInt(entries).array());
        sim.runUntilIdle();
        long start = sim.now();
        long[] issued = new long[doorbells];
        for (int i = 0; i < doorbells; i++) {
            long qpn = 0x100 + (i % 4), pi = i + 1;
            issued[i] = sim.now();
            bus.mmioWrite(BAR0 + 0x800, ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(qpn | pi << 32).array());
        }
        // the host polls each ring slot; a record is "seen" when its valid half-word turns 1
        List<String> errors = new ArrayList<>();
        long firstLatency = -1;
        int verified = 0;
        for (int i = 0; i < doorbells; i++) {
            long slot = ring + (long) (i % entries) * RECORD;
            int idx = i;
            sim.runUntil(() -> (mem.read(slot + 6, 2)[0] == 1) && mem.read(slot + 4, 2)[0] == (byte) (idx + 1), 1_000_000_000L);
            if (i == 0) firstLatency = sim.now() - issued[0];
            byte[] got = mem.read(slot, RECORD);
            ByteBuffer b = ByteBuffer.wrap(got).order(ByteOrder.LITTLE_ENDIAN);
            long qpn = b.getInt(), pi = b.getShort() & 0xFFFF;
            boolean ok = qpn == 0x100 + (i % 4) && pi == i + 1;
            for (int k = 16; k < RECORD; k++) ok &= got[k] == (byte) (pi + k);
            if (ok) verified++; else errors.add("record " + i + " wrong: qpn=0x" + Long.toHexString(qpn) + " pi=" + pi);
        }
        sim.runUntilIdle();
        if (vcd != null) { vcd.advanceTo(sim.now()); vcd.close(); }
        if (irqAt[0] < 0) errors.add("no MSI-X interrupt reached the host");
        if (fn.malformed > 0) errors.add(fn.malformed + " malformed MMIO writes");
        return new Result(doorbells, verified, firstLatency, sim.now() - start, fn.fifo.peakOccupancy(), errors);
    }

    private static byte[] le(long addrLo, int addrHi, int data, int ctrl) {
        return ByteBuffer.allocate(16).order(ByteOrder.LITTLE_ENDIAN).putInt((int) addrLo).putInt(addrHi).putInt(data).putInt(ctrl).array();
    }
}
