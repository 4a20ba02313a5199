package nicsim.firmware;

import java.util.ArrayList;
import java.util.List;
import nicsim.abi.Cqe64;
import nicsim.abi.HostOrder;
import nicsim.abi.QpTransitions;
import nicsim.abi.QpcState;
import nicsim.abi.Vendor;
import nicsim.abi.WqeLayout;
import nicsim.adapter.MttPorts;
import nicsim.adapter.WqeStage;
import nicsim.fabric.Packet.Op;
import nicsim.fabric.Packet;
import nicsim.firmware.SendOp.Stage;
import nicsim.sim.Simulator;

/**
 * The completer of a QP (as rxe_comp.c): ACKs, NAKs and read and atomic responses matched to the
 * operations in flight; completions in order; the retransmit timer, go-back-N and RNR waits with
 * their retry counters; a requester error completes the operation and moves the QP.
 */
final class Completer {
    private final Qp q;
    /**
     * The newest PSN acknowledged; the retries and RNR retries left before the QP fails (from retry_cnt and rnr_retry).
     */
    private int ackedPsn, retriesLeft, rnrLeft;
    private Simulator.Event timer; // the event that checks the retransmit timer, at or before timerDue
    private long timerDue = -1; // when the retransmit timer expires (-1: not running)
    private boolean rnrWaiting; // an RNR NAK's or CNAK's wait is on: the retransmit timer does not fire
    /**
     * Retries since the requester last made progress (timeouts, NAKs, RNR and CNAK waits), when the first of them was,
     * the last's cause.
     */
    private long retryingSince;
    private int retries;
    private String lastRetry;

    Completer(Qp q) { this.q = q; }

    /** The send queue starts at PSN {@code sqPsn} (modify's SQ_PSN): every PSN before it counts as acknowledged. */
    void startAt(int sqPsn) { ackedPsn = (sqPsn - 1) & 0xFFFFFF; }

    /** retry_cnt was set: the retries left before the QP fails are its number again. */
    void renewRetries() { retriesLeft = q.retryCnt; }

    /** rnr_retry was set: the RNR retries left before the QP fails are its number again. */
    void renewRnrRetries() { rnrLeft = q.rnrRetry; }


    /** Completes finished WQEs in order (a CQE for signaled ones), then starts more. */
    void retire() {
        while (!q.outstanding.isEmpty() && q.outstanding.peek().done()) {
            SendOp op = q.outstanding.poll();
            if (op.readOrAtomic()) q.requester.readAnswered();
            if (op.streaming && q.service.reliable) op.acknowledged();
            if (q.service.reliable && !op.control && q.fw.adapter.tracingWqe())
                q.fw.adapter.traceWqe(q.qpn, op.index, WqeStage.ACKED, "psn ", op.lastPsn, "");
            if (!op.control && (op.w.signaled() || q.sqSigAll))
                q.requester.complete(op, Cqe64.requester(q.qpn, op.index, op.opcode,
                        op.readOrAtomic() && op.opcode != WqeLayout.OP_RDMA_READ ? 8 : op.length));
        }
        if (q.outstanding.isEmpty()) stopTimer();
        q.checkDrained();
        q.requester.pump();
        if (q.dci != null && q.outstanding.isEmpty() && q.pending.isEmpty()) q.dci.quiet();
    }

    void requesterError(SendOp op, int syndrome, int vendor, long addr, int key, int psn) {
        requesterError(op, syndrome, vendor, addr, key, psn, 0);
    }

    /**
     * A local translation's failure: its error completion names the indirect mkey's entry that failed ({@code piece},
     * 0: none).
     */
    void requesterError(SendOp op, Qp.Failure fail) {
        Long gone = q.fw.keys.destroyedAt(fail.key() & 0xFFFF_FFFFL);
        if (gone != null) // the driver sanitizer: a destroyed object still used
            q.fw.adapter.report(String.format("DESTROYED_MKEY: lkey 0x%x of WQE %d on qpn 0x%x was destroyed at "
                    + "%.3f us", fail.key(), op.index, q.qpn, gone / 1e6));
        requesterError(op, Cqe64.SYNDROME_LOC_PROT_ERR, fail.vendor(), fail.addr(), fail.key(), 0, fail.piece());
    }

    void requesterError(SendOp op, int syndrome, int vendor, long addr, int key, int psn, int piece) {
        if (op.control && op.failed == null) { // a DC connect failed: the work request it was for takes the error
            q.outstanding.remove(op);
            SendOp wr = null;
            for (SendOp o : q.outstanding) if (!o.control) { wr = o; break; }
            if (wr == null && !q.pending.isEmpty()) { // full handshake: it had not started
                wr = q.pending.poll();
                wr.firstPsn = wr.respPsn = wr.lastPsn = op.firstPsn;
                q.outstanding.addFirst(wr);
            }
            if (wr == null) { q.toError(); return; }
            requesterError(wr, syndrome, vendor, addr, key, psn, piece);
            return;
        }
        // an earlier READ or atomic whose answer is in but still being written locally completes first
        for (SendOp b : q.outstanding) {
            if (b == op || Psn.diff(b.firstPsn, op.firstPsn) >= 0) break;
            if (b.stage == Stage.ANSWERED) { // its error follows once b is done
                b.whenDone(q.live(() -> {
                    if (q.state != QpcState.ERR && q.outstanding.contains(op))
                        requesterError(op, syndrome, vendor, addr, key, psn, piece);
                }));
                return;
            }
        }
        // WQEs before it that finished complete first; the failed one gets its error CQE; the rest flush
        q.outstanding.remove(op);
        if (op.readOrAtomic() && q.requester.readsOutstanding() > 0) q.requester.readAnswered();
        retire();
        List<SendOp> before = new ArrayList<>();
        while (!q.outstanding.isEmpty() && Psn.diff(q.outstanding.peek().firstPsn, op.firstPsn) < 0)
            before.add(q.outstanding.poll());
        for (SendOp b : before) q.flush(b);
        q.count(FirmwareStat.REQUESTER_ERRORS);
        // the adapter's own operation: its owner hears, not the send queue
        if (op.failed != null) op.failed.accept(syndrome, vendor);
        else q.fw.complete(q.scq, Cqe64.withPiece(Cqe64.error(true, q.qpn, op.index, op.opcode, syndrome, vendor, addr,
                key, psn), piece), false);
        if (QpTransitions.afterSendError(q.type) == QpcState.ERR) q.toError(); else q.toSqError();
    }

    /**
     * Starts the retransmit timer if it is not running. An ACK restarts it, many times a round trip,
     * so the timer keeps one pending event that, when it comes early, moves itself to the newest
     * expiry instead of each restart scheduling an event and cancelling the last one.
     */
    void armTimer() {
        if (timerDue >= 0 || q.timeout == 0 || q.outstanding.isEmpty()) return;
        timerDue = q.fw.sim.now() + (4_096_000L << q.timeout);
        if (timer != null && timer.time() > timerDue) { timer.cancel(); timer = null; } // a shorter timeout since
        if (timer == null) checkTimerAt(timerDue);
    }

    void checkTimerAt(long at) {
        timer = q.fw.sim.schedule(at, () -> {
            timer = null;
            if (timerDue < 0) return;
            if (q.fw.sim.now() < timerDue) { checkTimerAt(timerDue); return; }
            timerDue = -1;
            if (!rnrWaiting) onTimeout();
        });
    }

    void restartTimer() {
        cancelTimer();
        armTimer();
        if (q.outstanding.isEmpty()) stopTimer();
    }

    void cancelTimer() { timerDue = -1; }

    /**
     * Stops the timer and takes its pending event off the simulator: with nothing outstanding none may stay
     * queued, or a wait in a verb that nothing else will end runs simulated time on to it (the ACK timeout:
     * 67 ms at timeout 14, 4.29 s at 20) for nothing, and a poll is not answered empty until it has passed.
     */
    void stopTimer() {
        timerDue = -1;
        if (timer != null) {
            timer.cancel();
            timer = null;
        }
    }

    private void retried(String why) {
        if (retries++ == 0) retryingSince = q.fw.sim.now();
        lastRetry = why;
    }

    private void progressed() { retries = 0; }

    /** The requester's progress is as at a reset: nothing retried. */
    /** The QP went to RESET: no timer, no wait, no retries counted. */
    void reset() {
        stopTimer();
        resetProgress();
        rnrWaiting = false;
    }

    void resetProgress() {
        retries = 0;
        lastRetry = null;
    }

    /** A retry loop with no progress for at least {@code picos} of simulated time, or null. */
    Firmware.Stall stall(long picos) {
        long since = q.fw.sim.now() - retryingSince;
        return retries > 0 && since >= picos ? new Firmware.Stall(q.qpn, retries, since, lastRetry) : null;
    }

    SendOp oldestUndone() {
        for (SendOp op : q.outstanding) if (!op.done()) return op;
        return null;
    }

    void onTimeout() {
        SendOp op = oldestUndone();
        if (op == null || q.state == QpcState.ERR) return;
        q.count(FirmwareStat.TIMEOUTS);
        if (retriesLeft == 0) {
            requesterError(op, Cqe64.SYNDROME_RETRY_EXC_ERR, Vendor.RETRY_EXCEEDED, 0, 0, op.respPsn);
            return;
        }
        retriesLeft--;
        retried("ACK timeout");
        goBack(op.respPsn);
    }

    /** Retransmits everything from {@code psn} on (go-back-N); a READ resumes where its responses stopped. */
    void goBack(int psn) {
        q.count(FirmwareStat.RETRANSMITS);
        for (SendOp op : q.outstanding)
            if (!op.done() && !op.packets.isEmpty() && Psn.diff(op.lastPsn, psn) >= 0) resend(op, psn);
        restartTimer();
    }

    /** Sends {@code op}'s packets from {@code psn} on again; a READ asks again for the responses it still lacks. */
    void resend(SendOp op, int psn) {
        List<Packet> again = new ArrayList<>();
        if (op.opcode == WqeLayout.OP_RDMA_READ) {
            int from = Psn.diff(op.respPsn, op.firstPsn);
            long off = (long) from * q.mtu;
            if (off >= op.length && op.length > 0) return; // every response is in, being written: nothing to ask for
            again.add(q.requester.request(op, Op.READ_REQ, op.respPsn, true, op.w.remoteAddr() + off, op.w.rkey(),
                    op.length - off, 0, 0, 0, new byte[0]));
        } else {
            for (Packet p : op.packets) if (Psn.diff(p.psn(), psn) >= 0) again.add(p);
        }
        q.requester.sendPackets(again, op, false);
    }

    /** What an acknowledgement says (rxe's check_ack, by the AETH's type and NAK code). */
    enum AckKind { RNR_NAK, DC_CNAK, PSN_SEQUENCE_NAK, ERROR_NAK, ATOMIC_ACK, ACK }

    static AckKind kind(Packet p) {
        if (p.op() == Op.DC_CNAK) return AckKind.DC_CNAK;
        if (p.op() == Op.ATOMIC_ACK) return AckKind.ATOMIC_ACK;
        if (p.op() == Op.ACK && (p.aeth() & 0xE0) == Packet.AETH_RNR) return AckKind.RNR_NAK;
        if (p.op() == Op.ACK && (p.aeth() & 0xE0) == Packet.AETH_NAK)
            return p.aeth() == Packet.AETH_NAK_PSN ? AckKind.PSN_SEQUENCE_NAK : AckKind.ERROR_NAK;
        return AckKind.ACK;
    }

    void onAck(Packet p) {
        if (!q.service.reliable || q.state == QpcState.ERR || q.state == QpcState.RESET) return;
        switch (kind(p)) {
            case RNR_NAK -> onRnrNak(p);
            case DC_CNAK -> onCnak(p);
            case PSN_SEQUENCE_NAK -> onSequenceNak(p);
            case ERROR_NAK -> onErrorNak(p);
            case ATOMIC_ACK -> onAtomicAck(p);
            case ACK -> ackThrough(p.psn()); // everything up to its PSN that is not waiting for read data is done
        }
    }

    /** The responder had no receive WQE: wait the timer it names, then send again from that PSN. */
    private void onRnrNak(Packet p) {
        SendOp op = opAt(p.psn());
        if (op == null) return;
        ackBefore(p.psn());
        q.count(FirmwareStat.RNR_NAKS);
        if (rnrLeft == 0) {
            requesterError(op, Cqe64.SYNDROME_RNR_RETRY_EXC_ERR, Vendor.RNR_RETRY_EXCEEDED, 0, 0, p.psn());
            return;
        }
        if (q.rnrRetry != 7) rnrLeft--;
        retried("RNR NAK");
        waitThenGoBack(p.psn(), q.RNR_US[p.aeth() & 0x1f] * 1_000_000L);
    }

    /** The DC target had no responder free: connect again after a while. */
    private void onCnak(Packet p) {
        SendOp op = opAt(p.psn());
        if (op == null || !op.control) return;
        q.count(FirmwareStat.DC_CNAKS);
        if (rnrLeft == 0) {
            requesterError(op, Cqe64.SYNDROME_RNR_RETRY_EXC_ERR, Vendor.DC_CNAK_RETRY_EXCEEDED, 0, 0, p.psn());
            return;
        }
        if (q.rnrRetry != 7) rnrLeft--;
        retried("DC CNAK");
        waitThenGoBack(p.psn(), q.fw.dc.cnakBackoff());
    }

    /** A PSN sequence error: go back to the PSN the responder expects. */
    private void onSequenceNak(Packet p) {
        SendOp op = opAt(p.psn());
        ackBefore(p.psn());
        if (op == null) return;
        q.count(FirmwareStat.PSN_NAKS);
        if (retriesLeft == 0) {
            requesterError(op, Cqe64.SYNDROME_RETRY_EXC_ERR, Vendor.RETRY_EXCEEDED, 0, 0, p.psn());
            return;
        }
        retriesLeft--;
        retried("PSN sequence NAK");
        goBack(p.psn());
    }

    /** The responder refused the request (invalid, no access, operation error): the QP stops in error. */
    private void onErrorNak(Packet p) {
        SendOp op = opAt(p.psn());
        ackBefore(p.psn());
        if (op == null) return;
        int code = p.aeth();
        int synd = code == Packet.AETH_NAK_INVALID ? Cqe64.SYNDROME_REM_INV_REQ_ERR
                : code == Packet.AETH_NAK_ACCESS ? Cqe64.SYNDROME_REM_ACCESS_ERR : Cqe64.SYNDROME_REM_OP_ERR;
        int vendor = op.control ? Vendor.DC_KEY_REFUSED // the only NAK a DC connect gets
                : code == Packet.AETH_NAK_INVALID ? Vendor.NAK_INVALID_REQUEST
                : code == Packet.AETH_NAK_ACCESS ? Vendor.NAK_REMOTE_ACCESS : Vendor.NAK_REMOTE_OP;
        requesterError(op, synd, vendor, op.w.remoteAddr(), op.w.rkey(), p.psn());
    }

    /** An atomic's original value: it lands in the requester's buffer, and the atomic is answered. */
    private void onAtomicAck(Packet p) {
        SendOp op = opAt(p.psn());
        if (op == null || op.done() || !op.readOrAtomic() || op.opcode == WqeLayout.OP_RDMA_READ || op.faulting) return;
        ackBefore(p.psn());
        op.reach(Stage.ANSWERED);
        byte[] orig = new byte[8];
        HostOrder.put64(orig, 0, p.atomicOrig());
        scatterLocal(op, 0, p.withPayload(orig).arriving(null), true); // the original value is in the headers: all in
    }

    /**
     * Stops sending, then after {@code picos} sends everything again from {@code psn} on (an RNR NAK's or a CNAK's
     * wait).
     */
    private void waitThenGoBack(int psn, long picos) {
        stopTimer();
        rnrWaiting = true;
        q.fw.sim.scheduleIn(picos, q.live(() -> {
            if (q.state == QpcState.ERR) return;
            rnrWaiting = false;
            goBack(psn);
        }));
    }

    SendOp opAt(int psn) {
        for (SendOp op : q.outstanding)
            if (Psn.diff(psn, op.firstPsn) >= 0 && Psn.diff(psn, op.lastPsn) <= 0) return op;
        return null;
    }

    /** Ops wholly before {@code psn} are acknowledged (an ACK, NAK or response for a later PSN implies it). */
    void ackBefore(int psn) { ackThrough((psn - 1) & 0xFFFFFF); }

    void ackThrough(int psn) {
        // progress is any PSN newly acknowledged, even inside a long message: it renews the retry budget
        boolean progress = Psn.diff(psn, ackedPsn) > 0 && Psn.diff(psn, q.requester.nextPsn()) < 0;
        if (progress) ackedPsn = psn;
        for (SendOp op : q.outstanding) {
            if (Psn.diff(op.lastPsn, psn) > 0) break;
            if (op.readOrAtomic()) { if (!op.done()) break; continue; }
            if (!op.done()) { op.reach(Stage.DONE); progress = true; }
        }
        if (progress) {
            progressed();
            retriesLeft = q.retryCnt;
            rnrLeft = q.rnrRetry;
            retire();
            restartTimer();
        }
    }

    void onReadResponse(Packet p) {
        if (!q.service.reliable || q.state == QpcState.ERR || q.state == QpcState.RESET) return;
        SendOp op = opAt(p.psn());
        if (op == null || op.opcode != WqeLayout.OP_RDMA_READ || op.done() || p.psn() != op.respPsn || op.faulting) {
            q.count(FirmwareStat.READ_RESPONSES_IGNORED);
            return;
        }
        ackBefore(op.firstPsn);
        long off = (long) Psn.diff(p.psn(), op.firstPsn) * q.mtu;
        op.respPsn = (op.respPsn + 1) & 0xFFFFFF;
        boolean last = p.op() == Op.READ_RESP_LAST || p.op() == Op.READ_RESP_ONLY;
        retriesLeft = q.retryCnt;
        progressed();
        restartTimer();
        if (last) op.reach(Stage.ANSWERED);
        scatterLocal(op, off, p, last);
    }

    /** Writes response data into {@code op}'s local SGEs; the {@code last} response's then finishes it. */
    void scatterLocal(SendOp op, long off, Packet p, boolean last) {
        q.placement.scatter(op.w.sges(), off, p.payload(), p.arrival(), MttPorts.LOCAL_WRITE, q.live(fail -> {
            if (q.state == QpcState.ERR || fail == null) return;
            if (fail.pageFault()) { q.odp.responseFaulted(op, p.psn(), fail); return; }
            requesterError(op, fail);
        }), q.live(() -> {
            if (q.state == QpcState.ERR || !last || op.faulting) return;
            op.reach(Stage.DONE);
            retire();
            op.finished();
        }));
    }
}
