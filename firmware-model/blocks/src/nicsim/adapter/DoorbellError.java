package nicsim.adapter;

import nicsim.sim.Layout;

/**
 * A doorbell write the decoder refused or could not queue, reported with its address and value.
 * A refused doorbell changes no state.
 */
public record DoorbellError(long code, long offset, long data) {
    /** Why: codes are the RTL's too. */
    public enum Code {
        NONE,
        /** The write is outside the doorbell window. */
        OUT_OF_WINDOW,
        /** The page offset is not a doorbell register. */
        UNKNOWN_REGISTER,
        /** Doorbells are 8-byte writes. */
        BAD_SIZE,
        /** No queue with that number exists. */
        BAD_QUEUE,
        /** The queue exists but belongs to another context's UAR page. */
        NOT_OWNER,
        /**
         * The doorbell FIFO was full and nothing could be coalesced: dropped (the doorbell record still has the index).
         */
        OVERFLOW
    }

    public static final Layout<DoorbellError> LAYOUT = Layout.<DoorbellError>builder("DoorbellError")
            .field("code", 3, DoorbellError::code)
            .field("offset", 32, DoorbellError::offset)
            .field("data", 64, DoorbellError::data)
            .build(v -> new DoorbellError(v[0], v[1], v[2]));

    public Code reason() { return Code.values()[(int) code]; }

    @Override public String toString() {
        Object why = code < Code.values().length ? reason() : "code" + code;
        return String.format("%s at +0x%x value 0x%016x", why, offset, data);
    }
}
