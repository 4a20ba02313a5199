package nicsim.adapter.stim;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import nicsim.abi.Cqe64;
import nicsim.abi.WqeFormat;
import nicsim.abi.WqeLayout;
import nicsim.adapter.Adapter;
import nicsim.adapter.AdapterStat;
import nicsim.adapter.CqePorts;
import nicsim.adapter.EmbeddedProcessor;
import nicsim.adapter.MttPorts.XlateRsp;
import nicsim.adapter.WqePorts.SqConfig;
import nicsim.adapter.WqePorts.WqeError;

/**
 * The embedded processor of the adapter-level tests and the demo, which drive the send and
 * completion paths without the real firmware: it sets a send queue up directly in the decoder's
 * table and the fetcher ({@link #createSq}), keeps every WQE the fetcher delivers ({@link #wqes}),
 * and executes NOPs only: a NOP asking for a completion (CQ_UPDATE) gets a success CQE; a WQE whose
 * segments do not parse, or that the fetcher refused, completes in error.
 */
public final class NopFirmware implements EmbeddedProcessor {
    /** Vendor syndrome of a WQE whose segments do not parse (fetcher-detected ones carry the WqeError code, 1..5). */
    public static final int VENDOR_SYNDROME_SEGMENTS = 0x10;

    private final Adapter adapter;
    private final Map<Long, Long> cqOfSq = new HashMap<>();
    private final List<Adapter.Wqe> wqes = new ArrayList<>();

    public NopFirmware(Adapter adapter) { this.adapter = adapter; }

    /**
     * Sets up send queue {@code qpn}: owned by UAR page {@code uar}, ring at {@code ringBase} of
     * 2^logSize WQEBBs, completions to CQ {@code cqn} (none if negative). Takes effect a few cycles
     * later, before any doorbell written after it.
     */
    public void createSq(long qpn, int uar, long ringBase, int logSize, long cqn) {
        if (cqn >= 0) cqOfSq.put(qpn, cqn);
        adapter.addQpQueue(qpn, uar);
        adapter.loadSq(qpn, ringBase, logSize, 0, 0);
    }

    /** WQEs fetched and checked, in order. */
    public List<Adapter.Wqe> wqes() { return List.copyOf(wqes); }

    @Override public void onWqe(long qpn, int index, byte[] bytes) {
        Adapter.Wqe w = new Adapter.Wqe(qpn, index, bytes, adapter.core().cycle());
        wqes.add(w);
        int opcode = bytes[3] & 0xff;
        try {
            WqeFormat.decode(bytes, false);
        } catch (WqeFormat.Malformed m) {
            adapter.report("malformed WQE " + w.index() + " of QP 0x" + Long.toHexString(qpn) + ": " + m.getMessage());
            completeInError(qpn, index, opcode, Cqe64.SYNDROME_LOC_QP_OP_ERR, VENDOR_SYNDROME_SEGMENTS);
            return;
        }
        if (opcode != WqeLayout.OP_NOP) {
            adapter.core().counters().ref(AdapterStat.WQES_NOT_EXECUTED).inc();
            return;
        }
        Long cqn = cqOfSq.get(qpn);
        if (cqn != null && (bytes[11] & Cqe64.CQ_UPDATE) != 0)
            adapter.postCqe(cqn, Cqe64.requester(qpn, index, opcode, 0), false);
    }

    /**
     * A malformed WQE completes LOC_QP_OP_ERR with the fetcher's reason as vendor syndrome; a failed ring read
     * GENERAL_ERR.
     */
    @Override public void onWqeError(WqeError e) {
        completeInError(e.qpn(), (int) e.index(), WqeLayout.opcode(e.ctrl()),
                e.reason() == WqeError.Code.DMA_ERROR ? Cqe64.SYNDROME_GENERAL_ERR : Cqe64.SYNDROME_LOC_QP_OP_ERR,
                (int) e.code());
    }

    private void completeInError(long qpn, int wqeCounter, int opcode, int syndrome, int vendorSyndrome) {
        Long cqn = cqOfSq.get(qpn);
        if (cqn != null)
            adapter.postCqe(cqn, Cqe64.requesterError(qpn, wqeCounter, opcode, syndrome, vendorSyndrome), false);
    }

    @Override public void onSqMiss(long qpn, int producer) {
        adapter.report(String.format(
                "doorbell for send queue 0x%x (producer %d), whose context the fetcher does not hold", qpn, producer));
    }

    @Override public void mmioWrite(long offset, byte[] data) {
        EmbeddedProcessor.none(adapter).mmioWrite(offset, data);
    }
    @Override public byte[] mmioRead(long offset, int length) { return new byte[length]; }
    @Override public boolean mayLoad(SqConfig c) { return true; }
    @Override public void onSqLoaded(long qpn) {}
    @Override public void onDoorbell(long qpn, int producer) {}
    @Override public void onXlate(XlateRsp r) {}
    @Override public void onMttFill(long index, Consumer<long[]> done) {}
    @Override public void onCqError(long cqn, CqePorts.CqError.Code code) {}
}
