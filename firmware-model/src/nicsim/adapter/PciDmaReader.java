package nicsim.adapter;

import java.util.ArrayDeque;
import nicsim.adapter.WqePorts.DmaReadReq;
import nicsim.adapter.WqePorts.WqebbBeat;
import nicsim.host.PciPort;
import nicsim.sim.ClockDomain;
import nicsim.sim.Clocked;
import nicsim.sim.Stream;

/**
 * Serves WQEBB reads (a WqeFetcher's io_dmaReq / io_dmaRsp) straight through the PCI port: one read
 * at a time; when its last completion has arrived, the data goes back one WQEBB per core cycle. It
 * stands where the DmaEngine block will (not built yet), so the fetcher's timing already includes
 * the real PCIe read: request TLPs, host memory latency, completions, link latency.
 */
public final class PciDmaReader implements Clocked {
    private final ClockDomain domain;
    private final PciPort port;
    private final Stream<DmaReadReq> req;
    private final Stream<WqebbBeat> rsp;
    private final ArrayDeque<WqebbBeat> ready = new ArrayDeque<>();
    private boolean reading;

    /** Connects to the fetcher's ports ({@code req} from it, {@code rsp} to it). */
    public PciDmaReader(ClockDomain domain, PciPort port, Stream<DmaReadReq> req, Stream<WqebbBeat> rsp) {
        this.domain = domain;
        this.port = port;
        this.req = req;
        this.rsp = rsp;
        domain.add(this);
    }

    @Override public void drive() {
        req.ready(!reading && ready.isEmpty());
        if (ready.isEmpty()) rsp.idle(); else rsp.push(ready.peekFirst());
    }

    @Override public void update() {
        if (rsp.fire()) ready.pollFirst();
        if (req.fire()) {
            DmaReadReq r = req.payload();
            reading = true;
            port.dmaRead(r.addr(), (int) r.length(), res -> {
                int beats = (int) (r.length() / WqeLayout.WQEBB);
                for (int b = 0; b < beats; b++) {
                    long[] words = res.status() == PciPort.DmaStatus.OK ? Line64.words(res.data(), b * WqeLayout.WQEBB) : new long[8];
                    ready.addLast(new WqebbBeat(words, res.status() == PciPort.DmaStatus.OK ? 0 : 1));
                }
                reading = false;
                domain.wake();
            });
        }
    }

    @Override public boolean active() { return !ready.isEmpty() || req.valid(); }
}
