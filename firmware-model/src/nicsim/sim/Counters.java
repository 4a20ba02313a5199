package nicsim.sim;

import java.io.PrintStream;
import java.util.Collections;
import java.util.HashMap;
import java.util.Map;
import java.util.TreeMap;

/**
 * Named event counters any block can use, named "<Block>.<what>" (e.g. "DoorbellDecoder.coalesced").
 * Found by hash (blocks look theirs up as they count); sorted by name in a dump, so it is the same
 * on every run.
 */
public final class Counters {
    /** One counter. */
    public static final class Counter {
        private long value;
        public void inc() { value++; }
        public void add(long n) { value += n; }
        public long get() { return value; }
    }

    /**
     * A counter a block keeps in a field to count on a hot path without a lookup. It joins the
     * dump on its first count, as a counter looked up by name where it is counted would.
     */
    public final class Ref {
        private final String name;
        private Counter c;
        private Ref(String name) { this.name = name; }
        public void inc() { if (c == null) c = counter(name); c.value++; }
        public void add(long n) { if (c == null) c = counter(name); c.value += n; }
    }

    private final HashMap<String, Counter> counters = new HashMap<>();

    public Counter counter(String name) { return counters.computeIfAbsent(name, n -> new Counter()); }

    /** A handle on counter {@code name} that creates it on its first count. */
    public Ref ref(String name) { return new Ref(name); }

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
        snapshot().forEach((k, v) -> out.printf("  %-" + w + "s %,d%n", k, v));
    }
}
