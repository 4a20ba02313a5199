package nicsim.firmware;

import java.util.ArrayDeque;
import java.util.List;
import java.util.function.Consumer;
import nicsim.abi.AccessBits;
import nicsim.abi.Cqe64;
import nicsim.abi.CqeTmFlags;
import nicsim.abi.EqeType;
import nicsim.abi.QpcState;
import nicsim.abi.Vendor;
import nicsim.adapter.MttPorts.XlateRsp;
import nicsim.adapter.MttPorts;
import nicsim.fabric.Packet.Op;
import nicsim.fabric.Packet;

/**
 * The responder of a QP (as rxe_resp.c): inbound requests checked in order (PSN, duplicates,
 * service, resources), then executed: SENDs into receive WQEs, WRITEs and READs through the rkey's
 * translation, atomics one at a time per address; ACKs and NAKs; responder errors with their events.
 */
final class Responder {
    private final Qp q;
    // the responder's own state (rxe's resp part), cleared on RESET
    private int epsn, msn; // the PSN expected next; the message sequence number of the last message completed
    // a NAK is out for the expected PSN; the first request arrived (COMM_EST raised)
    private boolean nakSent, commEst;
    private final ArrayDeque<Packet> rx = new ArrayDeque<>(); // requests waiting their turn
    private boolean rxBusy;
    private InMsg cur; // the message being received
    /** DMA writes issued and not yet landed in host memory: ACKs wait behind them. */
    private int writesInFlight;
    private final ArrayDeque<Packet> deferredAcks = new ArrayDeque<>();
    /** An ACK's or NAK's payload: none, one array for all (nothing writes into an empty one). */
    private static final byte[] NO_PAYLOAD = new byte[0];
    /** UD messages into receive WQEs or strides, with what a striding queue keeps between them. */
    final DatagramReceive datagrams;

    Responder(Qp q) {
        this.q = q;
        this.datagrams = new DatagramReceive(q, this);
    }

    /** The QP went to RESET. */
    void reset() {
        rx.clear();
        cur = null;
        rxBusy = false;
        msn = 0;
        commEst = false;
        nakSent = false;
        q.reads.reset();
        deferredAcks.clear();
        writesInFlight = 0;
        datagrams.reset();
    }

    /** The PSN expected next (rq_psn). */
    int expectedPsn() { return epsn; }

    /** The next request expected is PSN {@code psn} (modify's RQ_PSN, or a DC responder's connect). */
    void expect(int psn) { epsn = psn; }

    /** The message sequence number of the last message completed (what an ACK carries). */
    int msn() { return msn; }

    /** A message of {@code npkts} packets was taken whole at once (a READ, an atomic, a rendezvous request). */
    void took(int npkts) {
        epsn = (epsn + npkts) & 0xFFFFFF;
        msn = (msn + 1) & 0xFFFFFF;
    }

    /** A READ {@link #took} took is given back, to be taken again when the requester repeats it. */
    void untook(int npkts) {
        epsn = (epsn - npkts) & 0xFFFFFF;
        msn = (msn - 1) & 0xFFFFFF;
    }

    /** The connection counts as established already: no COMM_EST is raised (a DC responder's target hears none). */
    void established() { commEst = true; }

    /** {@code m} is the message being received now (a tagged one, matched or not). */
    void receiving(InMsg m) { cur = m; }

    /** The message being received is given up (its receive WQE goes back, or it is lost). */
    void messageLost() { cur = null; }

    /** The QP went to ERR: the message being received and the requests waiting are dropped. */
    void flush() {
        cur = null;
        rx.clear();
    }

    /** Nothing to do: no request waiting or being handled, no message half received, no write in flight. */
    boolean idle() { return !rxBusy && rx.isEmpty() && cur == null && writesInFlight == 0; }

    /** RNR NAKs request {@code psn} (a page not present): its later packets are dropped until it is repeated. */
    void rnrNak(int psn) {
        ack(Op.ACK, psn, Packet.AETH_RNR | q.minRnrTimer, 0);
        nakSent = true;
    }


    void onPacket(Packet p) {
        if (p.op().isAck()) { q.completer.onAck(p); return; }
        if (p.op().isReadResponse()) { q.completer.onReadResponse(p); return; }
        if (q.state != QpcState.RTR && q.state != QpcState.RTS && q.state != QpcState.SQD && q.state != QpcState.SQE) {
            q.count(FirmwareStat.PACKETS_DROPPED_STATE);
            return;
        }
        // docs/sources.md#responder-discards: a packet of another service, or (connected QPs) from a port other than
        // the
        // QP's destination, is dropped without touching the QP
        // an initiator takes no requests
        if (p.transport() != q.transport() || (q.sendOnly() && p.op().isRequest()) || p.op().isDcControl()) {
            q.count(FirmwareStat.PACKETS_DROPPED_TYPE);
            return;
        }
        if (q.service.connected && p.slid() != q.dlid) { q.count(FirmwareStat.PACKETS_DROPPED_PATH); return; }
        if (p.op().starts() && q.fw.adapter.tracingWqe())
            q.fw.adapter.traceMessageIn(p.slid(), p.srcQp(), p.psn(), p.op());
        rx.add(p);
        processRx();
    }

    void processRx() {
        if (rxBusy || rx.isEmpty()) return;
        rxBusy = true;
        Packet p = rx.poll();
        q.fw.exec(q.fw.packetCycles, q.live(handleOne, p));
    }

    private final Consumer<Packet> handleOne = this::handle; // made once: a task of every request

    /**
     * The request in hand is done with: the responder takes the next. Each asynchronous path of a request ends here,
     * once.
     */
    void finish() {
        rxBusy = false;
        processRx();
    }

    /**
     * Where a request is in the responder's checks, as rxe_resp.c's states: each check is a small
     * function that returns the next step, having answered the request itself (NAK, error, drop)
     * when it ends there. A step that waits (a translation, a receive WQE, a DMA) returns PENDING
     * and the callback that resumes it calls {@link #finish()} when the request is done with.
     */
    enum Step { CHECK_STATE, CHECK_PSN, CHECK_OP_SEQUENCE, CHECK_XRC_SRQ, CHECK_ACCESS, EXECUTE, UNRELIABLE_DATAGRAM,
            DUPLICATE, PENDING, DONE }

    /** Runs request {@code p} through the checks, then executes it. */
    void handle(Packet p) {
        for (Step s = Step.CHECK_STATE; ; ) {
            switch (s) {
                case CHECK_STATE -> s = checkState();
                case CHECK_PSN -> s = checkPsn(p);
                case CHECK_OP_SEQUENCE -> s = checkOpSequence(p);
                case CHECK_XRC_SRQ -> s = checkXrcSrq(p);
                case CHECK_ACCESS -> s = checkAccess(p);
                case EXECUTE -> s = execute(p);
                case UNRELIABLE_DATAGRAM -> s = datagrams.handle(p);
                case DUPLICATE -> s = duplicate(p);
                case PENDING -> { return; }
                case DONE -> { finish(); return; }
            }
        }
    }

    private Step checkState() {
        if (q.state == QpcState.ERR || q.state == QpcState.RESET || q.state == QpcState.INIT) return Step.DONE;
        return q.service.connected ? Step.CHECK_PSN : Step.UNRELIABLE_DATAGRAM;
    }

    /** A packet ahead of the expected PSN is a gap (RC: NAK once; UC: the message is lost), one behind a duplicate. */
    private Step checkPsn(Packet p) {
        int d = Psn.diff(p.psn(), epsn);
        if (d > 0) {
            q.count(FirmwareStat.PSN_GAPS);
            if (q.service.reliable) {
                if (!nakSent) { nakSent = true; ack(Op.ACK, epsn, Packet.AETH_NAK_PSN, 0); }
                return Step.DONE;
            }
            // UC: the message in progress is lost; resynchronise on a packet that starts one
            cur = null;
            if (!p.op().starts()) return Step.DONE;
            epsn = p.psn();
        } else if (d < 0) {
            q.count(FirmwareStat.DUPLICATES);
            return q.service.reliable ? Step.DUPLICATE : Step.DONE;
        }
        nakSent = false;
        if (q.state == QpcState.RTR && !commEst) {
            commEst = true;
            q.fw.event(EqeType.COMM_EST, q.qpn);
        }
        return Step.CHECK_OP_SEQUENCE;
    }

    /** A FIRST or ONLY must not come inside a message, a MIDDLE or LAST only inside one of its kind. */
    private Step checkOpSequence(Packet p) {
        if ((cur != null) == p.op().starts() || (cur != null && cur.send != p.op().isSend())) {
            if (q.service.reliable) {
                responderError(p, Packet.AETH_NAK_INVALID, EqeType.QP_REQ_ERR, null, 0, Vendor.OPCODE_SEQUENCE);
                return Step.DONE;
            }
            cur = null; // UC: the broken message is dropped; a packet that starts one goes on
            if (!p.op().starts()) return Step.DONE;
        }
        return Step.CHECK_XRC_SRQ;
    }

    /** An XRC target: the SRQ the request names must be an XRC SRQ of the QP's domain. */
    private Step checkXrcSrq(Packet p) {
        if (q.xrcd == 0) return Step.CHECK_ACCESS;
        Srq s = q.fw.srqs.get(p.xrcSrqn());
        int bad = s == null || !s.xrc() ? Vendor.XRC_SRQ_UNKNOWN : s.xrcd != q.xrcd ? Vendor.XRC_SRQ_DOMAIN : 0;
        if (bad == 0) return Step.CHECK_ACCESS;
        responderError(p, Packet.AETH_NAK_INVALID, EqeType.QP_REQ_ERR, null, 0, bad);
        return Step.DONE;
    }

    /** The QP's access flags must allow the operation. */
    private Step checkAccess(Packet p) {
        Op o = p.op();
        int need = o.isWrite() ? AccessBits.REMOTE_WRITE : o == Op.READ_REQ ? AccessBits.REMOTE_READ
                : o.isAtomic() ? AccessBits.REMOTE_ATOMIC : 0;
        if ((q.access & need) == need) return Step.EXECUTE;
        responderError(p, Packet.AETH_NAK_INVALID, EqeType.QP_REQ_ERR, null, 0, Vendor.QP_ACCESS_DENIES);
        return Step.DONE;
    }

    private Step execute(Packet p) {
        Op o = p.op();
        if (o.isSend()) return handleSend(p);
        if (o.isWrite()) return handleWrite(p);
        if (o == Op.READ_REQ) return q.reads.handleRead(p, true);
        return q.reads.handleAtomic(p);
    }

    Step handleSend(Packet p) {
        if (cur == null && q.srq != null && q.srq.tm != null) return q.tagged.handle(p);
        Consumer<RecvRingReader.Wqe> go = q.live(w -> receive(p, w));
        if (cur != null) go.accept(cur.wqe);
        else takeRecvWqe(p, go);
        return Step.PENDING;
    }

    /** Places a SEND's packet in receive WQE {@code w} (null: none came, RNR); its last packet completes the WQE. */
    void receive(Packet p, RecvRingReader.Wqe w) {
        if (w == null) {
            if (q.service.reliable) {
                ack(Op.ACK, p.psn(), Packet.AETH_RNR | q.minRnrTimer, 0);
                q.count(FirmwareStat.RNR_SENT);
            }
            else q.count(FirmwareStat.UC_NO_RECEIVE);
            finish();
            return;
        }
        if (cur == null) { cur = new InMsg(true); cur.wqe = w; }
        InMsg m = cur;
        // docs/sources.md#responder-errors: LOC_LEN_ERR here, REM_INV_REQ_ERR there
        if (q.service.connected && m.offset + p.payload().length > q.fw.maxMsg) {
            responderError(p, Packet.AETH_NAK_INVALID, null, w, Cqe64.SYNDROME_LOC_LEN_ERR, Vendor.MESSAGE_TOO_LONG);
            finish();
            return;
        }
        if (m.offset + p.payload().length > w.capacity()) {
            responderError(p, Packet.AETH_NAK_INVALID, null, w, Cqe64.SYNDROME_LOC_LEN_ERR, Vendor.RECV_TOO_SMALL);
            finish();
            return;
        }
        if (q.scatterToCqe && (p.op() == Op.SEND_ONLY || p.op() == Op.SEND_ONLY_IMM)
                && p.payload().length <= q.fw.cqeScatterMax) {
            sendToCqe(p, w);
            return;
        }
        place(p, m, w);
    }

    /** Writes a SEND packet's payload into receive WQE {@code w}; the last packet's completion follows the data. */
    private void place(Packet p, InMsg m, RecvRingReader.Wqe w) {
        long off = m.offset;
        m.offset += p.payload().length;
        epsn = (epsn + 1) & 0xFFFFFF;
        Runnable[] complete = {null}; // the last packet's completion, once its writes and those before it have left
        q.placement.scatter(w.sges(), pd(p), off, p.payload(), p.arrival(), MttPorts.LOCAL_WRITE, q.live(fail -> {
            if (fail != null) {
                epsn = (epsn - 1) & 0xFFFFFF;
                if (fail.pageFault()) q.odp.receiveFaulted(p, m, w, off, fail); // taken again once the page is in
                else responderError(p, Packet.AETH_NAK_OP, null, w, Cqe64.SYNDROME_LOC_PROT_ERR, fail.vendor());
                finish();
                return;
            }
            if (p.op().last() && !lastPlaced(p, m, w, complete)) return;
            if (p.ackReq()) ack(Op.ACK, p.psn(), Packet.AETH_ACK, 0);
            finish();
        }), q.live(() -> {
            if (complete[0] != null) complete[0].run();
        }));
    }

    /**
     * A message's last packet is in: its rkey invalidated (SEND with invalidate) and its completion
     * made ready in {@code complete[0]}; false if the invalidation failed (the error is reported).
     */
    private boolean lastPlaced(Packet p, InMsg m, RecvRingReader.Wqe w, Runnable[] complete) {
        boolean inv = p.op() == Op.SEND_LAST_INV || p.op() == Op.SEND_ONLY_INV;
        int bad = inv ? q.fw.keys.invalidate(q, p.imm() & 0xFFFFFFFFL) : 0;
        if (bad != 0) { // class J: the responder completes REM_INV_REQ_ERR, the requester hears NAK invalid request
            epsn = (epsn - 1) & 0xFFFFFF;
            responderError(p, Packet.AETH_NAK_INVALID, null, w, Cqe64.SYNDROME_REM_INV_REQ_ERR, bad);
            finish();
            return false;
        }
        cur = null;
        msn = (msn + 1) & 0xFFFFFF;
        long[] cqe = receiveCqe(p, m, w, inv);
        Cq cq = recvCq(p);
        complete[0] = () -> q.fw.complete(cq, cqe, p.solicited());
        return true;
    }

    /** The completion of a received message: a tag-matching SRQ's carries what the message was and its tag. */
    private long[] receiveCqe(Packet p, InMsg m, RecvRingReader.Wqe w, boolean inv) {
        if (m.tmKind == Cqe64.TM_NONE) {
            int opcode = inv ? Cqe64.RESP_SEND_INV : p.op().hasImm() ? Cqe64.RESP_SEND_IMM : Cqe64.RESP_SEND;
            return Cqe64.responder(q.qpn, w.index(), opcode, m.offset, p.imm(), p.srcQp(), p.slid(), p.solicited(),
                    xrcSrqn(p));
        }
        // as mlx5 reports them: a receive asks for a TAG_SYNC only when software lags far behind, and only a
        // completion that reports a match carries the tag (the data's second one and an unexpected message's do not)
        boolean match = m.tmKind == Cqe64.TM_MATCHED && p.op().starts();
        int flags = (q.srq.tm.syncFarBehind() ? CqeTmFlags.SYNC_REQ : 0)
                | (m.tmKind == Cqe64.TM_MATCHED ? CqeTmFlags.DATA_VALID | (match ? CqeTmFlags.MATCH : 0) : 0);
        return Cqe64.tmReceive(q.qpn, w.index(), m.tmKind, flags, m.offset, match ? m.tag : 0, match ? m.priv : 0,
                p.srcQp(), p.slid(), q.srq.srqn);
    }


    /**
     * A small SEND placed in its completion instead of the receive buffer (scatter to CQE): no DMA
     * write of the payload; the CQE, which carries it, follows the writes of earlier payloads once
     * the last byte is in. The verbs library copies it to the buffer the receive named.
     */
    private void sendToCqe(Packet p, RecvRingReader.Wqe w) {
        cur = null;
        epsn = (epsn + 1) & 0xFFFFFF;
        msn = (msn + 1) & 0xFFFFFF;
        q.count(FirmwareStat.CQE_SCATTERS);
        q.count(FirmwareStat.CQE_SCATTER_BYTES, p.payload().length);
        long[] cqe = Cqe64.responderInline(q.qpn, w.index(), p.op().hasImm() ? Cqe64.RESP_SEND_IMM : Cqe64.RESP_SEND,
                p.imm(), p.solicited(), xrcSrqn(p), p.payload());
        Cq cq = recvCq(p);
        long in = p.arrival() == null ? q.fw.sim.now() : p.arrival().by(p.payload().length);
        // after earlier payloads' completions
        q.placement.inTurn(in, q.live(() -> q.fw.complete(cq, cqe, p.solicited())));
        if (p.ackReq()) ack(Op.ACK, p.psn(), Packet.AETH_ACK, 0);
        finish();
    }

    Step handleWrite(Packet p) {
        if (!p.op().starts()) {
            writePayload(p);
            return Step.PENDING;
        }
        if (p.dmaLength() > q.fw.maxMsg) { // docs/sources.md#responder-errors: known from the first packet (5.2)
            cur = null;
            responderError(p, Packet.AETH_NAK_INVALID, EqeType.QP_REQ_ERR, null, 0, Vendor.MESSAGE_TOO_LONG);
            return Step.DONE;
        }
        cur = new InMsg(false);
        cur.dmaLength = p.dmaLength();
        if (p.dmaLength() == 0) { // C9-88: no rkey check
            cur.target = List.of();
            writePayload(p);
            return Step.PENDING;
        }
        q.fw.keys.translate(p.rkey(), p.va(), p.dmaLength(), MttPorts.REMOTE_WRITE, pd(p), q.qpn, q.live(rsp -> {
            XlateRsp bad = Placement.failed(rsp);
            if (bad != null && q.odp.pageNotPresent(p, bad)) { cur = null; finish(); return; }
            if (bad != null) {
                cur = null;
                responderError(p, Packet.AETH_NAK_ACCESS, EqeType.QP_ACCESS_ERR, null, 0,
                        Vendor.REMOTE_XLATE + (int) bad.status());
                finish();
                return;
            }
            cur.target = rsp;
            writePayload(p);
        }));
        return Step.PENDING; // writePayload finishes the request
    }

    /** Writes an RDMA WRITE packet's payload where the message's rkey pointed; WRITE with immediate takes a receive. */
    private void writePayload(Packet p) {
        InMsg m = cur;
        if (m.offset + p.payload().length > m.dmaLength) {
            responderError(p, Packet.AETH_NAK_INVALID, EqeType.QP_REQ_ERR, null, 0, Vendor.MESSAGE_TOO_LONG);
            finish();
            return;
        }
        long off = m.offset;
        m.offset += p.payload().length;
        long seq = q.placement.payloadArrived();
        q.placement.writePayload(m.target, off, p.payload(), p.arrival(), seq);
        if (!p.op().hasImm()) {
            written(p);
            return;
        }
        takeRecvWqe(p, q.live(w -> {
            if (w == null) {
                m.offset = off; // the packet is taken again after the RNR wait
                if (p.op().starts()) cur = null;
                if (q.service.reliable) ack(Op.ACK, p.psn(), Packet.AETH_RNR | q.minRnrTimer, 0);
                finish();
                return;
            }
            long[] cqe = Cqe64.responder(q.qpn, w.index(), Cqe64.RESP_WR_IMM, m.dmaLength, p.imm(), p.srcQp(), p.slid(),
                    p.solicited(), xrcSrqn(p));
            Cq cq = recvCq(p);
            q.placement.whenIssued(seq, () -> q.fw.complete(cq, cqe, p.solicited()));
            written(p);
        }));
    }

    /** An RDMA WRITE packet placed: the next PSN expected, the message done at its last, an ACK if asked. */
    private void written(Packet p) {
        epsn = (epsn + 1) & 0xFFFFFF;
        if (p.op().last()) {
            cur = null;
            msn = (msn + 1) & 0xFFFFFF;
        }
        if (p.ackReq()) ack(Op.ACK, p.psn(), Packet.AETH_ACK, 0);
        finish();
    }

    /**
     * A repeated request (RC): SEND/WRITE are acknowledged again, a READ re-executes, an atomic replays its saved
     * result.
     */
    Step duplicate(Packet p) {
        if (p.op() == Op.READ_REQ) return q.reads.handleRead(p, false);
        if (p.op().isAtomic()) {
            return q.reads.duplicateAtomic(p);
        }
        ack(Op.ACK, (epsn - 1) & 0xFFFFFF, Packet.AETH_ACK, 0);
        return Step.DONE;
    }

    /**
     * Sends an ACK or NAK. It waits behind the DMA writes still on their way to host memory, so an
     * acknowledged byte is always in memory when the requester completes.
     */
    void ack(Op op, int psn, int aeth, long orig) {
        if (!q.service.reliable) return;
        Packet a = new Packet(q.fw.lid(), q.dlid, op, q.destQpn, q.qpn, psn, false, false, 0, 0, 0, 0, 0, aeth, msn,
                orig, 0, 0, NO_PAYLOAD, q.transport());
        if (writesInFlight > 0) deferredAcks.add(a);
        else sendResponse(a);
    }

    /**
     * Responses (ACKs, NAKs, read responses) leave in the order they were made: each is built by the firmware in turn.
     */
    void sendResponse(Packet a) {
        q.fw.exec(q.fw.packetCycles, q.live(sendOne, a));
    }

    private final Consumer<Packet> sendOne = this::send; // made once: a task of every response

    private void send(Packet a) { q.fw.send(a); }

    /** A DMA write of a request's data is on its way to host memory: ACKs wait until it lands. */
    void writeIssued() { writesInFlight++; }

    void writeLanded() {
        if (--writesInFlight == 0) {
            while (!deferredAcks.isEmpty()) sendResponse(deferredAcks.poll());
        }
    }

    /**
     * A responder-side error (docs/sources.md#responder-errors): NAK to the requester (RC), an error CQE if a
     * receive WQE is in use or else an async event, and the QP goes to ERR.
     */
    void responderError(Packet p, int nak, EqeType event, RecvRingReader.Wqe w, int syndrome, int vendor) {
        q.count(FirmwareStat.RESPONDER_ERRORS);
        if (q.service.reliable) ack(Op.ACK, p.psn(), nak, 0);
        if (w != null) {
            long[] cqe = Cqe64.error(false, q.qpn, w.index(), 0, syndrome, vendor, p.va(), p.rkey(), p.psn(),
                    xrcSrqn(p));
            // names the tagged buffer, if it was one
            if (cur != null && cur.tmKind != Cqe64.TM_NONE) cqe = Cqe64.withTm(cqe, cur.tmKind, 0);
            q.fw.complete(recvCq(p), cqe, false);
        }
        else if (event != null) q.fw.event(event, q.qpn);
        cur = null;
        q.toError();
    }

    // ------------------------------------------------------------------ receive queue

    /** The next receive WQE, from the SRQ or the QP's own ring, or null if there is none. */
    void takeRecvWqe(Consumer<RecvRingReader.Wqe> done) {
        if (q.srq != null) q.srq.take(done);
        else q.rq.take(done);
    }

    /** The next receive WQE for request {@code p}: an XRC target's from the XRC SRQ the request names. */
    void takeRecvWqe(Packet p, Consumer<RecvRingReader.Wqe> done) {
        if (q.xrcd == 0) { takeRecvWqe(done); return; }
        Srq s = xrcSrq(p);
        if (s != null) s.take(done);
        else done.accept(null); // destroyed since the request was checked: as if empty
    }

    // an XRC target has no receive side of its own: the SRQ its request names gives the PD, the CQ and the WQEs

    private Srq xrcSrq(Packet p) {
        if (q.xrcd == 0) return null;
        Srq s = q.fw.srqs.get(p.xrcSrqn());
        return s != null && s.xrc() ? s : null;
    }

    /** The CQ request {@code p}'s receive completes to (none: its XRC SRQ is gone). */
    private Cq recvCq(Packet p) {
        if (q.srq != null && q.srq.tm != null) return q.srq.cq; // a tag-matching SRQ reports everything to its own CQ
        if (q.xrcd == 0) return q.rcq;
        Srq s = xrcSrq(p);
        return s == null ? null : s.cq;
    }

    /** The PD request {@code p}'s keys are checked against (none, -1: its XRC SRQ is gone). */
    long pd(Packet p) {
        if (q.xrcd == 0) return q.pd;
        Srq s = xrcSrq(p);
        return s == null ? -1 : s.pd;
    }

    /** The XRC SRQ a receive completion names (0: not an XRC target's). */
    private long xrcSrqn(Packet p) {
        // the library finds a tag-matching SRQ's completions by it too
        if (q.srq != null && q.srq.tm != null) return q.srq.srqn;
        return q.xrcd == 0 ? 0 : p.xrcSrqn();
    }

    void untakeRecvWqe(RecvRingReader.Wqe w) { untakeRecvWqe(w, null); }

    /**
     * Gives receive WQE {@code w} back to where request {@code p} took it from (an XRC target's: the SRQ {@code p}
     * names).
     */
    void untakeRecvWqe(RecvRingReader.Wqe w, Packet p) {
        Srq xrc = p == null ? null : xrcSrq(p);
        if (xrc != null) xrc.ring.untake(w);
        else if (q.srq != null) q.srq.ring.untake(w);
        else q.rq.untake(w);
    }
}
