package nicsim.fabric;

import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import nicsim.abi.BigEndian;

/**
 * A node's performance management agent (IBA 16.1): ClassPortInfo, PortCounters and
 * PortCountersExtended from each port's own traffic (every packet it sent and received, data counted
 * in 4-octet words as the specification asks), and a Set of either clears the counters its
 * CounterSelect names, as {@code perfquery -r} does. The 32-bit counters stop at their maximum. The
 * adapter's has port 1; the fabric switch's has its ports 1..N. PortSelect 0xFF (AllPortSelect) reads
 * the node's ports summed, and a Set with it clears every port.
 */
public final class PerfAgent {
    /** The node's ports as the PMA sees them. */
    public interface Ports {
        /** Its port numbers, in order. */
        int[] numbers();

        /** Port {@code port}'s traffic so far: octets sent, received, packets sent, received. */
        long[] raw(int port);
    }

    public static final int ALL_PORTS = 0xff;
    /**
     * ClassPortInfo.CapabilityMask: PortCountersExtended with every counter (IsExtendedWidthSupported), PortXmitWait.
     */
    static final int CAP_EXT_WIDTH = 1 << 9, CAP_XMIT_WAIT = 1 << 12;
    /** ClassPortInfo.CapabilityMask: PortSelect 0xFF reads and clears every port (IsAllPortSelectSupported). */
    static final int CAP_ALL_PORT_SELECT = 1 << 8;
    private final Ports ports;
    /** What each port's counters read when last cleared: xmit data, rcv data, xmit packets, rcv packets. */
    private final Map<Integer, long[]> base = new HashMap<>();

    public PerfAgent(Ports ports) { this.ports = ports; }

    /** The answer to PerfMgt request {@code req}. */
    public byte[] answer(byte[] req) {
        if (Mad.classVersion(req) != 1) return Mad.response(req, Mad.STATUS_BAD_VERSION);
        int method = Mad.method(req), attr = Mad.attr(req);
        if (method != Mad.GET && method != Mad.SET) return Mad.response(req, Mad.STATUS_METHOD);
        byte[] rsp = Mad.response(req, 0);
        int at = Mad.PMA_DATA;
        switch (attr) {
            case Mad.ATTR_CLASS_PORT_INFO -> {
                if (method == Mad.SET) return Mad.response(req, Mad.STATUS_METHOD_ATTR);
                Arrays.fill(rsp, at, Mad.SIZE, (byte) 0);
                rsp[at] = 1;
                rsp[at + 1] = 1;
                Mad.put16(rsp, at + 2, CAP_ALL_PORT_SELECT | CAP_EXT_WIDTH | CAP_XMIT_WAIT);
                BigEndian.put32(rsp, at + 4, 18); // CapabilityMask2 0, RespTimeValue 18
                return rsp;
            }
            case Mad.ATTR_PORT_COUNTERS, Mad.ATTR_PORT_COUNTERS_EXT -> {
                int port = req[at + 1] & 0xff;
                if (port != ALL_PORTS && Arrays.stream(ports.numbers()).noneMatch(p -> p == port))
                    return Mad.response(req, Mad.STATUS_INVALID_FIELD);
                boolean ext = attr == Mad.ATTR_PORT_COUNTERS_EXT;
                int[] cleared = method != Mad.SET ? new int[0] : port == ALL_PORTS ? ports.numbers() : new int[]{port};
                for (int p : cleared) clear(p, ext, Mad.get16(req, at + 2));
                Arrays.fill(rsp, at + 4, Mad.SIZE, (byte) 0);
                long[] c = now(port);
                if (ext) extended(rsp, at, c);
                else counters(rsp, at, c);
                return rsp;
            }
            default -> { return Mad.response(req, Mad.STATUS_METHOD_ATTR); }
        }
    }

    /** Port {@code port}'s counters since last cleared (all ports summed for {@link #ALL_PORTS}), data in words. */
    private long[] now(int port) {
        long[] c = new long[4];
        for (int p : port == ALL_PORTS ? ports.numbers() : new int[]{port}) {
            long[] raw = ports.raw(p), b = base.getOrDefault(p, new long[4]);
            for (int i = 0; i < 4; i++) c[i] += raw[i] - b[i];
        }
        c[0] /= 4;
        c[1] /= 4;
        return c;
    }

    /** PortCounters (IBA 16.1.3.5): the data and packet counters at 24..39 of the attribute, saturating. */
    private static void counters(byte[] b, int at, long[] c) {
        for (int i = 0; i < 4; i++) BigEndian.put32(b, at + 24 + 4 * i, Math.min(c[i], 0xffff_ffffL));
    }

    /** PortCountersExtended (IBA 16.1.4.11): 64-bit data and packet counters from 8; all unicast. */
    private static void extended(byte[] b, int at, long[] c) {
        for (int i = 0; i < 4; i++) BigEndian.put64(b, at + 8 + 8 * i, c[i]);
        BigEndian.put64(b, at + 40, c[2]);
        BigEndian.put64(b, at + 48, c[3]);
    }

    /** Clears what {@code select} names: PortCounters bits 12..15, PortCountersExtended bits 0..3 (data, packets). */
    private void clear(int port, boolean ext, int select) {
        long[] raw = ports.raw(port), b = base.computeIfAbsent(port, p -> new long[4]);
        for (int i = 0; i < 4; i++) if ((select >> (ext ? i : 12 + i) & 1) != 0) b[i] = raw[i];
    }
}
