package nicsim.adapter;

import java.util.Arrays;
import nicsim.abi.WqeLayout;
import nicsim.sim.Layout;

/**
 * Payloads of the WqeFetcher's ports. A WQEBB travels as eight 64-bit words, each packing 8 bytes
 * little-endian (byte 8i of the WQEBB in bits 7..0 of word i).
 */
public final class WqePorts {
    private WqePorts() {}

    /**
     * Firmware's setup of a send queue: ring base (64-byte aligned), 2^logSize WQEBBs, and where its
     * counters start: the next WQEBB to fetch ({@code start}) and the producer index (WQEBBs posted);
     * valid 0 removes it. Loading a QP's context back after an eviction restores both.
     */
    public record SqConfig(long qpn, long base, long logSize, long start, long producer, long valid) {
        /** A queue starting empty at WQEBB 0. */
        public SqConfig(long qpn, long base, long logSize, long valid) { this(qpn, base, logSize, 0, 0, valid); }
    }

    /** A DMA read the fetcher asks for: {@code length} bytes (whole WQEBBs) at {@code addr}. */
    public record DmaReadReq(long addr, long length, long tag) {}

    /**
     * One WQEBB of read data; {@code status} 1 if the DMA failed (then data is meaningless). {@code data} is taken,
     * not copied: its maker hands over an array no one writes again (every maker here makes a new one a beat).
     */
    public record WqebbBeat(long[] data, long status) {
        @Override public boolean equals(Object o) {
            return o instanceof WqebbBeat b && Arrays.equals(data, b.data) && status == b.status;
        }
        @Override public int hashCode() { return Arrays.hashCode(data) * 31 + (int) status; }
        @Override public String toString() {
            return "WqebbBeat(" + String.format("0x%016x", data[0]) + "..., status=" + status + ")";
        }
    }

    /**
     * One WQEBB handed to the firmware: which SQ, its WQEBB counter, whether it starts or ends a WQE. {@code data} is
     * taken, not copied, as {@link WqebbBeat}'s (the fetcher hands on the read beat's own words, which no one writes).
     */
    public record WqeBeat(long qpn, long index, long first, long last, long[] data) {
        @Override public boolean equals(Object o) {
            return o instanceof WqeBeat b && qpn == b.qpn && index == b.index && first == b.first && last == b.last
                    && Arrays.equals(data, b.data);
        }
        @Override public int hashCode() { return Arrays.hashCode(data) * 31 + (int) (qpn * 7 + index); }
        @Override public String toString() {
            return String.format("WqeBeat(qpn=0x%x idx=%d%s%s 0x%016x...)", qpn, index, first != 0 ? " first" : "",
                    last != 0 ? " last" : "", data[0]);
        }
    }

    /** A malformed WQE or failed fetch: the SQ stops; the syndrome is the code and the control words. */
    public record WqeError(long qpn, long index, long code, long ctrl) {
        public enum Code {
            NONE,
            /** The control segment's opcode is not one the adapter executes. */
            BAD_OPCODE,
            /** DS is 0. */
            BAD_DS,
            /** The control segment names another QP. */
            BAD_QPN,
            /** The control segment's WQE index is not the WQEBB counter it was fetched at. */
            BAD_INDEX,
            /** The DMA read of the ring failed. */
            DMA_ERROR
        }

        public Code reason() { return Code.values()[(int) code]; }

        @Override public String toString() {
            // what a driver most likely did, where the bytes say it
            String hint = code == Code.DMA_ERROR.ordinal() ? ""
                    : ctrl == 0 ? ": nothing is written there (was the doorbell rung before the WQE's bytes?)"
                    : code == Code.BAD_QPN.ordinal() || code == Code.BAD_INDEX.ordinal()
                    ? ": not the WQE the doorbell announced (stale bytes: was the doorbell rung before the WQE?)" : "";
            return String.format("%s on qpn 0x%x at WQEBB %d (ctrl 0x%016x: opcode 0x%02x index %d qpn 0x%x ds %d)%s",
                    code < Code.values().length ? reason() : "code" + code, qpn, index, ctrl, WqeLayout.opcode(ctrl),
                    WqeLayout.index(ctrl), WqeLayout.qpn(ctrl), WqeLayout.ds(ctrl), hint);
        }
    }

    public static final Layout<SqConfig> SQ_CONFIG = Layout.<SqConfig>builder("SqConfig")
            .field("qpn", 24, SqConfig::qpn).field("base", 64, SqConfig::base)
            .field("logSize", 4, SqConfig::logSize).field("start", 16, SqConfig::start)
            .field("producer", 16, SqConfig::producer)
            .field("valid", 1, SqConfig::valid)
            .build(v -> new SqConfig(v[0], v[1], v[2], v[3], v[4], v[5]));

    public static final Layout<DmaReadReq> DMA_READ_REQ = Layout.<DmaReadReq>builder("DmaReadReq")
            .field("addr", 64, DmaReadReq::addr).field("length", 16, DmaReadReq::length)
            .field("tag", 8, DmaReadReq::tag)
            .build(v -> new DmaReadReq(v[0], v[1], v[2]));

    public static final Layout<WqebbBeat> WQEBB_BEAT = Layout.<WqebbBeat>builder("WqebbBeat")
            .words("data", 8, 64, WqebbBeat::data)
            .field("status", 1, WqebbBeat::status)
            .build(v -> new WqebbBeat(Arrays.copyOf(v, 8), v[8]));

    public static final Layout<WqeBeat> WQE_BEAT = Layout.<WqeBeat>builder("WqeBeat")
            .field("qpn", 24, WqeBeat::qpn).field("index", 16, WqeBeat::index)
            .field("first", 1, WqeBeat::first).field("last", 1, WqeBeat::last).words("data", 8, 64, WqeBeat::data)
            .build(v -> new WqeBeat(v[0], v[1], v[2], v[3], Arrays.copyOfRange(v, 4, 12)));

    public static final Layout<WqeError> WQE_ERROR = Layout.<WqeError>builder("WqeError")
            .field("qpn", 24, WqeError::qpn).field("index", 16, WqeError::index)
            .field("code", 3, WqeError::code).field("ctrl", 64, WqeError::ctrl)
            .build(v -> new WqeError(v[0], v[1], v[2], v[3]));

}
