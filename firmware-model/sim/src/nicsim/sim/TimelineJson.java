package nicsim.sim;

import java.io.IOException;
import java.io.Writer;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * A {@link Trace} as trace-event JSON, the format ui.perfetto.dev and Chrome's trace viewer open,
 * laid out as a pipeline:
 * <ul>
 * <li>a process per node, and in it a track per block (DoorbellDecoder, WqeFetcher, MttWalker,
 *     the DMA engines, the link, CqeWriter) in the order a WQE meets them;</li>
 * <li>each stage of a transaction is a slice on the track of the block that did the work ending in
 *     that stage, from the transaction's previous stage to this one. When a block holds several
 *     transactions at once (a pipeline does), the overlapping slices go on numbered lanes under
 *     the block's track ("Link", "Link 2", ...), since slices of one track must nest;</li>
 * <li>flow arrows tie one transaction's slices together in order, across tracks and nodes;</li>
 * <li>counter tracks: how many transactions each block holds, and the trace's own samples (bytes
 *     moved become a rate in Gb/s over {@link #RATE_WINDOW_PICOS}).</li>
 * </ul>
 * Times are microseconds written to the picosecond, so nothing is rounded away.
 */
final class TimelineJson {
    private TimelineJson() {}

    /** The window over which a byte counter is shown as a rate: 1 us. */
    static final long RATE_WINDOW_PICOS = 1_000_000;

    /** Blocks in the order a send WQE meets them; others follow by name. */
    private static final List<String> BLOCK_ORDER = List.of("DoorbellDecoder", "WqeFetcher", "MttWalker",
            "DmaEngine host", "DmaEngine send", "Link", "DmaEngine receive", "CqeWriter");

    private record Slice(Trace.Entry e, long start, int seq) {}

    static void write(Trace trace, Writer w) throws IOException {
        // one slice per entry, from the transaction's previous stage (in time) to this one
        Map<String, List<Trace.Entry>> byTxn = new LinkedHashMap<>();
        for (Trace.Entry e : trace.entries()) byTxn.computeIfAbsent(e.txn(), k -> new ArrayList<>()).add(e);
        List<List<Slice>> chains = new ArrayList<>();
        List<Slice> all = new ArrayList<>();
        for (List<Trace.Entry> es : byTxn.values()) {
            List<Trace.Entry> sorted = new ArrayList<>(es);
            sorted.sort(Comparator.comparingLong(Trace.Entry::timePicos)); // stable: same-time stages keep their order
            List<Slice> chain = new ArrayList<>();
            for (int i = 0; i < sorted.size(); i++) {
                long start = sorted.get(i == 0 ? 0 : i - 1).timePicos();
                Slice s = new Slice(sorted.get(i), start, all.size());
                chain.add(s);
                all.add(s);
            }
            chains.add(chain);
        }
        // lanes: a block works on at most trace.lanes(track) transactions at once, each on a lane of
        // its own. Taken in the order they end (a block's service order), a slice goes on a lane free
        // since before it starts; when every lane is busy, it starts once the first one frees: the
        // time before that the transaction spent waiting for the block, shown by the flow arrow.
        Map<Slice, Integer> lane = new HashMap<>();
        Map<Slice, Long> shownStart = new HashMap<>();
        Map<String, List<Long>> lanesOf = new HashMap<>(); // track -> per lane, the end of its last slice
        List<Slice> byEnd = new ArrayList<>(all);
        byEnd.sort(Comparator.comparingLong((Slice s) -> s.e().timePicos()).thenComparingInt(Slice::seq));
        for (Slice s : byEnd) {
            List<Long> ls = lanesOf.computeIfAbsent(s.e().track(), k -> new ArrayList<>());
            int pick = -1;
            for (int l = 0; l < ls.size(); l++) // the free lane that freed last: keeps the others for later
                if (ls.get(l) <= s.start() && (pick < 0 || ls.get(l) > ls.get(pick))) pick = l;
            if (pick < 0 && ls.size() < trace.lanes(s.e().track())) { ls.add(Long.MIN_VALUE); pick = ls.size() - 1; }
            if (pick < 0) { pick = 0; for (int l = 1; l < ls.size(); l++) if (ls.get(l) < ls.get(pick)) pick = l; }
            shownStart.put(s, Math.max(s.start(), ls.get(pick)));
            ls.set(pick, s.e().timePicos());
            lane.put(s, pick);
        }
        // processes (nodes) and threads (block lanes), numbered in a stable order
        Map<String, Integer> pids = new TreeMap<>(TimelineJson::byNodeNumber);
        for (String t : lanesOf.keySet()) pids.put(node(t), 0);
        for (Trace.Sample s : trace.samples()) pids.put(node(s.track()), 0);
        int next = 1;
        for (Map.Entry<String, Integer> p : pids.entrySet()) p.setValue(next++);
        List<String> tracks = new ArrayList<>(lanesOf.keySet());
        tracks.sort(Comparator.comparing(TimelineJson::node, TimelineJson::byNodeNumber)
                .thenComparingInt(TimelineJson::blockRank).thenComparing(TimelineJson::block));
        Map<String, Integer> firstTid = new HashMap<>();
        int tid = 1;
        for (String t : tracks) { firstTid.put(t, tid); tid += lanesOf.get(t).size(); }

        Out out = new Out(w);
        for (Map.Entry<String, Integer> p : pids.entrySet()) {
            String head = "{\"ph\":\"M\",\"name\":";
            out.event(head + "\"process_name\",\"pid\":" + p.getValue()
                    + ",\"args\":{\"name\":" + json(p.getKey()) + "}}");
            out.event(head + "\"process_sort_index\",\"pid\":" + p.getValue()
                    + ",\"args\":{\"sort_index\":" + p.getValue() + "}}");
        }
        for (String t : tracks)
            for (int l = 0; l < lanesOf.get(t).size(); l++) {
                String head = "{\"ph\":\"M\",\"pid\":" + pids.get(node(t)) + ",\"tid\":" + (firstTid.get(t) + l);
                String name = block(t) + (l == 0 ? "" : " " + (l + 1));
                out.event(head + ",\"name\":\"thread_name\",\"args\":{\"name\":" + json(name) + "}}");
                out.event(head + ",\"name\":\"thread_sort_index\",\"args\":{\"sort_index\":" + (firstTid.get(t) + l)
                        + "}}");
            }
        int flowId = 0;
        for (List<Slice> chain : chains) {
            flowId++;
            for (int i = 0; i < chain.size(); i++) {
                Slice s = chain.get(i);
                Trace.Entry e = s.e();
                String where = "\"pid\":" + pids.get(node(e.track())) + ",\"tid\":"
                        + (firstTid.get(e.track()) + lane.get(s));
                long start = shownStart.get(s);
                out.event("{\"ph\":\"X\"," + where + ",\"name\":" + json(e.stage()) + ",\"cat\":" + json(e.block())
                        + ",\"ts\":" + micros(start) + ",\"dur\":" + micros(e.timePicos() - start)
                        + ",\"args\":{\"txn\":" + json(e.txn()) + ",\"detail\":" + json(e.detail()) + "}}");
                if (chain.size() < 2) continue;
                // the arrow leaves each slice where it starts and enters the next one where it starts
                String ph = i == 0 ? "\"s\"" : i == chain.size() - 1 ? "\"f\",\"bp\":\"e\"" : "\"t\"";
                out.event("{\"ph\":" + ph + "," + where + ",\"name\":" + json(e.txn()) + ",\"cat\":" + json(e.block())
                        + ",\"id\":" + flowId + ",\"ts\":" + micros(start) + "}");
            }
        }
        occupancy(out, all, pids);
        samples(out, trace.samples(), pids);
        out.close();
    }

    /** A counter per block: how many transactions have a slice on it at each time. */
    private static void occupancy(Out out, List<Slice> all, Map<String, Integer> pids) throws IOException {
        Map<String, TreeMap<Long, Integer>> deltas = new TreeMap<>();
        for (Slice s : all) {
            TreeMap<Long, Integer> d = deltas.computeIfAbsent(s.e().track(), k -> new TreeMap<>());
            d.merge(s.start(), 1, Integer::sum);
            d.merge(s.e().timePicos(), -1, Integer::sum);
        }
        for (Map.Entry<String, TreeMap<Long, Integer>> t : deltas.entrySet()) {
            int n = 0;
            for (Map.Entry<Long, Integer> d : t.getValue().entrySet()) {
                n += d.getValue();
                int pid = pids.get(node(t.getKey()));
                out.counter(pid, block(t.getKey()) + " WQEs", "WQEs", d.getKey(), Integer.toString(n));
            }
        }
    }

    /** The trace's own counter samples; bytes become a rate per window, back to 0 after a quiet window. */
    private static void samples(Out out, List<Trace.Sample> samples, Map<String, Integer> pids) throws IOException {
        Map<String, TreeMap<Long, Long>> rates = new TreeMap<>();
        for (Trace.Sample s : samples) {
            if (!s.bytes()) {
                int pid = pids.get(node(s.track()));
                out.counter(pid, block(s.track()), "value", s.timePicos(), Long.toString(s.value()));
                continue;
            }
            long window = s.timePicos() / RATE_WINDOW_PICOS * RATE_WINDOW_PICOS;
            rates.computeIfAbsent(s.track(), k -> new TreeMap<>()).merge(window, s.value(), Long::sum);
        }
        for (Map.Entry<String, TreeMap<Long, Long>> r : rates.entrySet()) {
            int pid = pids.get(node(r.getKey()));
            String name = block(r.getKey()) + " Gb/s";
            long lastWindow = Long.MIN_VALUE;
            for (Map.Entry<Long, Long> b : r.getValue().entrySet()) {
                if (lastWindow != Long.MIN_VALUE && b.getKey() > lastWindow + RATE_WINDOW_PICOS)
                    out.counter(pid, name, "Gb/s", lastWindow + RATE_WINDOW_PICOS, "0");
                out.counter(pid, name, "Gb/s", b.getKey(), BigDecimal.valueOf(b.getValue() * 8_000L, 0)
                        .divide(BigDecimal.valueOf(RATE_WINDOW_PICOS), 3, RoundingMode.HALF_EVEN)
                        .toPlainString());
                lastWindow = b.getKey();
            }
            out.counter(pid, name, "Gb/s", lastWindow + RATE_WINDOW_PICOS, "0");
        }
    }

    /** "node0/MttWalker" -> "node0"; a track with no node belongs to the one adapter there is. */
    private static String node(String track) {
        int slash = track.indexOf('/');
        return slash < 0 ? "adapter" : track.substring(0, slash);
    }

    private static String block(String track) { return track.substring(track.indexOf('/') + 1); }

    private static int blockRank(String track) {
        int i = BLOCK_ORDER.indexOf(block(track));
        return i < 0 ? BLOCK_ORDER.size() : i;
    }

    /** node2 before node10. */
    private static int byNodeNumber(String a, String b) {
        return a.length() != b.length() ? Integer.compare(a.length(), b.length()) : a.compareTo(b);
    }

    private static String micros(long picos) { return BigDecimal.valueOf(picos, 6).toPlainString(); }

    static String json(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (char c : (s == null ? "" : s).toCharArray()) {
            if (c == '"' || c == '\\') b.append('\\').append(c);
            else if (c < 0x20) b.append(String.format("\\u%04x", (int) c));
            else b.append(c);
        }
        return b.append('"').toString();
    }

    /** The event array, comma-separated as it is written. */
    private static final class Out {
        private final Writer w;
        private boolean first = true;

        Out(Writer w) throws IOException {
            this.w = w;
            w.write("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n");
        }

        void event(String e) throws IOException {
            if (!first) w.write(",\n");
            first = false;
            w.write(e);
        }

        void counter(int pid, String name, String series, long picos, String value) throws IOException {
            event("{\"ph\":\"C\",\"pid\":" + pid + ",\"name\":" + json(name) + ",\"ts\":" + micros(picos)
                    + ",\"args\":{" + json(series) + ":" + value + "}}");
        }

        void close() throws IOException {
            w.write("\n]}\n");
            w.flush();
        }
    }
}
