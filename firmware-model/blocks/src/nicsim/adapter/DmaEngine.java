package nicsim.adapter;

import java.util.List;
import nicsim.adapter.DmaPorts.Beat;
import nicsim.adapter.DmaPorts.Done;
import nicsim.adapter.DmaPorts.HostDesc;
import nicsim.adapter.DmaPorts.LinkDesc;
import nicsim.adapter.DmaPorts.PciRead;
import nicsim.adapter.DmaPorts.WriteBeat;
import nicsim.profile.Profile;
import nicsim.profile.Require;
import nicsim.sim.Block;
import nicsim.sim.ClockDomain;
import nicsim.sim.CounterOut;
import nicsim.sim.Flow;
import nicsim.sim.Layout;
import nicsim.sim.Port;
import nicsim.sim.Stream;

/**
 * LANai-style DMA (docs/architecture.md#data-path, step 6; docs/sources.md#kvia-adapter): three engines around
 * the adapter's SRAM, which they reach over one local bus, one data-path-wide beat per cycle.
 * Cycle-exact twin of {@code hw/.../DmaEngine.scala}.
 * <ul>
 *   <li>host engine ({@code io_hostDesc}): host to SRAM issues one PCI read ({@code io_pciRead}) and
 *       writes the returning beats ({@code io_pciData}) into SRAM; SRAM to host reads SRAM into
 *       posted-write beats ({@code io_pciWrite});</li>
 *   <li>send engine ({@code io_sendDesc}): SRAM to the link ({@code io_linkTx}, last beat marked);</li>
 *   <li>receive engine ({@code io_recvDesc}): the link ({@code io_linkRx}) to SRAM, up to the packet's
 *       last beat; a packet longer than the descriptor is an OVERRUN and the rest of it is dropped.</li>
 * </ul>
 * Each finished descriptor is reported on its engine's done flow with the bytes moved. Addresses
 * and lengths must be whole beats and inside SRAM (MISALIGNED, OUT_OF_SRAM otherwise: nothing moves).
 *
 * <p>The local bus is granted round-robin among engines that request it, on their state before the
 * edge; a grant moves one beat. Readies come from registers: inputs land in two-entry queues,
 * outputs leave from two-entry queues, so each engine can move a beat every cycle. Edge order: output
 * pops, input buffers, bus grant and the moved beat, descriptor accepts. The registers and the edge
 * logic are {@link DmaCore}'s.
 */
public final class DmaEngine implements Block {
    public static final String NAME = "DmaEngine";

    /** Parameters from the profile. */
    public record Config(int widthBits, long sramBytes) {
        public Config {
            Require.powerOfTwo("core.datapath.width", widthBits, 32, 256, "bit");
            Require.powerOfTwo("core.sram.size / dma.channels", sramBytes, 4096, 1L << 30, "B"); // one channel's share
        }

        /** One channel's engines: {@code core.sram.size} is shared out among the {@link #channels}. */
        public static Config from(Profile p) {
            return new Config(p.bits("core.datapath.width"), p.bytes("core.sram.size") / channels(p));
        }

        /** {@code dma.channels}: sets of engines side by side (1 when the profile does not say). */
        public static int channels(Profile p) {
            int n = p.has("dma.channels") ? p.countInt("dma.channels") : 1;
            Require.range("dma.channels", n, 1, 64, "");
            return n;
        }

        public int beatBytes() { return widthBits / 8; }
    }

    static final int HOST = 0, SEND = 1, RECV = 2;

    private final Config cfg;
    private final Stream<HostDesc> hostDesc;
    private final Stream<PciRead> pciRead;
    private final Stream<Beat> pciData;
    private final Stream<WriteBeat> pciWrite;
    private final Flow<Done> hostDone;
    private final Stream<LinkDesc> sendDesc;
    private final Stream<Beat> linkTx;
    private final Flow<Done> sendDone;
    private final Stream<LinkDesc> recvDesc;
    private final Stream<Beat> linkRx;
    private final Flow<Done> recvDone;
    private final CounterOut beatsOut, stallsOut;
    private final DmaCore core;

    public DmaEngine(ClockDomain domain, Config cfg) {
        this.cfg = cfg;
        Layout<Beat> data = DmaPorts.beat(cfg.widthBits(), "error");
        Layout<Beat> link = DmaPorts.beat(cfg.widthBits(), "last");
        hostDesc = new Stream<>("io_hostDesc", domain, DmaPorts.HOST_DESC);
        pciRead = new Stream<>("io_pciRead", domain, DmaPorts.PCI_READ);
        pciData = new Stream<>("io_pciData", domain, data);
        pciWrite = new Stream<>("io_pciWrite", domain, DmaPorts.writeBeat(cfg.widthBits()));
        hostDone = new Flow<>("io_hostDone", domain, DmaPorts.DONE);
        sendDesc = new Stream<>("io_sendDesc", domain, DmaPorts.LINK_DESC);
        linkTx = new Stream<>("io_linkTx", domain, link);
        sendDone = new Flow<>("io_sendDone", domain, DmaPorts.DONE);
        recvDesc = new Stream<>("io_recvDesc", domain, DmaPorts.LINK_DESC);
        linkRx = new Stream<>("io_linkRx", domain, link);
        recvDone = new Flow<>("io_recvDone", domain, DmaPorts.DONE);
        beatsOut = new CounterOut(NAME, "io_beats", "local_bus_beats", domain);
        stallsOut = new CounterOut(NAME, "io_stalls", "local_bus_contention_cycles", domain);
        core = new DmaCore(cfg, domain.counters(), beatsOut, stallsOut);
        domain.add(this);
    }

    public Config config() { return cfg; }
    public Stream<HostDesc> hostDesc() { return hostDesc; }
    public Stream<PciRead> pciRead() { return pciRead; }
    public Stream<Beat> pciData() { return pciData; }
    public Stream<WriteBeat> pciWrite() { return pciWrite; }
    public Flow<Done> hostDone() { return hostDone; }
    public Stream<LinkDesc> sendDesc() { return sendDesc; }
    public Stream<Beat> linkTx() { return linkTx; }
    public Flow<Done> sendDone() { return sendDone; }
    public Stream<LinkDesc> recvDesc() { return recvDesc; }
    public Stream<Beat> linkRx() { return linkRx; }
    public Flow<Done> recvDone() { return recvDone; }
    public long beats() { return beatsOut.get(); }
    public long contentionCycles() { return stallsOut.get(); }

    @Override public String name() { return NAME; }

    @Override public List<Port> ports() {
        return List.of(Port.in(hostDesc), Port.out(pciRead), Port.in(pciData), Port.out(pciWrite), Port.out(hostDone),
                Port.in(sendDesc), Port.out(linkTx), Port.out(sendDone), Port.in(recvDesc), Port.in(linkRx),
                Port.out(recvDone), beatsOut.port(), stallsOut.port());
    }

    @Override public void drive() {
        DmaCore c = core;
        hostDesc.ready(c.takesHostDesc());
        sendDesc.ready(c.takesSendDesc());
        recvDesc.ready(c.takesRecvDesc());
        if (c.pciReadReg == null) pciRead.idle(); else pciRead.push(c.pciReadReg);
        pciData.ready(c.takesPciData());
        linkRx.ready(c.takesLinkRx());
        if (c.hostOutQ.isEmpty()) pciWrite.idle(); else pciWrite.push(c.hostOutQ.peekWriteBeat());
        if (c.sendOutQ.isEmpty()) linkTx.idle(); else linkTx.push(c.sendOutQ.peekBeat());
        if (c.hostDoneReg == null) hostDone.idle(); else hostDone.push(c.hostDoneReg);
        if (c.sendDoneReg == null) sendDone.idle(); else sendDone.push(c.sendDoneReg);
        if (c.recvDoneReg == null) recvDone.idle(); else recvDone.push(c.recvDoneReg);
        beatsOut.drive();
        stallsOut.drive();
    }

    @Override public void update() {
        core.edge(hostDesc.fire() ? hostDesc.payload() : null, sendDesc.fire() ? sendDesc.payload() : null,
                recvDesc.fire() ? recvDesc.payload() : null, pciData.fire() ? pciData.payload() : null,
                linkRx.fire() ? linkRx.payload() : null, pciRead.fire(), pciWrite.fire(), linkTx.fire());
    }

    /** Working, or about to take a descriptor offered to an engine that is free. */
    @Override public boolean active() {
        return core.active() || hostDesc.valid() && core.takesHostDesc() || sendDesc.valid() && core.takesSendDesc()
                || recvDesc.valid() && core.takesRecvDesc();
    }

    /** The registers and the edge logic, apart from the wires, so a channel can run edges without them (coasting). */
    DmaCore core() { return core; }
}
