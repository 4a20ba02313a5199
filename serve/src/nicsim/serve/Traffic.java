package nicsim.serve;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import nicsim.driver.Host;
import nicsim.firmware.QpLedger;

/**
 * What a program's QPs moved, in simulated time, as the adapter saw them (whichever driver the
 * program used): messages and bytes its send queues executed, messages received, the span from the
 * first doorbell to the last completion written, and each signaled message's latency from the
 * doorbell that announced it to its CQE in host memory. perftest measures with the CPU's cycle
 * counter, which no simulator can redirect; this is the same table in simulated time. A QP's row
 * comes when the QP is destroyed (a program's QPs are destroyed by the time it has ended).
 */
final class Traffic {
    private final List<QpLedger.Row> rows = new ArrayList<>();

    /** Keeps {@code qpn}'s traffic on {@code host}'s adapter for this table. */
    void own(Host host, long qpn) { host.firmware.ledger().own(qpn, rows::add); }

    boolean isEmpty() { return rows.isEmpty(); }

    /** perftest's result table, one row per QP, in simulated time. */
    void print(PrintStream out, String who) {
        out.printf("  %s, in simulated time (doorbell to CQE in host memory):%n", who);
        out.printf("   %-10s %-5s %-11s %-10s %-12s %-12s %-10s %-12s %-10s %-10s%n", "QP", "type", "#bytes",
                "#messages", "#received", "BW[Gb/sec]", "t_min[us]", "t_typical[us]", "t_avg[us]", "t_99%[us]");
        List<QpLedger.Row> sorted = new ArrayList<>(rows);
        sorted.sort((a, b) -> Long.compare(a.qpn(), b.qpn()));
        for (QpLedger.Row q : sorted) {
            long span = q.last() - q.first();
            long bytes = Math.max(q.bytes(), q.receivedBytes());
            String bw = span > 0 && q.first() >= 0 ? String.format("%.2f", bytes * 8.0 / (span / 1e12) / 1e9) : "-";
            long[] l = q.latencies().clone();
            Arrays.sort(l);
            String min = "-", typ = "-", avg = "-", p99 = "-";
            if (l.length > 0) {
                min = us(l[0]);
                typ = us(l[l.length / 2]);
                avg = us((long) Arrays.stream(l).average().orElse(0));
                p99 = us(l[Math.min(l.length - 1, (int) Math.ceil(l.length * 0.99) - 1)]);
            }
            out.printf("   0x%-8x %-5s %-11d %-10d %-12d %-12s %-10s %-12s %-10s %-10s%n", q.qpn(), q.type(),
                    q.messages() > 0 ? q.bytes() / q.messages() : 0, q.messages(), q.received(), bw, min, typ, avg,
                    p99);
        }
    }

    private static String us(long picos) { return String.format("%.2f", picos / 1e6); }
}
