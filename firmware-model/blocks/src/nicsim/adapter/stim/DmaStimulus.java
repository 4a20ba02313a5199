package nicsim.adapter.stim;

import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Map;
import java.util.Random;
import nicsim.adapter.DmaEngine;
import nicsim.adapter.DmaPorts.Beat;
import nicsim.adapter.DmaPorts.Done;
import nicsim.adapter.DmaPorts.HostDesc;
import nicsim.adapter.DmaPorts.LinkDesc;
import nicsim.adapter.DmaPorts.PciRead;
import nicsim.adapter.DmaPorts;
import nicsim.sim.Clocked;

/**
 * Seeded random traffic for the DmaEngine, all three engines at once so they contend for the local
 * bus: host reads (PCI read data from a responder with random latency, one in ten failing) filling
 * SRAM buffers, host writes and sends reading back what was filled, packets arriving on the link
 * (some longer than their descriptor), a few refused descriptors on every engine (zero or partial-beat
 * lengths, addresses off a beat, ends past the SRAM by a beat to 2^19 bytes), and random back-pressure.
 * Reads touch only SRAM that an engine has written (the RTL's SRAM starts undefined). Host
 * addresses now and then lie anywhere in their 64 bits, and descriptors past the SRAM's end come
 * with SRAM addresses and lengths over their whole 32 and 20 bits, so high bits get exercised.
 */
public final class DmaStimulus implements Clocked {
    private static final int BUFS = 8, BUF = 4096;

    private final DmaEngine d;
    private final Random rnd;
    private final int beat, words;
    private final long[] written = new long[BUFS]; // bytes known written from each buffer's start
    private HostDesc hostOut;
    private LinkDesc sendOut, recvOut;
    private int recvBuf = -1;
    private boolean recvBad; // the receive descriptor in flight is refused (past the SRAM's end or misaligned)
    private final Map<Long, Integer> fillOf = new HashMap<>(); // host-to-SRAM descriptor tag -> buffer
    private final ArrayDeque<Beat> pciBeats = new ArrayDeque<>();
    private long pciReadyAt;
    private Beat pciOut, rxOut;
    private int rxLeft = -1; // beats left in the packet being sent on the link
    private long tag, cycle;

    public DmaStimulus(DmaEngine engine, long seed) {
        this.d = engine;
        this.rnd = new Random(seed);
        this.beat = engine.config().beatBytes();
        this.words = DmaPorts.words(engine.config().widthBits());
    }

    private long sram(int buf) { return 0x1_0000L + (long) buf * BUF; }

    /** A host address: mostly near {@code base}, one in four anywhere in 64 bits (not wrapping past 2^64). */
    private long hostAddr(long base) {
        if (rnd.nextInt(4) != 0) return base + rnd.nextInt(1 << 16) * (long) beat;
        long a = rnd.nextLong() & -beat;
        return Long.compareUnsigned(a, -(1L << 21)) >= 0 ? a ^ Long.MIN_VALUE : a;
    }

    /**
     * A whole-beat SRAM address and length the engine must refuse as past the SRAM's end: over the
     * end by a power of two from one beat to 2^19 bytes (so each bit of the bound counts), at a power
     * of two past the end (each address bit over the SRAM's alone), anywhere above it in 32 bits, or
     * so close to 2^32 that the bound sum carries into bit 32; lengths up to the field's 20 bits.
     */
    private long[] pastSram() {
        long len = beats((1 << 20) - beat), sram = d.config().sramBytes();
        return switch (rnd.nextInt(4)) {
            case 0 -> {
                long over = (long) beat << rnd.nextInt(20 - Integer.numberOfTrailingZeros(beat));
                yield new long[]{sram - beat, beat + over};
            }
            case 1 -> new long[]{sram << rnd.nextInt(Long.numberOfLeadingZeros(sram) - 31), beat};
            case 2 -> new long[]{(sram + (rnd.nextLong() & 0xFFFF_FFFFL)) & 0xFFFF_FFFFL & -beat | 0x8000_0000L, len};
            default -> new long[]{(1L << 32) - (1 + rnd.nextInt(16)) * (long) beat, len};
        };
    }

    /**
     * An SRAM address, length and host address of which one is not what the engine takes (MISALIGNED):
     * a zero length, a length or SRAM address off a beat, or a host address off a beat (the send and
     * receive engines have none, so for them it is a length again).
     */
    private long[] misaligned(boolean host) {
        long sram = sram(rnd.nextInt(BUFS)), len = beats(BUF), at = hostAddr(0x4000_0000L);
        int off = 1 + rnd.nextInt(beat - 1);
        return switch (rnd.nextInt(4)) {
            case 0 -> new long[]{sram, 0, at};
            case 1 -> new long[]{sram + off, len, at};
            case 2 -> host ? new long[]{sram, len, at + off} : new long[]{sram, len - off, at};
            default -> new long[]{sram, len - off, at};
        };
    }

    private long beats(long max) { return (1 + rnd.nextInt((int) Math.max(1, max / beat))) * (long) beat; }

    private Beat randomBeat(long flag) {
        long[] v = new long[words];
        boolean narrow = d.config().widthBits() < 64;
        for (int i = 0; i < words; i++) v[i] = narrow ? rnd.nextLong() & 0xFFFF_FFFFL : rnd.nextLong();
        return new Beat(v, flag);
    }

    private int filledBuffer() {
        for (int k = 0; k < BUFS; k++) {
            int b = rnd.nextInt(BUFS);
            if (written[b] >= beat) return b;
        }
        return -1;
    }

    @Override public void drive() {
        // host engine: fill a buffer from host memory, or write a filled one back
        if (hostOut == null && rnd.nextInt(20) == 0) {
            int r = rnd.nextInt(30);
            int b = filledBuffer();
            if (r == 0) {
                long[] p = misaligned(true);
                hostOut = new HostDesc(rnd.nextInt(2), p[2], p[0], p[1], tag++ & 0xFF);
            }
            else if (r == 1) {
                long[] p = pastSram();
                hostOut = new HostDesc(rnd.nextInt(2), hostAddr(0x1000), p[0], p[1], tag++ & 0xFF);
            }
            else if (b < 0 || rnd.nextBoolean()) {
                int t = rnd.nextInt(BUFS);
                if (t != recvBuf && !fillOf.containsValue(t)) {
                    hostOut = new HostDesc(0, hostAddr(0x4000_0000L), sram(t), beats(BUF), tag++ & 0xFF);
                    fillOf.put(hostOut.tag(), t);
                }
            } else {
                hostOut = new HostDesc(1, hostAddr(0x5000_0000L), sram(b), beats(written[b]), tag++ & 0xFF);
            }
        }
        if (hostOut == null) d.hostDesc().idle(); else d.hostDesc().push(hostOut);
        if (sendOut == null && rnd.nextInt(15) == 0) {
            int b = filledBuffer();
            int r = rnd.nextInt(30);
            if (r == 0) { long[] p = pastSram(); sendOut = new LinkDesc(p[0], p[1], tag++ & 0xFF); }
            else if (r == 1) { long[] p = misaligned(false); sendOut = new LinkDesc(p[0], p[1], tag++ & 0xFF); }
            else if (b >= 0) sendOut = new LinkDesc(sram(b), beats(written[b]), tag++ & 0xFF);
        }
        if (sendOut == null) d.sendDesc().idle(); else d.sendDesc().push(sendOut);
        if (recvOut == null && recvBuf < 0 && rxLeft < 0 && rnd.nextInt(15) == 0) {
            int t = rnd.nextInt(BUFS);
            int r = rnd.nextInt(30);
            if (r < 2) {
                long[] p = r == 0 ? pastSram() : misaligned(false);
                recvOut = new LinkDesc(p[0], p[1], tag++ & 0xFF);
                recvBad = true;
            } else if (!fillOf.containsValue(t)) {
                recvBuf = t;
                recvOut = new LinkDesc(sram(t), beats(BUF), tag++ & 0xFF);
            }
        }
        if (recvOut == null) d.recvDesc().idle(); else d.recvDesc().push(recvOut);
        // the PCI side: read data after a latency; writes taken with random back-pressure
        if (pciOut == null && !pciBeats.isEmpty() && cycle >= pciReadyAt && rnd.nextInt(100) < 85)
            pciOut = pciBeats.pollFirst();
        if (pciOut == null) d.pciData().idle(); else d.pciData().push(pciOut);
        d.pciRead().ready(rnd.nextInt(100) < 70);
        d.pciWrite().ready(rnd.nextInt(100) < 70);
        // the link: packets for the receive engine, the send engine's beats taken with back-pressure
        if (rxOut == null && rxLeft > 0 && rnd.nextInt(100) < 80) rxOut = randomBeat(--rxLeft == 0 ? 1 : 0);
        if (rxOut == null) d.linkRx().idle(); else d.linkRx().push(rxOut);
        d.linkTx().ready(rnd.nextInt(100) < 70);
    }

    @Override public void update() {
        cycle++;
        if (d.hostDesc().fire()) hostOut = null;
        if (d.sendDesc().fire()) sendOut = null;
        if (d.recvDesc().fire()) {
            LinkDesc r = d.recvDesc().payload();
            recvOut = null;
            // the packet: sometimes longer than the descriptor has room for; none for a refused descriptor
            if (recvBad) recvBad = false;
            else rxLeft = (int) (r.length() / beat)
                    + (rnd.nextInt(5) == 0 ? 1 + rnd.nextInt(3) : -rnd.nextInt((int) (r.length() / beat)));
        }
        if (d.pciRead().fire()) {
            PciRead r = d.pciRead().payload();
            int n = (int) (r.length() / beat), bad = rnd.nextInt(10) == 0 ? rnd.nextInt(n) : -1;
            for (int i = 0; i < n; i++) pciBeats.addLast(randomBeat(i == bad ? 1 : 0));
            pciReadyAt = cycle + 4 + rnd.nextInt(20);
        }
        if (d.pciData().fire()) pciOut = null;
        if (d.linkRx().fire()) { rxOut = null; if (rxLeft == 0) rxLeft = -1; }
        if (d.hostDone().valid()) {
            // a done belongs to the descriptor with its tag, not to the one queued behind it
            Done x = d.hostDone().payload();
            Integer b = fillOf.remove(x.tag());
            if (b != null) written[b] = Math.max(written[b], x.length());
        }
        if (d.recvDone().valid()) {
            Done x = d.recvDone().payload();
            if (recvBuf >= 0) written[recvBuf] = Math.max(written[recvBuf], x.length());
            recvBuf = -1;
        }
    }

    @Override public boolean active() { return true; }
}
