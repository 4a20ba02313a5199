package nicsim.wave;

import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * A waveform read into memory: the timescale and, per signal (full dot-separated name), its
 * value changes in time order. Values are kept as canonical text: "0"/"1"/"x"/"z" for one-bit
 * signals and binary digits without leading zeros for vectors, so a trace from Verilator (which
 * pads) and one from the Java writer (which does not) compare equal.
 */
public final class Waveform {
    /** One value change. */
    public record Change(long time, String value) {}

    /** One signal and its history. */
    public static final class Signal {
        private final String name;
        private final int width;
        private final List<Change> changes = new ArrayList<>();

        Signal(String name, int width) { this.name = name; this.width = width; }
        public String name() { return name; }
        public int width() { return width; }
        public List<Change> changes() { return Collections.unmodifiableList(changes); }

        void add(long time, String value) {
            int last = changes.size() - 1;
            if (last >= 0 && changes.get(last).time() == time) changes.set(last, new Change(time, value));
            else if (last < 0 || !changes.get(last).value().equals(value)) changes.add(new Change(time, value));
        }

        /** The value in force at {@code time}, or "x" before the first change. */
        public String valueAt(long time) {
            int lo = 0, hi = changes.size() - 1, found = -1;
            while (lo <= hi) {
                int mid = (lo + hi) >>> 1;
                if (changes.get(mid).time() <= time) { found = mid; lo = mid + 1; } else hi = mid - 1;
            }
            return found < 0 ? "x" : changes.get(found).value();
        }

        /** The value at {@code time} as a number; empty if unknown there. */
        public Optional<BigInteger> numberAt(long time) {
            String v = valueAt(time);
            return v.chars().allMatch(c -> c == '0' || c == '1') ? Optional.of(new BigInteger(v, 2)) : Optional.empty();
        }
    }

    private final String timescale;
    private final Map<String, Signal> signals = new LinkedHashMap<>();
    private long endTime;

    Waveform(String timescale) { this.timescale = timescale; }

    public String timescale() { return timescale; }
    public Map<String, Signal> signals() { return Collections.unmodifiableMap(signals); }
    public long endTime() { return endTime; }

    public Signal signal(String fullName) {
        Signal s = signals.get(fullName);
        if (s == null)
            throw new IllegalArgumentException("no signal '" + fullName + "' in waveform (has " + signals.size()
                    + " signals)");
        return s;
    }

    Signal declare(String fullName, int width) {
        return signals.computeIfAbsent(fullName, n -> new Signal(n, width));
    }

    void setEndTime(long t) { endTime = Math.max(endTime, t); }

    static String canonical(String raw, int width) {
        String v = raw.toLowerCase();
        if (width == 1 && v.length() == 1) return v;
        int i = 0;
        while (i < v.length() - 1 && v.charAt(i) == '0') i++;
        return v.substring(i);
    }
}
