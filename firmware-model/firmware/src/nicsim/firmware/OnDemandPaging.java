package nicsim.firmware;

import nicsim.abi.QpcState;
import nicsim.abi.WqeLayout;
import nicsim.adapter.MttPorts.XlateRsp;
import nicsim.adapter.WqeStage;
import nicsim.fabric.Packet;
import nicsim.firmware.Qp.Failure;

/**
 * What a QP does when the MttWalker finds a page not present (on-demand paging,
 * docs/sources.md#on-demand-paging): in every case the host is asked to bring the pages in
 * ({@link MemoryKeys#pageFault}); meanwhile the access waits, is asked for again, or is lost, by role:
 * a requester's WQE waits and translates again; a responder answers RNR NAK (a request, or a SEND
 * packet into its receive buffer) and changes nothing; READ and atomic responses into a local
 * on-demand buffer are dropped and asked for again; a UD datagram is lost.
 */
final class OnDemandPaging {
    private final Qp q;

    OnDemandPaging(Qp q) { this.q = q; }

    /**
     * Requester: WQE {@code op} waits while the host brings its pages in (both on its timeline), then {@code again}
     * translates anew.
     */
    void requesterWaits(SendOp op, Failure fail, Runnable again) {
        q.fw.adapter.traceWqe(q.qpn, op.index, WqeStage.PAGE_FAULT,
                "MTT index " + fail.faultMtt() + ", " + fail.faultPages() + " page(s)");
        q.fw.keys.pageFault(fail.faultMtt(), fail.faultPages(), q.live(() -> {
            q.fw.adapter.traceWqe(q.qpn, op.index, WqeStage.PAGES_IN, "");
            again.run();
        }));
    }

    /**
     * Responder: a request whose target page is not present. The host is asked to bring it in and
     * the requester told to try again later (RNR NAK), as mlx5 answers an ODP fault; the request
     * changes nothing. Returns false for any other failure.
     */
    boolean pageNotPresent(Packet p, XlateRsp bad) {
        long mtt = Placement.faultMtt(bad);
        if (mtt < 0) return false;
        rnr(p, mtt, q.placement.faultPages(bad));
        return true;
    }

    private void rnr(Packet p, long mtt, long pages) {
        q.fw.keys.pageFault(mtt, pages, () -> {});
        q.count(FirmwareStat.ODP_RNR_SENT);
        // the message's later packets are dropped quietly until the requester comes back to this one
        q.responder.rnrNak(p.psn());
    }

    /**
     * Responder: SEND packet {@code p} (at message offset {@code off}) found a page of receive WQE
     * {@code w} not present. It changed nothing that counts (its bytes are written again). RC answers
     * RNR from this packet, keeping the message's place in the WQE (a first packet gives the WQE
     * back); UC, which cannot ask again, loses the message and gives the WQE back.
     */
    void receiveFaulted(Packet p, InMsg m, RecvRingReader.Wqe w, long off, Failure fail) {
        m.offset = off;
        if (q.service.reliable && !p.op().starts()) { rnr(p, fail.faultMtt(), fail.faultPages()); return; }
        q.responder.messageLost();
        q.responder.untakeRecvWqe(w, p);
        if (q.service.reliable) { rnr(p, fail.faultMtt(), fail.faultPages()); return; }
        lost(fail);
    }

    /** Responder: a UD datagram whose receive buffer page is missing is lost, its WQE kept for the next one. */
    void datagramFaulted(RecvRingReader.Wqe w, Failure fail) {
        q.responder.untakeRecvWqe(w);
        lost(fail);
    }

    private void lost(Failure fail) {
        q.fw.keys.pageFault(fail.faultMtt(), fail.faultPages(), () -> {});
        q.count(FirmwareStat.ODP_RECEIVES_DROPPED);
    }

    /**
     * Requester: response {@code psn} of {@code op} found its local buffer page not present. The
     * operation's responses are dropped while the host brings the page in, then asked for again (a
     * READ from the first that faulted; an atomic, replayed by the responder from its saved result),
     * as mlx5's requester resumes after an ODP fault.
     */
    void responseFaulted(SendOp op, int psn, Failure fail) {
        if (op.opcode == WqeLayout.OP_RDMA_READ && Psn.diff(psn, op.respPsn) < 0) op.respPsn = psn;
        if (op.faulting) return; // a second missing page faults on the next try
        op.faulting = true;
        q.fw.keys.pageFault(fail.faultMtt(), fail.faultPages(), q.live(() -> {
            op.faulting = false;
            if (q.state == QpcState.ERR || op.done()) return;
            q.completer.resend(op, op.opcode == WqeLayout.OP_RDMA_READ ? op.respPsn : op.firstPsn);
            q.completer.restartTimer();
        }));
    }
}
