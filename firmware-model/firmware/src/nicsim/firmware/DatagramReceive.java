package nicsim.firmware;

import java.util.function.Consumer;
import nicsim.abi.Cqe64;
import nicsim.adapter.MttPorts;
import nicsim.fabric.Grh;
import nicsim.fabric.Packet;
import nicsim.firmware.Responder.Step;
import nicsim.sim.Arrival;

/**
 * A UD QP's receives, for the responder: each message into a receive WQE after the 40 bytes of GRH
 * space, or, on a striding receive queue, into the strides it needs of the WQE being filled (that
 * WQE and its next stride are kept here, and cleared on RESET).
 */
final class DatagramReceive {
    private final Qp q;
    private final Responder r;
    private RecvRingReader.Wqe strideWqe; // a striding receive queue's WQE being filled, and its next stride
    private int strideNext;

    DatagramReceive(Qp q, Responder r) {
        this.q = q;
        this.r = r;
    }

    void reset() {
        strideWqe = null;
        strideNext = 0;
    }

    /**
     * A UD message: into a receive WQE, or the strides of one; a wrong Q_Key drops it (a special QP's
     * MADs had theirs checked at the port: QP0 takes any, QP1 the GSI's).
     */
    Step handle(Packet p) {
        if (p.qkey() != q.qkey && q.special < 0) { q.count(FirmwareStat.QKEY_MISMATCH); return Step.DONE; }
        if (q.strides > 0) return handleStrided(p);
        r.takeRecvWqe(q.live(w -> {
            if (w == null) { q.count(FirmwareStat.UD_NO_RECEIVE); r.finish(); return; }
            // the first 40 bytes hold the GRH: a multicast packet's, else left untouched (none within a subnet)
            long len = p.payload().length + 40L;
            // too long for the buffer: dropped, no error (docs/sources.md#responder-errors *1)
            if (len > w.capacity()) {
                q.count(FirmwareStat.UD_TOO_LONG_FOR_RECEIVE);
                r.untakeRecvWqe(w); // the WQE is not consumed
                r.finish();
                return;
            }
            int kind = p.op().hasImm() ? Cqe64.RESP_SEND_IMM : Cqe64.RESP_SEND;
            long[] cqe = Cqe64.responder(q.qpn, w.index(), kind, len, p.imm(), p.srcQp(), p.slid(), p.solicited());
            placeUd(p, w, 40, cqe);
        }));
        return Step.PENDING;
    }

    /**
     * Writes a UD message's payload at {@code off} in receive WQE {@code w}, then completes it with {@code cqe}
     * (a bad lkey: LOC_PROT_ERR).
     */
    private void placeUd(Packet p, RecvRingReader.Wqe w, long off, long[] cqeIn) {
        long[] cqe = p.grh() != null ? Cqe64.withGrh(cqeIn) : cqeIn;
        byte[] data = p.payload();
        Arrival arrival = p.arrival();
        if (p.grh() != null) { // a GRH came (a multicast packet): it fills the 40 bytes before the payload
            byte[] h = p.grh().bytes(p.wireBytes() - Packet.LRH - Grh.BYTES - Packet.VCRC); // PayLen
            data = new byte[h.length + p.payload().length];
            System.arraycopy(h, 0, data, 0, h.length);
            System.arraycopy(p.payload(), 0, data, h.length, p.payload().length);
            off -= h.length;
            if (arrival != null) arrival = new Arrival(arrival.head(), arrival.tail(), data.length);
        }
        q.placement.scatter(w.sges(), off, data, arrival, MttPorts.LOCAL_WRITE, q.live(fail -> {
            if (fail != null && fail.pageFault() && q.strides == 0) q.odp.datagramFaulted(w, fail);
            else if (fail != null)
                q.fw.complete(q.rcq, Cqe64.error(false, q.qpn, w.index(), 0, Cqe64.SYNDROME_LOC_PROT_ERR, fail.vendor(),
                        fail.addr(), fail.key(), p.psn()), false);
            r.finish();
        }), q.live(() -> q.fw.complete(q.rcq, cqe, p.solicited())));
    }

    /**
     * A UD message into a striding receive queue (streaming receive; mlx5's multi-packet RQ): it
     * takes only the strides it needs (GRH space and payload) of the WQE being filled, from the next
     * free one; a message that no longer fits first gets the WQE's remaining strides used up by a
     * filler completion, and goes to the next WQE. One CQE per message says where it went; the one
     * that takes a WQE's last stride releases the WQE.
     */
    private Step handleStrided(Packet p) {
        long len = p.payload().length + 40L;
        int need = (int) ((len + q.strideBytes - 1) / q.strideBytes);
        if (need > q.strides) { q.count(FirmwareStat.UD_TOO_LONG_FOR_RECEIVE); return Step.DONE; }
        Consumer<RecvRingReader.Wqe> place = q.live(w -> {
            if (w == null) { q.count(FirmwareStat.UD_NO_RECEIVE); r.finish(); return; }
            int first = strideNext;
            strideNext += need;
            boolean full = strideNext == q.strides;
            strideWqe = full ? null : w;
            if (full) strideNext = 0;
            int kind = p.op().hasImm() ? Cqe64.RESP_SEND_IMM : Cqe64.RESP_SEND;
            long[] cqe = Cqe64.responderStrided(q.qpn, w.index(), kind, (int) len, p.imm(), p.srcQp(), p.slid(),
                    p.solicited(), first, need, false);
            q.count(FirmwareStat.STRIDED_RECEIVES);
            placeUd(p, w, (long) first * q.strideBytes + 40, cqe);
        });
        RecvRingReader.Wqe partial = strideWqe;
        if (partial != null && strideNext + need <= q.strides) { place.accept(partial); return Step.PENDING; }
        if (partial != null) { // what is left of this WQE is too little: a filler takes it, and the WQE is released
            long[] filler = Cqe64.responderStrided(q.qpn, partial.index(), Cqe64.RESP_SEND, 0, 0, 0, 0, false,
                    strideNext, q.strides - strideNext, true);
            // after the WQE's messages
            q.placement.inTurn(q.fw.sim.now(), q.live(() -> q.fw.complete(q.rcq, filler, false)));
            q.count(FirmwareStat.STRIDE_FILLERS);
            strideWqe = null;
            strideNext = 0;
        }
        r.takeRecvWqe(place);
        return Step.PENDING;
    }
}
