package nicsim.hw.rtl;

import java.util.List;

/**
 * A running Verilated RTL block as Java sees it: ports by their RTL names
 * (io_mmio_valid, io_doorbell_payload_qpn, ...), values up to 64 bits. Call it only from inside
 * {@link RtlRunner}'s body, which runs on the simulation's thread.
 *
 * <p>A cycle is: poke the inputs, {@link #settle()}, peek the outputs (the values the coming edge
 * samples), then {@link #clockEdge()}.
 */
public interface RtlHandle {
    void poke(String port, long value);

    long peek(String port);

    /** Lets combinational logic settle after pokes, before the edge. */
    void settle();

    /** Advances through the next rising clock edge. */
    void clockEdge();

    /** Every port name of the top level. */
    List<String> ports();

    /** Edges run since reset was released. */
    long cycle();
}
