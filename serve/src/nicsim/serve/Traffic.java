package nicsim.serve;

import java.io.PrintStream;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import nicsim.verbs.WcOpcode;
import nicsim.verbs.WcStatus;
import nicsim.verbs.WorkCompletion;

/**
 * What a program's QPs moved, in simulated time: messages and bytes posted, the span from the
 * first post to the last completion, and the latency of each signaled send (post to the
 * completion handed to the program). perftest measures with the CPU's cycle counter, which no
 * simulator can redirect; this is the same table in simulated time.
 */
final class Traffic {
    private static final class Qp {
        final String type;
        long messages, bytes, received, receivedBytes, first = -1, last = -1;
        final ArrayDeque<long[]> signaled = new ArrayDeque<>(); // {wr_id, posted at}
        final List<Long> latencies = new ArrayList<>();

        Qp(String type) { this.type = type; }
    }

    private final Map<Integer, Qp> qps = new TreeMap<>();

    void posted(int qpn, String type, long wrId, long bytes, boolean signaled, long now) {
        Qp q = qps.computeIfAbsent(qpn, k -> new Qp(type));
        q.messages++;
        q.bytes += bytes;
        if (q.first < 0) q.first = now;
        if (signaled) q.signaled.add(new long[]{wrId, now});
    }

    void completed(WorkCompletion w, long now) {
        Qp q = qps.get(w.qpNum());
        if (q == null || w.status() != WcStatus.SUCCESS) return;
        if (w.opcode().value() >= WcOpcode.RECV.value()) { // the receive opcodes (tag matching's among them)
            q.received++;
            q.receivedBytes += w.byteLen();
            if (q.first < 0) q.first = now;
            q.last = now;
            return;
        }
        while (!q.signaled.isEmpty()) {
            long[] s = q.signaled.poll();
            if (s[0] == w.wrId()) { q.latencies.add(now - s[1]); break; }
        }
        q.last = now;
    }

    boolean isEmpty() { return qps.isEmpty(); }

    /** perftest's result table, one row per QP, in simulated time. */
    void print(PrintStream out, String who) {
        out.printf("  %s, in simulated time:%n", who);
        out.printf("   %-10s %-5s %-11s %-10s %-12s %-12s %-10s %-12s %-10s %-10s%n", "QP", "type", "#bytes", "#messages", "#received",
                "BW[Gb/sec]", "t_min[us]", "t_typical[us]", "t_avg[us]", "t_99%[us]");
        for (Map.Entry<Integer, Qp> e : qps.entrySet()) {
            Qp q = e.getValue();
            long span = q.last - q.first;
            long bytes = Math.max(q.bytes, q.receivedBytes);
            String bw = span > 0 ? String.format("%.2f", bytes * 8.0 / (span / 1e12) / 1e9) : "-";
            List<Long> l = new ArrayList<>(q.latencies);
            Collections.sort(l);
            String min = "-", typ = "-", avg = "-", p99 = "-";
            if (!l.isEmpty()) {
                min = us(l.get(0));
                typ = us(l.get(l.size() / 2));
                avg = us((long) l.stream().mapToLong(Long::longValue).average().orElse(0));
                p99 = us(l.get(Math.min(l.size() - 1, (int) Math.ceil(l.size() * 0.99) - 1)));
            }
            out.printf("   0x%-8x %-5s %-11d %-10d %-12d %-12s %-10s %-12s %-10s %-10s%n", e.getKey(), q.type,
                    q.messages > 0 ? q.bytes / q.messages : 0, q.messages, q.received, bw, min, typ, avg, p99);
        }
    }

    private static String us(long picos) { return String.format("%.2f", picos / 1e6); }
}
