package nicsim.firmware;

import java.util.Arrays;
import java.util.List;
import java.util.function.BiConsumer;
import nicsim.abi.BigEndian;
import nicsim.abi.Cqe64;
import nicsim.abi.CqeTmFlags;
import nicsim.abi.TmhOpcode;
import nicsim.abi.Vendor;
import nicsim.abi.WqeFormat;
import nicsim.abi.WqeLayout;
import nicsim.adapter.MttPorts;
import nicsim.fabric.Packet.Op;
import nicsim.fabric.Packet;

/**
 * The responder's tag matching (docs/sources.md#tag-matching): SENDs that reach a QP of a
 * tag-matching SRQ. Their headers are read, their tags looked up in the SRQ's list
 * ({@link TagMatching}), and they go to a tagged buffer, to an ordinary one, or (a rendezvous) to
 * a READ the adapter does itself.
 */
final class TaggedReceives {
    private final Qp q;

    TaggedReceives(Qp q) { this.q = q; }

    /**
     * The first packet of a SEND to a tag-matching SRQ (docs/sources.md#tag-matching). An EAGER
     * message's tag is looked up in the SRQ's list ({@code tm.match.cycles} per entry compared); the
     * entry that takes it gets the message without its 16-byte TMH, and the completion names the
     * entry: one (MATCH and DATA_VALID) for a one-packet message, else one at the match and one when
     * the data is all in. Any other message goes whole to an ordinary SRQ buffer: NO_TAG as such,
     * the rest (an EAGER no entry takes, RNDV, FIN, no TMH) as unexpected, which software must then
     * report back. A one-packet RNDV request an entry takes is done by the adapter ({@link #rendezvous}).
     */
    Responder.Step handle(Packet p) {
        byte[] d = p.payload();
        TmhOpcode op = d.length >= TMH_BYTES ? TmhOpcode.ofOrNull(d[0] & 0xff) : null;
        long tag = d.length >= TMH_BYTES ? BigEndian.get64(d, 8) : 0;
        int priv = d.length >= TMH_BYTES ? (int) BigEndian.get32(d, 4) : 0;
        boolean rndv = op == TmhOpcode.RNDV && d.length >= TMH_BYTES + RVH_BYTES && p.op().starts() && p.op().last();
        TagMatching.Match match = op == TmhOpcode.EAGER || rndv ? q.srq.tm.take(tag) : null;
        long cycles = q.fw.tm.matchCycles() * (match == null ? 0 : match.compared());
        if (match != null && match.entry() != null && rndv) {
            q.count(FirmwareStat.TM_MATCHED);
            rendezvous(p, match.entry(), tag, priv, cycles);
            return Responder.Step.DONE;
        }
        if (match != null && match.entry() != null) {
            matched(p, match.entry(), tag, priv, cycles);
            return Responder.Step.PENDING;
        }
        int kind = op == TmhOpcode.NO_TAG ? Cqe64.TM_NO_TAG : Cqe64.TM_UNEXPECTED;
        q.fw.exec(cycles, q.live(() -> q.responder.takeRecvWqe(p, q.live(w -> {
            if (w != null) unmatched(w, kind, tag, priv);
            q.responder.receive(p, w);
        }))));
        return Responder.Step.PENDING;
    }

    /** An EAGER message entry {@code e} took: its data goes to the entry's buffer, past the TMH. */
    private void matched(Packet p, TagMatching.Entry e, long tag, int priv, long cycles) {
        byte[] d = p.payload();
        InMsg m = new InMsg(true);
        m.wqe = new RecvRingReader.Wqe(e.handle(), List.of(e.sge()), e.sge().length() & 0xFFFFFFFFL);
        m.tmKind = Cqe64.TM_MATCHED;
        m.tag = tag;
        m.priv = priv;
        q.responder.receiving(m);
        q.count(FirmwareStat.TM_MATCHED);
        if (!p.op().last()) { // a longer message: the match is reported now, the data when it is all in
            long[] cqe = Cqe64.tmReceive(q.qpn, e.handle(), Cqe64.TM_MATCHED, CqeTmFlags.MATCH
                    | (q.srq.tm.syncFarBehind() ? CqeTmFlags.SYNC_REQ : 0), 0, tag, priv, p.srcQp(), p.slid(),
                    q.srq.srqn);
            Cq cq = q.srq.cq;
            q.placement.inTurn(q.fw.sim.now(), q.live(() -> q.fw.complete(cq, cqe, false)));
        }
        Packet body = p.withPayload(Arrays.copyOfRange(d, TMH_BYTES, d.length))
                .arriving(p.arrival() == null ? null : p.arrival().from(TMH_BYTES));
        q.fw.exec(cycles, q.live(() -> q.responder.receive(body, m.wqe)));
    }

    /** A message no entry took goes whole to SRQ buffer {@code w}, as NO_TAG or unexpected. */
    private void unmatched(RecvRingReader.Wqe w, int kind, long tag, int priv) {
        InMsg m = new InMsg(true);
        m.wqe = w;
        m.tmKind = kind;
        m.tag = tag;
        m.priv = priv;
        q.responder.receiving(m);
        if (kind == Cqe64.TM_UNEXPECTED) {
            q.srq.tm.countUnexpected();
            q.count(FirmwareStat.TM_UNEXPECTED);
        }
    }

    /**
     * Bytes of the tag-matching header (struct ibv_tmh) that starts every tagged message, and of a rendezvous request's
     * header (struct ibv_rvh).
     */
    static final int TMH_BYTES = 16, RVH_BYTES = 16;

    /**
     * A rendezvous request entry {@code e} took (docs/sources.md#tag-matching): the request itself is
     * acknowledged and needs no buffer; the match is reported at once; the adapter RDMA-READs the
     * sender's buffer (the RVH's address, rkey and length) into the tagged buffer through this QP's
     * send side, reports the data, and SENDs FIN (the request's TMH and RVH, opcode FIN) back. A
     * tagged buffer shorter than the data gets the headers instead, and the completion
     * TM_RNDV_INCOMPLETE leaves the rest to software. A failed READ completes the buffer in error.
     */
    private void rendezvous(Packet p, TagMatching.Entry e, long tag, int priv, long cycles) {
        byte[] d = p.payload();
        long va = BigEndian.get64(d, 16);
        int rkey = (int) BigEndian.get32(d, 24);
        long len = BigEndian.get32(d, 28) & 0xFFFFFFFFL;
        q.responder.took(1);
        if (p.ackReq()) q.responder.ack(Op.ACK, p.psn(), Packet.AETH_ACK, 0);
        Cq cq = q.srq.cq;
        long srqn = q.srq.srqn;
        int sync = q.srq.tm.syncFarBehind() ? CqeTmFlags.SYNC_REQ : 0;
        WqeFormat.Sge buffer = e.sge();
        // too little room: the headers go to the buffer, software does the rest
        if (len > (buffer.length() & 0xFFFFFFFFL)) {
            byte[] headers = Arrays.copyOf(d, TMH_BYTES + RVH_BYTES);
            long[] cqe = Cqe64.withTm(Cqe64.error(false, q.qpn, e.handle(), 0, Cqe64.SYNDROME_TM_RNDV_INCOMPLETE,
                    Vendor.TM_RNDV_BUFFER_SHORT, va, rkey, p.psn(), srqn), Cqe64.TM_MATCHED, CqeTmFlags.MATCH | sync);
            q.fw.exec(cycles, q.live(() -> q.placement.scatter(List.of(buffer), q.pd, 0, headers, null,
                    MttPorts.LOCAL_WRITE, q.live(fail -> {}), q.live(() -> q.fw.complete(cq, cqe, false)))));
            return;
        }
        q.placement.inTurn(q.fw.sim.now(), q.live(() -> q.fw.complete(cq, Cqe64.tmReceive(q.qpn, e.handle(),
                Cqe64.TM_MATCHED, CqeTmFlags.MATCH | sync, 0, tag, priv, p.srcQp(), p.slid(), srqn), false)));
        BiConsumer<Integer, Integer> failed = (syndrome, vendor) -> q.fw.complete(cq, Cqe64.withTm(
                Cqe64.error(false, q.qpn, e.handle(), 0, syndrome, vendor, va, rkey, 0, srqn), Cqe64.TM_MATCHED, 0),
                false);
        SendOp read = SendOp.offloaded(new WqeFormat.SendWqe(WqeLayout.OP_RDMA_READ, -1, q.qpn, 0, 0, null, va, rkey,
                0, 0, List.of(new WqeFormat.Sge(buffer.addr(), (int) len, buffer.lkey())), null), len, failed);
        byte[] fin = Arrays.copyOf(d, TMH_BYTES + RVH_BYTES);
        fin[0] = (byte) TmhOpcode.FIN.value();
        read.whenDone(q.live(() -> { // the data is in the tagged buffer: reported, and the sender told
            // the data's: no tag, as on mlx5
            int flags = CqeTmFlags.DATA_VALID | (q.srq.tm.syncFarBehind() ? CqeTmFlags.SYNC_REQ : 0);
            q.fw.complete(cq, Cqe64.tmReceive(q.qpn, e.handle(), Cqe64.TM_MATCHED, flags, len, 0, 0, p.srcQp(),
                    p.slid(), srqn), false);
            q.count(FirmwareStat.TM_RENDEZVOUS);
            var send = new WqeFormat.SendWqe(WqeLayout.OP_SEND, -1, q.qpn, 0, 0, null, 0, 0, 0, 0, List.of(), fin);
            q.requester.offload(SendOp.offloaded(send, fin.length, (syndrome, vendor) -> q.fw.report(
                    "rendezvous FIN of QP 0x" + Long.toHexString(q.qpn) + " failed: syndrome 0x"
                            + Integer.toHexString(syndrome))));
        }));
        q.fw.exec(cycles, q.live(() -> q.requester.offload(read)));
    }
}
