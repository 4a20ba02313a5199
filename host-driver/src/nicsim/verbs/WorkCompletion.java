package nicsim.verbs;

/**
 * A work completion (struct ibv_wc). When {@code status} is not SUCCESS only wrId, status, qpNum
 * and vendorErr are meaningful, and {@code syndrome} says which check failed, on which key,
 * address or PSN. {@code slid} is the source LID of a received UD message.
 */
public record WorkCompletion(long wrId, WcStatus status, WcOpcode opcode, int byteLen, int qpNum, int srcQp, int immData,
                             int wcFlags, int vendorErr, String syndrome, int slid) {
    @Override public String toString() {
        return status == WcStatus.SUCCESS
                ? String.format("wc(wr %d %s %s %d B qp 0x%x%s)", wrId, status, opcode, byteLen, qpNum,
                        (wcFlags & WcFlags.WITH_IMM) != 0 ? String.format(" imm 0x%x", immData) : "")
                : String.format("wc(wr %d %s qp 0x%x: %s)", wrId, status, qpNum, syndrome);
    }
}
