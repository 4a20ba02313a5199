package nicsim.sim;

import java.io.IOException;
import java.io.Writer;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Per-transaction trace: a block records a stage of a transaction (a WQE, a DMA, a TLP) with the
 * current simulated time. Off by default; switched on per block (or for all), like gem5's debug
 * flags, so a run pays nothing for blocks nobody is looking at.
 */
public final class Trace {
    /** One record: when, which block, which transaction, what stage, free-form detail. */
    public record Entry(long timePicos, String block, String txn, String stage, String detail) {}

    private final Simulator sim;
    private final Set<String> enabled = new HashSet<>();
    private boolean all;
    private final List<Entry> entries = new ArrayList<>();

    Trace(Simulator sim) { this.sim = sim; }

    public void enable(String block) { enabled.add(block); }
    public void enableAll() { all = true; }
    public boolean enabled(String block) { return all || enabled.contains(block); }

    /** Records a stage if tracing is on for this block. */
    public void record(String block, String txn, String stage, String detail) {
        if (enabled(block)) entries.add(new Entry(sim.now(), block, txn, stage, detail));
    }

    public List<Entry> entries() { return Collections.unmodifiableList(entries); }

    public List<Entry> entries(String txn) {
        List<Entry> r = new ArrayList<>();
        for (Entry e : entries) if (e.txn().equals(txn)) r.add(e);
        return r;
    }

    /** Writes "time_ps,block,txn,stage,detail" lines with a header. */
    public void writeCsv(Writer w) throws IOException {
        w.write("time_ps,block,txn,stage,detail\n");
        for (Entry e : entries)
            w.write(e.timePicos() + "," + csv(e.block()) + "," + csv(e.txn()) + "," + csv(e.stage()) + "," + csv(e.detail()) + "\n");
        w.flush();
    }

    private static String csv(String s) {
        if (s == null) return "";
        return s.contains(",") || s.contains("\"") || s.contains("\n") ? "\"" + s.replace("\"", "\"\"") + "\"" : s;
    }
}
