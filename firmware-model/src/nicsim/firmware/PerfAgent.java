package nicsim.firmware;

import nicsim.abi.BigEndian;

/**
 * The port's performance management agent (IBA 16.1): ClassPortInfo, PortCounters and
 * PortCountersExtended from the port's own traffic (every packet it sent and received, data counted
 * in 4-octet words as the specification asks), and a Set of either clears the counters its
 * CounterSelect names, as {@code perfquery -r} does. The 32-bit counters stop at their maximum.
 */
final class PerfAgent {
    /** ClassPortInfo.CapabilityMask: PortCountersExtended with every counter (IsExtendedWidthSupported), PortXmitWait. */
    static final int CAP_EXT_WIDTH = 1 << 9, CAP_XMIT_WAIT = 1 << 12;
    private final Management m;
    /** What the counters read when last cleared: xmit data, rcv data, xmit packets, rcv packets. */
    private final long[] base = new long[4];

    PerfAgent(Management m) { this.m = m; }

    byte[] answer(byte[] req) {
        if (Mad.classVersion(req) != 1) return Mad.response(req, Mad.STATUS_BAD_VERSION);
        int method = Mad.method(req), attr = Mad.attr(req);
        if (method != Mad.GET && method != Mad.SET) return Mad.response(req, Mad.STATUS_METHOD);
        byte[] rsp = Mad.response(req, 0);
        int at = Mad.PMA_DATA;
        switch (attr) {
            case Mad.ATTR_CLASS_PORT_INFO -> {
                if (method == Mad.SET) return Mad.response(req, Mad.STATUS_METHOD_ATTR);
                java.util.Arrays.fill(rsp, at, Mad.SIZE, (byte) 0);
                rsp[at] = 1;
                rsp[at + 1] = 1;
                Mad.put16(rsp, at + 2, CAP_EXT_WIDTH | CAP_XMIT_WAIT);
                BigEndian.put32(rsp, at + 4, 18); // CapabilityMask2 0, RespTimeValue 18
                return rsp;
            }
            case Mad.ATTR_PORT_COUNTERS, Mad.ATTR_PORT_COUNTERS_EXT -> {
                int port = req[at + 1] & 0xff;
                if (port != 1 && port != 0xff) return Mad.response(req, Mad.STATUS_INVALID_FIELD);
                boolean ext = attr == Mad.ATTR_PORT_COUNTERS_EXT;
                if (method == Mad.SET) clear(ext, Mad.get16(req, at + 2));
                java.util.Arrays.fill(rsp, at + 4, Mad.SIZE, (byte) 0);
                if (ext) extended(rsp, at);
                else counters(rsp, at);
                return rsp;
            }
            default -> { return Mad.response(req, Mad.STATUS_METHOD_ATTR); }
        }
    }

    private long[] now() {
        return new long[]{(m.xmitBytes - base[0]) / 4, (m.rcvBytes - base[1]) / 4, m.xmitPkts - base[2],
                m.rcvPkts - base[3]};
    }

    /** PortCounters (IBA 16.1.3.5): the data and packet counters at 24..39 of the attribute, saturating. */
    private void counters(byte[] b, int at) {
        long[] c = now();
        for (int i = 0; i < 4; i++) BigEndian.put32(b, at + 24 + 4 * i, Math.min(c[i], 0xffff_ffffL));
    }

    /** PortCountersExtended (IBA 16.1.4.11): 64-bit data and packet counters from 8; all unicast. */
    private void extended(byte[] b, int at) {
        long[] c = now();
        for (int i = 0; i < 4; i++) BigEndian.put64(b, at + 8 + 8 * i, c[i]);
        BigEndian.put64(b, at + 40, c[2]);
        BigEndian.put64(b, at + 48, c[3]);
    }

    /** Clears what {@code select} names: PortCounters bits 12..15, PortCountersExtended bits 0..3 (data, packets). */
    private void clear(boolean ext, int select) {
        long[] raw = {m.xmitBytes, m.rcvBytes, m.xmitPkts, m.rcvPkts};
        for (int i = 0; i < 4; i++) if ((select >> (ext ? i : 12 + i) & 1) != 0) base[i] = raw[i];
    }
}
