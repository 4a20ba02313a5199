package nicsim.sim;

import java.io.PrintStream;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Named event counters any block can use, named "<Block>.<what>" (e.g. "DoorbellDecoder.coalesced")
 * and kept under the path of the node that counts them (as gem5 names its statistics): node 0's
 * firmware counts {@code node0} / {@code Firmware.packets_in}, the fabric, shared by all, counts
 * at the top. The simulator's counters ({@link Simulator#counters()}) read every node's together
 * (a name's total); {@link #scope} gives the view one node's blocks count in, and reads that node's
 * alone. Sorted by name in a dump, so it is the same on every run.
 */
public final class Counters {
    /** One counter. */
    public static final class Counter {
        final String scope, name;
        private long value;
        Counter(String scope, String name) { this.scope = scope; this.name = name; }
        /** A counter of one's own, outside any dump (e.g. a tally shared by several parts). */
        public Counter() { this("", ""); }
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

    /** Every counter of every scope, by scope, then name. */
    private final Map<String, Map<String, Counter>> all;
    /** This view's scope ("" at the top). */
    private final String scope;
    private final Map<String, Counter> mine;
    private final boolean top;

    /** Scopes may be made from several threads (partitions run apart); each scope counts on one thread. */
    public Counters() { this(new ConcurrentHashMap<>(), "", true); }

    private Counters(Map<String, Map<String, Counter>> all, String scope, boolean top) {
        this.all = all;
        this.scope = scope;
        this.mine = all.computeIfAbsent(scope, s -> new HashMap<>());
        this.top = top;
    }

    /** The view the blocks under {@code path} (e.g. "node0") count in; "" is the top itself. */
    public Counters scope(String path) { return path.isEmpty() && top ? this : new Counters(all, path, false); }

    /** The scopes that hold counters, sorted ("" is the top's). */
    public SortedSet<String> scopes() {
        TreeSet<String> s = new TreeSet<>();
        all.forEach((k, v) -> { if (!v.isEmpty()) s.add(k); });
        return s;
    }

    /** Counter {@code name} of this view's scope, made if missing. */
    public Counter counter(String name) { return mine.computeIfAbsent(name, n -> new Counter(scope, n)); }

    /** A handle on counter {@code name} that creates it on its first count. */
    public Ref ref(String name) { return new Ref(name); }

    /** A handle on counter {@code stat}, as {@link #ref(String)}. */
    public Ref ref(Stat stat) { return new Ref(stat.counterName()); }

    /** The value of {@code name}: at the top, its total over every scope; in a scope, that scope's. */
    public long get(String name) {
        long sum = 0;
        for (Map<String, Counter> m : top ? all.values() : List.of(mine)) {
            Counter c = m.get(name);
            if (c != null) sum += c.get();
        }
        return sum;
    }

    /** Every counter and its value (at the top, each name's total), sorted by name. */
    public Map<String, Long> snapshot() { return snapshot(""); }

    /** Counters whose name starts with {@code prefix} (at the top, each name's total). */
    public Map<String, Long> snapshot(String prefix) {
        TreeMap<String, Long> m = new TreeMap<>();
        for (Map<String, Counter> s : top ? all.values() : List.of(mine))
            s.forEach((k, v) -> { if (k.startsWith(prefix)) m.merge(k, v.get(), Long::sum); });
        return Collections.unmodifiableMap(m);
    }

    public void print(PrintStream out) {
        Map<String, Long> s = snapshot();
        int w = s.keySet().stream().mapToInt(String::length).max().orElse(10);
        s.forEach((k, v) -> out.printf("  %-" + w + "s %,d%n", k, v));
    }
}
