package nicsim.firmware;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import nicsim.abi.BigEndian;
import nicsim.abi.Cmd;
import nicsim.abi.Cqe64;
import nicsim.abi.QpTransitions;
import nicsim.abi.Vendor;
import nicsim.abi.WqeFormat;
import nicsim.abi.WqeFormat.SendWqe;
import nicsim.abi.WqeFormat.Sge;
import nicsim.abi.WqeLayout;
import nicsim.adapter.MttPorts;
import nicsim.adapter.MttPorts.XlateRsp;
import nicsim.fabric.Packet;
import nicsim.fabric.Packet.Op;
import nicsim.host.PciPort;
import nicsim.sim.Arrival;
import nicsim.sim.Simulator;
import nicsim.verbs.AccessFlags;
import nicsim.verbs.EventType;
import nicsim.verbs.Mtu;
import nicsim.verbs.QpAttrMask;
import nicsim.verbs.QpState;
import nicsim.verbs.QpType;
import nicsim.firmware.Qp.SendOp;
import nicsim.firmware.Qp.InMsg;
import nicsim.firmware.Qp.Piece;
import nicsim.firmware.Qp.Failure;

/**
 * The responder of a QP (as rxe_resp.c): inbound requests checked in order (PSN, duplicates,
 * service, resources), then executed: SENDs into receive WQEs, WRITEs and READs through the rkey's
 * translation, atomics one at a time per address; ACKs and NAKs; responder errors with their events.
 */
final class Responder {
    private final Qp q;

    Responder(Qp q) { this.q = q; }


    void onPacket(Packet p) {
        if (p.op().isAck()) { q.completer.onAck(p); return; }
        if (p.op().isReadResponse()) { q.completer.onReadResponse(p); return; }
        if (q.state != QpState.RTR && q.state != QpState.RTS && q.state != QpState.SQD && q.state != QpState.SQE) {
            q.fw.counters.counter("Firmware.packets_dropped_state").inc();
            return;
        }
        // docs/sources.md#responder-discards: a packet of another service, or (connected QPs) from a port other than the
        // QP's destination, is dropped without touching the QP
        if (p.transport() != q.transport() || (q.type == QpType.XRC_SEND && p.op().isRequest())) { // an XRC initiator takes no requests
            q.fw.counters.counter("Firmware.packets_dropped_type").inc();
            return;
        }
        if (q.service.connected && p.slid() != q.dlid) { q.fw.counters.counter("Firmware.packets_dropped_path").inc(); return; }
        if (p.op().starts()) q.fw.adapter.traceMessageIn(p.slid(), p.srcQp(), p.psn(), p.op() + " psn " + p.psn());
        q.rx.add(p);
        processRx();
    }

    void processRx() {
        if (q.rxBusy || q.rx.isEmpty()) return;
        q.rxBusy = true;
        Packet p = q.rx.poll();
        long gen = q.generation;
        q.fw.exec(q.fw.packetCycles, () -> {
            if (gen != q.generation) return;
            handle(p, () -> {
                if (gen != q.generation) return;
                q.rxBusy = false;
                processRx();
            });
        });
    }

    void handle(Packet p, Runnable next) {
        if (q.state == QpState.ERR || q.state == QpState.RESET || q.state == QpState.INIT) { next.run(); return; }
        if (!q.service.connected) { handleUd(p, next); return; }
        int d = Psn.diff(p.psn(), q.epsn);
        if (d > 0) {
            q.fw.counters.counter("Firmware.psn_gaps").inc();
            if (q.service.reliable) {
                if (!q.nakSent) { q.nakSent = true; ack(Op.ACK, q.epsn, Packet.AETH_NAK_PSN, 0); }
                next.run();
                return;
            }
            // UC: the message in progress is lost; resynchronise on a packet that starts one
            q.cur = null;
            if (!p.op().starts()) { next.run(); return; }
            q.epsn = p.psn();
        } else if (d < 0) {
            q.fw.counters.counter("Firmware.duplicates").inc();
            if (q.service.reliable) duplicate(p, next); else next.run();
            return;
        }
        q.nakSent = false;
        if (q.state == QpState.RTR && !q.commEst) {
            q.commEst = true;
            q.fw.event(EventType.COMM_EST, q.qpn);
        }
        // opcode sequence
        if ((q.cur != null) == p.op().starts() || (q.cur != null && q.cur.send != p.op().isSend())) {
            if (!q.service.reliable) { q.cur = null; if (!p.op().starts()) { next.run(); return; } }
            else { responderError(p, Packet.AETH_NAK_INVALID, EventType.QP_REQ_ERR, null, 0, Vendor.OPCODE_SEQUENCE); next.run(); return; }
        }
        if (q.xrcd != 0) { // an XRC target: the SRQ the request names must be an XRC SRQ of the QP's domain
            Srq s = q.fw.srqs.get(p.xrcSrqn());
            int bad = s == null || !s.xrc() ? Vendor.XRC_SRQ_UNKNOWN : s.xrcd != q.xrcd ? Vendor.XRC_SRQ_DOMAIN : 0;
            if (bad != 0) { responderError(p, Packet.AETH_NAK_INVALID, EventType.QP_REQ_ERR, null, 0, bad); next.run(); return; }
        }
        Op o = p.op();
        int need = o.isWrite() ? AccessFlags.REMOTE_WRITE : o == Op.READ_REQ ? AccessFlags.REMOTE_READ : o.isAtomic() ? AccessFlags.REMOTE_ATOMIC : 0;
        if ((q.access & need) != need) {
            responderError(p, Packet.AETH_NAK_INVALID, EventType.QP_REQ_ERR, null, 0, Vendor.QP_ACCESS_DENIES);
            next.run();
            return;
        }
        if (o.isSend()) handleSend(p, next);
        else if (o.isWrite()) handleWrite(p, next);
        else if (o == Op.READ_REQ) handleRead(p, next, true);
        else handleAtomic(p, next);
    }

    void handleUd(Packet p, Runnable next) {
        if (p.qkey() != q.qkey) { q.fw.counters.counter("Firmware.qkey_mismatch").inc(); next.run(); return; }
        long gen = q.generation;
        takeRecvWqe(w -> {
            if (gen != q.generation) return;
            if (w == null) { q.fw.counters.counter("Firmware.ud_no_receive").inc(); next.run(); return; }
            long len = p.payload().length + 40L; // the first 40 bytes hold the GRH (absent on IB: left untouched)
            if (len > w.capacity()) { // UD: too long for the buffer: dropped, no error (docs/sources.md#responder-errors *1)
                q.fw.counters.counter("Firmware.ud_too_long_for_receive").inc();
                untakeRecvWqe(w); // the WQE is not consumed
                next.run();
                return;
            }
            q.placement.scatter(w.sges(), 40, p.payload(), p.arrival(), MttPorts.LOCAL_WRITE, fail -> {
                if (gen != q.generation) return;
                if (fail != null)
                    q.fw.complete(q.rcq, Cqe64.error(false, q.qpn, w.index(), 0, Cqe64.SYNDROME_LOC_PROT_ERR, fail.vendor(), fail.addr(), fail.key(), p.psn()), false);
                next.run();
            }, () -> {
                if (gen != q.generation) return;
                q.fw.complete(q.rcq, Cqe64.responder(q.qpn, w.index(), p.op().hasImm() ? Cqe64.RESP_SEND_IMM : Cqe64.RESP_SEND, len, p.imm(),
                        p.srcQp(), p.slid(), p.solicited()), p.solicited());
            });
        });
    }

    void handleSend(Packet p, Runnable next) {
        long gen = q.generation;
        Consumer<RecvRing.Wqe> go = w -> {
            if (gen != q.generation) return;
            if (w == null) {
                if (q.service.reliable) { ack(Op.ACK, p.psn(), Packet.AETH_RNR | q.minRnrTimer, 0); q.fw.counters.counter("Firmware.rnr_sent").inc(); }
                else q.fw.counters.counter("Firmware.uc_no_receive").inc();
                next.run();
                return;
            }
            if (q.cur == null) { q.cur = new InMsg(true); q.cur.wqe = w; }
            InMsg m = q.cur;
            if (q.service.connected && m.offset + p.payload().length > q.fw.maxMsg) { // docs/sources.md#responder-errors: LOC_LEN_ERR here, REM_INV_REQ_ERR there
                responderError(p, Packet.AETH_NAK_INVALID, null, w, Cqe64.SYNDROME_LOC_LEN_ERR, Vendor.MESSAGE_TOO_LONG);
                next.run();
                return;
            }
            if (m.offset + p.payload().length > w.capacity()) {
                responderError(p, Packet.AETH_NAK_INVALID, null, w, Cqe64.SYNDROME_LOC_LEN_ERR, Vendor.RECV_TOO_SMALL);
                next.run();
                return;
            }
            long off = m.offset;
            m.offset += p.payload().length;
            q.epsn = (q.epsn + 1) & 0xFFFFFF;
            Runnable[] complete = {null}; // the last packet's completion, once its writes and those before it have left
            q.placement.scatter(w.sges(), pd(p), off, p.payload(), p.arrival(), MttPorts.LOCAL_WRITE, fail -> {
                if (gen != q.generation) return;
                if (fail != null) {
                    q.epsn = (q.epsn - 1) & 0xFFFFFF;
                    responderError(p, Packet.AETH_NAK_OP, null, w, Cqe64.SYNDROME_LOC_PROT_ERR, fail.vendor());
                    next.run();
                    return;
                }
                if (p.op().last()) {
                    boolean inv = p.op() == Op.SEND_LAST_INV || p.op() == Op.SEND_ONLY_INV;
                    if (inv) {
                        int bad = q.fw.keys.invalidate(q, p.imm() & 0xFFFFFFFFL);
                        if (bad != 0) { // class J: the responder completes REM_INV_REQ_ERR, the requester hears NAK invalid request
                            q.epsn = (q.epsn - 1) & 0xFFFFFF;
                            responderError(p, Packet.AETH_NAK_INVALID, null, w, Cqe64.SYNDROME_REM_INV_REQ_ERR, bad);
                            next.run();
                            return;
                        }
                    }
                    q.cur = null;
                    q.msn = (q.msn + 1) & 0xFFFFFF;
                    long[] cqe = Cqe64.responder(q.qpn, w.index(), inv ? Cqe64.RESP_SEND_INV : p.op().hasImm() ? Cqe64.RESP_SEND_IMM
                            : Cqe64.RESP_SEND, m.offset, p.imm(), p.srcQp(), p.slid(), p.solicited(), xrcSrqn(p));
                    Cq cq = recvCq(p);
                    complete[0] = () -> q.fw.complete(cq, cqe, p.solicited());
                }
                if (p.ackReq()) ack(Op.ACK, p.psn(), Packet.AETH_ACK, 0);
                next.run();
            }, () -> {
                if (gen == q.generation && complete[0] != null) complete[0].run();
            });
        };
        if (q.cur != null) go.accept(q.cur.wqe);
        else takeRecvWqe(p, go);
    }

    void handleWrite(Packet p, Runnable next) {
        long gen = q.generation;
        Runnable body = () -> {
            InMsg m = q.cur;
            if (m.offset + p.payload().length > m.dmaLength) {
                responderError(p, Packet.AETH_NAK_INVALID, EventType.QP_REQ_ERR, null, 0, Vendor.MESSAGE_TOO_LONG);
                next.run();
                return;
            }
            long off = m.offset;
            m.offset += p.payload().length;
            Runnable after = () -> {
                q.epsn = (q.epsn + 1) & 0xFFFFFF;
                if (p.op().last()) {
                    q.cur = null;
                    q.msn = (q.msn + 1) & 0xFFFFFF;
                }
                if (p.ackReq()) ack(Op.ACK, p.psn(), Packet.AETH_ACK, 0);
                next.run();
            };
            long seq = q.placement.payloadArrived();
            q.placement.writeChunks(m.target, off, p.payload(), p.arrival(), () -> q.placement.payloadIssued(seq));
            if (p.op().hasImm()) {
                takeRecvWqe(p, w -> {
                    if (gen != q.generation) return;
                    if (w == null) {
                        m.offset = off; // the packet is taken again after the RNR wait
                        if (p.op().starts()) q.cur = null;
                        if (q.service.reliable) ack(Op.ACK, p.psn(), Packet.AETH_RNR | q.minRnrTimer, 0);
                        next.run();
                        return;
                    }
                    long[] cqe = Cqe64.responder(q.qpn, w.index(), Cqe64.RESP_WR_IMM, m.dmaLength, p.imm(), p.srcQp(), p.slid(), p.solicited(),
                            xrcSrqn(p));
                    Cq cq = recvCq(p);
                    q.placement.whenIssued(seq, () -> q.fw.complete(cq, cqe, p.solicited()));
                    after.run();
                });
            } else after.run();
        };
        if (p.op().starts()) {
            if (p.dmaLength() > q.fw.maxMsg) { // docs/sources.md#responder-errors: known from the first packet, reported as a WRITE's (5.2)
                q.cur = null;
                responderError(p, Packet.AETH_NAK_INVALID, EventType.QP_REQ_ERR, null, 0, Vendor.MESSAGE_TOO_LONG);
                next.run();
                return;
            }
            q.cur = new InMsg(false);
            q.cur.dmaLength = p.dmaLength();
            if (p.dmaLength() == 0) { q.cur.target = List.of(); body.run(); return; } // C9-88: no rkey check
            q.fw.keys.translate(p.rkey(), p.va(), p.dmaLength(), MttPorts.REMOTE_WRITE, pd(p), q.qpn, rsp -> {
                if (gen != q.generation) return;
                XlateRsp bad = Placement.failed(rsp);
                if (bad != null) {
                    q.cur = null;
                    responderError(p, Packet.AETH_NAK_ACCESS, EventType.QP_ACCESS_ERR, null, 0, Vendor.REMOTE_XLATE + (int) bad.status());
                    next.run();
                    return;
                }
                q.cur.target = rsp;
                body.run();
            });
        } else body.run();
    }

    void handleRead(Packet p, Runnable next, boolean fresh) {
        long gen = q.generation;
        long writesBefore = q.writeSeq; // the READ reads after the writes of the requests before it (PCI: a read does not pass a posted write)
        long len = p.dmaLength();
        int npkts = (int) Math.max(1, (len + q.mtu - 1) / q.mtu);
        if (fresh) {
            if (len > q.fw.maxMsg) {
                responderError(p, Packet.AETH_NAK_INVALID, EventType.QP_REQ_ERR, null, 0, Vendor.MESSAGE_TOO_LONG);
                next.run();
                return;
            }
            if (tooManyReads(p)) { next.run(); return; }
            q.epsn = (q.epsn + npkts) & 0xFFFFFF;
            q.msn = (q.msn + 1) & 0xFFFFFF;
        }
        q.readsInProgress++;
        Consumer<byte[]> respond = data -> {
            for (int i = 0; i < npkts; i++) {
                Op o = npkts == 1 ? Op.READ_RESP_ONLY : i == 0 ? Op.READ_RESP_FIRST : i == npkts - 1 ? Op.READ_RESP_LAST : Op.READ_RESP_MIDDLE;
                byte[] chunk = java.util.Arrays.copyOfRange(data, i * q.mtu, (int) Math.min(len, (long) (i + 1) * q.mtu));
                Packet r = new Packet(q.fw.lid(), p.slid(), o, p.srcQp(), q.qpn, (p.psn() + i) & 0xFFFFFF, false, false, 0, 0, 0, 0, 0,
                        Packet.AETH_ACK, q.msn, 0, 0, 0, chunk, q.transport());
                boolean lastOne = i == npkts - 1;
                q.fw.exec(q.fw.packetCycles, () -> {
                    if (gen != q.generation) return;
                    long left = q.fw.send(r); // made before any later error: it still goes out
                    // the read stays in progress until its last response has left the port
                    if (lastOne) q.fw.sim.schedule(left, () -> { if (gen == q.generation) q.readsInProgress--; });
                });
            }
            next.run();
        };
        if (len == 0) { respond.accept(new byte[0]); return; }
        q.fw.keys.translate(p.rkey(), p.va(), len, MttPorts.REMOTE_READ, pd(p), q.qpn, rsp -> {
            if (gen != q.generation) return;
            XlateRsp bad = Placement.failed(rsp);
            if (bad != null) {
                q.readsInProgress--;
                responderError(p, Packet.AETH_NAK_ACCESS, EventType.QP_ACCESS_ERR, null, 0, Vendor.REMOTE_XLATE + (int) bad.status());
                next.run();
                return;
            }
            q.placement.whenIssued(writesBefore, () -> q.placement.readPieces(rsp.stream().map(c -> new Piece(c.pa(), c.length(), null)).toList(),
                    (data, unread) -> {
                        if (gen != q.generation) return;
                        if (data == null) {
                            q.readsInProgress--;
                            responderError(p, Packet.AETH_NAK_OP, EventType.QP_REQ_ERR, null, 0, Vendor.DMA_FAILED);
                            next.run();
                            return;
                        }
                        respond.accept(data);
                    }));
        });
    }

    /**
     * A READ or atomic beyond max_dest_rd_atomic (including any when it is 0): QP_ACCESS_ERR at the
     * responder, REM_INV_REQ_ERR at the requester (docs/sources.md#responder-errors).
     */
    boolean tooManyReads(Packet p) {
        if (q.readsInProgress < q.maxDestRdAtomic) return false;
        responderError(p, Packet.AETH_NAK_INVALID, EventType.QP_ACCESS_ERR, null, 0, Vendor.TOO_MANY_READS);
        return true;
    }

    void handleAtomic(Packet p, Runnable next) {
        long gen = q.generation;
        long writesBefore = q.writeSeq; // as a READ, it reads after the writes of the requests before it
        if (tooManyReads(p)) { next.run(); return; }
        if ((p.va() & 7) != 0) {
            responderError(p, Packet.AETH_NAK_INVALID, EventType.QP_ACCESS_ERR, null, 0, Vendor.MISALIGNED_ATOMIC);
            next.run();
            return;
        }
        q.fw.keys.translate(p.rkey(), p.va(), 8, MttPorts.REMOTE_ATOMIC, pd(p), q.qpn, rsp -> {
            if (gen != q.generation) return;
            XlateRsp bad = Placement.failed(rsp);
            if (bad != null) {
                responderError(p, Packet.AETH_NAK_ACCESS, EventType.QP_ACCESS_ERR, null, 0, Vendor.REMOTE_XLATE + (int) bad.status());
                next.run();
                return;
            }
            long pa = rsp.get(0).pa();
            q.placement.whenIssued(writesBefore, () -> q.fw.atomics.run(pa, release -> {
                if (gen != q.generation) { release.run(); return; } // reset while it waited for the address
                readModifyWrite(p, pa, gen, release, next);
            }));
        });
    }

    /** An atomic's read and write of its 8 bytes at {@code pa}, holding the address until the write is issued. */
    void readModifyWrite(Packet p, long pa, long gen, Runnable release, Runnable next) {
        q.fw.adapter.port().dmaRead(pa, 8, r -> {
            if (gen != q.generation) { release.run(); return; }
            if (r.status() != PciPort.DmaStatus.OK) {
                release.run();
                responderError(p, Packet.AETH_NAK_OP, EventType.QP_REQ_ERR, null, 0, Vendor.DMA_FAILED);
                next.run();
                return;
            }
            long orig = BigEndian.get64(r.data(), 0);
            long now = p.op() == Op.CMP_SWAP ? (orig == p.compare() ? p.swapAdd() : orig) : orig + p.swapAdd();
            byte[] nb = new byte[8];
            BigEndian.put64(nb, 0, now);
            q.writesInFlight++;
            q.fw.adapter.port().dmaWrite(pa, nb, w -> { if (gen == q.generation) writeLanded(); });
            release.run();
            q.atomicReplay.put(p.psn(), orig);
            q.epsn = (q.epsn + 1) & 0xFFFFFF;
            q.msn = (q.msn + 1) & 0xFFFFFF;
            ack(Op.ATOMIC_ACK, p.psn(), Packet.AETH_ACK, orig);
            next.run();
        });
    }

    /** A repeated request (RC): SEND/WRITE are acknowledged again, a READ re-executes, an atomic replays its saved result. */
    void duplicate(Packet p, Runnable next) {
        if (p.op() == Op.READ_REQ) { handleRead(p, next, false); return; }
        if (p.op().isAtomic()) {
            Long orig = q.atomicReplay.get(p.psn());
            if (orig != null) ack(Op.ATOMIC_ACK, p.psn(), Packet.AETH_ACK, orig);
            next.run();
            return;
        }
        ack(Op.ACK, (q.epsn - 1) & 0xFFFFFF, Packet.AETH_ACK, 0);
        next.run();
    }

    /**
     * Sends an ACK or NAK. It waits behind the DMA writes still on their way to host memory, so an
     * acknowledged byte is always in memory when the requester completes.
     */
    void ack(Op op, int psn, int aeth, long orig) {
        if (!q.service.reliable) return;
        Packet a = new Packet(q.fw.lid(), q.dlid, op, q.destQpn, q.qpn, psn, false, false, 0, 0, 0, 0, 0, aeth, q.msn, orig, 0, 0, new byte[0], q.transport());
        if (q.writesInFlight > 0) q.deferredAcks.add(a);
        else sendResponse(a);
    }

    /** Responses (ACKs, NAKs, read responses) leave in the order they were made: each is built by the firmware in turn. */
    void sendResponse(Packet a) {
        long gen = q.generation;
        q.fw.exec(q.fw.packetCycles, () -> { if (gen == q.generation) q.fw.send(a); });
    }

    void writeLanded() {
        if (--q.writesInFlight == 0) {
            long gen = q.generation;
            while (!q.deferredAcks.isEmpty() && gen == q.generation) sendResponse(q.deferredAcks.poll());
        }
    }

    /**
     * A responder-side error (docs/sources.md#responder-errors): NAK to the requester (RC), an error CQE if a
     * receive WQE is in use or else an async event, and the QP goes to ERR.
     */
    void responderError(Packet p, int nak, EventType event, RecvRing.Wqe w, int syndrome, int vendor) {
        q.fw.counters.counter("Firmware.responder_errors").inc();
        if (q.service.reliable) ack(Op.ACK, p.psn(), nak, 0);
        if (w != null)
            q.fw.complete(recvCq(p), Cqe64.error(false, q.qpn, w.index(), 0, syndrome, vendor, p.va(), p.rkey(), p.psn(), xrcSrqn(p)), false);
        else if (event != null) q.fw.event(event, q.qpn);
        q.cur = null;
        q.toError();
    }

    // ------------------------------------------------------------------ receive queue

    /** The next receive WQE, from the SRQ or the QP's own ring, or null if there is none. */
    void takeRecvWqe(Consumer<RecvRing.Wqe> done) {
        if (q.srq != null) q.srq.take(done);
        else q.rq.take(done);
    }

    /** The next receive WQE for request {@code p}: an XRC target's from the XRC SRQ the request names. */
    void takeRecvWqe(Packet p, Consumer<RecvRing.Wqe> done) {
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

    /** The CQ request {@code p}'s receive completes to. */
    private Cq recvCq(Packet p) { return q.xrcd == 0 ? q.rcq : xrcSrq(p) == null ? null : xrcSrq(p).cq; }

    /** The PD request {@code p}'s keys are checked against. */
    private long pd(Packet p) { return q.xrcd == 0 ? q.pd : xrcSrq(p) == null ? -1 : xrcSrq(p).pd; }

    /** The XRC SRQ a receive completion names (0: not an XRC target's). */
    private long xrcSrqn(Packet p) { return q.xrcd == 0 ? 0 : p.xrcSrqn(); }

    void untakeRecvWqe(RecvRing.Wqe w) {
        if (q.srq != null) q.srq.ring.untake(w); else q.rq.untake(w);
    }
}
