package nicsim.serve;

import java.io.PrintStream;
import java.util.ArrayDeque;
import nicsim.sim.Counters;

/**
 * What serve reports of a run: each program as it ends (in the log: its requests, its queue pairs'
 * traffic, the error completions it was given), and at the end the last of them and the adapters'
 * counters that tell of trouble.
 */
final class RunReport {
    /** Programs the end-of-run summary names; those before are counted (the log has them all). */
    private static final int ENDED_KEPT = 100;

    private final PrintStream log;
    private final ArrayDeque<String> ended = new ArrayDeque<>();
    private long endedBefore;

    RunReport(PrintStream log) { this.log = log; }

    /** Program {@code p}'s context {@code s} ended ({@code how}): one line, then what its queue pairs did. */
    void ended(Session s, Program p, String how) {
        String mem = s.memoryFailures();
        String line = String.format("%s on node %d %s after %d requests%s", p, s.host.index, how, s.requests,
                mem == null ? "" : "; DMA to its memory refused " + mem);
        ended.add(line);
        if (ended.size() > ENDED_KEPT) {
            ended.removeFirst();
            endedBefore++;
        }
        log.println("nicsim serve: " + line);
        if (!s.traffic.isEmpty()) s.traffic.print(log, p + "'s queue pairs");
        for (String e : s.waits.errors) log.println("  error completion given to it: " + e);
        long more = s.waits.errorCompletions - s.waits.errors.size();
        if (more > 0) log.println("  and " + more + " more error completions");
    }

    /** The programs that ended, the last {@link #ENDED_KEPT} by name. */
    void programs(PrintStream out) {
        if (endedBefore > 0) out.println("  " + endedBefore + " programs ended before these (the log names them):");
        for (String e : ended) out.println("  " + e);
    }

    /** The fabric's and adapters' traffic, and the adapters' counters that tell of trouble. */
    static void adapters(PrintStream out, Counters c) {
        out.printf("  fabric: %d packets, %d bytes; adapters: %d packets out, %d in, %d retransmitted; "
                + "DMA %d bytes read, %d written%n", c.get("Fabric.packets"), c.get("Fabric.bytes"),
                c.get("Firmware.packets_out"), c.get("Firmware.packets_in"), c.get("Firmware.retransmits"),
                c.get("Firmware.dma_read_bytes"), c.get("Firmware.dma_write_bytes"));
        StringBuilder trouble = new StringBuilder();
        String kinds = ".*(dropped|no_qp|naks|errors|flushed|mismatch|lost|overflows|gaps|duplicates|ignored"
                + "|malformed).*";
        for (var e : c.snapshot("Firmware.").entrySet())
            if (e.getValue() > 0 && e.getKey().matches(kinds))
                trouble.append(' ').append(e.getKey().substring("Firmware.".length())).append('=').append(e.getValue());
        if (trouble.length() > 0) out.println("  adapters also counted:" + trouble);
    }
}
