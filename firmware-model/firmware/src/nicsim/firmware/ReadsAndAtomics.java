package nicsim.firmware;

import java.util.List;
import java.util.Map;
import nicsim.abi.EqeType;
import nicsim.abi.HostOrder;
import nicsim.abi.Vendor;
import nicsim.adapter.DmaPath;
import nicsim.adapter.MttPorts;
import nicsim.adapter.MttPorts.XlateRsp;
import nicsim.adapter.MttPorts;
import nicsim.fabric.Packet.Op;
import nicsim.fabric.Packet;
import nicsim.firmware.Qp.Piece;
import nicsim.host.PciPort;
import nicsim.sim.Recent;

/**
 * The responder's RDMA READs and atomics (rxe_resp.c's read_reply and atomic execution): reads of
 * host memory through the rkey's translation, after the writes of the requests before them, their
 * responses in order, max_dest_rd_atomic enforced, and atomics one at a time per address.
 */
final class ReadsAndAtomics {
    private final Qp q;

    /** READs and atomics being answered: max_dest_rd_atomic bounds them. */
    private int inProgress;
    /**
     * The results of the latest atomics by PSN, oldest first, so a repeated request gets its original answer
     * (64 kept: more than max_dest_rd_atomic).
     */
    private final Map<Integer, Long> atomicReplay = new Recent<>(64);

    ReadsAndAtomics(Qp q) { this.q = q; }

    /** The QP went to RESET (with its responder). */
    void reset() {
        atomicReplay.clear();
        inProgress = 0;
    }

    /** A repeated atomic (RC): its saved result is sent again, if it is still kept. */
    Responder.Step duplicateAtomic(Packet p) {
        Long orig = atomicReplay.get(p.psn());
        if (orig != null) q.responder.ack(Op.ATOMIC_ACK, p.psn(), Packet.AETH_ACK, orig);
        return Responder.Step.DONE;
    }

    Responder.Step handleRead(Packet p, boolean fresh) {
        // the READ reads after the writes of the requests before it (PCI: a read does not pass a posted write)
        long writesBefore = q.writeSeq;
        long len = p.dmaLength();
        int npkts = (int) Math.max(1, (len + q.mtu - 1) / q.mtu);
        if (fresh) {
            if (len > q.fw.maxMsg) {
                q.responder.responderError(p, Packet.AETH_NAK_INVALID, EqeType.QP_REQ_ERR, null, 0,
                        Vendor.MESSAGE_TOO_LONG);
                return Responder.Step.DONE;
            }
            if (tooManyReads(p)) return Responder.Step.DONE;
            q.responder.took(npkts);
        }
        inProgress++;
        if (len == 0) {
            respond(p, new byte[][]{new byte[0]});
            return Responder.Step.PENDING;
        }
        q.fw.keys.translate(p.rkey(), p.va(), len, MttPorts.REMOTE_READ, q.responder.pd(p), q.qpn, q.live(rsp -> {
            XlateRsp bad = Placement.failed(rsp);
            if (bad != null && fresh && q.odp.pageNotPresent(p, bad)) { // tried again after the RNR wait, as new
                inProgress--;
                q.responder.untook(npkts);
                q.responder.finish();
            } else if (bad != null) {
                readFailed(p, Packet.AETH_NAK_ACCESS, EqeType.QP_ACCESS_ERR, Vendor.REMOTE_XLATE + (int) bad.status());
            } else {
                List<Piece> pieces = rsp.stream().map(c -> new Piece(c.pa(), c.length(), null)).toList();
                byte[][] chunks = new byte[npkts][]; // each response's bytes, read straight into it
                for (int i = 0; i < npkts; i++) chunks[i] = new byte[(int) Math.min(q.mtu, len - (long) i * q.mtu)];
                int mtu = q.mtu;
                q.placement.whenIssued(writesBefore, q.live(() -> q.placement.readPieces(pieces, new DmaPath.Sink() {
                    @Override public void put(int at, byte[] src, int from, int n) {
                        for (int o = 0; o < n && at + o < len; ) { // a piece may straddle responses
                            int k = (at + o) / mtu, in = (at + o) % mtu, m = Math.min(n - o, chunks[k].length - in);
                            System.arraycopy(src, from + o, chunks[k], in, m);
                            o += m;
                        }
                    }

                    @Override public byte[] arrayFor(int at, int n) { // a piece within one response: read into it
                        return at + n <= len && at / mtu == (at + n - 1) / mtu ? chunks[at / mtu] : null;
                    }

                    @Override public int offsetIn(int at) { return at % mtu; }
                }, q.live(unread -> {
                    if (unread != null) readFailed(p, Packet.AETH_NAK_OP, EqeType.QP_REQ_ERR, Vendor.DMA_FAILED);
                    else respond(p, chunks);
                }))));
            }
        }));
        return Responder.Step.PENDING;
    }

    /** A READ that cannot be served: the error reported, the read no longer in progress. */
    private void readFailed(Packet p, int aeth, EqeType event, int vendor) {
        inProgress--;
        q.responder.responderError(p, aeth, event, null, 0, vendor);
        q.responder.finish();
    }

    /** The READ's bytes go back in one response a chunk; the read is in progress until the last leaves. */
    private void respond(Packet p, byte[][] chunks) {
        int npkts = chunks.length;
        for (int i = 0; i < npkts; i++) {
            Op o = npkts == 1 ? Op.READ_RESP_ONLY : i == 0 ? Op.READ_RESP_FIRST : i == npkts - 1 ? Op.READ_RESP_LAST
                    : Op.READ_RESP_MIDDLE;
            byte[] chunk = chunks[i];
            Packet r = new Packet(q.fw.lid(), p.slid(), o, p.srcQp(), q.qpn, (p.psn() + i) & 0xFFFFFF, false, false,
                    0, 0, 0, 0, 0, Packet.AETH_ACK, q.responder.msn(), 0, 0, 0, chunk, q.transport());
            boolean lastOne = i == npkts - 1;
            q.fw.exec(q.fw.packetCycles, q.live(() -> {
                // made before any later error: it still goes out; the read stays in progress until its last
                // response has left the port
                q.fw.send(r, 0, left -> {
                    if (lastOne) q.fw.sim.schedule(left, q.live(() -> inProgress--));
                });
            }));
        }
        q.responder.finish();
    }

    /**
     * A READ or atomic beyond max_dest_rd_atomic (including any when it is 0): QP_ACCESS_ERR at the
     * responder, REM_INV_REQ_ERR at the requester (docs/sources.md#responder-errors).
     */
    boolean tooManyReads(Packet p) {
        if (inProgress < q.maxDestRdAtomic) return false;
        q.responder.responderError(p, Packet.AETH_NAK_INVALID, EqeType.QP_ACCESS_ERR, null, 0, Vendor.TOO_MANY_READS);
        return true;
    }

    Responder.Step handleAtomic(Packet p) {
        long writesBefore = q.writeSeq; // as a READ, it reads after the writes of the requests before it
        if (tooManyReads(p)) return Responder.Step.DONE;
        if ((p.va() & 7) != 0) {
            q.responder.responderError(p, Packet.AETH_NAK_INVALID, EqeType.QP_ACCESS_ERR, null, 0,
                    Vendor.MISALIGNED_ATOMIC);
            return Responder.Step.DONE;
        }
        q.fw.keys.translate(p.rkey(), p.va(), 8, MttPorts.REMOTE_ATOMIC, q.responder.pd(p), q.qpn, q.live(rsp -> {
            XlateRsp bad = Placement.failed(rsp);
            if (bad != null && q.odp.pageNotPresent(p, bad)) { q.responder.finish(); return; }
            if (bad != null) {
                q.responder.responderError(p, Packet.AETH_NAK_ACCESS, EqeType.QP_ACCESS_ERR, null, 0,
                        Vendor.REMOTE_XLATE + (int) bad.status());
                q.responder.finish();
                return;
            }
            long pa = rsp.get(0).pa();
            // not through live(): a continuation of an older life still gives the address back to the atomic unit
            long gen = q.generation;
            q.placement.whenIssued(writesBefore, () -> q.fw.atomics.run(pa, release -> {
                if (gen != q.generation) { release.run(); return; } // reset while it waited for the address
                readModifyWrite(p, pa, gen, release);
            }));
        }));
        return Responder.Step.PENDING;
    }

    /** An atomic's read and write of its 8 bytes at {@code pa}, holding the address until the write is issued. */
    void readModifyWrite(Packet p, long pa, long gen, Runnable release) {
        q.fw.adapter.port().dmaRead(pa, 8, r -> {
            if (gen != q.generation) { release.run(); return; }
            if (r.status() != PciPort.DmaStatus.OK) {
                release.run();
                q.responder.responderError(p, Packet.AETH_NAK_OP, EqeType.QP_REQ_ERR, null, 0, Vendor.DMA_FAILED);
                q.responder.finish();
                return;
            }
            long orig = HostOrder.get64(r.data(), 0);
            long now = p.op() == Op.CMP_SWAP ? (orig == p.compare() ? p.swapAdd() : orig) : orig + p.swapAdd();
            byte[] nb = new byte[8];
            HostOrder.put64(nb, 0, now);
            q.responder.writeIssued();
            q.fw.adapter.port().dmaWrite(pa, nb, q.live(w -> q.responder.writeLanded()));
            release.run();
            atomicReplay.put(p.psn(), orig);
            q.responder.took(1);
            q.responder.ack(Op.ATOMIC_ACK, p.psn(), Packet.AETH_ACK, orig);
            q.responder.finish();
        });
    }

}
