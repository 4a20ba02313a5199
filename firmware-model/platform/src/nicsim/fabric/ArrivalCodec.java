package nicsim.fabric;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;

/**
 * The packets a process's ports sent in a window, as bytes for the other processes (FabricSwitch across
 * processes): every field of the packet and of its arrival at the switch, so the copy the other side
 * decodes is equal to the one sent. A packet on its way in has no delivery arrival yet.
 */
final class ArrivalCodec {
    private ArrivalCodec() {}

    private static final FabricSwitch.Fate[] FATES = FabricSwitch.Fate.values();
    private static final Packet.Op[] OPS = Packet.Op.values();

    static byte[] encode(List<FabricSwitch.Arrival> arrivals) {
        if (arrivals.isEmpty()) return new byte[0];
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (DataOutputStream o = new DataOutputStream(bytes)) {
            o.writeInt(arrivals.size());
            for (FabricSwitch.Arrival a : arrivals) {
                o.writeInt(a.srcLid());
                o.writeLong(a.seq());
                o.writeLong(a.headAt());
                o.writeLong(a.tailAt());
                o.writeInt(a.bytes());
                o.writeByte(a.fate().ordinal());
                o.writeLong(a.waited());
                packet(o, a.p());
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return bytes.toByteArray();
    }

    static List<FabricSwitch.Arrival> decode(byte[] b) {
        List<FabricSwitch.Arrival> out = new ArrayList<>();
        if (b.length == 0) return out;
        try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(b))) {
            int n = in.readInt();
            for (int i = 0; i < n; i++) {
                int srcLid = in.readInt();
                long seq = in.readLong(), headAt = in.readLong(), tailAt = in.readLong();
                int bytes = in.readInt();
                FabricSwitch.Fate fate = FATES[in.readByte()];
                long waited = in.readLong();
                out.add(new FabricSwitch.Arrival(packet(in), srcLid, seq, headAt, tailAt, bytes, fate, waited));
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out;
    }

    private static void packet(DataOutputStream o, Packet p) throws IOException {
        if (p.arrival() != null) throw new IllegalStateException("packet " + p.op() + " psn " + p.psn()
                + " already delivered: only packets on their way in cross processes");
        o.writeInt(p.slid());
        o.writeInt(p.dlid());
        o.writeByte(p.op().ordinal());
        o.writeLong(p.destQp());
        o.writeLong(p.srcQp());
        o.writeInt(p.psn());
        o.writeBoolean(p.ackReq());
        o.writeBoolean(p.solicited());
        o.writeLong(p.va());
        o.writeInt(p.rkey());
        o.writeLong(p.dmaLength());
        o.writeLong(p.swapAdd());
        o.writeLong(p.compare());
        o.writeInt(p.aeth());
        o.writeInt(p.msn());
        o.writeLong(p.atomicOrig());
        o.writeInt(p.imm());
        o.writeInt(p.qkey());
        o.writeInt(p.transport());
        o.writeInt(p.xrcSrqn());
        o.writeLong(p.dcKey());
        Grh g = p.grh();
        o.writeBoolean(g != null);
        if (g != null) {
            o.writeLong(g.sgidHi());
            o.writeLong(g.sgidLo());
            o.writeLong(g.dgidHi());
            o.writeLong(g.dgidLo());
            o.writeInt(g.trafficClass());
            o.writeInt(g.flowLabel());
            o.writeInt(g.hopLimit());
        }
        byte[] payload = p.payload();
        o.writeInt(payload == null ? -1 : payload.length);
        if (payload != null) o.write(payload);
    }

    private static Packet packet(DataInputStream in) throws IOException {
        int slid = in.readInt(), dlid = in.readInt();
        Packet.Op op = OPS[in.readByte()];
        long destQp = in.readLong(), srcQp = in.readLong();
        int psn = in.readInt();
        boolean ackReq = in.readBoolean(), solicited = in.readBoolean();
        long va = in.readLong();
        int rkey = in.readInt();
        long dmaLength = in.readLong(), swapAdd = in.readLong(), compare = in.readLong();
        int aeth = in.readInt(), msn = in.readInt();
        long atomicOrig = in.readLong();
        int imm = in.readInt(), qkey = in.readInt(), transport = in.readInt(), xrcSrqn = in.readInt();
        long dcKey = in.readLong();
        Grh grh = in.readBoolean() ? new Grh(in.readLong(), in.readLong(), in.readLong(), in.readLong(), in.readInt(),
                in.readInt(), in.readInt()) : null;
        int len = in.readInt();
        byte[] payload = null;
        if (len >= 0) {
            payload = new byte[len];
            in.readFully(payload);
        }
        return new Packet(slid, dlid, op, destQp, srcQp, psn, ackReq, solicited, va, rkey, dmaLength, swapAdd, compare,
                aeth, msn, atomicOrig, imm, qkey, payload, transport, null, xrcSrqn, dcKey, grh);
    }
}
