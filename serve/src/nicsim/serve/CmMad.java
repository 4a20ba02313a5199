package nicsim.serve;

import java.nio.ByteBuffer;
import java.util.Arrays;

/**
 * One communication-management message as the IB CM sends it: a 256-byte MAD of management class
 * 0x07 (CM), class version 2, method SEND, whose attribute says which message it is. The fields sit
 * where the InfiniBand specification (volume 1, chapter 12) places them, big-endian, so a trace of
 * the fabric shows real CM traffic; the private data field always travels whole, and the receiver
 * reports all of it, as the kernel's CM does.
 */
final class CmMad {
    static final int SIZE = 256;
    static final int REQ = 0x10, REJ = 0x12, REP = 0x13, RTU = 0x14, DREQ = 0x15, DREP = 0x16, SIDR_REQ = 0x17,
            SIDR_REP = 0x18;
    /** REJ reasons (IB spec table 112) the CM gives. */
    static final int REJ_TIMEOUT = 1, REJ_INVALID_SERVICE_ID = 8, REJ_CONSUMER_DEFINED = 28;
    /** SIDR_REP status: the service is not there, or it was refused. */
    static final int SIDR_UNSUPPORTED = 1, SIDR_REJECT = 2;
    /** The CM response timeout the REQ carries (4.096 us x 2^20), as the kernel's RDMA CM sends it. */
    static final int CM_RESPONSE_TIMEOUT = 20;

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
    byte[] priv = new byte[0];

    CmMad(int attr) { this.attr = attr; }

    /** Where a message's private data starts in the MAD, and its size. */
    static int privateOffset(int attr) {
        return switch (attr) {
            case REQ -> 164;
            case REP -> 60;
            case RTU, DREP -> 32;
            case REJ -> 108;
            case DREQ -> 36;
            case SIDR_REQ -> 40;
            case SIDR_REP -> 120;
            default -> throw new IllegalArgumentException("CM attribute 0x" + Integer.toHexString(attr));
        };
    }

    static int privateSize(int attr) { return SIZE - privateOffset(attr); }

    static String name(int attr) {
        return switch (attr) {
            case REQ -> "REQ";
            case REJ -> "REJ";
            case REP -> "REP";
            case RTU -> "RTU";
            case DREQ -> "DREQ";
            case DREP -> "DREP";
            case SIDR_REQ -> "SIDR_REQ";
            case SIDR_REP -> "SIDR_REP";
            default -> "0x" + Integer.toHexString(attr);
        };
    }

    byte[] encode() {
        ByteBuffer b = ByteBuffer.allocate(SIZE);
        b.put(0, (byte) 1).put(1, (byte) 0x07).put(2, (byte) 2).put(3, (byte) 0x03);
        b.putLong(8, tid).putShort(16, (short) attr);
        switch (attr) {
            case REQ -> {
                b.putInt(24, localComm).putLong(32, serviceId).putLong(40, caGuid).putInt(52, qkey);
                b.putInt(56, qpn << 8 | respRes & 0xff).putInt(60, initDepth & 0xff);
                b.putInt(64, CM_RESPONSE_TIMEOUT << 3 | (xrc ? 3 : uc ? 1 : 0) << 1);
                b.putInt(68, psn << 8 | CM_RESPONSE_TIMEOUT << 3 | retry & 7);
                b.putInt(72, pkey << 16 | (mtu & 0xf) << 12 | (rnrRetry & 7) << 8 | 15 << 4 | (srq ? 1 : 0) << 3
                        | (xrc ? 1 : 0));
                b.putShort(76, (short) localLid).putShort(78, (short) remoteLid);
                b.put(119, (byte) (ackTimeout << 3));
            }
            case REP -> {
                b.putInt(24, localComm).putInt(28, remoteComm).putInt(32, qkey).putInt(36, qpn << 8)
                        .putInt(44, psn << 8);
                b.put(48, (byte) respRes).put(49, (byte) initDepth);
                b.put(51, (byte) ((rnrRetry & 7) << 5 | (srq ? 1 : 0) << 4)).putLong(52, caGuid);
            }
            case RTU, DREP -> b.putInt(24, localComm).putInt(28, remoteComm);
            case REJ -> b.putInt(24, localComm).putInt(28, remoteComm).put(32, (byte) (status << 6))
                    .putShort(34, (short) reason);
            case DREQ -> b.putInt(24, localComm).putInt(28, remoteComm).putInt(32, qpn << 8);
            case SIDR_REQ -> b.putInt(24, localComm).putShort(28, (short) pkey).putLong(32, serviceId);
            case SIDR_REP -> b.putInt(24, remoteComm).put(28, (byte) this.status).putInt(32, qpn << 8)
                    .putLong(36, serviceId).putInt(44, qkey);
            default -> throw new IllegalArgumentException("CM attribute 0x" + Integer.toHexString(attr));
        }
        b.put(privateOffset(attr), priv, 0, Math.min(priv.length, privateSize(attr)));
        return b.array();
    }

    /** The message in {@code mad}; IllegalArgumentException if it is not a CM MAD this CM knows. */
    static CmMad decode(byte[] mad) {
        ByteBuffer b = ByteBuffer.wrap(mad);
        if (mad.length < SIZE || b.get(1) != 0x07 || b.get(2) != 2)
            throw new IllegalArgumentException("not a CM MAD (class 0x" + Integer.toHexString(b.get(1) & 0xff) + ")");
        CmMad m = new CmMad(b.getShort(16) & 0xffff);
        m.tid = b.getLong(8);
        switch (m.attr) {
            case REQ -> decodeReq(b, m);
            case REP -> decodeRep(b, m);
            case RTU, DREP -> {
                m.localComm = b.getInt(24);
                m.remoteComm = b.getInt(28);
            }
            case REJ -> {
                m.localComm = b.getInt(24);
                m.remoteComm = b.getInt(28);
                m.status = (b.get(32) & 0xff) >>> 6;
                m.reason = b.getShort(34) & 0xffff;
            }
            case DREQ -> {
                m.localComm = b.getInt(24);
                m.remoteComm = b.getInt(28);
                m.qpn = b.getInt(32) >>> 8;
            }
            case SIDR_REQ -> {
                m.localComm = b.getInt(24);
                m.pkey = b.getShort(28) & 0xffff;
                m.serviceId = b.getLong(32);
            }
            case SIDR_REP -> {
                m.remoteComm = b.getInt(24);
                m.status = b.get(28) & 0xff;
                m.qpn = b.getInt(32) >>> 8;
                m.serviceId = b.getLong(36);
                m.qkey = b.getInt(44);
            }
            default -> throw new IllegalArgumentException("CM attribute 0x" + Integer.toHexString(m.attr));
        }
        int off = privateOffset(m.attr);
        m.priv = Arrays.copyOfRange(mad, off, SIZE);
        return m;
    }

    /** A REQ's fields: the sender's QP, its starting PSN and choices, the path. */
    private static void decodeReq(ByteBuffer b, CmMad m) {
        m.localComm = b.getInt(24);
        m.serviceId = b.getLong(32);
        m.caGuid = b.getLong(40);
        m.qkey = b.getInt(52);
        m.qpn = b.getInt(56) >>> 8;
        m.respRes = b.get(59) & 0xff;
        m.initDepth = b.get(63) & 0xff;
        m.uc = (b.getInt(64) >>> 1 & 3) == 1;
        m.xrc = (b.getInt(64) >>> 1 & 3) == 3 && (b.get(75) & 7) == 1;
        m.psn = b.getInt(68) >>> 8;
        m.retry = b.getInt(68) & 7;
        int w = b.getInt(72);
        m.pkey = w >>> 16;
        m.mtu = w >>> 12 & 0xf;
        m.rnrRetry = w >>> 8 & 7;
        m.srq = (w >>> 3 & 1) != 0;
        m.localLid = b.getShort(76) & 0xffff;
        m.remoteLid = b.getShort(78) & 0xffff;
        m.ackTimeout = (b.get(119) & 0xff) >>> 3;
    }

    /** A REP's fields: the passive side's QP, its PSN and choices. */
    private static void decodeRep(ByteBuffer b, CmMad m) {
        m.localComm = b.getInt(24);
        m.remoteComm = b.getInt(28);
        m.qkey = b.getInt(32);
        m.qpn = b.getInt(36) >>> 8;
        m.psn = b.getInt(44) >>> 8;
        m.respRes = b.get(48) & 0xff;
        m.initDepth = b.get(49) & 0xff;
        m.rnrRetry = (b.get(51) & 0xff) >>> 5;
        m.srq = (b.get(51) >>> 4 & 1) != 0;
        m.caGuid = b.getLong(52);
    }

    @Override public String toString() { return name(attr) + "(comm " + localComm + "/" + remoteComm + ")"; }
}
