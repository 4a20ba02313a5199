package nicsim.host;

import java.util.Arrays;
import java.util.Objects;
import java.util.function.Consumer;
import nicsim.host.PciPort.DmaStatus;
import nicsim.host.PciPort.Incoming;
import nicsim.host.PciPort.Into;
import nicsim.host.PciPort.ReadResult;
import nicsim.sim.Arrival;
import nicsim.sim.Simulator;

/** The device side of a {@link PciBus} for one function: its DMA and MSI-X. */
final class PciDmaPort implements PciPort {
    private final PciBus bus;
    private final int function;
    // the bus's, held here as the port was the bus's inner class
    private final Simulator sim;
    private final PciLink link;
    private final HostMemory memory;
    private final PciBus.Stats stats;

    PciDmaPort(PciBus bus, int function) {
        this.bus = bus;
        this.function = function;
        this.sim = bus.simulator();
        this.link = bus.link();
        this.memory = bus.memory();
        this.stats = bus.stats;
    }

    @Override public Simulator simulator() { return sim; }

    private ConfigSpace config() { return bus.functions.get(function).config(); }

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
        return config().busMasterEnabled() && bus.reaches(hostAddr, length) ? memory.read(hostAddr, length) : null;
    }

    @Override public boolean dmaWriteLands(long hostAddr, int length) {
        return config().busMasterEnabled() && bus.reaches(hostAddr, length);
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
        long seq = ++bus.dmaSeq;
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
        boolean ok = lands || bus.reaches(hostAddr, length);
        // max-payload pieces that do not cross a max-payload boundary (PciLink#splitWrite), without a list
        int mps = link.maxPayload();
        for (long a = hostAddr, end = hostAddr + length; a < end; ) {
            int len = (int) (Math.min(end, (a / mps + 1) * mps) - a);
            long arrive = link.sendFed(PciLink.Direction.UPSTREAM, since, sim.now(), len, link.overheadPosted());
            last = Math.max(last, arrive);
            if (ok) {
                int from = offset + (int) (a - hostAddr);
                PciBus.WriteTlp t = bus.writeTlp(a, data, from, len);
                if (!handedOver) { t.data = Arrays.copyOfRange(data, from, from + len); t.from = 0; }
                bus.writes.post(arrive, Simulator.Priority.DELIVERY, t);
            }
            a += len;
        }
        stats.dmaWriteBytes.add(length);
        if (!ok) bus.unsupported("DMA write", hostAddr, length);
        long end = last;
        DmaStatus st = ok ? DmaStatus.OK : DmaStatus.UNSUPPORTED_REQUEST;
        if (done == null && !traced) return; // nothing to tell
        bus.writes.post(end, Simulator.Priority.DELIVERY, () -> {
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
        long seq = ++bus.dmaSeq;
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
        boolean ok = bus.reaches(hostAddr, length);
        if (!ok) bus.unsupported("DMA read", hostAddr, length);
        PciReadOp op = bus.readOp(seq, hostAddr, length, ok, streamed, into, done, answer);
        // max-read-request pieces (PciLink#splitRead), each a request TLP served in issue order
        int mrrs = link.maxReadRequest();
        for (long a = hostAddr, end = hostAddr + length; a < end; a = Math.min(end, (a / mrrs + 1) * mrrs)) {
            long atHost = link.send(PciLink.Direction.UPSTREAM, sim.now(), 0, link.overheadRequest());
            op.remaining++;
            bus.readsServed.post(atHost + bus.memoryReadLatency, Simulator.Priority.DELIVERY, op);
        }
    }

    @Override public boolean msix(int vector) {
        MsixTable t = bus.msix.get(function);
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
            if (addr >= bus.msiBase && addr < bus.msiBase + PciBus.MSI_WINDOW) bus.interrupts.message(addr, data);
            else if (memory.inBounds(addr, 4)) memory.writeInt(addr, data); // aimed at memory: just written
            else bus.unsupported("MSI-X write", addr, 4);
        });
        return true;
    }
}
