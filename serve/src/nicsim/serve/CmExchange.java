package nicsim.serve;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;
import nicsim.serve.CmLayout.CmaHdr;
import nicsim.verbs.AccessFlags;
import nicsim.verbs.Errno;
import nicsim.verbs.QpAttrMask;
import nicsim.verbs.VerbsException;

/**
 * The IB CM under RDMA CM: what connecting, accepting, rejecting and disconnecting send (REQ, REP,
 * RTU, REJ, DREQ, DREP; SIDR_REQ and SIDR_REP for UD), what each message that arrives does to an
 * identifier and which event it gives the program (the path and QP attributes each side then has
 * are {@link CmPaths}). Requests to an IP port space carry the RDMA CM's 36-byte header
 * (addresses and ports) ahead of the program's private data, as the kernel's do.
 */
final class CmExchange {
    /** How long a REQ or SIDR_REQ waits for its answer: the CM response timeout times 16 tries. */
    static final long REQ_WAIT_PICOS = cmWait(CmMad.CM_RESPONSE_TIMEOUT, CmMad.MAX_CM_RETRIES);
    private static final int CMA_HDR = CmaHdr.S.size;

    private final RdmaCm cm;
    /** Identifiers by their local communication ID, which messages name. */
    private final Map<Integer, CmId> comms = new HashMap<>();
    /**
     * Identifiers that were handed a REQ or REP to answer ({@link CmId#owesAnswer}), and maybe some that have answered
     * since (each walk drops those): the pacer looks here on every look, at nothing when no answer is owed.
     */
    private final Set<CmId> owing = new LinkedHashSet<>();
    private int nextComm = 0x1000;
    long badMads;

    CmExchange(RdmaCm cm) { this.cm = cm; }

    /** How long a CM message waits for its answer: 4.096 us x 2^{@code timeout} for each of 1 + {@code retries}. */
    static long cmWait(int timeout, int retries) { return 4_096_000L * (1L << timeout) * (retries + 1); }

    private int newComm(CmId id) {
        id.localComm = nextComm++;
        comms.put(id.localComm, id);
        return id.localComm;
    }

    /** A starting PSN drawn from the comm ID: the same run gives the same PSNs. */
    private static int psn(int comm) { return (int) ((comm * 0x9E3779B97F4A7C15L) >>> 40) & 0xffffff; }

    private void send(int from, int to, CmMad m) {
        if (RdmaCm.DEBUG) cm.log.println("CM node " + from + " sends " + m + " to " + to + " at " + cm.world.now());
        cm.agent(from).send(cm.agent(to).lid, cm.agent(to).qpn(), m.encode());
    }

    private int pathMtu(CmId id) { return CmPaths.pathMtu(cm, id); }

    private static byte[] priv(ByteBuffer b, int off, int len, int max, String what) {
        if (len > max) throw new VerbsException(Errno.EINVAL, what + ": private_data_len " + len
                + " is more than the " + max + " bytes the message carries");
        return Arrays.copyOfRange(b.array(), off, off + len);
    }

    /**
     * A REQ's private data to an IP port space: struct cma_hdr as the kernel's cma_format_hdr writes it (version 0,
     * the IP version in the high nibble of its byte, the source port; an IPv6 identifier's addresses whole,
     * IPv4-mapped here, an IPv4 one's in each address's last 4 bytes), then the program's {@code user} data.
     */
    static byte[] cmaHeader(CmAbi.Addr src, CmAbi.Addr dst, byte[] user) {
        ByteBuffer h = ByteBuffer.allocate(CMA_HDR + user.length);
        CmaHdr.CMA_VERSION.put8(h, CmaHdr.VERSION);
        CmaHdr.IP_VERSION.put8(h, (src.v6() ? 6 : 4) << 4);
        CmaHdr.PORT.put16(h, src.port());
        if (src.v6()) {
            CmaHdr.SRC_ADDR.putBytes(h, 0, CmAbi.V4_MAPPED, CmAbi.V4_MAPPED.length);
            CmaHdr.DST_ADDR.putBytes(h, 0, CmAbi.V4_MAPPED, CmAbi.V4_MAPPED.length);
        }
        CmaHdr.SRC_IP4.put32(h, src.ip());
        CmaHdr.DST_IP4.put32(h, dst.ip());
        h.put(CMA_HDR, user);
        return h.array();
    }

    /** What REQ and SIDR_REQ private data the program sees: what follows the RDMA CM header. */
    private static byte[] afterHeader(byte[] priv) {
        return Arrays.copyOfRange(priv, Math.min(CMA_HDR, priv.length), priv.length);
    }

    // ---- the program's commands ----

    Wire.Out connect(CmId id, ByteBuffer b, int off) {
        if (id.state != CmId.State.ROUTE_RESOLVED)
            throw new VerbsException(Errno.EINVAL, "connect: cm_id " + id.handle + " is " + id.state
                    + "; resolve its route first");
        // an AF_IB identifier's request carries no RDMA CM header (the kernel's cma_user_data_offset)
        int max = CmMad.privateSize(id.ud() ? CmMad.SIDR_REQ : CmMad.REQ) - (id.ib() ? 0 : CMA_HDR);
        byte[] user = priv(b, CmLayout.ConnParam.PRIVATE_DATA.at(off), CmLayout.ConnParam.PRIVATE_DATA_LEN.u8(b, off),
                max, "connect");
        CmMad m = new CmMad(id.ud() ? CmMad.SIDR_REQ : CmMad.REQ);
        m.localComm = newComm(id);
        m.tid = m.localComm;
        m.serviceId = CmPaths.serviceId(id);
        m.priv = id.ib() ? user : cmaHeader(id.src, id.dst, user);
        if (!id.ud()) connectedMode(id, b, off, m);
        send(id.node, id.remoteNode, m);
        id.state = CmId.State.CONNECT;
        cm.startTimer(id, cm.world.now() + REQ_WAIT_PICOS, () -> unanswered(id));
        return new Wire.Out();
    }

    /** The program's QP and what it chose (struct rdma_ucm_conn_param at {@code off}): QP number, SRQ, depths. */
    private static void takeConnParam(CmId id, ByteBuffer b, int off) {
        id.localQpn = CmLayout.ConnParam.QP_NUM.u32(b, off);
        id.srq = CmLayout.ConnParam.SRQ.u8(b, off) != 0;
        id.respRes = CmLayout.ConnParam.RESPONDER_RESOURCES.u8(b, off);
        id.initDepth = CmLayout.ConnParam.INITIATOR_DEPTH.u8(b, off);
    }

    /** A REQ's connected-mode fields: the program's QP and its choices (rdma_conn_param), the path's. */
    private void connectedMode(CmId id, ByteBuffer b, int off, CmMad m) {
        takeConnParam(id, b, off);
        id.localPsn = psn(id.localComm);
        id.retry = CmLayout.ConnParam.RETRY_COUNT.u8(b, off) & 7;
        id.rnrRetry = CmLayout.ConnParam.RNR_RETRY_COUNT.u8(b, off) & 7;
        id.mtu = pathMtu(id);
        m.qpn = id.localQpn;
        m.psn = id.localPsn;
        m.respRes = id.respRes;
        m.initDepth = id.initDepth;
        m.retry = id.retry;
        m.rnrRetry = id.rnrRetry;
        m.srq = id.srq;
        m.uc = id.qpType == CmAbi.QPT_UC;
        m.xrc = id.qpType == CmAbi.QPT_XRC_INI;
        m.mtu = id.mtu;
        m.caGuid = DeviceQueries.nodeGuid(id.node);
        m.localLid = cm.agent(id.node).lid;
        m.remoteLid = cm.agent(id.remoteNode).lid;
        m.ackTimeout = CmPaths.PACKET_LIFE + 1;
    }

    /**
     * See {@link RdmaCm#answerHorizon}. A real CM acknowledges a REQ it hands to a program that has not answered yet
     * with an MRA, which stretches the requester's wait by the service timeout (Linux's RDMA CM asks for 2^24 x 4.096
     * us): a server gets its requester's patience in its own time. Here the server's time is the simulation's, which
     * runs ahead of the wall clock while its threads sleep between reading the REQ and accepting (Ceph's monitor,
     * docs/attach.md R16), so the requester's REQ timeout waits for the answer in wall time instead, up to
     * {@code limitNanos}, and simulated time moves freely up to that timeout meanwhile. A program that never answers
     * lets it run out once the limit passes; one that ends takes its identifiers with it, and the timeout runs out at
     * once. A SIDR_REQ (UD) waits the same way, though a real CM has no MRA for it.
     */
    long answerHorizon(long now, long limitNanos) {
        long horizon = Long.MAX_VALUE;
        for (Iterator<CmId> it = owing(now, limitNanos); it.hasNext(); ) {
            CmId c = it.next();
            // the peer waits for the answer: a requester for its REP, a replier for its RTU
            CmId.State waits = c.state == CmId.State.REQ_RCVD ? CmId.State.CONNECT : CmId.State.REP_SENT;
            CmId peer = comms.get(c.remoteComm);
            if (peer != null && peer.node == c.remoteNode && peer.state == waits && peer.timer != null
                    && !peer.timer.cancelled())
                horizon = Math.min(horizon, peer.timer.time());
        }
        return horizon;
    }

    /** Whether program {@code p} owes a peer an answer ({@link CmId#owesAnswer}). */
    boolean owes(Program p, long now, long limitNanos) {
        for (Iterator<CmId> it = owing(now, limitNanos); it.hasNext(); )
            if (it.next().channel.program == p) return true;
        return false;
    }

    /** The identifiers that owe an answer now, those that no longer do dropped from {@link #owing} first. */
    private Iterator<CmId> owing(long now, long limitNanos) {
        if (owing.isEmpty()) return owing.iterator();
        owing.removeIf(c -> !c.owesAnswer(now, limitNanos) || !cm.ids.containsKey(c.handle));
        return owing.iterator();
    }

    /** The REQ's wait ran out with no answer: UNREACHABLE, ETIMEDOUT. */
    private void unanswered(CmId id) {
        if (id.state != CmId.State.CONNECT || !cm.ids.containsKey(id.handle)) return;
        id.state = CmId.State.ROUTE_RESOLVED;
        comms.remove(id.localComm);
        cm.queue(id, null, CmAbi.event(id.uid, id.handle, CmAbi.UNREACHABLE, -Errno.ETIMEDOUT));
    }

    Wire.Out accept(CmId id, long uid, ByteBuffer b, int off) {
        int len = CmLayout.ConnParam.PRIVATE_DATA_LEN.u8(b, off), at = CmLayout.ConnParam.PRIVATE_DATA.at(off);
        switch (id.state) {
            case REQ_RCVD -> {
                if (uid != 0) id.uid = uid;
                byte[] user = priv(b, at, len, CmMad.privateSize(id.ud() ? CmMad.SIDR_REP : CmMad.REP), "accept");
                if (id.ud()) sidrAccept(id, b, off, user); else repAccept(id, b, off, user);
            }
            case REP_RCVD -> {
                CmMad m = new CmMad(CmMad.RTU);
                m.localComm = id.localComm;
                m.remoteComm = id.remoteComm;
                m.priv = priv(b, at, len, CmMad.privateSize(CmMad.RTU), "accept");
                send(id.node, id.remoteNode, m);
                id.state = CmId.State.ESTABLISHED;
            }
            default -> throw new VerbsException(Errno.EINVAL, "accept: cm_id " + id.handle + " is " + id.state
                    + ", with no connection request or response to answer");
        }
        return new Wire.Out();
    }

    /** A SIDR_REP accepting the request: the program's UD QP and its Q_Key. */
    private void sidrAccept(CmId id, ByteBuffer b, int off, byte[] user) {
        CmMad m = new CmMad(CmMad.SIDR_REP);
        m.remoteComm = id.remoteComm;
        m.qpn = CmLayout.ConnParam.QP_NUM.u32(b, off);
        m.qkey = CmPaths.udQkey(id, CmLayout.ConnParam.QKEY.u32(b, off));
        m.serviceId = CmPaths.serviceId(id);
        m.priv = user;
        send(id.node, id.remoteNode, m);
        id.state = CmId.State.ESTABLISHED;
    }

    /** A REP accepting the request: the program's QP and its choices. */
    private void repAccept(CmId id, ByteBuffer b, int off, byte[] user) {
        takeConnParam(id, b, off);
        CmMad m = new CmMad(CmMad.REP);
        m.localComm = id.localComm;
        m.remoteComm = id.remoteComm;
        m.tid = id.remoteComm;
        m.qpn = id.localQpn;
        m.psn = id.localPsn;
        m.respRes = id.respRes;
        m.initDepth = id.initDepth;
        m.rnrRetry = CmLayout.ConnParam.RNR_RETRY_COUNT.u8(b, off) & 7;
        m.srq = id.srq;
        m.caGuid = DeviceQueries.nodeGuid(id.node);
        m.priv = user;
        send(id.node, id.remoteNode, m);
        id.state = CmId.State.REP_SENT;
        cm.startTimer(id, cm.world.now() + id.repWaitPicos, () -> unacknowledged(id));
    }

    /**
     * The REP's wait for its RTU ran out, the CM's tries of it spent: UNREACHABLE, ETIMEDOUT, as Linux's RDMA CM turns
     * the IB CM's REP_ERROR. Nothing goes to the peer (the kernel's cm_reset_to_idle); a late RTU finds no one.
     */
    private void unacknowledged(CmId id) {
        if (id.state != CmId.State.REP_SENT || !cm.ids.containsKey(id.handle)) return;
        id.state = CmId.State.REJECTED;
        comms.remove(id.localComm);
        cm.queue(id, null, CmAbi.event(id.uid, id.handle, CmAbi.UNREACHABLE, -Errno.ETIMEDOUT));
    }

    Wire.Out reject(CmId id, byte[] user, int reason) {
        if (id.state == CmId.State.REQ_RCVD && id.ud()) {
            sidrReject(id, CmMad.SIDR_REJECT, user);
        } else if (id.state == CmId.State.REQ_RCVD || id.state == CmId.State.REP_RCVD) {
            if (user.length > CmMad.privateSize(CmMad.REJ))
                throw new VerbsException(Errno.EINVAL, "reject: private_data_len " + user.length + " is more than 148");
            rej(id.node, id.remoteNode, id.localComm, id.remoteComm, reason == 0 ? CmMad.REJ_CONSUMER_DEFINED : reason,
                    id.state == CmId.State.REQ_RCVD ? 0 : 1, user);
        } else {
            throw new VerbsException(Errno.EINVAL, "reject: cm_id " + id.handle + " is " + id.state
                    + ", with nothing to reject");
        }
        id.state = CmId.State.REJECTED;
        return new Wire.Out();
    }

    private void sidrReject(CmId id, int status, byte[] user) {
        CmMad m = new CmMad(CmMad.SIDR_REP);
        m.remoteComm = id.remoteComm;
        m.status = status;
        m.priv = user;
        send(id.node, id.remoteNode, m);
    }

    private void rej(int from, int to, int local, int remote, int reason, int msg, byte[] user) {
        CmMad m = new CmMad(CmMad.REJ);
        m.localComm = local;
        m.remoteComm = remote;
        m.reason = reason;
        m.status = msg;
        m.priv = user;
        send(from, to, m);
    }

    private void dreqOrDrep(CmId id, int attr) {
        CmMad m = new CmMad(attr);
        m.localComm = id.localComm;
        m.remoteComm = id.remoteComm;
        m.qpn = id.remoteQpn;
        send(id.node, id.remoteNode, m);
    }

    Wire.Out disconnect(CmId id) {
        if (id.ud()) throw new VerbsException(Errno.EINVAL, "disconnect: cm_id " + id.handle
                + " is UD: nothing is connected");
        switch (id.state) {
            case ESTABLISHED -> {
                dreqOrDrep(id, CmMad.DREQ);
                id.state = CmId.State.DREQ_SENT;
            }
            case DREQ_RCVD -> {
                dreqOrDrep(id, CmMad.DREP);
                id.state = CmId.State.DISCONNECTED;
            }
            default -> throw new VerbsException(Errno.EINVAL, "disconnect: cm_id " + id.handle + " is " + id.state
                    + ", not connected");
        }
        return new Wire.Out();
    }

    Wire.Out notify(CmId id) {
        if (id.state == CmId.State.REP_SENT) established(id, new byte[0]);
        return new Wire.Out();
    }

    private void established(CmId id, byte[] priv) {
        id.cancelTimer();
        id.state = CmId.State.ESTABLISHED;
        ByteBuffer ev = CmAbi.event(id.uid, id.handle, CmAbi.ESTABLISHED, 0);
        CmAbi.connParam(ev, CmAbi.PARAM, id.remoteQpn, priv, id.respRes, id.initDepth, id.retry, id.rnrRetry, id.srq);
        cm.queue(id, null, ev);
    }

    /** {@code id}'s device went: MADs for it are no longer its, and nothing is sent for it (the adapter is dead). */
    void forget(CmId id) {
        comms.remove(id.localComm);
        owing.remove(id);
    }

    /** {@code id} is being destroyed: its peer hears of it as from the kernel's ib_destroy_cm_id. */
    void leaving(CmId id) {
        comms.remove(id.localComm);
        owing.remove(id);
        switch (id.state) {
            case CONNECT -> {
                if (!id.ud()) rej(id.node, id.remoteNode, id.localComm, 0, CmMad.REJ_TIMEOUT, 0, new byte[0]);
            }
            case REQ_RCVD -> {
                if (id.ud()) sidrReject(id, CmMad.SIDR_REJECT, new byte[0]);
                else rej(id.node, id.remoteNode, id.localComm, id.remoteComm, CmMad.REJ_CONSUMER_DEFINED, 0,
                        new byte[0]);
            }
            case REP_SENT, REP_RCVD ->
                    rej(id.node, id.remoteNode, id.localComm, id.remoteComm, CmMad.REJ_CONSUMER_DEFINED, 1,
                            new byte[0]);
            case ESTABLISHED -> {
                if (!id.ud()) dreqOrDrep(id, CmMad.DREQ);
            }
            case DREQ_RCVD -> dreqOrDrep(id, CmMad.DREP);
            default -> { }
        }
    }

    // ---- what arrives ----

    /** A MAD that came to node {@code node}'s agent. */
    void received(int node, CmAgent.Received r) {
        CmMad m;
        try {
            m = CmMad.decode(r.mad());
        } catch (IllegalArgumentException e) {
            badMads++;
            cm.log.println("nicsim serve: node " + node + "'s CM dropped a MAD: " + e.getMessage());
            return;
        }
        int from = nodeOfLid(r.slid());
        if (RdmaCm.DEBUG) cm.log.println("CM node " + node + " got " + m + " from " + from + " slid " + r.slid()
                + " at " + cm.world.now());
        if (from < 0) {
            badMads++;
            return;
        }
        switch (m.attr) {
            case CmMad.REQ, CmMad.SIDR_REQ -> request(node, from, m);
            default -> answer(node, from, m);
        }
    }

    private int nodeOfLid(int lid) {
        for (int n = 0; n < cm.world.hosts().size(); n++) if (cm.agent(n).lid == lid) return n;
        return -1;
    }

    private void request(int node, int from, CmMad m) {
        boolean ud = m.attr == CmMad.SIDR_REQ;
        ByteBuffer h = ByteBuffer.wrap(Arrays.copyOf(m.priv, Math.max(m.priv.length, CMA_HDR)));
        // the RDMA CM header's IP version (4 or 6); an AF_IB identifier's request has none (0)
        int nibble = CmaHdr.IP_VERSION.u8(h) >>> 4, version = nibble == 4 || nibble == 6 ? nibble : 0;
        int srcIp = version == 0 ? RdmaCm.ip(from) : CmaHdr.SRC_IP4.u32(h);
        int srcPort = version == 0 ? 0 : CmaHdr.PORT.u16(h);
        int dstIp = version == 0 ? RdmaCm.ip(node) : CmaHdr.DST_IP4.u32(h);
        int ps = (int) (m.serviceId >>> 16) & 0xffff, port = (int) m.serviceId & 0xffff;
        CmId l = cm.listener(node, ps, port, dstIp, version);
        if (l != null && (l.ud() != ud || !ud && l.qpType != requested(m))) l = null; // cma_check_req_qp_type
        if (l == null || l.backlogLeft <= 0) {
            if (RdmaCm.DEBUG) cm.log.printf("CM node %d refuses a REQ for port space 0x%x, port %d, IP version %d:"
                    + " %s%n", node, ps, port, version, l == null ? "no listener" : "its backlog is full");
            refuse(node, from, m, l == null);
            return;
        }
        CmId c = cm.child(l);
        c.node = node;
        c.passive = true;
        if (l.ib()) { // the kernel's cma_save_ib_info: the ports' GIDs, the request's service ID
            c.src = new CmAbi.Addr(RdmaCm.ip(node), port, false, l.src.ib().withGid(cm.ib.gid(node))
                    .withSid(m.serviceId, -1L));
            c.dst = new CmAbi.Addr(RdmaCm.ip(from), 0, false, new CmAbi.Ib(0, 0, 0xffff, 0, 0, 0, 0)
                    .withGid(cm.ib.gid(from)));
        } else { // the address the request was sent to, as the kernel's child takes it from the RDMA CM header
            c.src = new CmAbi.Addr(RdmaCm.loopback(dstIp) ? dstIp : RdmaCm.ip(node), port, l.src.v6());
            c.dst = new CmAbi.Addr(srcIp, srcPort, l.src.v6());
        }
        c.state = CmId.State.REQ_RCVD;
        c.owedSince = System.nanoTime();
        owing.add(c);
        c.remoteNode = from;
        c.remoteComm = m.localComm;
        c.repWaitPicos = cmWait(m.localCmTimeout, m.maxCmRetries);
        newComm(c);
        c.localPsn = psn(c.localComm); // librdmacm moves the QP to RTS before it accepts: the PSN is known from here
        l.backlogLeft--;
        ByteBuffer ev = CmAbi.event(l.uid, c.handle, CmAbi.CONNECT_REQUEST, 0);
        if (ud) {
            CmAbi.udParam(ev, CmAbi.PARAM, 0, 0, 0, l.ib() ? m.priv : afterHeader(m.priv));
        } else {
            c.remoteQpn = m.qpn;
            c.remotePsn = m.psn;
            c.respRes = m.initDepth;
            c.initDepth = m.respRes;
            c.retry = m.retry;
            c.rnrRetry = m.rnrRetry;
            c.srq = m.srq;
            c.mtu = Math.min(m.mtu, pathMtu(c));
            CmAbi.connParam(ev, CmAbi.PARAM, m.qpn, l.ib() ? m.priv : afterHeader(m.priv), c.respRes, c.initDepth,
                    c.retry, c.rnrRetry, c.srq);
        }
        cm.queue(l, c, ev);
    }

    /** The QP type a REQ asks its listener to have: an XRC initiator's is answered by an XRC target. */
    private static int requested(CmMad m) {
        return m.xrc ? CmAbi.QPT_XRC_TGT : m.uc ? CmAbi.QPT_UC : CmAbi.QPT_RC;
    }

    /** A request no one listens for ({@code unknown}), or whose listener's backlog is full. */
    private void refuse(int node, int from, CmMad m, boolean unknown) {
        if (m.attr == CmMad.SIDR_REQ) {
            CmMad rep = new CmMad(CmMad.SIDR_REP);
            rep.remoteComm = m.localComm;
            rep.status = CmMad.SIDR_UNSUPPORTED;
            send(node, from, rep);
        } else {
            rej(node, from, 0, m.localComm, unknown ? CmMad.REJ_INVALID_SERVICE_ID : CmMad.REJ_CONSUMER_DEFINED, 0,
                    new byte[0]);
        }
    }

    private void answer(int node, int from, CmMad m) {
        CmId id = comms.get(m.remoteComm);
        if (id != null && id.node != node) id = null;
        // a DREQ for nothing here is answered all the same
        if (m.attr == CmMad.DREQ && (id == null || !connected(id))) {
            CmMad drep = new CmMad(CmMad.DREP);
            drep.localComm = m.remoteComm;
            drep.remoteComm = m.localComm;
            send(node, from, drep);
            if (id == null || id.state != CmId.State.DREQ_SENT) return;
            id.state = CmId.State.DISCONNECTED;
            disconnected(id, m.priv);
            return;
        }
        if (id == null) return; // stale: the identifier went meanwhile
        switch (m.attr) {
            case CmMad.REP -> reply(id, m);
            case CmMad.RTU -> {
                if (id.state == CmId.State.REP_SENT) established(id, m.priv);
            }
            case CmMad.REJ -> rejected(id, m);
            case CmMad.DREQ -> {
                id.state = CmId.State.DREQ_RCVD;
                disconnected(id, m.priv);
            }
            case CmMad.DREP -> {
                if (id.state != CmId.State.DREQ_SENT) return;
                id.state = CmId.State.DISCONNECTED;
                disconnected(id, m.priv);
            }
            case CmMad.SIDR_REP -> sidrReply(id, from, m);
            default -> badMads++;
        }
    }

    /** A REP to the REQ {@code id} sent: CONNECT_RESPONSE, with what the passive side chose. */
    private void reply(CmId id, CmMad m) {
        if (id.state != CmId.State.CONNECT) return;
        id.cancelTimer();
        id.remoteComm = m.localComm;
        id.remoteQpn = m.qpn;
        id.remotePsn = m.psn;
        id.initDepth = Math.min(id.initDepth, m.respRes);
        id.rnrRetry = m.rnrRetry;
        id.state = CmId.State.REP_RCVD;
        id.owedSince = System.nanoTime();
        owing.add(id);
        ByteBuffer ev = CmAbi.event(id.uid, id.handle, CmAbi.CONNECT_RESPONSE, 0);
        CmAbi.connParam(ev, CmAbi.PARAM, m.qpn, m.priv, m.initDepth, m.respRes, id.retry, m.rnrRetry, m.srq);
        cm.queue(id, null, ev);
    }

    private void rejected(CmId id, CmMad m) {
        if (id.state != CmId.State.CONNECT && id.state != CmId.State.REP_SENT && id.state != CmId.State.REP_RCVD)
            return;
        id.cancelTimer();
        id.state = CmId.State.REJECTED;
        ByteBuffer ev = CmAbi.event(id.uid, id.handle, CmAbi.REJECTED, m.reason);
        CmAbi.connParam(ev, CmAbi.PARAM, 0, m.priv, 0, 0, 0, 0, false);
        cm.queue(id, null, ev);
    }

    /** A SIDR_REP to the SIDR_REQ {@code id} sent: ESTABLISHED with the remote QP and its Q_Key, or UNREACHABLE. */
    private void sidrReply(CmId id, int from, CmMad m) {
        if (id.state != CmId.State.CONNECT || !id.ud()) return;
        id.cancelTimer();
        comms.remove(id.localComm);
        boolean ok = m.status == 0;
        id.state = ok ? CmId.State.ESTABLISHED : CmId.State.ROUTE_RESOLVED;
        ByteBuffer ev = CmAbi.event(id.uid, id.handle, ok ? CmAbi.ESTABLISHED : CmAbi.UNREACHABLE, m.status);
        CmAbi.udParam(ev, CmAbi.PARAM, m.qpn, m.qkey, ok ? cm.agent(from).lid : 0, m.priv);
        cm.queue(id, null, ev);
    }

    private static boolean connected(CmId id) {
        return switch (id.state) {
            case ESTABLISHED, REP_SENT, REP_RCVD -> true;
            default -> false;
        };
    }

    private void disconnected(CmId id, byte[] priv) {
        ByteBuffer ev = CmAbi.event(id.uid, id.handle, CmAbi.DISCONNECTED, 0);
        CmAbi.connParam(ev, CmAbi.PARAM, 0, priv, 0, 0, 0, 0, false);
        cm.queue(id, null, ev);
    }
}
