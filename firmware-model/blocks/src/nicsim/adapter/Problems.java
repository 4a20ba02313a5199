package nicsim.adapter;

import java.util.AbstractList;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import nicsim.adapter.CqePorts.CqError;
import nicsim.adapter.WqePorts.WqeError;

/**
 * The problems an adapter found ({@link Adapter#report}): every one counted, in all and by kind, but only the first
 * and the last {@link #KEPT} reports themselves kept, so that an adapter which outlives many failing programs (a
 * long-lived serve) does not grow without bound. A killed program's queues alone once left ~65,000 reports a CQ.
 * Not thread-safe: the adapter's thread reports and reads.
 */
public final class Problems {
    /** Reports kept at each end: the first this many an adapter found, and the last this many. */
    public static final int KEPT = 1000;

    /** Problem {@code number} (0 for an adapter's first), found at {@code timePicos}. */
    public record Problem(long number, long timePicos, Object report) {}

    private final List<Problem> first = new ArrayList<>();
    /** The last ones once {@link #first} is full: a ring of {@link #KEPT}, the oldest at {@code lastStart}. */
    private Problem[] last;
    private int lastStart, lastSize;
    private long count;
    private final Map<String, Long> byKind = new TreeMap<>();
    private final List<Problem> kept = new AbstractList<>() {
        @Override public Problem get(int i) {
            if (i < first.size()) return first.get(i);
            if (i - first.size() >= lastSize) throw new IndexOutOfBoundsException("problem " + i + " of " + size());
            return last[(lastStart + i - first.size()) % KEPT];
        }

        @Override public int size() { return first.size() + lastSize; }
    };

    /** Counts problem {@code report} found at {@code timePicos} and keeps it, dropping the oldest of the last ones. */
    public Problem add(Object report, long timePicos) {
        Problem p = new Problem(count++, timePicos, report);
        byKind.merge(kind(report), 1L, Long::sum);
        if (first.size() < KEPT) {
            first.add(p);
        } else {
            if (last == null) last = new Problem[KEPT];
            last[(lastStart + lastSize) % KEPT] = p;
            if (lastSize < KEPT) lastSize++;
            else lastStart = (lastStart + 1) % KEPT;
        }
        return p;
    }

    /** How many problems were found, kept or not. */
    public long count() { return count; }

    /** How many were found of each kind (see {@link #kind}), by kind's name; a view. */
    public Map<String, Long> byKind() { return Collections.unmodifiableMap(byKind); }

    /** The problems kept, oldest first (numbers jump where some were not kept); a view, not a copy. */
    public List<Problem> kept() { return Collections.unmodifiableList(kept); }

    /** The problems kept numbered {@code number} or later, oldest first; a view, not a copy. */
    public List<Problem> since(long number) {
        int at;
        if (number < first.size()) at = (int) Math.max(0, number);
        else at = first.size() + (int) Math.max(0, Math.min(lastSize, number - (count - lastSize)));
        return kept().subList(at, kept.size());
    }

    /**
     * The reports kept, oldest first, with one line in their place where reports were not kept: all of them until
     * there are more than twice {@link #KEPT}. A view, not a copy.
     */
    public List<Object> reports() {
        return new AbstractList<>() {
            @Override public Object get(int i) {
                int gap = count > kept.size() ? first.size() : -1;
                if (i == gap) return String.format("(%,d reports not kept: the adapter keeps the first and last %d)",
                        count - kept.size(), KEPT);
                return kept.get(gap >= 0 && i > gap ? i - 1 : i).report();
            }

            @Override public int size() { return kept.size() + (count > kept.size() ? 1 : 0); }
        };
    }

    /**
     * A report's kind: the hardware's error records by their code ({@code CqError.CQ_IN_ERROR}), a text by its words
     * before the first number, colon or parenthesis ({@code MMIO write of}, {@code STALE_DBREC on qpn}), anything
     * else by its type.
     */
    public static String kind(Object report) {
        if (report instanceof CqError e) return e.code() < CqError.Code.values().length
                ? "CqError." + e.reason() : "CqError";
        if (report instanceof WqeError e) return e.code() < WqeError.Code.values().length
                ? "WqeError." + e.reason() : "WqeError";
        if (report instanceof DoorbellError e) return e.code() < DoorbellError.Code.values().length
                ? "DoorbellError." + e.reason() : "DoorbellError";
        if (!(report instanceof String s)) return report.getClass().getSimpleName();
        int end = 0;
        while (end < s.length() && ":(0123456789".indexOf(s.charAt(end)) < 0) end++;
        String words = s.substring(0, end).strip();
        return words.isEmpty() ? "String" : words;
    }
}
