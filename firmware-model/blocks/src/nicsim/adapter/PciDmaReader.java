package nicsim.adapter;

import java.util.ArrayDeque;
import java.util.function.Function;
import nicsim.abi.Line64;
import nicsim.abi.WqeLayout;
import nicsim.adapter.WqePorts.DmaReadReq;
import nicsim.adapter.WqePorts.WqebbBeat;
import nicsim.host.PciPort;
import nicsim.sim.ClockDomain;
import nicsim.sim.Clocked;
import nicsim.sim.Stream;

/**
 * Serves WQEBB reads (a WqeFetcher's io_dmaReq / io_dmaRsp): one read at a time; the data goes back
 * one WQEBB per core cycle. A read the BlueFlame buffer holds whole is served from it at once;
 * any other goes through the PCI port (request TLPs, host memory latency, completions, link
 * latency), as the adapter's descriptor-fetch DMA context, apart from the payload's DmaEngines.
 */
public final class PciDmaReader implements Clocked {
    private final ClockDomain domain;
    private final PciPort port;
    private final Stream<DmaReadReq> req;
    private final Stream<WqebbBeat> rsp;
    private final ArrayDeque<WqebbBeat> ready = new ArrayDeque<>();
    private final Function<DmaReadReq, byte[]> local;
    private boolean reading;

    /**
     * Connects to the fetcher's ports ({@code req} from it, {@code rsp} to it); {@code local} gives
     * the bytes of a read held on the adapter (or null: read the host).
     */
    public PciDmaReader(ClockDomain domain, PciPort port, Stream<DmaReadReq> req, Stream<WqebbBeat> rsp,
                        Function<DmaReadReq, byte[]> local) {
        this.domain = domain;
        this.port = port;
        this.req = req;
        this.rsp = rsp;
        this.local = local;
        domain.add(this);
    }

    @Override public void drive() {
        req.ready(!reading && ready.isEmpty());
        if (ready.isEmpty()) rsp.idle(); else rsp.push(ready.peekFirst());
    }

    @Override public void update() {
        if (rsp.fire()) ready.pollFirst();
        if (req.fire()) take(req.payload());
    }

    /** Whether it neither reads nor holds beats: the next edge it takes a read offered. */
    boolean idle() { return !reading && ready.isEmpty(); }

    /**
     * Runs an edge on which it takes read {@code r}, which the adapter holds whole ({@code local} gives its bytes), as
     * {@link #update} would with only the request firing: its beats are ready from the next edge.
     */
    void coastTake(DmaReadReq r) {
        if (!idle()) throw new IllegalStateException("PciDmaReader: coasting a read's hand-over while busy");
        take(r);
        if (reading) throw new IllegalStateException("PciDmaReader: coasted a read the adapter does not hold: " + r);
    }

    /** Runs an edge on which its first beat is taken, as {@link #update} would with only the response firing. */
    WqebbBeat coastBeatTaken() {
        WqebbBeat b = ready.pollFirst();
        if (b == null) throw new IllegalStateException("PciDmaReader: coasting a beat's hand-over with none ready");
        return b;
    }

    private void take(DmaReadReq r) {
        byte[] held = local.apply(r);
        if (held != null) {
            for (int b = 0; b < r.length() / WqeLayout.WQEBB; b++)
                ready.addLast(new WqebbBeat(Line64.words(held, b * WqeLayout.WQEBB), 0));
            return;
        }
        reading = true;
        port.dmaRead(r.addr(), (int) r.length(), res -> {
            int beats = (int) (r.length() / WqeLayout.WQEBB);
            for (int b = 0; b < beats; b++) {
                boolean ok = res.status() == PciPort.DmaStatus.OK;
                long[] words = ok ? Line64.words(res.data(), b * WqeLayout.WQEBB) : new long[8];
                ready.addLast(new WqebbBeat(words, ok ? 0 : 1));
            }
            reading = false;
            domain.wake();
        });
    }

    @Override public boolean active() { return !ready.isEmpty() || req.valid(); }
}
