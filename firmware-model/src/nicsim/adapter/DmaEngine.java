package nicsim.adapter;

import java.util.ArrayDeque;
import java.util.List;
import nicsim.adapter.DmaPorts.Beat;
import nicsim.adapter.DmaPorts.Done;
import nicsim.adapter.DmaPorts.HostDesc;
import nicsim.adapter.DmaPorts.LinkDesc;
import nicsim.adapter.DmaPorts.PciRead;
import nicsim.adapter.DmaPorts.WriteBeat;
import nicsim.profile.Profile;
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
 * outputs leave from two-entry queues, so each engine can move a beat every cycle. Edge order: output pops, input buffers, bus grant and the
 * moved beat, descriptor accepts.
 */
public final class DmaEngine implements Block {
    public static final String NAME = "DmaEngine";

    /** Parameters from the profile. */
    public record Config(int widthBits, long sramBytes) {
        public Config {
            if (widthBits != 32 && widthBits != 64 && widthBits != 128 && widthBits != 256)
                throw new IllegalArgumentException("core.datapath.width " + widthBits + " bit must be 32, 64, 128 or 256");
            if (sramBytes < 4096 || Long.bitCount(sramBytes) != 1 || sramBytes > (1L << 30))
                throw new IllegalArgumentException("core.sram.size " + sramBytes + " B must be a power of two from 4 KiB to 1 GiB");
        }

        /** One channel's engines: {@code core.sram.size} is shared out among the {@link #channels}. */
        public static Config from(Profile p) {
            return new Config(p.bits("core.datapath.width"), p.bytes("core.sram.size") / channels(p));
        }

        /** {@code dma.channels}: sets of engines side by side (1 when the profile does not say). */
        public static int channels(Profile p) {
            int n = p.has("dma.channels") ? p.countInt("dma.channels") : 1;
            if (n < 1 || n > 64) throw new IllegalArgumentException("dma.channels " + n + " must be 1 to 64");
            return n;
        }

        public int beatBytes() { return widthBits / 8; }
    }

    private static final int HOST = 0, SEND = 1, RECV = 2;

    private final Config cfg;
    private final int beat;
    private final long[][] sram;
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
    private final nicsim.sim.Counters counters;

    // host engine
    private boolean hostBusy, hostToHost, hostErr;
    private long hostAddr, hostSram, hostLeft, hostTag, hostMoved;
    private PciRead pciReadReg;
    private final ArrayDeque<Beat> hostInQ = new ArrayDeque<>();
    private final ArrayDeque<WriteBeat> hostOutQ = new ArrayDeque<>();
    // send engine
    private boolean sendBusy;
    private long sendSram, sendLeft, sendTag, sendMoved;
    private final ArrayDeque<Beat> sendOutQ = new ArrayDeque<>();
    // receive engine
    private boolean recvBusy, recvDrain;
    private long recvSram, recvLeft, recvTag, recvMoved;
    private final ArrayDeque<Beat> recvInQ = new ArrayDeque<>();
    private int lastGrant = RECV;
    private Done hostDoneReg, sendDoneReg, recvDoneReg;

    public DmaEngine(ClockDomain domain, Config cfg) {
        this.cfg = cfg;
        this.beat = cfg.beatBytes();
        this.sram = new long[(int) (cfg.sramBytes() / beat)][];
        this.counters = domain.simulator().counters();
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
                Port.in(sendDesc), Port.out(linkTx), Port.out(sendDone), Port.in(recvDesc), Port.in(linkRx), Port.out(recvDone),
                beatsOut.port(), stallsOut.port());
    }

    @Override public void drive() {
        hostDesc.ready(takesHostDesc());
        sendDesc.ready(takesSendDesc());
        recvDesc.ready(takesRecvDesc());
        if (pciReadReg == null) pciRead.idle(); else pciRead.push(pciReadReg);
        pciData.ready(takesPciData());
        linkRx.ready(takesLinkRx());
        if (hostOutQ.isEmpty()) pciWrite.idle(); else pciWrite.push(hostOutQ.peekFirst());
        if (sendOutQ.isEmpty()) linkTx.idle(); else linkTx.push(sendOutQ.peekFirst());
        if (hostDoneReg == null) hostDone.idle(); else hostDone.push(hostDoneReg);
        if (sendDoneReg == null) sendDone.idle(); else sendDone.push(sendDoneReg);
        if (recvDoneReg == null) recvDone.idle(); else recvDone.push(recvDoneReg);
        beatsOut.drive();
        stallsOut.drive();
    }

    // the readies of the next edge, from the registered state
    /** Whether the host engine takes a descriptor on the next edge. */
    public boolean takesHostDesc() { return !hostBusy; }
    public boolean takesSendDesc() { return !sendBusy; }
    public boolean takesRecvDesc() { return !recvBusy; }
    /** Whether the host engine takes a beat of PCI read data on the next edge. */
    public boolean takesPciData() { return hostBusy && !hostToHost && hostInQ.size() < 2; }
    /** Whether the receive engine takes a beat off the link on the next edge. */
    public boolean takesLinkRx() { return recvBusy && recvInQ.size() < 2; }

    @Override public void update() {
        // bus requests, on the state before the edge
        Beat hostHead = hostInQ.peekFirst(), recvHead = recvInQ.peekFirst();
        boolean hostHeadBad = hostHead != null && (hostErr || hostHead.flag() != 0);
        boolean[] req = {
                hostBusy && (hostToHost ? hostLeft > 0 && hostOutQ.size() < 2 : hostHead != null && !hostHeadBad),
                sendBusy && sendLeft > 0 && sendOutQ.size() < 2,
                recvBusy && recvHead != null && !recvDrain};
        int grant = -1;
        for (int k = 1; k <= 3 && grant < 0; k++) if (req[(lastGrant + k) % 3]) grant = (lastGrant + k) % 3;
        int requesting = (req[0] ? 1 : 0) + (req[1] ? 1 : 0) + (req[2] ? 1 : 0);
        boolean hostErrDrop = hostBusy && !hostToHost && hostHeadBad;
        boolean recvDrop = recvBusy && recvHead != null && recvDrain;

        hostDoneReg = sendDoneReg = recvDoneReg = null;
        if (pciRead.fire()) pciReadReg = null;
        if (pciWrite.fire()) hostOutQ.pollFirst();
        if (linkTx.fire()) sendOutQ.pollFirst();
        Beat hostArrived = pciData.fire() ? pciData.payload() : null;
        Beat recvArrived = linkRx.fire() ? linkRx.payload() : null;

        if (grant >= 0) {
            lastGrant = grant;
            beatsOut.inc();
            if (requesting > 1) stallsOut.inc();
            switch (grant) {
                case HOST -> hostBeat();
                case SEND -> sendBeat();
                default -> recvBeat();
            }
        }
        if (hostErrDrop) hostErrBeat();
        if (recvDrop && recvInQ.pollFirst().flag() != 0) finishRecv(Done.Status.OVERRUN);
        if (hostArrived != null) hostInQ.addLast(hostArrived);
        if (recvArrived != null) recvInQ.addLast(recvArrived);

        if (hostDesc.fire()) acceptHost(hostDesc.payload());
        if (sendDesc.fire()) acceptSend(sendDesc.payload());
        if (recvDesc.fire()) acceptRecv(recvDesc.payload());
    }

    /**
     * Idle, as far as an edge can tell, while nothing is moving: in particular a host engine waiting
     * for read data and a receive engine waiting for link beats change nothing until a beat comes
     * (whoever brings it wakes the clock), even with the next descriptor waiting for them.
     */
    @Override public boolean active() {
        boolean hostWorking = hostBusy && (hostToHost || pciReadReg != null || !hostInQ.isEmpty());
        boolean recvWorking = recvBusy && !recvInQ.isEmpty();
        return hostWorking || sendBusy || recvWorking || !hostOutQ.isEmpty() || !sendOutQ.isEmpty() || pciReadReg != null
                || hostDoneReg != null || sendDoneReg != null || recvDoneReg != null
                || hostDesc.valid() && takesHostDesc() || sendDesc.valid() && takesSendDesc() || recvDesc.valid() && takesRecvDesc();
    }

    private long[] read(long sramAddr) {
        long[] v = sram[(int) (sramAddr / beat)];
        return v == null ? new long[DmaPorts.words(cfg.widthBits())] : v;
    }

    private void hostBeat() {
        if (hostToHost) {
            hostOutQ.addLast(new WriteBeat(hostAddr, read(hostSram), hostLeft == beat ? 1 : 0));
            hostAddr += beat;
        } else {
            sram[(int) (hostSram / beat)] = hostInQ.pollFirst().data();
        }
        hostSram += beat;
        hostLeft -= beat;
        hostMoved += beat;
        if (hostLeft == 0) { hostDoneReg = done(hostTag, Done.Status.OK.ordinal(), hostMoved); hostBusy = false; }
    }

    /** From a failed beat on, the read's beats are taken and dropped; the descriptor ends with PCI_ERROR. */
    private void hostErrBeat() {
        hostInQ.pollFirst();
        hostErr = true;
        hostLeft -= beat;
        if (hostLeft == 0) { hostDoneReg = done(hostTag, Done.Status.PCI_ERROR.ordinal(), hostMoved); hostBusy = false; }
    }

    private void sendBeat() {
        sendOutQ.addLast(new Beat(read(sendSram), sendLeft == beat ? 1 : 0));
        sendSram += beat;
        sendLeft -= beat;
        sendMoved += beat;
        if (sendLeft == 0) { sendDoneReg = done(sendTag, Done.Status.OK.ordinal(), sendMoved); sendBusy = false; }
    }

    private void recvBeat() {
        Beat b = recvInQ.pollFirst();
        sram[(int) (recvSram / beat)] = b.data();
        recvSram += beat;
        recvLeft -= beat;
        recvMoved += beat;
        if (b.flag() != 0) finishRecv(Done.Status.OK);
        else if (recvLeft == 0) recvDrain = true; // more is coming than the descriptor has room for
    }

    private static final String[] DONE_COUNTERS = java.util.Arrays.stream(Done.Status.values())
            .map(s -> NAME + ".done_" + s.name().toLowerCase(java.util.Locale.ROOT)).toArray(String[]::new);

    /** A finished descriptor, counted by how it ended ("DmaEngine.done_ok", "DmaEngine.done_overrun", ...). */
    private Done done(long tag, long status, long length) {
        counters.counter(DONE_COUNTERS[(int) status]).inc();
        return new Done(tag, status, length);
    }

    private void finishRecv(Done.Status s) {
        recvDoneReg = done(recvTag, s.ordinal(), recvMoved);
        recvBusy = false;
        recvDrain = false;
    }

    private Done.Status check(long sramAddr, long length, long hostAddr) {
        if (length == 0 || length % beat != 0 || sramAddr % beat != 0 || hostAddr % beat != 0) return Done.Status.MISALIGNED;
        if (sramAddr + length > cfg.sramBytes()) return Done.Status.OUT_OF_SRAM;
        return Done.Status.OK;
    }

    private void acceptHost(HostDesc d) {
        Done.Status s = check(d.sramAddr(), d.length(), d.hostAddr());
        if (s != Done.Status.OK) { hostDoneReg = done(d.tag(), s.ordinal(), 0); return; }
        hostBusy = true;
        hostToHost = d.toHost() != 0;
        hostErr = false;
        hostAddr = d.hostAddr();
        hostSram = d.sramAddr();
        hostLeft = d.length();
        hostTag = d.tag();
        hostMoved = 0;
        if (!hostToHost) pciReadReg = new PciRead(d.hostAddr(), d.length(), d.tag());
    }

    private void acceptSend(LinkDesc d) {
        Done.Status s = check(d.sramAddr(), d.length(), 0);
        if (s != Done.Status.OK) { sendDoneReg = done(d.tag(), s.ordinal(), 0); return; }
        sendBusy = true;
        sendSram = d.sramAddr();
        sendLeft = d.length();
        sendTag = d.tag();
        sendMoved = 0;
    }

    private void acceptRecv(LinkDesc d) {
        Done.Status s = check(d.sramAddr(), d.length(), 0);
        if (s != Done.Status.OK) { recvDoneReg = done(d.tag(), s.ordinal(), 0); return; }
        recvBusy = true;
        recvDrain = false;
        recvSram = d.sramAddr();
        recvLeft = d.length();
        recvTag = d.tag();
        recvMoved = 0;
    }
}
