package nicsim.sim;

import java.io.PrintStream;
import java.util.Collections;
import java.util.Map;
import java.util.TreeMap;

/**
 * Named event counters any block can use, named "<Block>.<what>" (e.g. "DoorbellDecoder.coalesced").
 * Sorted by name so a dump is the same on every run.
 */
public final class Counters {
    /** One counter. */
    public static final class Counter {
        private long value;
        public void inc() { value++; }
        public void add(long n) { value += n; }
        public long get() { return value; }
    }

    private final TreeMap<String, Counter> counters = new TreeMap<>();

    public Counter counter(String name) { return counters.computeIfAbsent(name, n -> new Counter()); }

    public long get(String name) {
        Counter c = counters.get(name);
        return c == null ? 0 : c.get();
    }

    /** Every counter and its value, sorted by name. */
    public Map<String, Long> snapshot() {
        TreeMap<String, Long> m = new TreeMap<>();
        counters.forEach((k, v) -> m.put(k, v.get()));
        return Collections.unmodifiableMap(m);
    }

    /** Counters whose name starts with {@code prefix}. */
    public Map<String, Long> snapshot(String prefix) {
        TreeMap<String, Long> m = new TreeMap<>();
        counters.forEach((k, v) -> { if (k.startsWith(prefix)) m.put(k, v.get()); });
        return Collections.unmodifiableMap(m);
    }

    public void print(PrintStream out) {
        int w = counters.keySet().stream().mapToInt(String::length).max().orElse(10);
        counters.forEach((k, v) -> out.printf("  %-" + w + "s %,d%n", k, v.get()));
    }
}
