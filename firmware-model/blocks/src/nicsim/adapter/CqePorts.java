package nicsim.adapter;

import java.util.Arrays;
import nicsim.sim.Layout;

/** Payloads of the CqeWriter's ports; a 64-byte CQE travels as eight little-endian 64-bit words. */
public final class CqePorts {
    private CqePorts() {}

    public static final int CQE_BYTES = 64;

    /**
     * Firmware's setup of a CQ: ring base, 2^logSize CQEs, the MSI-X vector of its events, and the
     * producer and consumer counters it resumes from (0 for a new CQ; a context loaded back after
     * eviction or migration carries its saved ones); disarmed, out of error.
     */
    public record CqConfig(long cqn, long base, long logSize, long vector, long pi, long ci, long valid) {
        /** A new CQ, its counters at 0. */
        public CqConfig(long cqn, long base, long logSize, long vector, long valid) {
            this(cqn, base, logSize, vector, 0, 0, valid);
        }
    }

    /** A completion to write: the CQE's 64 bytes as composed by firmware (the owner bit is the writer's). */
    public record CqeIn(long cqn, long solicited, long[] data) {
        public CqeIn { data = data.clone(); }
        @Override public boolean equals(Object o) {
            return o instanceof CqeIn c && cqn == c.cqn && solicited == c.solicited && Arrays.equals(data, c.data);
        }
        @Override public int hashCode() { return Arrays.hashCode(data) * 31 + (int) cqn; }
    }

    /** A 64-byte posted DMA write. */
    public record Write64(long addr, long[] data) {
        public Write64 { data = data.clone(); }
        @Override public boolean equals(Object o) {
            return o instanceof Write64 w && addr == w.addr && Arrays.equals(data, w.data);
        }
        @Override public int hashCode() { return Arrays.hashCode(data) * 31 + Long.hashCode(addr); }
        @Override public String toString() {
            return String.format("Write64(0x%x, op_own=0x%02x)", addr, data[7] >>> 56);
        }
    }

    /** A completion event for an armed CQ: raise MSI-X {@code vector}. */
    public record CqEvent(long cqn, long vector) {}

    /** A completion that could not be written. */
    public record CqError(long cqn, long code) {
        public enum Code { NONE, UNKNOWN_CQ, OVERFLOW, CQ_IN_ERROR }
        public Code reason() { return Code.values()[(int) code]; }

        @Override public String toString() {
            String what = code >= Code.values().length ? "error code " + code : switch (reason()) {
                case NONE -> "no error";
                case UNKNOWN_CQ -> "a completion for a CQ that is not configured";
                case OVERFLOW -> "overrun: a completion found the ring full (the consumer index in its doorbell "
                        + "record is a whole ring behind); the CQ is in error from now on";
                case CQ_IN_ERROR -> "a completion dropped: the CQ is in error since its overrun";
            };
            return String.format("CQ 0x%x %s", cqn, what);
        }
    }

    /** The consumer index software has reached (firmware reads it from the CQ doorbell record). */
    public record CqCi(long cqn, long ci) {}

    public static final Layout<CqConfig> CQ_CONFIG = Layout.<CqConfig>builder("CqConfig")
            .field("cqn", 24, CqConfig::cqn).field("base", 64, CqConfig::base).field("logSize", 5, CqConfig::logSize)
            .field("vector", 11, CqConfig::vector).field("pi", 24, CqConfig::pi).field("ci", 24, CqConfig::ci)
            .field("valid", 1, CqConfig::valid)
            .build(v -> new CqConfig(v[0], v[1], v[2], v[3], v[4], v[5], v[6]));

    public static final Layout<CqeIn> CQE_IN = Layout.<CqeIn>builder("CqeIn")
            .field("cqn", 24, CqeIn::cqn).field("solicited", 1, CqeIn::solicited).words("data", 8, 64, CqeIn::data)
            .build(v -> new CqeIn(v[0], v[1], Arrays.copyOfRange(v, 2, 10)));

    public static final Layout<Write64> WRITE64 = Layout.<Write64>builder("Write64").field("addr", 64, Write64::addr)
            .words("data", 8, 64, Write64::data)
            .build(v -> new Write64(v[0], Arrays.copyOfRange(v, 1, 9)));

    public static final Layout<CqEvent> CQ_EVENT = Layout.<CqEvent>builder("CqEvent")
            .field("cqn", 24, CqEvent::cqn).field("vector", 11, CqEvent::vector).build(v -> new CqEvent(v[0], v[1]));

    public static final Layout<CqError> CQ_ERROR = Layout.<CqError>builder("CqError")
            .field("cqn", 24, CqError::cqn).field("code", 2, CqError::code).build(v -> new CqError(v[0], v[1]));

    public static final Layout<CqCi> CQ_CI = Layout.<CqCi>builder("CqCi")
            .field("cqn", 24, CqCi::cqn).field("ci", 24, CqCi::ci).build(v -> new CqCi(v[0], v[1]));

}
