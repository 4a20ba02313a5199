package nicsim.host;

import java.math.BigInteger;
import java.util.ArrayList;
import java.util.List;
import nicsim.profile.Param;
import nicsim.profile.Profile;
import nicsim.profile.Require;
import nicsim.profile.Unit;

/**
 * Timing of the host link, PCI Express or conventional PCI, from the profile.
 *
 * <p>Every transaction is a packet on the wire: payload plus a fixed overhead (TLP framing and
 * header for PCIe; arbitration, address phase and turnaround cycles for PCI). Each direction is a
 * resource that sends one packet after another at the link's data rate; conventional PCI is a
 * shared bus, so both directions use one resource. A packet arrives {@code pci.link.latency} after
 * its last byte is sent.
 *
 * <p>Transfers are split the way hardware splits them: writes into pieces of at most max payload
 * that do not cross a max-payload-aligned boundary; reads into requests of at most max read
 * request, each answered by completions of at most the completion size, also aligned.
 */
public final class PciLink {
    /** Upstream: adapter to host (DMA writes, read requests, MSI-X). Downstream: host to adapter. */
    public enum Direction { UPSTREAM, DOWNSTREAM }

    /** One piece of a split transfer. */
    public record Piece(long addr, int length) {}

    private final boolean pcie;
    private final boolean fullDuplex;
    private final long bitsPerSecond;
    private final int maxPayload;
    private final int maxReadRequest;
    private final int completionSize;
    private final int overheadPosted;
    private final int overheadRequest;
    private final int overheadCompletion;
    private final long latency;
    private final int dataPhaseBytes; // bytes one bus cycle moves (PCI's bus width; PCIe: one symbol per lane)
    // per direction (0 upstream, 1 downstream) in this object's own fields, not four arrays: with many nodes a
    // node's state is cold at each of its turns, and each object a packet touches is a line more to fetch
    private long freeAt0, freeAt1; // half duplex: 0 alone
    private long packets0, packets1, payloadBytes0, payloadBytes1, wireBytes0, wireBytes1;

    /**
     * The link's parameters, from the profile's {@code pci.*}: its data rate (PCIe: lanes times lane rate times the
     * encoding's efficiency; PCI: bus width times clock), each kind of packet's overhead, the bytes one data phase
     * moves, the transfer sizes it splits at, and its one-way latency. {@code lanes} and {@code laneBitsPerSecond}
     * are the link a PCIe device trains to (0 on conventional PCI).
     */
    public record Config(boolean pcie, long bitsPerSecond, int lanes, long laneBitsPerSecond, int overheadPostedBytes,
            int overheadRequestBytes, int overheadCompletionBytes, int dataPhaseBytes, int maxPayloadBytes,
            int maxReadRequestBytes, int completionBytes, long latencyPs) {
        public Config {
            if (pcie) {
                Require.atLeast("pci.lanes", lanes, 1, "");
                Require.atLeast("pci.lane.rate", laneBitsPerSecond, 1, "b/s");
            }
            Require.atLeast(pcie ? "pci.lanes" : "pci.bus.width", dataPhaseBytes, 1, pcie ? "" : "B");
            // what is left to be wrong: the encoding's ratio (PCIe) or the bus clock (PCI)
            Require.atLeast(pcie ? "pci.encoding" : "pci.clock", bitsPerSecond, 1, "b/s of link");
            Require.atLeast(pcie ? "pci.tlp.overhead.posted" : "pci.burst.overhead", overheadPostedBytes, 0, "B");
            Require.atLeast("pci.tlp.overhead.request", overheadRequestBytes, 0, "B");
            Require.atLeast("pci.tlp.overhead.completion", overheadCompletionBytes, 0, "B");
            Require.powerOfTwo("pci.max.payload", maxPayloadBytes, 4, 4096, "B");
            Require.powerOfTwo("pci.max.read.request", maxReadRequestBytes, 4, 4096, "B");
            Require.powerOfTwo("pci.read.completion", completionBytes, 4, 4096, "B");
            if (completionBytes > maxPayloadBytes)
                throw Require.bad("pci.read.completion", completionBytes + " B",
                        "at most pci.max.payload (" + maxPayloadBytes + " B)");
            Require.atLeast("pci.link.latency", latencyPs, 0, "ps");
        }

        public static Config from(Profile p) {
            int maxPayload = size(p, "pci.max.payload"), maxReadRequest = size(p, "pci.max.read.request");
            int completion = size(p, "pci.read.completion");
            long latency = p.picos("pci.link.latency");
            if (Require.oneOf("pci.kind", p.text("pci.kind"), "pcie", "pci") == 0) {
                long[] enc = p.ratio("pci.encoding");
                long laneRate = p.bitsPerSecond("pci.lane.rate");
                int lanes = p.countInt("pci.lanes");
                return new Config(true, lanes * laneRate / enc[1] * enc[0], lanes, laneRate,
                        p.bytesInt("pci.tlp.overhead.posted"), p.bytesInt("pci.tlp.overhead.request"),
                        p.bytesInt("pci.tlp.overhead.completion"), lanes, maxPayload, maxReadRequest, completion,
                        latency);
            }
            int widthBytes = p.bits("pci.bus.width") / 8;
            int burst = Math.toIntExact(p.cycles("pci.burst.overhead") * widthBytes);
            // read data returns within the same bus tenure: no completion overhead
            return new Config(false, (long) p.bits("pci.bus.width") * frequencyHz(p), 0, 0, burst, burst, 0, widthBytes,
                    maxPayload, maxReadRequest, completion, latency);
        }

        /** A transfer size, range-checked before it is narrowed (a 4 GiB one must not wrap). */
        private static int size(Profile p, String key) {
            return (int) Require.powerOfTwo(key, p.bytes(key), 4, 4096, "B");
        }

        /** The bus clock in Hz, exact when written as a frequency (33 MHz), derived when written as a period. */
        private static long frequencyHz(Profile p) {
            Param c = p.param("pci.clock");
            if (c.dimension() == Unit.Dimension.FREQUENCY) return c.value();
            return Math.round(1e12 / p.periodPicos("pci.clock"));
        }
    }

    public PciLink(Config c) {
        pcie = c.pcie();
        fullDuplex = c.pcie(); // conventional PCI is one shared bus
        bitsPerSecond = c.bitsPerSecond();
        overheadPosted = c.overheadPostedBytes();
        overheadRequest = c.overheadRequestBytes();
        overheadCompletion = c.overheadCompletionBytes();
        dataPhaseBytes = c.dataPhaseBytes();
        maxPayload = c.maxPayloadBytes();
        maxReadRequest = c.maxReadRequestBytes();
        completionSize = c.completionBytes();
        latency = c.latencyPs();
    }

    public boolean isPcie() { return pcie; }
    public boolean fullDuplex() { return fullDuplex; }
    public long bitsPerSecond() { return bitsPerSecond; }
    public int maxPayload() { return maxPayload; }
    public int maxReadRequest() { return maxReadRequest; }
    public int completionSize() { return completionSize; }
    public int overheadPosted() { return overheadPosted; }
    public int overheadRequest() { return overheadRequest; }
    public int overheadCompletion() { return overheadCompletion; }
    public long latencyPicos() { return latency; }

    /** Time to put {@code bytes} on the wire, rounded up to a whole picosecond. */
    public long serializePicos(long bytes) {
        if (bytes >= 0 && bytes < Long.MAX_VALUE / 8_000_000_000_000L) { // exact in a long: every TLP and burst
            long num = bytes * 8_000_000_000_000L;
            return num / bitsPerSecond + (num % bitsPerSecond == 0 ? 0 : 1);
        }
        BigInteger num = BigInteger.valueOf(bytes).multiply(BigInteger.valueOf(8_000_000_000_000L));
        BigInteger[] qr = num.divideAndRemainder(BigInteger.valueOf(bitsPerSecond));
        return qr[0].longValueExact() + (qr[1].signum() == 0 ? 0 : 1);
    }

    /** Splits [addr, addr+length) at multiples of {@code chunk}. */
    public static List<Piece> split(long addr, long length, int chunk) {
        long end = addr + length, first = Math.min(end, (addr / chunk + 1) * chunk);
        if (first >= end) return length > 0 ? List.of(new Piece(addr, (int) length)) : List.of(); // most: one piece
        List<Piece> out = new ArrayList<>((int) ((end - first + chunk - 1) / chunk) + 1);
        long a = addr;
        while (a < end) {
            long next = Math.min(end, (a / chunk + 1) * chunk);
            out.add(new Piece(a, (int) (next - a)));
            a = next;
        }
        return out;
    }

    public List<Piece> splitWrite(long addr, long length) { return split(addr, length, maxPayload); }
    public List<Piece> splitRead(long addr, long length) { return split(addr, length, maxReadRequest); }
    public List<Piece> splitCompletions(Piece request) {
        return split(request.addr(), request.length(), completionSize);
    }

    /**
     * Sends one packet of {@code payload} + {@code overhead} bytes in {@code dir}, no earlier than
     * {@code readyAt}; returns the time it arrives at the far end.
     */
    public long send(Direction dir, long readyAt, int payload, int overhead) {
        return sendFed(dir, readyAt, Long.MIN_VALUE, payload, overhead);
    }

    /**
     * Sends one transaction whose data a DMA engine fed from {@code since} and finished feeding at
     * {@code fedAt}: it holds the bus from {@code since} (or once the bus is free) and ends no
     * sooner than the last data phase after {@code fedAt}. Claiming bus time before now is sound:
     * whatever used the bus since then has moved {@code freeAt} past its own end.
     */
    public long sendFed(Direction dir, long since, long fedAt, int payload, int overhead) {
        boolean one = dir == Direction.DOWNSTREAM;
        boolean r1 = fullDuplex && one;
        long start = Math.max(since, r1 ? freeAt1 : freeAt0);
        long fedEnd = fedAt + serializePicos(Math.min(payload, dataPhaseBytes));
        long end = Math.max(start + serializePicos(payload + overhead), fedEnd);
        if (r1) freeAt1 = end; else freeAt0 = end;
        if (one) {
            packets1++;
            payloadBytes1 += payload;
            wireBytes1 += payload + overhead;
        } else {
            packets0++;
            payloadBytes0 += payload;
            wireBytes0 += payload + overhead;
        }
        return end + latency;
    }

    public long packets(Direction d) { return d == Direction.DOWNSTREAM ? packets1 : packets0; }
    public long payloadBytes(Direction d) { return d == Direction.DOWNSTREAM ? payloadBytes1 : payloadBytes0; }
    public long wireBytes(Direction d) { return d == Direction.DOWNSTREAM ? wireBytes1 : wireBytes0; }

    /** Payload bytes over wire bytes in one direction so far (1.0 when nothing was sent). */
    public double efficiency(Direction d) {
        long wire = wireBytes(d);
        return wire == 0 ? 1.0 : (double) payloadBytes(d) / wire;
    }
}
