package nicsim.verbs;

/** Work requests as the tests most often start them. */
final class Wrs {
    private Wrs() {}

    /** A signaled send-queue work request: its id and opcode, the rest to be named by the caller. */
    static SendWr signaled(long wrId, WrOpcode op) {
        return new SendWr().wrId(wrId).opcode(op).sendFlags(SendFlags.SIGNALED);
    }
}
