package nicsim.verbs;

/**
 * A work completion (struct ibv_wc). When {@code status} is not SUCCESS only wrId, status, qpNum
 * and vendorErr are meaningful, and {@code syndrome} says which check failed, on which key,
 * address or PSN. {@code slid} is the source LID of a received UD message. On a striding receive
 * queue, {@code strideOffset} is the first stride the message took in the WQE (whose buffer it
 * shares with the messages before and after it), and {@code wcFlags} may say STRIDE_FILLER or
 * STRIDE_BUFFER_CONSUMED. A tag-matching SRQ's receive of a matched message reports the message's
 * {@code tmTag} and the sender's app context {@code tmPriv} (ibv_wc_read_tm_info). {@code timestamp}
 * is when the adapter wrote the completion, in its core clock's cycles since the simulation began
 * (ibv_wc_read_completion_ts; 0 for an error's completion).
 */
public record WorkCompletion(long wrId, WcStatus status, WcOpcode opcode, int byteLen, int qpNum, int srcQp,
                             int immData, int wcFlags, int vendorErr, String syndrome, int slid, int strideOffset,
                             long tmTag, int tmPriv, long timestamp) {
    /** A completion whose timestamp is not known yet. */
    public WorkCompletion(long wrId, WcStatus status, WcOpcode opcode, int byteLen, int qpNum, int srcQp, int immData,
                          int wcFlags, int vendorErr, String syndrome, int slid, int strideOffset, long tmTag,
                          int tmPriv) {
        this(wrId, status, opcode, byteLen, qpNum, srcQp, immData, wcFlags, vendorErr, syndrome, slid, strideOffset,
                tmTag, tmPriv, 0);
    }

    /** A completion that is not a tag-matching SRQ's. */
    public WorkCompletion(long wrId, WcStatus status, WcOpcode opcode, int byteLen, int qpNum, int srcQp, int immData,
                          int wcFlags, int vendorErr, String syndrome, int slid, int strideOffset) {
        this(wrId, status, opcode, byteLen, qpNum, srcQp, immData, wcFlags, vendorErr, syndrome, slid, strideOffset,
                0, 0);
    }

    /** A completion of a queue that is not striding. */
    public WorkCompletion(long wrId, WcStatus status, WcOpcode opcode, int byteLen, int qpNum, int srcQp, int immData,
                          int wcFlags, int vendorErr, String syndrome, int slid) {
        this(wrId, status, opcode, byteLen, qpNum, srcQp, immData, wcFlags, vendorErr, syndrome, slid, 0);
    }

    /** This completion, written at core clock cycle {@code cycles}. */
    public WorkCompletion withTimestamp(long cycles) {
        return new WorkCompletion(wrId, status, opcode, byteLen, qpNum, srcQp, immData, wcFlags, vendorErr, syndrome,
                slid, strideOffset, tmTag, tmPriv, cycles);
    }

    @Override public String toString() {
        return status == WcStatus.SUCCESS
                ? String.format("wc(wr %d %s %s %d B qp 0x%x%s)", wrId, status, opcode, byteLen, qpNum,
                        (wcFlags & WcFlags.WITH_IMM) != 0 ? String.format(" imm 0x%x", immData) : "")
                : String.format("wc(wr %d %s qp 0x%x: %s)", wrId, status, qpNum, syndrome);
    }
}
