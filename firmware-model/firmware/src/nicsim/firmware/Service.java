package nicsim.firmware;

import nicsim.abi.ServiceType;
import nicsim.fabric.Packet;

/**
 * What a QP's transport service changes in the roles (IBA 9.8): whether it is reliable (ACKs,
 * NAKs, retransmission, RNR waits), whether it is connected (one peer, set at RTR), and the
 * transport bits its packets carry. XRC is reliable connected like RC, between an initiator QP
 * (XRC_SEND: a send queue only) and a target QP (XRC_RECV: no queues; each request names the XRC
 * SRQ it is for). DC is reliable connected too, one connection at a time: a DC initiator connects
 * to the target each request names, and the target serves it from a pool of responders.
 */
enum Service {
    RC(Packet.RC, true, true), UC(Packet.UC, false, true), UD(Packet.UD, false, false), XRC(Packet.XRC, true, true),
            DC(Packet.DC, true, true);

    /** The BTH opcode's transport bits. */
    final int transport;
    final boolean reliable, connected;

    Service(int transport, boolean reliable, boolean connected) {
        this.transport = transport;
        this.reliable = reliable;
        this.connected = connected;
    }

    static Service of(ServiceType type) {
        return switch (type) {
            case RC -> RC;
            case UC -> UC;
            case UD -> UD;
            case XRC_SEND, XRC_RECV -> XRC;
            case DRIVER -> DC;
        };
    }
}
