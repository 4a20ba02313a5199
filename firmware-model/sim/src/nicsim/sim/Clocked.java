package nicsim.sim;

/**
 * A block evaluated on the edges of its clock domain, in two phases so that evaluation order
 * between blocks does not matter (as in synchronous RTL):
 * <ol>
 *   <li>{@link #drive()}: set this block's outputs (stream valid/payload, ready) from its
 *       registered state only. No block reads another's outputs in this phase.</li>
 *   <li>{@link #update()}: read the settled handshakes ({@code fire()}) and inputs, and compute
 *       the next registered state. Outputs may not change in this phase.</li>
 * </ol>
 * This matches RTL whose outputs are registered; a combinational path from an input to an output
 * in the same cycle is modelled as one cycle of latency, on both twins alike.
 */
public interface Clocked {
    void drive();

    void update();

    /** Whether the block has work; a domain whose blocks are all inactive stops its clock until woken. */
    default boolean active() { return true; }

    /**
     * Whether its domain may leave the block out of edges while it is inactive, as it stops the
     * clock when every block is: the block promises that {@link #active()} turns true as soon as an
     * input it would take is valid, that an edge it is inactive on changes nothing, and that its
     * state changes only in its update (every input comes through its ports, none from outside).
     * Off by default: a block that must see every edge, such as the recorder of an RTL twin, or one
     * changed from outside the domain, runs on all.
     */
    default boolean mayRest() { return false; }
}
