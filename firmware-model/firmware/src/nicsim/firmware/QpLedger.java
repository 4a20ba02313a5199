package nicsim.firmware;

import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.function.Consumer;
import nicsim.abi.Cqe64;
import nicsim.abi.WqeLayout;

/**
 * What each QP moved, as the device saw it, whichever driver drove it: messages the send queue
 * executed and their bytes, messages received, the span from the first doorbell to the last
 * completion written, and each signaled message's latency from the doorbell that announced its WQE
 * to its CQE in host memory. Kept only for QPs someone {@link #own owns}: the owner gets the QP's
 * {@link Row} when the QP is destroyed.
 */
public final class QpLedger {
    /** One QP's traffic; latencies in ps, in completion order. */
    public record Row(long qpn, String type, long messages, long bytes, long received, long receivedBytes, long first,
            long last, long[] latencies) {}

    private static final class Entry {
        final String type;
        long messages, bytes, received, receivedBytes, first = -1, last = -1;
        /** Doorbells not yet behind every WQE fetched: {producer, time}. */
        final ArrayDeque<long[]> doorbells = new ArrayDeque<>();
        /** Message WQEs not yet completed: {index, doorbell time}. */
        final ArrayDeque<long[]> inFlight = new ArrayDeque<>();
        long[] latencies = new long[8];
        int nLatencies;

        Entry(String type) { this.type = type; }

        Row row(long qpn) {
            return new Row(qpn, type, messages, bytes, received, receivedBytes, first, last,
                    Arrays.copyOf(latencies, nLatencies));
        }
    }

    private final Map<Long, Qp> qps;
    private final Map<Long, Entry> entries = new HashMap<>();
    private final Map<Long, Consumer<Row>> owners = new HashMap<>();

    QpLedger(Map<Long, Qp> qps) { this.qps = qps; }

    /** QP {@code qpn}'s traffic is kept from now on; its row goes to {@code owner} when the QP is destroyed. */
    public void own(long qpn, Consumer<Row> owner) {
        if (qps.containsKey(qpn)) owners.put(qpn, owner);
    }

    private Entry entry(long qpn) {
        if (owners.isEmpty()) return null;
        Entry e = entries.get(qpn);
        if (e != null) return e;
        Qp q = owners.containsKey(qpn) ? qps.get(qpn) : null;
        if (q == null) return null;
        e = new Entry(q.type.name());
        entries.put(qpn, e);
        return e;
    }

    /** A send doorbell of {@code qpn} announced WQEBBs up to {@code producer}, at {@code now}. */
    void doorbell(long qpn, int producer, long now) {
        Entry e = entry(qpn);
        if (e != null) e.doorbells.add(new long[]{producer & 0xFFFF, now});
    }

    /** The send queue executes the WQE at {@code index}: a message of {@code bytes} if its opcode is one. */
    void wqe(long qpn, int index, int opcode, long bytes) {
        Entry e = entry(qpn);
        if (e == null) return;
        // the first doorbell whose producer is past this WQE announced it
        while (!e.doorbells.isEmpty() && !WqeLayout.announced(e.doorbells.peekFirst()[0], index))
            e.doorbells.pollFirst();
        if (!WqeLayout.remote(opcode)) return;
        long rang = e.doorbells.isEmpty() ? -1 : e.doorbells.peekFirst()[1];
        e.messages++;
        e.bytes += bytes;
        if (e.first < 0 && rang >= 0) e.first = rang;
        e.inFlight.add(new long[]{index, rang});
    }

    /** A CQE reached host memory at {@code now}. */
    void cqeWritten(byte[] cqe, long now) {
        if (owners.isEmpty()) return;
        Cqe64.View v = Cqe64.parse(cqe);
        if (v.opcode() != Cqe64.REQ && (v.opcode() < Cqe64.RESP_WR_IMM || v.opcode() > Cqe64.RESP_SEND_INV)) return;
        Entry e = entry(v.qpn());
        if (e == null) return;
        e.last = now;
        if (v.opcode() != Cqe64.REQ) {
            e.received++;
            e.receivedBytes += v.byteCount();
            if (e.first < 0) e.first = now;
            return;
        }
        while (!e.inFlight.isEmpty()) {
            long[] w = e.inFlight.poll();
            if (w[0] != v.wqeCounter()) continue;
            if (w[1] < 0) break;
            if (e.nLatencies == e.latencies.length)
                e.latencies = Arrays.copyOf(e.latencies, 2 * e.nLatencies);
            e.latencies[e.nLatencies++] = now - w[1];
            break;
        }
    }

    /** QP {@code qpn} was destroyed: its row (if it moved anything) goes to its owner. */
    void destroyed(long qpn) {
        Entry e = entries.remove(qpn);
        Consumer<Row> owner = owners.remove(qpn);
        if (e != null && owner != null) owner.accept(e.row(qpn));
    }
}
