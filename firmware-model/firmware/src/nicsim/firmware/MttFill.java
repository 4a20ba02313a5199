package nicsim.firmware;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import nicsim.abi.BigEndian;
import nicsim.abi.Cmd;
import nicsim.abi.MttEntry;
import nicsim.adapter.Adapter;
import nicsim.adapter.MttPorts;
import nicsim.host.PciPort;
import nicsim.profile.Profile;
import nicsim.profile.Require;
import nicsim.sim.Recent;

/**
 * Where the MttWalker's cache misses are answered from: the translation table in host memory
 * ({@code mtt.fill = "dma"}), or the host itself by interrupt ({@code "interrupt"}, as KVIA's
 * driver did: the handler reads {@link Cmd#REG_XLATE_MISS} and writes the entry to
 * {@link Cmd#REG_XLATE_FILL}).
 */
final class MttFill {
    private final Adapter adapter;
    private final FirmwareStat.Stats stats;
    private final Consumer<String> report;
    private final boolean byInterrupt;
    private final LongSupplier now;
    private int vector = -1;
    /** The translation table in host memory (ICM): its base, and which of its rows hold which MTT entries. */
    long tableAddr;
    final MttSpace space = new MttSpace();
    private final ArrayDeque<HostFill> waiting = new ArrayDeque<>();
    /** Table reads of fills on their way (their rows must not be reused under them). */
    private int reading;

    /** A translation miss waiting for the host's interrupt handler: the table row it asks for. */
    private record HostFill(long row, Consumer<long[]> done) {}

    /** Entries one table read brings (mtt.fill.line / 8): the miss's own and its MR's neighbours in the line. */
    private final int lineEntries;
    /** The fill engine keeps the lines it read last: this many (an assumption: a line per walk in flight). */
    static final int LINES_KEPT = 8;
    /** Present entries brought with earlier lines, by MTT index, oldest first. */
    private final Recent<Long, Long> lines;

    /**
     * How misses are filled, from the profile: by the fill engine's DMA, or by the host's interrupt handler
     * ({@code mtt.fill}, "dma" when absent), and the bytes of table one read brings ({@code mtt.fill.line}, 8 B when
     * absent: the one entry).
     */
    record Config(boolean byInterrupt, int lineBytes) {
        Config {
            Require.powerOfTwo("mtt.fill.line", lineBytes, 8, 4096, "B");
        }

        static Config from(Profile p) {
            String fill = p.has("mtt.fill") ? p.text("mtt.fill") : "dma";
            long line = p.has("mtt.fill.line") ? p.bytes("mtt.fill.line") : 8;
            // checked before it is narrowed: a line of 4 GiB must not wrap to a valid one
            Require.powerOfTwo("mtt.fill.line", line, 8, 4096, "B");
            return new Config(Require.oneOf("mtt.fill", fill, "dma", "interrupt") == 1, (int) line);
        }
    }

    MttFill(Adapter adapter, Config cfg, FirmwareStat.Stats stats, Consumer<String> report,
            LongSupplier now) {
        this.adapter = adapter;
        this.now = now;
        this.stats = stats;
        this.report = report;
        this.byInterrupt = cfg.byInterrupt();
        this.lineEntries = cfg.lineBytes() / 8;
        this.lines = new Recent<>(LINES_KEPT * lineEntries);
    }

    void setVector(int vector) { this.vector = vector; }

    /** {@link Cmd#REG_XLATE_MISS}: bit 63 set and the table row of the oldest miss waiting, or 0. */
    long oldestMiss() { return waiting.isEmpty() ? 0 : 1L << 63 | waiting.peekFirst().row; }

    /**
     * {@code n} entries for an MR (see {@link MttSpace#take}): first the rows given back are freed
     * if no fill can still read them.
     */
    long take(long n) {
        settleIfIdle();
        return space.take(n);
    }

    /** Whether {@code n} entries can be had now (MttSpace#fits, rows given back freed if they may be). */
    boolean fits(long n) {
        settleIfIdle();
        return space.fits(n);
    }

    private void settleIfIdle() { if (reading == 0 && waiting.isEmpty()) space.settle(); }

    /** The host address of MTT entry {@code index}'s row, or -1 if no MR holds it. */
    long entryAddr(long index) {
        long row = space.row(index);
        return row < 0 ? -1 : tableAddr + row * 8;
    }

    /**
     * Answers entry {@code index} with {@code {entry, 0}}, {@code {0, 1}} when it cannot be had, or
     * {@code {0, 2}} when the entry marks its page not present (bit 0 set: a page address has it
     * clear), as an on-demand MR's are until their page is brought in.
     */
    void fill(long index, Consumer<long[]> done) {
        long row = space.row(index);
        if (row < 0 && space.sparse(index)) { // an implicit MR's page never touched
            done.accept(new long[]{0, MttPorts.FILL_NOT_PRESENT});
            return;
        }
        if (row < 0) { done.accept(new long[]{0, 1}); return; } // an entry no MR holds (any more)
        if (byInterrupt) {
            if (vector < 0) {
                stats.inc(FirmwareStat.XLATE_FILLS_UNANSWERABLE);
                report.accept("translation miss at MTT index " + index
                        + " with mtt.fill = interrupt, but no host handler registered (REG_XLATE_VECTOR)");
                done.accept(new long[]{0, 1});
                return;
            }
            waiting.add(new HostFill(row, done));
            stats.inc(FirmwareStat.XLATE_HOST_INTERRUPTS);
            if (waiting.size() == 1) adapter.port().msix(vector);
            return;
        }
        Long kept = lines.remove(index);
        if (kept != null) { // brought by an earlier line read: no PCIe read
            stats.inc(FirmwareStat.XLATE_LINE_HITS);
            done.accept(new long[]{kept, MttPorts.FILL_OK});
            return;
        }
        // the aligned line holding the entry, cut to its MR's run (the rest of the line is other MRs')
        // (an implicit MR's rows are not contiguous: its entry is read alone)
        long[] run = space.run(index);
        boolean alone = space.sparse(index);
        long pos = alone ? 0 : (tableAddr / 8 + row) % lineEntries; // the entry's place in its line
        long span = alone ? 1 : lineEntries;
        long from = Math.max(index - pos, run[0]), last = Math.min(index - pos + span - 1, run[0] + run[1] - 1);
        reading++;
        stats.inc(FirmwareStat.XLATE_TABLE_READS);
        // a run's rows are consecutive, so the line starts (index - from) rows before the entry's
        adapter.port().dmaRead(tableAddr + (row - (index - from)) * 8, (int) (last - from + 1) * 8, r -> {
            reading--;
            if (r.status() != PciPort.DmaStatus.OK) { done.accept(new long[]{0, MttPorts.FILL_FAILED}); return; }
            for (long j = from; j <= last; j++) { // the neighbours present are kept for the walks that will want them
                long e = BigEndian.get64(r.data(), (int) (j - from) * 8);
                if (j != index && (e & (MttEntry.NOT_PRESENT | MttEntry.IMPLICIT)) == 0) lines.keep(j, e);
            }
            long entry = BigEndian.get64(r.data(), (int) (index - from) * 8);
            if ((entry & MttEntry.NOT_PRESENT) != 0) done.accept(new long[]{0, MttPorts.FILL_NOT_PRESENT});
            // an implicit MR's page with nothing mapped there
            else if ((entry & MttEntry.IMPLICIT) != 0) done.accept(new long[]{0, MttPorts.FILL_FAILED});
            else done.accept(new long[]{entry, MttPorts.FILL_OK});
        });
    }

    /**
     * A page not present (on-demand paging) at MTT index {@code index}: the host's handler, interrupted
     * as for a miss, brings it and the request's next {@code pages - 1} pages in and marks their
     * entries present in the table; {@code done} then runs.
     */
    void pageFault(long index, long pages, Runnable done) {
        stats.inc(FirmwareStat.ODP_PAGE_FAULTS);
        long t0 = now.getAsLong();
        // fault latency: from the fault to its pages in, summed (divide by odp_faults_resolved)
        bringIn(index, pages, () -> {
            stats.add(FirmwareStat.ODP_FAULT_WAIT_PS, now.getAsLong() - t0);
            stats.inc(FirmwareStat.ODP_FAULTS_RESOLVED);
            done.run();
        });
    }

    /** Whether a host handler is registered to bring pages in (REG_XLATE_VECTOR). */
    boolean hasHandler() { return vector >= 0; }

    /**
     * Asks the host's handler to bring in (and mark present) the pages of MTT entries {@code index} on; {@code done}
     * runs after the last.
     */
    void bringIn(long index, long pages, Runnable done) {
        if (vector < 0) {
            report.accept("page fault at MTT index " + index + ", but no host handler registered (REG_XLATE_VECTOR)");
            return;
        }
        if (space.sparse(index)) materialize(index, pages, () -> interrupt(index, pages, done));
        else interrupt(index, pages, done);
    }

    /**
     * An implicit MR's untouched entries from {@code index} on get rows, each written with the
     * address of its page (the host's handler reads it there); {@code then} runs once all are written.
     */
    private void materialize(long index, long pages, Runnable then) {
        int[] left = {1};
        Runnable one = () -> { if (--left[0] == 0) then.run(); };
        for (long k = 0; k < pages; k++) {
            if (space.row(index + k) >= 0) continue;
            long row = space.materialize(index + k);
            if (row < 0) {
                stats.inc(FirmwareStat.ODP_IMPLICIT_OUT_OF_ROWS);
                report.accept("implicit ODP: no free MTT row for index " + (index + k) + " (mtt table full)");
                break;
            }
            byte[] e = new byte[8];
            BigEndian.put64(e, 0, space.implicitEntry(index + k));
            left[0]++;
            reading++; // a fill may read the row once it is written: it is not reused meanwhile
            adapter.port().dmaWrite(tableAddr + row * 8, e, w -> { reading--; one.run(); });
        }
        one.run();
    }

    private void interrupt(long index, long pages, Runnable done) {
        boolean idle = waiting.isEmpty();
        List<Long> rows = new ArrayList<>();
        for (long k = 0; k < pages; k++) { // the request's pages from the missing one on: one fault brings them all in
            long row = space.row(index + k);
            if (row >= 0) rows.add(row);
        }
        if (rows.isEmpty()) { // the MR went while its fault waited: nothing to bring in
            done.run();
            return;
        }
        for (int k = 0; k < rows.size(); k++) {
            boolean last = k == rows.size() - 1;
            waiting.add(new HostFill(rows.get(k), r -> { if (last) done.run(); }));
        }
        if (idle) adapter.port().msix(vector);
    }

    /** The host's answer to the oldest miss ({@link Cmd#REG_XLATE_FILL}); the next one, if any, interrupts again. */
    void hostAnswer(long row, long entry) {
        HostFill f = waiting.peekFirst();
        if (f == null || f.row != row) {
            stats.inc(FirmwareStat.XLATE_FILLS_REFUSED);
            report.accept(String.format("REG_XLATE_FILL for MTT row %d, but the oldest miss waiting is %s", row,
                    f == null ? "none" : "row " + f.row));
            return;
        }
        waiting.pollFirst();
        f.done.accept(new long[]{entry, 0});
        if (!waiting.isEmpty()) adapter.port().msix(vector);
    }
}
