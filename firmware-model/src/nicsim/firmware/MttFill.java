package nicsim.firmware;

import java.util.ArrayDeque;
import java.util.function.Consumer;
import nicsim.abi.BigEndian;
import nicsim.abi.Cmd;
import nicsim.adapter.Adapter;
import nicsim.adapter.MttPorts;
import nicsim.host.PciPort;
import nicsim.profile.Profile;
import nicsim.sim.Counters;

/**
 * Where the MttWalker's cache misses are answered from: the translation table in host memory
 * ({@code mtt.fill = "dma"}), or the host itself by interrupt ({@code "interrupt"}, as KVIA's
 * driver did: the handler reads {@link Cmd#REG_XLATE_MISS} and writes the entry to
 * {@link Cmd#REG_XLATE_FILL}).
 */
final class MttFill {
    private final Adapter adapter;
    private final Counters counters;
    private final Consumer<String> report;
    private final boolean byInterrupt;
    private final java.util.function.LongSupplier now;
    /** An MTT entry's mark for a page not present. */
    static final long NOT_PRESENT = 1;
    private int vector = -1;
    /** The translation table in host memory (ICM): its base, its entries, and the first not yet given to an MR. */
    long tableAddr, entries, next;
    private final ArrayDeque<HostFill> waiting = new ArrayDeque<>();

    /** A translation miss waiting for the host's interrupt handler. */
    private record HostFill(long index, Consumer<long[]> done) {}

    MttFill(Adapter adapter, Profile profile, Counters counters, Consumer<String> report, java.util.function.LongSupplier now) {
        this.adapter = adapter;
        this.now = now;
        this.counters = counters;
        this.report = report;
        String fill = profile.has("mtt.fill") ? profile.text("mtt.fill") : "dma";
        if (!fill.equals("dma") && !fill.equals("interrupt"))
            throw new IllegalArgumentException("mtt.fill \"" + fill + "\" must be \"dma\" or \"interrupt\"");
        this.byInterrupt = fill.equals("interrupt");
    }

    void setVector(int vector) { this.vector = vector; }

    /** {@link Cmd#REG_XLATE_MISS}: bit 63 set and the MTT index of the oldest miss waiting, or 0. */
    long oldestMiss() { return waiting.isEmpty() ? 0 : 1L << 63 | waiting.peekFirst().index; }

    /**
     * Answers entry {@code index} with {@code {entry, 0}}, {@code {0, 1}} when it cannot be had, or
     * {@code {0, 2}} when the entry marks its page not present (bit 0 set: a page address has it
     * clear), as an on-demand MR's are until their page is brought in.
     */
    void fill(long index, Consumer<long[]> done) {
        if (index >= entries) { done.accept(new long[]{0, 1}); return; }
        if (byInterrupt) {
            if (vector < 0) {
                counters.counter("Firmware.xlate_fills_unanswerable").inc();
                report.accept("translation miss at MTT index " + index + " with mtt.fill = interrupt, but no host handler registered (REG_XLATE_VECTOR)");
                done.accept(new long[]{0, 1});
                return;
            }
            waiting.add(new HostFill(index, done));
            counters.counter("Firmware.xlate_host_interrupts").inc();
            if (waiting.size() == 1) adapter.port().msix(vector);
            return;
        }
        adapter.port().dmaRead(tableAddr + index * 8, 8, r -> {
            if (r.status() != PciPort.DmaStatus.OK) { done.accept(new long[]{0, MttPorts.FILL_FAILED}); return; }
            long entry = BigEndian.get64(r.data(), 0);
            done.accept((entry & NOT_PRESENT) != 0 ? new long[]{0, MttPorts.FILL_NOT_PRESENT} : new long[]{entry, MttPorts.FILL_OK});
        });
    }

    /**
     * A page not present (on-demand paging) at MTT index {@code index}: the host's handler, interrupted
     * as for a miss, brings it and the request's next {@code pages - 1} pages in and marks their
     * entries present in the table; {@code done} then runs.
     */
    void pageFault(long index, long pages, Runnable done) {
        counters.counter("Firmware.odp_page_faults").inc();
        long t0 = now.getAsLong();
        bringIn(index, pages, () -> { // fault latency: from the fault to its pages in, summed (divide by odp_faults_resolved)
            counters.counter("Firmware.odp_fault_wait_ps").add(now.getAsLong() - t0);
            counters.counter("Firmware.odp_faults_resolved").inc();
            done.run();
        });
    }

    /** Asks the host's handler to bring in (and mark present) the pages of MTT entries {@code index} on; {@code done} runs after the last. */
    void bringIn(long index, long pages, Runnable done) {
        if (vector < 0) {
            report.accept("page fault at MTT index " + index + ", but no host handler registered (REG_XLATE_VECTOR)");
            return;
        }
        boolean idle = waiting.isEmpty();
        for (long k = 0; k < pages; k++) { // the request's pages from the missing one on: one fault brings in its whole range
            boolean last = k == pages - 1;
            waiting.add(new HostFill(index + k, r -> { if (last) done.run(); }));
        }
        if (idle) adapter.port().msix(vector);
    }

    /** The host's answer to the oldest miss ({@link Cmd#REG_XLATE_FILL}); the next one, if any, interrupts again. */
    void hostAnswer(long index, long entry) {
        HostFill f = waiting.peekFirst();
        if (f == null || f.index != index) {
            counters.counter("Firmware.xlate_fills_refused").inc();
            report.accept(String.format("REG_XLATE_FILL for MTT index %d, but the oldest miss waiting is %s", index,
                    f == null ? "none" : "index " + f.index));
            return;
        }
        waiting.pollFirst();
        f.done.accept(new long[]{entry, 0});
        if (!waiting.isEmpty()) adapter.port().msix(vector);
    }
}
