package nicsim.serve;

import nicsim.sim.Simulator;

/**
 * One RDMA CM identifier (the kernel's rdma_id_private with its ib_cm_id): the address it is bound
 * to, where it is in resolving and connecting, and what the two sides told each other. Runs on the
 * simulator's thread only.
 */
final class CmId {
    /** Where an identifier is, from the kernel's RDMA CM and IB CM states together. */
    enum State {
        IDLE, ADDR_BOUND, ADDR_QUERY, ADDR_RESOLVED, ROUTE_RESOLVED, LISTEN,
        /** Active: REQ (or SIDR_REQ) sent. */
        CONNECT,
        /** Passive: REQ received, not answered yet. */
        REQ_RCVD,
        /** Passive: REP sent, RTU not come yet. */
        REP_SENT,
        /** Active: REP received, RTU not sent yet. */
        REP_RCVD,
        ESTABLISHED, DREQ_SENT, DREQ_RCVD, DISCONNECTED, REJECTED,
        /** Its adapter died (RDMA_CM_EVENT_DEVICE_REMOVAL given): it can only be destroyed. */
        DEVICE_REMOVAL
    }

    final int handle;
    final int ps, qpType;
    /**
     * The port space its port is taken in: its own, but for an AF_IB bind, the one its service ID names
     * (the kernel's cma_select_ib_ps: an RDMA_PS_IB identifier may bind in TCP's or UDP's).
     */
    int bindPs;
    long uid;
    RdmaCm.Channel channel;
    State state = State.IDLE;
    /** The node whose adapter it is bound to, or -1 (unbound, or bound to any address). */
    int node = -1;
    CmAbi.Addr src = CmAbi.Addr.NONE, dst = CmAbi.Addr.NONE;
    boolean bound, reuseAddr;
    /** Made for a connection request that came to a listener (the request's service ID is its own address's). */
    boolean passive;
    /**
     * RDMA_OPTION_ID_AFONLY as set before the bind (null: not set), and what the bind made of it: an IPv4
     * bind is always its family's only, an IPv6 one only when set (Linux's bindv6only is 0), as the kernel.
     */
    Boolean afonlyOption;
    boolean afonly;
    int backlog, backlogLeft;
    /** The connection: the peer's node, comm ID, QP and PSN; this side's; what each side offered. */
    int remoteNode = -1, localComm, remoteComm, remoteQpn, remotePsn, localQpn, localPsn;
    int respRes, initDepth, retry = 7, rnrRetry = 7, mtu;
    boolean srq;
    /** The ACK timeout set by RDMA_OPTION_ID_ACK_TIMEOUT, or -1 (the path's). */
    int ackTimeout = -1;
    /** A timer running (a REQ's answer, a REP's RTU, an address never answered), or null. */
    Simulator.Event timer;
    /**
     * Passive: how long a REP it sends waits for the RTU, the REQ's Local CM Response Timeout for each of its tries
     * (Linux's cm_req_handler takes both from the REQ), in ps.
     */
    long repWaitPicos;
    /** Wall time (System.nanoTime) a REQ or REP came that its program owes an answer (Pacer: it runs to it). */
    long owedSince;
    /** Events handed out to the program for it (rdma_destroy_id waits for as many acknowledgements). */
    int reported;

    CmId(int handle, RdmaCm.Channel channel, long uid, int ps, int qpType) {
        this.handle = handle;
        this.channel = channel;
        this.uid = uid;
        this.ps = ps;
        this.bindPs = ps;
        this.qpType = qpType;
    }

    /** Whether it is bound to an AF_IB address (no RDMA CM header on its requests: the kernel's cma_family). */
    boolean ib() { return src.ib() != null; }

    boolean ud() { return qpType == CmAbi.QPT_UD; }

    /** The node that takes its connection requests: its own, or its program's when bound to any address. */
    int listenNode() { return node >= 0 ? node : channel.node; }

    /**
     * Whether its program owes the peer the answer to a REQ (a REP or REJ) or to a REP (the RTU) that came less than
     * {@code limitNanos} of wall time before {@code now}: until it answers, the peer's CM timer runs.
     */
    boolean owesAnswer(long now, long limitNanos) {
        return (state == State.REQ_RCVD || state == State.REP_RCVD) && now - owedSince < limitNanos;
    }

    void cancelTimer() {
        if (timer != null) timer.cancel();
        timer = null;
    }

    @Override public String toString() { return "cm_id " + handle + " (" + state + ", " + src + " -> " + dst + ")"; }
}
