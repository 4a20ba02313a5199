package nicsim.serve;

import nicsim.fabric.Mad;
import nicsim.serve.CmFields.Drep;
import nicsim.serve.CmFields.Dreq;
import nicsim.serve.CmFields.Rej;
import nicsim.serve.CmFields.Rep;
import nicsim.serve.CmFields.Req;
import nicsim.serve.CmFields.Rtu;
import nicsim.serve.CmFields.SidrRep;
import nicsim.serve.CmFields.SidrReq;

/**
 * One communication-management message as the IB CM sends it: a 256-byte MAD of management class
 * 0x07 (CM), class version 2, method SEND, whose attribute says which message it is. The fields sit
 * where the InfiniBand specification (volume 1, chapter 12) places them, big-endian, so a trace of
 * the fabric shows real CM traffic; the private data field always travels whole, and the receiver
 * reports all of it, as the kernel's CM does. The fields are read and written only through their
 * declarations in {@link CmFields}.
 */
final class CmMad {
    static final int SIZE = Mad.SIZE, CLASS_VERSION = 2;
    static final int REQ = Req.ATTR, REJ = Rej.ATTR, REP = Rep.ATTR, RTU = Rtu.ATTR, DREQ = Dreq.ATTR, DREP = Drep.ATTR,
            SIDR_REQ = SidrReq.ATTR, SIDR_REP = SidrRep.ATTR;
    /** REJ reasons (IB spec table 112) the CM gives. */
    static final int REJ_TIMEOUT = 1, REJ_INVALID_SERVICE_ID = 8, REJ_CONSUMER_DEFINED = 28;
    /** SIDR_REP status: the service is not there, or it was refused. */
    static final int SIDR_UNSUPPORTED = 1, SIDR_REJECT = 2;
    /** The CM response timeout the REQ carries (4.096 us x 2^20), as the kernel's RDMA CM sends it. */
    static final int CM_RESPONSE_TIMEOUT = 20;
    /** REQ's MaxCMRetries, as the kernel's CM sends it. */
    static final int MAX_CM_RETRIES = 15;
    /** REQ's Transport Service Type: RC, UC, or 3 with Extended Transport Type 1, XRC (IBA table 106). */
    static final int TRANSPORT_RC = 0, TRANSPORT_UC = 1, TRANSPORT_XRC = 3, EXTENDED_XRC = 1;

    int attr;
    long tid;
    int localComm, remoteComm;
    long serviceId, caGuid;
    int qkey, qpn, psn, respRes, initDepth, retry, rnrRetry, mtu, pkey = 0xffff;
    boolean srq, uc;
    /** A REQ from an XRC initiator: transport service type 3 with extended transport type 1 (XRC). */
    boolean xrc;
    int reason, status;
    /** REQ's primary path: the sender's LID and the receiver's, and the ACK timeout it asks for. */
    int localLid, remoteLid, ackTimeout;
    /** REQ's Local CM Response Timeout (4.096 us x 2^n: how long its sender takes to answer a REP) and its tries. */
    int localCmTimeout = CM_RESPONSE_TIMEOUT, maxCmRetries = MAX_CM_RETRIES;
    byte[] priv = new byte[0];

    CmMad(int attr) { this.attr = attr; }

    /** The private data's size in message {@code attr}: what its fields leave of the MAD. */
    static int privateSize(int attr) { return CmFields.of(attr).privateData().size(); }

    static String name(int attr) {
        for (CmFields.Message m : CmFields.all()) if (m.attr == attr) return m.name;
        return "0x" + Integer.toHexString(attr);
    }

    byte[] encode() {
        CmFields.Message message = CmFields.of(attr);
        byte[] b = Mad.request(Mad.CLASS_CM, CLASS_VERSION, Mad.SEND, tid, attr, 0);
        switch (attr) {
            case REQ -> encodeReq(b);
            case REP -> encodeRep(b);
            case RTU -> {
                Rtu.LOCAL_COMM_ID.put(b, localComm);
                Rtu.REMOTE_COMM_ID.put(b, remoteComm);
            }
            case DREP -> {
                Drep.LOCAL_COMM_ID.put(b, localComm);
                Drep.REMOTE_COMM_ID.put(b, remoteComm);
            }
            case REJ -> {
                Rej.LOCAL_COMM_ID.put(b, localComm);
                Rej.REMOTE_COMM_ID.put(b, remoteComm);
                Rej.MESSAGE_REJECTED.put(b, status);
                Rej.REASON.put(b, reason);
            }
            case DREQ -> {
                Dreq.LOCAL_COMM_ID.put(b, localComm);
                Dreq.REMOTE_COMM_ID.put(b, remoteComm);
                Dreq.REMOTE_QPN_EECN.put(b, qpn);
            }
            case SIDR_REQ -> {
                SidrReq.REQUESTID.put(b, localComm);
                SidrReq.PARTITION_KEY.put(b, pkey);
                SidrReq.SERVICEID.put(b, serviceId);
            }
            case SIDR_REP -> {
                SidrRep.REQUESTID.put(b, remoteComm);
                SidrRep.STATUS.put(b, status);
                SidrRep.QPN.put(b, qpn);
                SidrRep.SERVICEID.put(b, serviceId);
                SidrRep.Q_KEY.put(b, qkey);
            }
            default -> throw new IllegalArgumentException("CM attribute 0x" + Integer.toHexString(attr));
        }
        message.privateData().putBytes(b, priv);
        return b;
    }

    /**
     * A REQ: the sender's QP, its starting PSN and choices, the primary path's LIDs. The CM response
     * timeouts, the retries of the CM's own and an XRC initiator's transport types are the kernel's.
     */
    private void encodeReq(byte[] b) {
        Req.LOCAL_COMM_ID.put(b, localComm);
        Req.SERVICE_ID.put(b, serviceId);
        Req.LOCAL_CA_GUID.put(b, caGuid);
        Req.LOCAL_Q_KEY.put(b, qkey);
        Req.LOCAL_QPN.put(b, qpn);
        Req.RESPONDER_RESOURCES.put(b, respRes);
        Req.INITIATOR_DEPTH.put(b, initDepth);
        Req.REMOTE_CM_RESPONSE_TIMEOUT.put(b, CM_RESPONSE_TIMEOUT);
        Req.TRANSPORT_SERVICE_TYPE.put(b, xrc ? TRANSPORT_XRC : uc ? TRANSPORT_UC : TRANSPORT_RC);
        Req.STARTING_PSN.put(b, psn);
        Req.LOCAL_CM_RESPONSE_TIMEOUT.put(b, localCmTimeout);
        Req.RETRY_COUNT.put(b, retry);
        Req.PARTITION_KEY.put(b, pkey);
        Req.PATH_PACKET_PAYLOAD_MTU.put(b, mtu);
        Req.RNR_RETRY_COUNT.put(b, rnrRetry);
        Req.MAX_CM_RETRIES.put(b, maxCmRetries);
        Req.SRQ.put(b, srq ? 1 : 0);
        Req.EXTENDED_TRANSPORT_TYPE.put(b, xrc ? EXTENDED_XRC : 0);
        Req.PRIMARY_LOCAL_PORT_LID.put(b, localLid);
        Req.PRIMARY_REMOTE_PORT_LID.put(b, remoteLid);
        Req.PRIMARY_LOCAL_ACK_TIMEOUT.put(b, ackTimeout);
    }

    /** A REP: the passive side's QP, its PSN and choices. */
    private void encodeRep(byte[] b) {
        Rep.LOCAL_COMM_ID.put(b, localComm);
        Rep.REMOTE_COMM_ID.put(b, remoteComm);
        Rep.LOCAL_Q_KEY.put(b, qkey);
        Rep.LOCAL_QPN.put(b, qpn);
        Rep.STARTING_PSN.put(b, psn);
        Rep.RESPONDER_RESOURCES.put(b, respRes);
        Rep.INITIATOR_DEPTH.put(b, initDepth);
        Rep.RNR_RETRY_COUNT.put(b, rnrRetry);
        Rep.SRQ.put(b, srq ? 1 : 0);
        Rep.LOCAL_CA_GUID.put(b, caGuid);
    }

    /** The message in {@code mad}; IllegalArgumentException if it is not a CM MAD this CM knows. */
    static CmMad decode(byte[] mad) {
        if (mad.length < SIZE || Mad.mgmtClass(mad) != Mad.CLASS_CM || Mad.classVersion(mad) != CLASS_VERSION)
            throw new IllegalArgumentException("not a CM MAD (class 0x" + Integer.toHexString(Mad.mgmtClass(mad))
                    + ")");
        CmMad m = new CmMad(Mad.attr(mad));
        CmFields.Message message = CmFields.of(m.attr);
        m.tid = Mad.tid(mad);
        switch (m.attr) {
            case REQ -> m.decodeReq(mad);
            case REP -> m.decodeRep(mad);
            case RTU -> {
                m.localComm = Rtu.LOCAL_COMM_ID.u32(mad);
                m.remoteComm = Rtu.REMOTE_COMM_ID.u32(mad);
            }
            case DREP -> {
                m.localComm = Drep.LOCAL_COMM_ID.u32(mad);
                m.remoteComm = Drep.REMOTE_COMM_ID.u32(mad);
            }
            case REJ -> {
                m.localComm = Rej.LOCAL_COMM_ID.u32(mad);
                m.remoteComm = Rej.REMOTE_COMM_ID.u32(mad);
                m.status = Rej.MESSAGE_REJECTED.u32(mad);
                m.reason = Rej.REASON.u32(mad);
            }
            case DREQ -> {
                m.localComm = Dreq.LOCAL_COMM_ID.u32(mad);
                m.remoteComm = Dreq.REMOTE_COMM_ID.u32(mad);
                m.qpn = Dreq.REMOTE_QPN_EECN.u32(mad);
            }
            case SIDR_REQ -> {
                m.localComm = SidrReq.REQUESTID.u32(mad);
                m.pkey = SidrReq.PARTITION_KEY.u32(mad);
                m.serviceId = SidrReq.SERVICEID.get(mad);
            }
            case SIDR_REP -> {
                m.remoteComm = SidrRep.REQUESTID.u32(mad);
                m.status = SidrRep.STATUS.u32(mad);
                m.qpn = SidrRep.QPN.u32(mad);
                m.serviceId = SidrRep.SERVICEID.get(mad);
                m.qkey = SidrRep.Q_KEY.u32(mad);
            }
            default -> throw new IllegalArgumentException("CM attribute 0x" + Integer.toHexString(m.attr));
        }
        m.priv = message.privateData().bytes(mad);
        return m;
    }

    private void decodeReq(byte[] b) {
        localComm = Req.LOCAL_COMM_ID.u32(b);
        serviceId = Req.SERVICE_ID.get(b);
        caGuid = Req.LOCAL_CA_GUID.get(b);
        qkey = Req.LOCAL_Q_KEY.u32(b);
        qpn = Req.LOCAL_QPN.u32(b);
        respRes = Req.RESPONDER_RESOURCES.u32(b);
        initDepth = Req.INITIATOR_DEPTH.u32(b);
        int transport = Req.TRANSPORT_SERVICE_TYPE.u32(b);
        uc = transport == TRANSPORT_UC;
        xrc = transport == TRANSPORT_XRC && Req.EXTENDED_TRANSPORT_TYPE.u32(b) == EXTENDED_XRC;
        psn = Req.STARTING_PSN.u32(b);
        retry = Req.RETRY_COUNT.u32(b);
        pkey = Req.PARTITION_KEY.u32(b);
        mtu = Req.PATH_PACKET_PAYLOAD_MTU.u32(b);
        rnrRetry = Req.RNR_RETRY_COUNT.u32(b);
        srq = Req.SRQ.u32(b) != 0;
        localLid = Req.PRIMARY_LOCAL_PORT_LID.u32(b);
        remoteLid = Req.PRIMARY_REMOTE_PORT_LID.u32(b);
        ackTimeout = Req.PRIMARY_LOCAL_ACK_TIMEOUT.u32(b);
        localCmTimeout = Req.LOCAL_CM_RESPONSE_TIMEOUT.u32(b);
        maxCmRetries = Req.MAX_CM_RETRIES.u32(b);
    }

    private void decodeRep(byte[] b) {
        localComm = Rep.LOCAL_COMM_ID.u32(b);
        remoteComm = Rep.REMOTE_COMM_ID.u32(b);
        qkey = Rep.LOCAL_Q_KEY.u32(b);
        qpn = Rep.LOCAL_QPN.u32(b);
        psn = Rep.STARTING_PSN.u32(b);
        respRes = Rep.RESPONDER_RESOURCES.u32(b);
        initDepth = Rep.INITIATOR_DEPTH.u32(b);
        rnrRetry = Rep.RNR_RETRY_COUNT.u32(b);
        srq = Rep.SRQ.u32(b) != 0;
        caGuid = Rep.LOCAL_CA_GUID.get(b);
    }

    @Override public String toString() { return name(attr) + "(comm " + localComm + "/" + remoteComm + ")"; }
}
