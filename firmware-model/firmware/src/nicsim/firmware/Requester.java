package nicsim.firmware;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import java.util.function.LongConsumer;
import java.util.function.Predicate;
import nicsim.abi.Cqe64;
import nicsim.abi.QpTransitions;
import nicsim.abi.QpcState;
import nicsim.abi.ServiceType;
import nicsim.abi.Vendor;
import nicsim.abi.WqeFormat.SendWqe;
import nicsim.abi.WqeFormat.Sge;
import nicsim.abi.WqeFormat;
import nicsim.abi.WqeLayout;
import nicsim.adapter.DmaPath;
import nicsim.adapter.WqeStage;
import nicsim.adapter.WqePorts.WqeError;
import nicsim.fabric.Grh;
import nicsim.fabric.Mad;
import nicsim.fabric.Packet.Op;
import nicsim.fabric.Packet;
import nicsim.firmware.Qp.Piece;
import nicsim.firmware.SendOp.Stage;

/**
 * The requester of a QP (as rxe_req.c): send WQEs the fetcher delivers become operations; each is
 * checked, its local memory translated and read, and its packets built with their PSNs and sent,
 * streamed as the payload comes off the host when the link allows.
 */
final class Requester {
    private final Qp q;
    /** The send ring's counters as firmware knows them: the newest doorbell's producer, the WQEBB past the last WQE. */
    private int producerSeen, delivered;
    /** After a refused WQE that gave no size: the WQEBBs before {@code skipEnd} are searched for a WQE (-1: none). */
    private int skipEnd = -1;
    /** The PSN of the next packet (sq_psn). */
    private int psn;
    /** READs and atomics sent and not yet answered (the completer counts them down). */
    private int readsOutstanding;

    Requester(Qp q) { this.q = q; }

    /** The PSN the next packet takes (sq_psn). */
    int nextPsn() { return psn; }

    /** The send queue starts at PSN {@code sqPsn} (modify's SQ_PSN). */
    void startAt(int sqPsn) { psn = sqPsn; }

    /** Takes the next PSN for a packet of the adapter's own (a DC initiator's connect). */
    int takePsn() {
        int p = psn;
        psn = (psn + 1) & 0xFFFFFF;
        return p;
    }

    /** The newest doorbell's producer, as firmware saw it. */
    int producerSeen() { return producerSeen; }

    /** A doorbell told the send ring's producer: {@code producer}. */
    void doorbell(int producer) { producerSeen = producer; }

    /** The WQEBB past the last WQE the fetcher delivered (where a reloaded context resumes). */
    int delivered() { return delivered; }

    /** READs and atomics sent and not yet answered. */
    int readsOutstanding() { return readsOutstanding; }

    /** A READ or atomic sent is answered, or failed: one fewer outstanding. */
    void readAnswered() { readsOutstanding--; }

    /** The send queue is flushed: no READ or atomic is outstanding any more. */
    void readsFlushed() { readsOutstanding = 0; }

    /** RESET: nothing outstanding, the send ring again at WQEBB 0 (its context reloads: {@link SqContexts}). */
    void reset() {
        readsOutstanding = 0;
        skipEnd = -1;
        delivered = 0;
        producerSeen = 0;
    }

    /** Nothing of this send queue is in the fetcher: every WQEBB announced has been delivered. */
    boolean idle() { return delivered == producerSeen; }

    /** Searches the WQEBBs before {@code end} for the next WQE. */
    private void skipUpTo(int end) { skipEnd = end; }

    /** Whether WQEBB {@code index}, refused by the fetcher, lies in the search after a refused WQE: not a WQE. */
    private boolean skipping(int index) {
        int left = (skipEnd - index) & 0xFFFF;
        return skipEnd >= 0 && left != 0 && left < 0x8000;
    }

    void onWqe(int index, byte[] bytes) {
        delivered = (index + bytes.length / WqeLayout.WQEBB) & 0xFFFF;
        skipEnd = -1; // a WQE boundary again
        if (idle()) q.fw.sqContexts.tryLoad(q.fw.sqContexts.slot(q.qpn));
        int opcode = bytes[3] & 0xff;
        SendWqe w;
        try {
            w = WqeFormat.decode(bytes, q.type);
        } catch (WqeFormat.Malformed m) {
            q.fw.adapter.report("malformed WQE " + index + " of QP 0x" + Long.toHexString(q.qpn) + ": "
                    + m.getMessage());
            localError(index, opcode, Cqe64.SYNDROME_LOC_QP_OP_ERR, Vendor.SEGMENTS, 0, 0);
            return;
        }
        long length = 0;
        if (w.inline() != null) length = w.inline().length;
        else for (int i = 0; i < w.sges().size(); i++) length += w.sges().get(i).length() & 0xFFFFFFFFL;
        SendOp op = new SendOp(index, w, length, q.mtu);
        switch (q.state) {
            case ERR, SQE -> { q.flush(op); return; }
            case RESET, INIT, RTR -> {
                q.fw.adapter.report(String.format("WQE %d for QP 0x%x in %s: not executed", index, q.qpn, q.state));
                complete(op, Cqe64.error(true, q.qpn, index, opcode, Cqe64.SYNDROME_LOC_QP_OP_ERR, Vendor.QP_NOT_READY,
                        0, 0, 0));
                return;
            }
            default -> {}
        }
        q.fw.ledger.wqe(q.qpn, index, opcode, length);
        q.pending.add(op);
        pump();
    }

    /**
     * The fetcher refused a WQE (bad control segment or failed ring read) and stopped the queue. The
     * WQE completes in error and the QP stops; the fetch restarts right after it, so the WQEs posted
     * behind it are fetched and flushed, each with its own completion. When only the opcode was
     * wrong, the control segment's DS says where the next WQE starts. Otherwise nothing does: the
     * fetch goes on a WQEBB at a time up to the producer seen now, and a WQEBB it refuses there is
     * not a WQE (the rest of the refused one) but skipped, counted and reported, with no completion.
     */
    void onWqeError(WqeError e) {
        int index = (int) e.index() & 0xFFFF, posted = (producerSeen - index) & 0xFFFF;
        int next;
        if (skipping(index)) {
            q.fw.stats.inc(FirmwareStat.WQEBBS_SKIPPED);
            q.fw.report(String.format("WQEBB %d of QP 0x%x skipped looking for the WQE after a refused one (%s)",
                    index, q.qpn, e));
            next = index + 1;
        } else {
            int opcode = WqeLayout.opcode(e.ctrl()), ds = WqeLayout.ds(e.ctrl());
            boolean dmaError = e.reason() == WqeError.Code.DMA_ERROR;
            int syndrome = dmaError ? Cqe64.SYNDROME_GENERAL_ERR : Cqe64.SYNDROME_LOC_QP_OP_ERR;
            localError(index, opcode, syndrome, (int) e.code(), 0, 0);
            boolean sized = e.reason() == WqeError.Code.BAD_OPCODE && ds != 0 && WqeLayout.qpn(e.ctrl()) == q.qpn
                    && WqeLayout.index(e.ctrl()) == index && WqeLayout.wqebbs(ds) <= posted;
            if (sized) next = index + WqeLayout.wqebbs(ds);
            else {
                skipUpTo(producerSeen);
                next = index + 1;
            }
        }
        // (never: the fetcher is not ahead of the doorbells firmware saw)
        if (posted == 0) next = producerSeen;
        delivered = next & 0xFFFF;
        if (q.fw.sqContexts.resident(q)) q.fw.adapter.loadSq(q.qpn, q.sqAddr, q.sqLogSize, delivered, producerSeen);
    }

    /** Queues the adapter's own operation (tag matching's rendezvous READ and FIN) behind the send queue's WQEs. */
    void offload(SendOp op) {
        q.pending.add(op);
        pump();
    }

    /** The fetcher or the decoder refused a WQE; it completes in error and the send queue stops. */
    void localError(int index, int opcode, int syndrome, int vendor, long addr, int key) {
        if (q.state == QpcState.ERR || q.state == QpcState.SQE) {
            q.flush(new SendOp(index, new SendWqe(opcode, index, q.qpn, 0, 0, null, 0, 0, 0, 0, List.of(), null), 0));
            return;
        }
        q.completer.retire();
        q.fw.complete(q.scq, Cqe64.error(true, q.qpn, index, opcode, syndrome, vendor, addr, key, 0), false);
        if (QpTransitions.afterSendError(q.type) == QpcState.ERR) q.toError(); else q.toSqError();
    }

    void pump() {
        while (!q.pending.isEmpty() && q.state == QpcState.RTS) { // SQD starts no new WQEs
            SendOp op = q.pending.peek();
            // LOCAL_INV is always fenced
            if ((op.w.fenced() || op.opcode == WqeLayout.OP_LOCAL_INVAL) && readsOutstanding > 0) return;
            if (op.readOrAtomic() && readsOutstanding >= Math.max(1, q.maxRdAtomic)) return;
            if (!q.outstanding.isEmpty() && Psn.diff(psn, q.outstanding.peek().firstPsn) >= q.WINDOW_PSNS) return;
            if (q.dci != null && !q.dci.ready(op)) return; // a DC initiator connects to the op's target first
            q.pending.poll();
            start(op);
        }
    }

    /**
     * A layout UMR (an indirect mkey's list or interleaved layout, RC only as on mlx5): done once
     * its KLM entries are written, at umr.klm.cycles each; completed in order. A failed check
     * completes it with MW_BIND_ERR naming the check.
     */
    private void umr(SendOp op) {
        if (q.type != ServiceType.RC) {
            q.completer.requesterError(op, Cqe64.SYNDROME_LOC_QP_OP_ERR, Vendor.OPCODE_FOR_QP_TYPE, 0, 0, 0);
            return;
        }
        long cycles = q.fw.wqeCycles + Math.max(0, q.fw.umrKlmCycles) * op.w.layout().entries().size();
        q.fw.exec(cycles, q.live(() -> {
            if (q.state != QpcState.RTS && q.state != QpcState.SQD) return;
            // no indirect mkey exists where the profile has no UMR
            int bad = q.fw.keys.configure(q, op.w.imm() & 0xFFFFFFFFL, op.w.layout());
            if (bad != 0) { q.completer.requesterError(op, Cqe64.SYNDROME_MW_BIND_ERR, bad, 0, op.w.imm(), 0); return; }
            q.count(FirmwareStat.UMR_LAYOUTS);
            op.reach(Stage.DONE);
            q.completer.retire();
        }));
    }

    void start(SendOp op) {
        int o = op.opcode;
        q.outstanding.add(op);
        if (o == WqeLayout.OP_NOP) {
            op.reach(Stage.DONE);
            q.completer.retire();
            return;
        }
        if (!WqeLayout.allowedOn(q.type, o)) {
            q.completer.requesterError(op, Cqe64.SYNDROME_LOC_QP_OP_ERR, Vendor.OPCODE_FOR_QP_TYPE, 0, 0, 0);
            return;
        }
        if (op.w.layout() != null) { umr(op); return; }
        if (o == WqeLayout.OP_UMR || o == WqeLayout.OP_LOCAL_INVAL) {
            // local operations on the mkey table: done when executed, completed in order
            q.fw.exec(q.fw.wqeCycles, q.live(() -> {
                if (q.state != QpcState.RTS && q.state != QpcState.SQD) return;
                int bad = o == WqeLayout.OP_UMR
                        ? q.fw.keys.bind(q, op.w.rkey() & 0xFFFFFFFFL, op.w.compare() >>> 32, op.w.remoteAddr(),
                                op.w.swapAdd(), (int) op.w.compare()) : q.fw.keys.invalidate(q,
                                op.w.imm() & 0xFFFFFFFFL);
                if (bad != 0) {
                    q.completer.requesterError(op, o == WqeLayout.OP_UMR ? Cqe64.SYNDROME_MW_BIND_ERR
                            : Cqe64.SYNDROME_LOC_QP_OP_ERR, bad, op.w.remoteAddr(), o == WqeLayout.OP_UMR ? op.w.rkey()
                            : op.w.imm(), 0);
                    return;
                }
                op.reach(Stage.DONE);
                q.completer.retire();
            }));
            return;
        }
        if (op.length > q.fw.maxMsg) {
            q.completer.requesterError(op, Cqe64.SYNDROME_LOC_LEN_ERR, Vendor.MESSAGE_TOO_LONG, 0, 0, 0);
            return;
        }
        if (op.readOrAtomic()) readsOutstanding++;
        // PSNs in WQE order
        int npkts = o == WqeLayout.OP_RDMA_READ ? (int) Math.max(1, (op.length + q.mtu - 1) / q.mtu)
                : op.readOrAtomic() ? 1 : (int) Math.max(1, (op.length + q.mtu - 1) / q.mtu);
        op.firstPsn = psn;
        op.respPsn = psn;
        op.lastPsn = (psn + npkts - 1) & 0xFFFFFF;
        if (q.service.connected) psn = (psn + npkts) & 0xFFFFFF;
        q.fw.exec(q.fw.wqeCycles, q.live(payloadOf, op));
    }

    private final Consumer<SendOp> payloadOf = this::payload; // made once: a task of every WQE

    /** The WQE's cycles spent: op's payload, read or streamed from the host unless it has none or carries it. */
    private void payload(SendOp op) {
        if (op.readOrAtomic()) { op.payload = new byte[0]; build(op); return; }
        if (op.w.inline() != null) { op.payload = op.w.inline(); build(op); return; }
        // a UD message of one packet streams as a connected one does; a longer one is refused in build. A MAD
        // is read whole: the SMI looks at it before it leaves (one to the port itself never goes on the wire)
        if (q.service.connected || op.length <= q.mtu && q.special < 0) { stream(op); return; }
        gather(op);
    }

    /**
     * Reads an unconnected send's payload from its SGEs; a page not present (on-demand) is brought in, and the read
     * tried again.
     */
    private void gather(SendOp op) {
        q.placement.gather(op.w.sges(), op.index, q.live((data, fail) -> {
            if (q.state == QpcState.ERR || q.state == QpcState.SQE) return;
            if (fail != null && fail.pageFault()) { q.odp.requesterWaits(op, fail, () -> gather(op)); return; }
            if (fail != null) { q.completer.requesterError(op, fail); return; }
            op.payload = data;
            if (q.fw.adapter.tracingWqe())
                q.fw.adapter.traceWqe(q.qpn, op.index, WqeStage.PAYLOAD_READ, "", data.length, " B by DMA");
            build(op);
        }));
    }

    void build(SendOp op) {
        int o = op.opcode;
        if (!q.service.connected) {
            if (op.payload.length > q.mtu) {
                // C10-93.1.1: a UD message longer than the path MTU completes without being sent
                q.count(FirmwareStat.UD_TOO_LONG);
                op.reach(Stage.DONE);
                q.completer.retire();
                return;
            }
            if (q.special >= 0) {
                q.count(FirmwareStat.MADS_FROM_DRIVER);
                if (q.fw.management.loopsBack(q.special, op.w.av().rlid(), op.payload)) {
                    op.reach(Stage.DONE);
                    q.completer.retire();
                    return;
                }
            }
            op.packets.add(datagram(op, op.payload));
        } else if (o == WqeLayout.OP_RDMA_READ) {
            op.packets.add(request(op, Op.READ_REQ, op.firstPsn, true, op.w.remoteAddr(), op.w.rkey(), op.length, 0, 0,
                    0, new byte[0]));
        } else if (op.readOrAtomic()) {
            op.packets.add(request(op, o == WqeLayout.OP_ATOMIC_CS ? Op.CMP_SWAP : Op.FETCH_ADD, op.firstPsn, true,
                    op.w.remoteAddr(), op.w.rkey(), 8, op.w.swapAdd(), op.w.compare(), 0, new byte[0]));
        } else {
            int n = (int) Math.max(1, (op.payload.length + q.mtu - 1) / q.mtu);
            for (int i = 0; i < n; i++) op.packets.add(packetOf(op, i, n));
        }
        op.reach(Stage.READY);
        transmit();
    }

    /**
     * A UD SEND's one packet, carrying {@code payload}, to the address vector of its WQE; with a GRH from the
     * port's GID (the link-local prefix and its GUID) when the AV asks for one (a send to a multicast group: its
     * DGID is the MGID).
     */
    private Packet datagram(SendOp op, byte[] payload) {
        boolean imm = op.opcode == WqeLayout.OP_SEND_IMM;
        // a special QP's MAD leaves from QP0 or QP1, QP1's with the GSI Q_Key whatever the WQE says (IBA 13.5.3.1)
        WqeFormat.Av av = op.w.av();
        long src = q.special >= 0 ? q.special : q.qpn;
        int qkey = q.special == 1 ? Mad.GSI_QKEY : q.special == 0 ? 0 : qkeyOf(av);
        Packet p = new Packet(q.fw.lid(), av.rlid(), imm ? Op.SEND_ONLY_IMM : Op.SEND_ONLY, av.remoteQpn(), src,
                op.firstPsn, false, op.w.solicited(), 0, 0, 0, 0, 0, 0, 0, 0, op.w.imm(), qkey, payload,
                Packet.UD);
        if (!av.grh()) return p;
        return p.withGrh(new Grh(Multicast.GID_PREFIX, q.fw.management().guid(), av.dgidHi(), av.dgidLo(), 0, 0,
                Multicast.HOP_LIMIT));
    }

    /** Packet {@code i} of the {@code n} of a SEND or WRITE, its bytes taken from the op's payload. */
    Packet packetOf(SendOp op, int i, int n) {
        if (!q.service.connected) return datagram(op, op.chunks[0]);
        int o = op.opcode;
        boolean write = o == WqeLayout.OP_RDMA_WRITE || o == WqeLayout.OP_RDMA_WRITE_IMM;
        boolean imm = o == WqeLayout.OP_RDMA_WRITE_IMM || o == WqeLayout.OP_SEND_IMM;
        boolean inv = o == WqeLayout.OP_SEND_INVAL;
        Op po;
        if (n == 1)
            po = write ? (imm ? Op.WRITE_ONLY_IMM : Op.WRITE_ONLY) : inv ? Op.SEND_ONLY_INV
                    : (imm ? Op.SEND_ONLY_IMM : Op.SEND_ONLY);
        else if (i == 0) po = write ? Op.WRITE_FIRST : Op.SEND_FIRST;
        else if (i < n - 1) po = write ? Op.WRITE_MIDDLE : Op.SEND_MIDDLE;
        else po = write ? (imm ? Op.WRITE_LAST_IMM : Op.WRITE_LAST) : inv ? Op.SEND_LAST_INV
                : (imm ? Op.SEND_LAST_IMM : Op.SEND_LAST);
        byte[] chunk = op.chunks != null ? op.chunks[i] : Arrays.copyOfRange(op.payload, i * q.mtu,
                Math.min(op.payload.length, (i + 1) * q.mtu));
        long length = op.chunks != null ? op.length : op.payload.length;
        boolean ackReq = q.service.reliable && (i == n - 1 || (i + 1) % q.fw.ackCoalesce == 0);
        Packet p = request(op, po, (op.firstPsn + i) & 0xFFFFFF, ackReq, i == 0 ? op.w.remoteAddr() : 0,
                i == 0 ? op.w.rkey() : 0, i == 0 ? length : 0, 0, 0, po.hasImm() || inv && i == n - 1 ? op.w.imm() : 0,
                chunk);
        // request() makes it unsolicited: a second packet only for the one that asks for an event
        return i == n - 1 && op.w.solicited() ? p.withSolicited(true) : p;
    }

    /**
     * Streams a SEND or WRITE's payload to the link packet by packet, as a control program does: the
     * SGEs are translated; the adapter reads each packet's bytes into SRAM, the firmware builds its
     * headers, and the send engine streams the bytes out ({@link nicsim.adapter.DmaPath#readOut}).
     * With {@code link.transmit} "cut-through" the packet goes on the wire as its first beat leaves
     * the engine; with "store-and-forward", once all of it is out.
     */
    void stream(SendOp op) {
        op.streaming = true;
        op.npkts = (int) Math.max(1, (op.length + q.mtu - 1) / q.mtu);
        op.chunks = new byte[op.npkts][];
        op.heads = new long[op.npkts];
        Arrays.fill(op.heads, -1);
        if (q.service.reliable) op.pool = q.fw.payloads;
        op.reach(Stage.READY);
        q.placement.translateAll(op.w.sges(), op.index, q.live((pieces, fail) -> {
            if (q.state == QpcState.ERR || q.state == QpcState.SQE) return;
            if (fail != null && fail.pageFault()) { q.odp.requesterWaits(op, fail, () -> stream(op)); return; }
            if (fail != null) { q.completer.requesterError(op, fail); return; }
            op.unread = op.npkts;
            int i = 0; // the first piece not wholly before the packet, found in one pass over the message
            long at = 0; // its offset in the message
            for (int k = 0; k < op.npkts; k++) {
                long from = (long) k * q.mtu, to = Math.min(op.length, from + q.mtu);
                while (i < pieces.size() && at + pieces.get(i).length() <= from) at += pieces.get(i++).length();
                List<DmaPath.Range> ranges;
                if (from < to && i < pieces.size() && at + pieces.get(i).length() >= to) { // all in one piece
                    ranges = List.of(new DmaPath.Range(pieces.get(i).pa() + (from - at), (int) (to - from)));
                } else {
                    ranges = new ArrayList<>();
                    long pos = at;
                    for (int j = i; j < pieces.size() && pos < to; pos += pieces.get(j++).length()) {
                        Piece p = pieces.get(j);
                        long lo = Math.max(from, pos), hi = Math.min(to, pos + p.length());
                        if (lo < hi) ranges.add(new DmaPath.Range(p.pa() + (lo - pos), (int) (hi - lo)));
                    }
                }
                streamPacket(op, k, ranges, i < pieces.size() ? pieces.get(i).sge() : null);
            }
        }));
    }

    /** A packet's bytes in SRAM: its header cycles, a task queued and nothing else (made once). */
    private final Consumer<Runnable> inSram = this::headerCycles;

    private void headerCycles(Runnable go) { q.fw.exec(q.fw.packetCycles, go); }

    /**
     * Packet {@code k} of a streamed op, from host {@code ranges}: its bytes into SRAM, its header cycles, then out to
     * the link.
     */
    void streamPacket(SendOp op, int k, List<DmaPath.Range> ranges, Sge sge) {
        // a reliable QP's packet bytes go back once acknowledged and out of the fabric (SendOp): taken from the pool
        byte[] into = null;
        if (op.pool != null) {
            int length = 0;
            for (int r = 0; r < ranges.size(); r++) length += ranges.get(r).length();
            into = q.fw.payloads.take(length);
        }
        PacketRead read = new PacketRead(op, k, sge);
        q.fw.adapter.dma().readOut(ranges, into, inSram, read, read);
    }

    /**
     * Packet {@code k} of a streamed op on its way through SRAM, its two continuations in one object as continuations
     * of the QP's life then ({@link Qp#live}).
     */
    private final class PacketRead implements BiConsumer<byte[], Long>, Consumer<byte[]> {
        private final SendOp op;
        private final int k, generation = q.generation;
        private final Sge sge;

        PacketRead(SendOp op, int k, Sge sge) {
            this.op = op;
            this.k = k;
            this.sge = sge;
        }

        /** Its head left the send engine at {@code feed}: its bytes as they stand in SRAM. */
        @Override public void accept(byte[] bytes, Long feed) {
            if (generation != q.generation) return;
            op.chunks[k] = bytes;
            if (q.fw.cutThroughTx) { op.heads[k] = feed; transmit(); }
        }

        /** All its bytes are in SRAM ({@code out}), or (null) a read failed. */
        @Override public void accept(byte[] out) {
            if (generation != q.generation || q.state == QpcState.ERR || q.state == QpcState.SQE) return;
            if (out == null) {
                q.completer.requesterError(op, Cqe64.SYNDROME_LOC_PROT_ERR, Vendor.DMA_FAILED, sge.addr(), sge.lkey(),
                        0);
                return;
            }
            q.count(FirmwareStat.DMA_READ_BYTES, out.length);
            if (!q.fw.cutThroughTx) { op.heads[k] = 0; transmit(); }
            if (--op.unread == 0 && q.fw.adapter.tracingWqe())
                q.fw.adapter.traceWqe(q.qpn, op.index, WqeStage.PAYLOAD_READ, "", op.length, " B by DMA");
        }
    }

    /**
     * A request packet of {@code src} (an XRC one names the destination's XRC SRQ, from the WQE's XRC segment; a DC one
     * carries the DC key).
     */
    /**
     * The qkey a UD request carries: the work request's, or (its high bit set: a controlled qkey,
     * IBA 10.2.5) the QP's own. Any value goes, 0 included (Open MPI's UD connection manager uses 0).
     */
    private int qkeyOf(WqeFormat.Av av) { return av.qkey() < 0 ? q.qkey : av.qkey(); }

    Packet request(SendOp src, Op op, int psn, boolean ackReq, long va, int rkey, long len, long swap, long cmp,
            int imm, byte[] payload) {
        Packet p = new Packet(q.fw.lid(), q.dlid, op, q.destQpn, q.qpn, psn, ackReq, false, op.hasReth()
                || op.isAtomic() ? va : 0, op.hasReth() || op.isAtomic() ? rkey : 0, op.hasReth() ? len : 0, swap, cmp,
                0, 0, 0, imm, 0, payload, q.transport());
        return switch (q.service) {
            case XRC -> p.withXrcSrqn(src.w.xrcSrqn());
            case DC -> p.withDcKey(q.dci.key());
            default -> p;
        };
    }

    /** Sends the packets of ready WQEs, in PSN order. */
    void transmit() { q.outstanding.fromFirstUnsent(transmitOne); }

    private final Predicate<SendOp> transmitOne = this::transmit; // made once: transmit() runs for every packet

    /** Sends op's packets that are ready, if it is; whether the ops after it may go too (PSN order). */
    private boolean transmit(SendOp op) {
        if (op.atLeast(Stage.SENT)) return true;
        if (!op.atLeast(Stage.READY)) return false;
        if (op.streaming) {
            // each packet's header cycles were spent before its bytes left SRAM: it goes now, in PSN order
            while (op.sent < op.npkts && op.heads[op.sent] >= 0) {
                Packet p = packetOf(op, op.sent, op.npkts);
                op.packets.add(p);
                long feed = op.heads[op.sent];
                op.heads[op.sent] = -1;
                put(p, feed, op, op.sent == op.npkts - 1);
                op.sent++;
            }
            if (op.sent < op.npkts) return false; // later messages wait: PSN order
        } else sendPackets(op.packets, op, true);
        op.reach(Stage.SENT);
        return true;
    }

    void sendPackets(List<Packet> packets, SendOp op, boolean endsMessage) {
        for (int i = 0; i < packets.size(); i++) {
            Packet p = packets.get(i);
            boolean lastOne = endsMessage && i == packets.size() - 1;
            q.fw.exec(q.fw.packetCycles, q.live(() -> put(p, 0, op, lastOne)));
        }
    }

    /** No one asks when a packet left the port. */
    private static final LongConsumer NO_ONE = left -> { };

    /** Puts a packet of {@code op} on the wire, its bytes fed in {@code feed} ps. */
    void put(Packet p, long feed, SendOp op, boolean lastOne) {
        if (q.state == QpcState.ERR || (q.state == QpcState.SQE && !q.service.reliable)) return;
        if (op.pool != null) { // its arrays go back once acknowledged and out of the fabric
            op.toFabric();
            q.fw.send(p, feed, NO_ONE, op);
        } else q.fw.send(p, feed);
        if (!op.onWire) {
            op.onWire = true;
            if (q.fw.adapter.tracingWqe())
                q.fw.adapter.traceMessageOut(q.qpn, op.index, q.fw.lid(), p.psn(), p.op());
        }
        if (q.service.reliable) q.completer.armTimer();
        else if (lastOne) {
            op.reach(Stage.DONE);
            q.completer.retire();
        }
    }

    void complete(SendOp op, long[] cqe) { q.fw.complete(q.scq, cqe, false); }
}
