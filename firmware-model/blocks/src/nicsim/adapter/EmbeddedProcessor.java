package nicsim.adapter;

import java.util.function.Consumer;
import nicsim.adapter.MttPorts.XlateRsp;
import nicsim.adapter.WqePorts.SqConfig;
import nicsim.adapter.WqePorts.WqeError;

/**
 * The firmware as the adapter's blocks see it: what they hand the embedded processor. The
 * firmware (nicsim.firmware.Firmware) implements it and drives the blocks back through the
 * Adapter's firmware-facing methods; the adapter knows nothing more of it, so the two do not import
 * each other.
 */
public interface EmbeddedProcessor {
    /** A write to the initialization page of BAR0 (the command interface's registers). */
    void mmioWrite(long offset, byte[] data);

    /** A read of the initialization page. */
    byte[] mmioRead(long offset, int length);

    /** Whether the WQE fetcher may take send-queue context {@code c} now. */
    boolean mayLoad(SqConfig c);

    /** The fetcher took the context of {@code qpn}. */
    void onSqLoaded(long qpn);

    /** A send doorbell for {@code qpn} announced {@code producer}. */
    void onDoorbell(long qpn, int producer);

    /** A send doorbell for {@code qpn}, whose context the fetcher does not hold. */
    void onSqMiss(long qpn, int producer);

    /** A fetched, checked WQE. */
    void onWqe(long qpn, int index, byte[] bytes);

    /** A WQE the fetcher refused, or a ring read that failed. */
    void onWqeError(WqeError e);

    /** A translation answer (one response of a request's walk). */
    void onXlate(XlateRsp r);

    /** The MttWalker missed translation entry {@code index}; {@code done} takes {index, entry}. */
    void onMttFill(long index, Consumer<long[]> done);

    /** A CQE the CqeWriter wrote reached host memory. */
    default void onCqeWritten(byte[] cqe) {}

    /** The CqeWriter found CQ {@code cqn} in error. */
    void onCqError(long cqn, CqePorts.CqError.Code code);

    /**
     * No firmware: {@code adapter}'s blocks alone, as the block-level tests and the demo drive them
     * (the initialization page reads zero, and a write to it is reported; every queue context may load).
     */
    static EmbeddedProcessor none(Adapter adapter) {
        return new EmbeddedProcessor() {
            @Override public void mmioWrite(long offset, byte[] data) {
                adapter.report(String.format("MMIO write of %d bytes at BAR0+0x%x: the adapter runs without firmware",
                        data.length, offset));
            }
            @Override public byte[] mmioRead(long offset, int length) { return new byte[length]; }
            @Override public boolean mayLoad(SqConfig c) { return true; }
            @Override public void onSqLoaded(long qpn) {}
            @Override public void onDoorbell(long qpn, int producer) {}
            @Override public void onSqMiss(long qpn, int producer) {}
            @Override public void onWqe(long qpn, int index, byte[] bytes) {}
            @Override public void onWqeError(WqeError e) {}
            @Override public void onXlate(XlateRsp r) {}
            @Override public void onMttFill(long index, Consumer<long[]> done) {}
            @Override public void onCqError(long cqn, CqePorts.CqError.Code code) {}
        };
    }
}
