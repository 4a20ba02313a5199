package nicsim.sim;

import java.io.IOException;
import java.io.Writer;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Per-transaction trace: a block records a stage of a transaction (a WQE, a DMA, a TLP) with the
 * current simulated time. Off by default; switched on per block (or for all), like gem5's debug
 * flags, so a run pays nothing for blocks nobody is looking at.
 */
public final class Trace {
    /**
     * One record: when, which block's trace switch, which transaction, what stage, free-form
     * detail, and the track it belongs on: "node/Block" for a block of a node's adapter (the
     * block that did the work ending in this stage), or the block's name alone.
     */
    public record Entry(long timePicos, String block, String txn, String stage, String detail, String track) {}

    /** A value a counter track takes from a time on ("node/what"), or bytes moved at a time when {@code bytes}. */
    public record Sample(long timePicos, String track, long value, boolean bytes) {}

    private final Simulator sim;
    private final Set<String> enabled = new HashSet<>();
    private boolean all;
    private final List<Entry> entries = new ArrayList<>();
    private final List<Sample> samples = new ArrayList<>();
    /** Transactions known by another name on another node (a message by its source and PSN): key -> txn. */
    private final Map<String, String> aliases = new HashMap<>();

    Trace(Simulator sim) { this.sim = sim; }

    public void enable(String block) { enabled.add(block); }
    public void enableAll() { all = true; }
    public boolean enabled(String block) { return all || !enabled.isEmpty() && enabled.contains(block); }

    private int limit = Integer.MAX_VALUE;
    private long dropped;

    /**
     * Keeps at most {@code max} entries (a long run's timeline would not fit in memory); later ones are counted, not
     * kept.
     */
    public void limit(int max) { limit = max; }
    /** Entries not kept because of {@link #limit}. */
    public long dropped() { return dropped; }

    private void add(Entry e) {
        if (entries.size() < limit) entries.add(e); else dropped++;
    }

    /** Records a stage if tracing is on for this block (on the block's own track). */
    public void record(String block, String txn, String stage, String detail) {
        recordOn(block, block, txn, stage, detail);
    }

    /** Records a stage on {@code track} if tracing is on for {@code block}. */
    public void recordOn(String block, String track, String txn, String stage, String detail) {
        if (enabled(block)) add(new Entry(sim.now(), block, txn, stage, detail, track));
    }

    /** Records a stage that happened at {@code timePicos} (noted earlier, recorded when its transaction is known). */
    public void recordAt(long timePicos, String block, String track, String txn, String stage, String detail) {
        if (timePicos > sim.now())
            throw new IllegalArgumentException("stage " + stage + " of " + txn + " at " + timePicos
                    + " ps is in the future");
        if (enabled(block)) add(new Entry(timePicos, block, txn, stage, detail, track));
    }

    /**
     * A counter track's sample, kept if tracing is on for {@code block}: {@code bytes} moved now
     * (shown as a rate), or else the value the counter takes now.
     */
    public void sample(String block, String track, long value, boolean bytes) {
        if (enabled(block) && samples.size() < limit) samples.add(new Sample(sim.now(), track, value, bytes));
    }

    public List<Sample> samples() { return Collections.unmodifiableList(samples); }

    /** Transactions a track's block works on at once (its channels, say); 1 unless declared. */
    private final Map<String, Integer> lanes = new HashMap<>();

    /** Declares that the block of {@code track} works on up to {@code n} transactions at once. */
    public void lanes(String track, int n) {
        if (n < 1) throw new IllegalArgumentException("lanes of track " + track + ": " + n + " (at least 1)");
        lanes.put(track, n);
    }

    /** Transactions the block of {@code track} works on at once. */
    public int lanes(String track) { return lanes.getOrDefault(track, 1); }

    /** From now on {@code key} names transaction {@code txn} (a message leaving one node, to be found by the next). */
    public void alias(String key, String txn) { if (aliases.size() < limit) aliases.put(key, txn); }

    /** The transaction {@code key} names, once (null if none was named). */
    public String takeAlias(String key) { return aliases.remove(key); }

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
            w.write(e.timePicos() + "," + csv(e.block()) + "," + csv(e.txn()) + "," + csv(e.stage()) + ","
                    + csv(e.detail()) + "\n");
        w.flush();
    }

    /** Writes the timeline as Perfetto / Chrome trace-event JSON: see {@link TimelineJson}. */
    public void writeChromeJson(Writer w) throws IOException { TimelineJson.write(this, w); }

    private static String csv(String s) {
        if (s == null) return "";
        return s.contains(",") || s.contains("\"") || s.contains("\n") ? "\"" + s.replace("\"", "\"\"") + "\"" : s;
    }
}
