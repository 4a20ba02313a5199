package nicsim.host;

import java.util.function.Consumer;
import nicsim.sim.Simulator;

/**
 * A device's handle on the bus: DMA and MSI-X, each issued now and completed later through a
 * callback at the simulated time it finishes (gem5's issue/complete pairs).
 */
public interface PciPort {
    /** The outcome of a DMA. */
    enum DmaStatus {
        OK,
        /** The host address is not backed by memory: the root complex answers Unsupported Request. */
        UNSUPPORTED_REQUEST,
        /** Bus mastering is off in the command register: the device may not issue DMA. */
        BUS_MASTER_DISABLED
    }

    /** A finished DMA read: status, the bytes (empty unless OK), and the time it completed. */
    record ReadResult(DmaStatus status, byte[] data, long completedAt) {}

    /** A finished DMA write (posted: the time its last byte reached host memory). */
    record WriteResult(DmaStatus status, long completedAt) {}

    Simulator simulator();

    void dmaRead(long hostAddr, int length, Consumer<ReadResult> done);

    void dmaWrite(long hostAddr, byte[] data, Consumer<WriteResult> done);

    /** Sends MSI-X {@code vector}; returns false (and counts it) if it could not be sent now. */
    boolean msix(int vector);
}
