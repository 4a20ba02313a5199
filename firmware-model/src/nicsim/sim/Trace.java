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

    private int limit = Integer.MAX_VALUE;
    private long dropped;

    /** Keeps at most {@code max} entries (a long run's timeline would not fit in memory); later ones are counted, not kept. */
    public void limit(int max) { limit = max; }
    /** Entries not kept because of {@link #limit}. */
    public long dropped() { return dropped; }

    private void add(Entry e) {
        if (entries.size() < limit) entries.add(e); else dropped++;
    }

    /** Records a stage if tracing is on for this block. */
    public void record(String block, String txn, String stage, String detail) {
        if (enabled(block)) add(new Entry(sim.now(), block, txn, stage, detail));
    }

    /** Records a stage that happened at {@code timePicos} (noted earlier, recorded when its transaction is known). */
    public void recordAt(long timePicos, String block, String txn, String stage, String detail) {
        if (timePicos > sim.now()) throw new IllegalArgumentException("stage " + stage + " of " + txn + " at " + timePicos + " ps is in the future");
        if (enabled(block)) add(new Entry(timePicos, block, txn, stage, detail));
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

    /**
     * Writes Chrome/Perfetto trace-event JSON (open it at ui.perfetto.dev or chrome://tracing):
     * one track per transaction, and between two consecutive stages of a transaction a span named
     * for the later stage, so a WQE's timeline shows how long each step took. Times in
     * microseconds, to the picosecond.
     */
    public void writeChromeJson(Writer w) throws IOException {
        java.util.Map<String, List<Entry>> byTxn = new java.util.LinkedHashMap<>();
        for (Entry e : entries) byTxn.computeIfAbsent(e.txn(), k -> new ArrayList<>()).add(e);
        w.write("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[");
        boolean first = true;
        int tid = 0;
        for (java.util.Map.Entry<String, List<Entry>> t : byTxn.entrySet()) {
            tid++;
            List<Entry> es = t.getValue();
            w.write((first ? "" : ",") + "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":1,\"tid\":" + tid
                    + ",\"args\":{\"name\":" + json(t.getKey()) + "}}");
            first = false;
            for (int i = 0; i < es.size(); i++) {
                Entry e = es.get(i);
                long start = i == 0 ? e.timePicos() : es.get(i - 1).timePicos();
                w.write(",{\"ph\":\"X\",\"pid\":1,\"tid\":" + tid + ",\"name\":" + json(e.stage()) + ",\"cat\":" + json(e.block())
                        + ",\"ts\":" + micros(start) + ",\"dur\":" + micros(e.timePicos() - start)
                        + ",\"args\":{\"detail\":" + json(e.detail()) + "}}");
            }
        }
        w.write("]}\n");
        w.flush();
    }

    private static String micros(long picos) { return java.math.BigDecimal.valueOf(picos, 6).toPlainString(); }

    private static String json(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (char c : (s == null ? "" : s).toCharArray()) {
            if (c == '"' || c == '\\') b.append('\\').append(c);
            else if (c < 0x20) b.append(String.format("\\u%04x", (int) c));
            else b.append(c);
        }
        return b.append('"').toString();
    }

    private static String csv(String s) {
        if (s == null) return "";
        return s.contains(",") || s.contains("\"") || s.contains("\n") ? "\"" + s.replace("\"", "\"\"") + "\"" : s;
    }
}
