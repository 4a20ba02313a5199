package nicsim.serve;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import nicsim.fabric.Mad;

/**
 * The CM messages' fields (InfiniBand volume 1, chapter 12, tables 106 to 120), each declared once,
 * here: where it starts in the message's data (after the MAD's 24-byte common header), in the
 * specification's Byte[Bit] notation (bit 0 is the byte's most significant), and its width in bits;
 * big-endian, as every MAD. Only the messages and fields nicsim's CM sends or reads are declared
 * ({@link CmMad} reads and writes them through nothing else). Their names are Linux's
 * (include/rdma/ibta_vol1_c12.h: CM_REQ_LOCAL_COMM_ID is {@code Req.LOCAL_COMM_ID}), and
 * CmFieldsTest holds every one to where that header puts it.
 */
final class CmFields {
    private CmFields() {}

    /**
     * A CM message: its name as the specification's tables give it, its attribute ID (its holder's
     * ATTR, a constant a switch can name), its fields.
     */
    static final class Message {
        final String name;
        final int attr;
        final List<Field> fields = new ArrayList<>();
        /** The private data, the message's last field: what remains of the MAD. */
        private Field privateData;

        private Message(String name, int attr) {
            this.name = name;
            this.attr = attr;
        }

        private Field f(String field, int at, int bit, int bits) {
            Field f = new Field(this, field, at, bit, bits);
            fields.add(f);
            return f;
        }

        /** A field of whole bytes (a number of up to 64 bits is read as one all the same). */
        private Field bytes(String field, int at, int n) { return f(field, at, 0, n * 8); }

        private Field privateData(int at) {
            privateData = bytes("PRIVATE_DATA", at, Mad.SIZE - Mad.HEADER - at);
            return privateData;
        }

        Field privateData() { return privateData; }
    }

    /**
     * Field {@code name} of {@code message}: {@code bits} wide from bit {@code bit} of data byte
     * {@code at}. A number (up to 64 bits) is read and written with {@link #get} and {@link #put},
     * which leave the bits around it as they are; wider fields as bytes.
     */
    record Field(Message message, String name, int at, int bit, int bits) {
        /** Its name in Linux's ibta_vol1_c12.h. */
        String cName() { return "CM_" + message.name + "_" + name; }

        /** The byte of the MAD it starts in. */
        int offset() { return Mad.HEADER + at; }

        /** Its size in bytes, for a field of whole bytes; IllegalStateException for another. */
        int size() {
            if (bit != 0 || bits % 8 != 0) throw new IllegalStateException(this + " is not whole bytes");
            return bits / 8;
        }

        long get(byte[] mad) {
            int n = span();
            long w = 0;
            for (int i = 0; i < n; i++) w = w << 8 | mad[offset() + i] & 0xff;
            return w >>> n * 8 - bit - bits & mask();
        }

        /** A field of at most 32 bits. */
        int u32(byte[] mad) {
            if (bits > 32) throw new IllegalStateException(this + " is " + bits + " bits, read as 32");
            return (int) get(mad);
        }

        /** {@code v}'s low {@code bits} bits into the field. */
        void put(byte[] mad, long v) {
            int n = span(), shift = n * 8 - bit - bits;
            long w = 0;
            for (int i = 0; i < n; i++) w = w << 8 | mad[offset() + i] & 0xff;
            long m = mask() << shift;
            w = w & ~m | v << shift & m;
            for (int i = n - 1; i >= 0; i--, w >>>= 8) mad[offset() + i] = (byte) w;
        }

        byte[] bytes(byte[] mad) { return Arrays.copyOfRange(mad, offset(), offset() + size()); }

        /** {@code data} at the field's start, as much of it as the field holds. */
        void putBytes(byte[] mad, byte[] data) {
            System.arraycopy(data, 0, mad, offset(), Math.min(data.length, size()));
        }

        /** The bytes a number spans. */
        private int span() {
            if (bit + bits > 64) throw new IllegalStateException(this + " is " + bits + " bits, not a number");
            return (bit + bits + 7) / 8;
        }

        private long mask() { return bits == 64 ? -1L : (1L << bits) - 1; }

        @Override public String toString() { return cName(); }
    }

    /** Table 106. */
    static final class Req {
        static final int ATTR = 0x10;
        static final Message M = new Message("REQ", ATTR);
        static final Field LOCAL_COMM_ID = M.f("LOCAL_COMM_ID", 0, 0, 32), SERVICE_ID = M.bytes("SERVICE_ID", 8, 8),
                LOCAL_CA_GUID = M.bytes("LOCAL_CA_GUID", 16, 8), LOCAL_Q_KEY = M.f("LOCAL_Q_KEY", 28, 0, 32),
                LOCAL_QPN = M.f("LOCAL_QPN", 32, 0, 24), RESPONDER_RESOURCES = M.f("RESPONDER_RESOURCES", 35, 0, 8),
                INITIATOR_DEPTH = M.f("INITIATOR_DEPTH", 39, 0, 8),
                REMOTE_CM_RESPONSE_TIMEOUT = M.f("REMOTE_CM_RESPONSE_TIMEOUT", 43, 0, 5),
                TRANSPORT_SERVICE_TYPE = M.f("TRANSPORT_SERVICE_TYPE", 43, 5, 2),
                STARTING_PSN = M.f("STARTING_PSN", 44, 0, 24),
                LOCAL_CM_RESPONSE_TIMEOUT = M.f("LOCAL_CM_RESPONSE_TIMEOUT", 47, 0, 5),
                RETRY_COUNT = M.f("RETRY_COUNT", 47, 5, 3), PARTITION_KEY = M.f("PARTITION_KEY", 48, 0, 16),
                PATH_PACKET_PAYLOAD_MTU = M.f("PATH_PACKET_PAYLOAD_MTU", 50, 0, 4),
                RNR_RETRY_COUNT = M.f("RNR_RETRY_COUNT", 50, 5, 3), MAX_CM_RETRIES = M.f("MAX_CM_RETRIES", 51, 0, 4),
                SRQ = M.f("SRQ", 51, 4, 1), EXTENDED_TRANSPORT_TYPE = M.f("EXTENDED_TRANSPORT_TYPE", 51, 5, 3),
                PRIMARY_LOCAL_PORT_LID = M.f("PRIMARY_LOCAL_PORT_LID", 52, 0, 16),
                PRIMARY_REMOTE_PORT_LID = M.f("PRIMARY_REMOTE_PORT_LID", 54, 0, 16),
                PRIMARY_LOCAL_ACK_TIMEOUT = M.f("PRIMARY_LOCAL_ACK_TIMEOUT", 95, 0, 5),
                PRIVATE_DATA = M.privateData(140);
    }

    /** Table 108. */
    static final class Rej {
        static final int ATTR = 0x12;
        static final Message M = new Message("REJ", ATTR);
        static final Field LOCAL_COMM_ID = M.f("LOCAL_COMM_ID", 0, 0, 32),
                REMOTE_COMM_ID = M.f("REMOTE_COMM_ID", 4, 0, 32),
                MESSAGE_REJECTED = M.f("MESSAGE_REJECTED", 8, 0, 2), REASON = M.f("REASON", 10, 0, 16),
                PRIVATE_DATA = M.privateData(84);
    }

    /** Table 110. */
    static final class Rep {
        static final int ATTR = 0x13;
        static final Message M = new Message("REP", ATTR);
        static final Field LOCAL_COMM_ID = M.f("LOCAL_COMM_ID", 0, 0, 32),
                REMOTE_COMM_ID = M.f("REMOTE_COMM_ID", 4, 0, 32), LOCAL_Q_KEY = M.f("LOCAL_Q_KEY", 8, 0, 32),
                LOCAL_QPN = M.f("LOCAL_QPN", 12, 0, 24), STARTING_PSN = M.f("STARTING_PSN", 20, 0, 24),
                RESPONDER_RESOURCES = M.f("RESPONDER_RESOURCES", 24, 0, 8),
                INITIATOR_DEPTH = M.f("INITIATOR_DEPTH", 25, 0, 8), RNR_RETRY_COUNT = M.f("RNR_RETRY_COUNT", 27, 0, 3),
                SRQ = M.f("SRQ", 27, 3, 1), LOCAL_CA_GUID = M.bytes("LOCAL_CA_GUID", 28, 8),
                PRIVATE_DATA = M.privateData(36);
    }

    /** Table 111. */
    static final class Rtu {
        static final int ATTR = 0x14;
        static final Message M = new Message("RTU", ATTR);
        static final Field LOCAL_COMM_ID = M.f("LOCAL_COMM_ID", 0, 0, 32),
                REMOTE_COMM_ID = M.f("REMOTE_COMM_ID", 4, 0, 32), PRIVATE_DATA = M.privateData(8);
    }

    /** Table 112. */
    static final class Dreq {
        static final int ATTR = 0x15;
        static final Message M = new Message("DREQ", ATTR);
        static final Field LOCAL_COMM_ID = M.f("LOCAL_COMM_ID", 0, 0, 32),
                REMOTE_COMM_ID = M.f("REMOTE_COMM_ID", 4, 0, 32), REMOTE_QPN_EECN = M.f("REMOTE_QPN_EECN", 8, 0, 24),
                PRIVATE_DATA = M.privateData(12);
    }

    /** Table 113. */
    static final class Drep {
        static final int ATTR = 0x16;
        static final Message M = new Message("DREP", ATTR);
        static final Field LOCAL_COMM_ID = M.f("LOCAL_COMM_ID", 0, 0, 32),
                REMOTE_COMM_ID = M.f("REMOTE_COMM_ID", 4, 0, 32), PRIVATE_DATA = M.privateData(8);
    }

    /** Table 119. */
    static final class SidrReq {
        static final int ATTR = 0x17;
        static final Message M = new Message("SIDR_REQ", ATTR);
        static final Field REQUESTID = M.f("REQUESTID", 0, 0, 32), PARTITION_KEY = M.f("PARTITION_KEY", 4, 0, 16),
                SERVICEID = M.bytes("SERVICEID", 8, 8), PRIVATE_DATA = M.privateData(16);
    }

    /** Table 120. */
    static final class SidrRep {
        static final int ATTR = 0x18;
        static final Message M = new Message("SIDR_REP", ATTR);
        static final Field REQUESTID = M.f("REQUESTID", 0, 0, 32), STATUS = M.f("STATUS", 4, 0, 8),
                QPN = M.f("QPN", 8, 0, 24), SERVICEID = M.bytes("SERVICEID", 12, 8), Q_KEY = M.f("Q_KEY", 20, 0, 32),
                PRIVATE_DATA = M.privateData(96);
    }

    /** Every message declared (a method: each holder class is initialized on its own first use). */
    static List<Message> all() { return List.of(Req.M, Rej.M, Rep.M, Rtu.M, Dreq.M, Drep.M, SidrReq.M, SidrRep.M); }

    /** The message with attribute ID {@code attr}; IllegalArgumentException naming it if none is declared. */
    static Message of(int attr) {
        for (Message m : all()) if (m.attr == attr) return m;
        throw new IllegalArgumentException("CM attribute 0x" + Integer.toHexString(attr));
    }
}
