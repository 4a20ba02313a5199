package nicsim.sim;

/**
 * A broken handshake rule on a {@link Stream}: SpinalHDL's contract says valid, once raised, holds
 * until the transfer fires, and the payload stays the same meanwhile. The message names the
 * stream, the cycle, the rule and the values seen.
 */
public final class StreamContractViolation extends RuntimeException {
    public enum Rule { VALID_DROPPED, PAYLOAD_CHANGED, DRIVEN_IN_UPDATE_PHASE }

    private final String stream;
    private final long cycle;
    private final Rule rule;

    public StreamContractViolation(String stream, long cycle, Rule rule, String detail) {
        super("stream " + stream + " cycle " + cycle + ": " + rule + ": " + detail);
        this.stream = stream; this.cycle = cycle; this.rule = rule;
    }

    public String stream() { return stream; }
    public long cycle() { return cycle; }
    public Rule rule() { return rule; }
}
