package nicsim.adapter;

import java.util.Arrays;
import java.util.function.Consumer;
import nicsim.host.PciPort;
import nicsim.sim.Arrival;
import nicsim.sim.Simulator;

/**
 * The adapter's DMA as its engines see it: an access to device memory ({@link OnChipMemory}'s
 * aperture) is served on the chip at SRAM timing; everything else goes to the host over PCI.
 */
final class OnChipPort implements PciPort {
    private final PciPort pci;
    private final OnChipMemory dm;
    private final Simulator sim;

    OnChipPort(PciPort pci, OnChipMemory dm) {
        this.pci = pci;
        this.dm = dm;
        this.sim = pci.simulator();
    }

    @Override public Simulator simulator() { return sim; }

    @Override public byte[] inspect(long addr, int length) {
        if (!local(addr, length)) return pci.inspect(addr, length);
        return dm.holds(addr, length) ? dm.read(addr - OnChipMemory.BASE, length) : null;
    }

    private boolean local(long addr, int length) { return dm.size() > 0 && addr >= OnChipMemory.BASE; }

    /** Runs {@code done} once the SRAM has served an access of {@code length} bytes; its time. */
    private long served(int length, Runnable done) {
        long at = sim.now() + dm.accessPicos(length);
        sim.schedule(at, Simulator.Priority.DELIVERY, done);
        return at;
    }

    private ReadResult localRead(long addr, int length, long at, boolean streamed) {
        if (!dm.holds(addr, length)) return new ReadResult(DmaStatus.UNSUPPORTED_REQUEST, new byte[0], at);
        byte[] data = dm.read(addr - OnChipMemory.BASE, length);
        if (!streamed) return new ReadResult(DmaStatus.OK, data, at);
        long head = at - dm.accessPicos(length) + dm.accessPicos(0);
        Arrival[] arrivals = {new Arrival(Math.min(head, at), at, length)};
        return new ReadResult(DmaStatus.OK, data, at, new Incoming(new int[]{0}, arrivals));
    }

    @Override public void dmaRead(long addr, int length, Consumer<ReadResult> done) {
        if (!local(addr, length)) { pci.dmaRead(addr, length, done); return; }
        long[] at = new long[1];
        at[0] = served(length, () -> done.accept(localRead(addr, length, at[0], false)));
    }

    @Override public void dmaReadStreamed(long addr, int length, Into into, Consumer<ReadResult> done) {
        if (!local(addr, length)) { pci.dmaReadStreamed(addr, length, into, done); return; }
        PciPort.super.dmaReadStreamed(addr, length, into, done);
    }

    @Override public void dmaReadStreamed(long addr, int length, Into into, IntoAnswer answer) {
        if (!local(addr, length)) { pci.dmaReadStreamed(addr, length, into, answer); return; }
        PciPort.super.dmaReadStreamed(addr, length, into, answer);
    }

    @Override public void dmaReadStreamed(long addr, int length, Consumer<ReadResult> done) {
        if (!local(addr, length)) { pci.dmaReadStreamed(addr, length, done); return; }
        long at = sim.now() + dm.accessPicos(length);
        done.accept(localRead(addr, length, at, true)); // known now, in by the time the incoming says
    }

    /** The bytes land when the SRAM has taken them, in the order the writes were issued. */
    private void localWrite(long addr, byte[] data, Consumer<WriteResult> done) {
        boolean ok = dm.holds(addr, data.length);
        long[] at = new long[1];
        at[0] = served(data.length, () -> {
            if (ok) dm.write(addr - OnChipMemory.BASE, data);
            if (done != null) done.accept(new WriteResult(ok ? DmaStatus.OK : DmaStatus.UNSUPPORTED_REQUEST, at[0]));
        });
    }

    @Override public void dmaWrite(long addr, byte[] data, Consumer<WriteResult> done) {
        if (!local(addr, data.length)) { pci.dmaWrite(addr, data, done); return; }
        localWrite(addr, data.clone(), done);
    }

    @Override public void dmaWriteStreamed(long addr, byte[] data, int offset, int length, long since,
                                          Consumer<WriteResult> done) {
        if (!local(addr, length)) { pci.dmaWriteStreamed(addr, data, offset, length, since, done); return; }
        localWrite(addr, Arrays.copyOfRange(data, offset, offset + length), done);
    }

    @Override public void dmaWriteStreamedPosted(long addr, byte[] data, int offset, int length, long since) {
        if (!local(addr, length)) { pci.dmaWriteStreamedPosted(addr, data, offset, length, since); return; }
        localWrite(addr, Arrays.copyOfRange(data, offset, offset + length), null);
    }

    @Override public boolean dmaWriteLands(long addr, int length) {
        return local(addr, length) ? dm.holds(addr, length) : pci.dmaWriteLands(addr, length);
    }

    @Override public boolean msix(int vector) { return pci.msix(vector); }
}
