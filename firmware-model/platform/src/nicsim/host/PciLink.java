package nicsim.host;

import java.math.BigInteger;
import java.util.ArrayList;
import java.util.List;
import nicsim.profile.Param;
import nicsim.profile.Profile;
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
    private final long[] freeAt = new long[2];
    private final long[] packets = new long[2];
    private final long[] payloadBytes = new long[2];
    private final long[] wireBytes = new long[2];

    public PciLink(Profile p) {
        String kind = p.text("pci.kind");
        switch (kind) {
            case "pcie": {
                pcie = true;
                fullDuplex = true;
                long[] enc = p.ratio("pci.encoding");
                bitsPerSecond = p.count("pci.lanes") * p.bitsPerSecond("pci.lane.rate") / enc[1] * enc[0];
                overheadPosted = p.bytesInt("pci.tlp.overhead.posted");
                overheadRequest = p.bytesInt("pci.tlp.overhead.request");
                overheadCompletion = p.bytesInt("pci.tlp.overhead.completion");
                dataPhaseBytes = p.countInt("pci.lanes");
                break;
            }
            case "pci": {
                pcie = false;
                fullDuplex = false;
                int widthBytes = p.bits("pci.bus.width") / 8;
                bitsPerSecond = (long) p.bits("pci.bus.width") * frequencyHz(p);
                int burst = Math.toIntExact(p.cycles("pci.burst.overhead") * widthBytes);
                overheadPosted = burst;
                overheadRequest = burst;
                overheadCompletion = 0; // read data returns within the same bus tenure
                dataPhaseBytes = widthBytes;
                break;
            }
            default:
                throw new IllegalArgumentException("profile " + p.name() + ": pci.kind = \"" + kind + "\" (accepted: \"pcie\", \"pci\")");
        }
        maxPayload = p.bytesInt("pci.max.payload");
        maxReadRequest = p.bytesInt("pci.max.read.request");
        completionSize = p.bytesInt("pci.read.completion");
        latency = p.picos("pci.link.latency");
        for (String k : new String[]{"pci.max.payload", "pci.max.read.request", "pci.read.completion"}) {
            long v = p.bytes(k);
            if (v < 4 || v > 4096 || Long.bitCount(v) != 1)
                throw new IllegalArgumentException("profile " + p.name() + ": " + k + " = " + v + " B must be a power of two from 4 to 4096");
        }
        if (completionSize > maxPayload)
            throw new IllegalArgumentException("profile " + p.name() + ": pci.read.completion " + completionSize
                    + " B exceeds pci.max.payload " + maxPayload + " B");
    }

    /** The bus clock in Hz, exact when written as a frequency (33 MHz), derived when written as a period. */
    private static long frequencyHz(Profile p) {
        Param c = p.param("pci.clock");
        if (c.dimension() == Unit.Dimension.FREQUENCY) return c.value();
        return Math.round(1e12 / p.periodPicos("pci.clock"));
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
    public List<Piece> splitCompletions(Piece request) { return split(request.addr(), request.length(), completionSize); }

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
        int r = fullDuplex ? dir.ordinal() : 0;
        long start = Math.max(since, freeAt[r]);
        long end = Math.max(start + serializePicos(payload + overhead), fedAt + serializePicos(Math.min(payload, dataPhaseBytes)));
        freeAt[r] = end;
        packets[dir.ordinal()]++;
        payloadBytes[dir.ordinal()] += payload;
        wireBytes[dir.ordinal()] += payload + overhead;
        return end + latency;
    }

    public long packets(Direction d) { return packets[d.ordinal()]; }
    public long payloadBytes(Direction d) { return payloadBytes[d.ordinal()]; }
    public long wireBytes(Direction d) { return wireBytes[d.ordinal()]; }

    /** Payload bytes over wire bytes in one direction so far (1.0 when nothing was sent). */
    public double efficiency(Direction d) {
        return wireBytes[d.ordinal()] == 0 ? 1.0 : (double) payloadBytes[d.ordinal()] / wireBytes[d.ordinal()];
    }
}
