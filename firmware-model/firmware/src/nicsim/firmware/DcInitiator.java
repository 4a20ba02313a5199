package nicsim.firmware;

import nicsim.abi.WqeFormat.Av;
import nicsim.fabric.Packet;
import nicsim.fabric.Packet.Op;
import nicsim.sim.Simulator;

/**
 * A DC initiator's connection (DCI; docs/sources.md#dc-transport).
 * Each work request names its target (LID, DCT number, DC access key). A request for the target the
 * DCI is connected to goes at once; one for another target waits until everything sent on the
 * current connection is acknowledged, then the DCI disconnects and connects to the new target. The
 * connect takes a PSN and is acknowledged like a request: in a half handshake the data follows it at
 * once, in a full handshake the data waits for its ACK. A DCI with nothing to send disconnects after
 * {@code dc.idle.timeout}.
 */
final class DcInitiator {
    private final Qp q;
    /** The target connected to (null: none), and the connect while it is unacknowledged. */
    private Av connected;
    private SendOp connecting;
    private boolean everConnected;
    private long lastUse;
    private Simulator.Event idleCheck;

    DcInitiator(Qp q) { this.q = q; }

    /** The DC access key of the current connection, which its requests carry. */
    long key() { return connected == null ? 0 : connected.dcKey(); }

    /**
     * Whether {@code op} may start now. A request for another target connects first, once the
     * current connection has nothing outstanding; local operations (binds, invalidations) need no
     * connection.
     */
    boolean ready(SendOp op) {
        Av to = op.w.av();
        if (to == null) return true;
        lastUse = q.fw.sim.now();
        if (connected != null && connected.equals(to))
            return !(q.fw.dc.fullHandshake() && connecting != null && !connecting.done());
        if (!q.outstanding.isEmpty()) return false; // the current connection drains first
        if (connected != null) disconnect();
        connect(to);
        return !q.fw.dc.fullHandshake();
    }

    private void connect(Av to) {
        connected = to;
        q.dlid = to.rlid();
        q.destQpn = (int) to.remoteQpn();
        int psn = q.requester.takePsn();
        Packet p = new Packet(q.fw.lid(), q.dlid, Op.DC_CONNECT, q.destQpn, q.qpn, psn, true, false,
                0, 0, 0, 0, 0, 0, 0, 0, 0, 0, new byte[0], Packet.DC).withDcKey(to.dcKey());
        connecting = SendOp.connect(psn, p);
        q.outstanding.add(connecting);
        q.count(FirmwareStat.DC_CONNECTS);
        if (everConnected) q.count(FirmwareStat.DC_RECONNECTS);
        everConnected = true;
        q.requester.transmit();
    }

    private void disconnect() {
        Packet p = new Packet(q.fw.lid(), q.dlid, Op.DC_DISCONNECT, q.destQpn, q.qpn, q.requester.nextPsn(),
                false, false, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                new byte[0], Packet.DC).withDcKey(connected.dcKey());
        connected = null;
        connecting = null;
        q.count(FirmwareStat.DC_DISCONNECTS);
        q.fw.exec(q.fw.packetCycles, q.live(() -> q.fw.send(p)));
    }

    /** The send queue has gone quiet: the connection is closed if nothing is sent on it for {@code dc.idle.timeout}. */
    void quiet() {
        if (connected == null || idleCheck != null) return;
        checkIdleAt(lastUse + q.fw.dc.idleTimeout());
    }

    private void checkIdleAt(long at) {
        idleCheck = q.fw.sim.schedule(Math.max(at, q.fw.sim.now()), q.live(() -> {
            idleCheck = null;
            if (connected == null || !q.outstanding.isEmpty() || !q.pending.isEmpty()) return;
            long due = lastUse + q.fw.dc.idleTimeout();
            if (q.fw.sim.now() < due) { checkIdleAt(due); return; }
            q.count(FirmwareStat.DC_IDLE_DISCONNECTS);
            disconnect();
        }));
    }

    void reset() {
        connected = null;
        connecting = null;
        everConnected = false;
        if (idleCheck != null) idleCheck.cancel();
        idleCheck = null;
    }
}
