package nicsim.profile;

import java.io.PrintStream;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A named, documented set of parameters (clock periods, widths, latencies, queue depths) that
 * sets every timing of a run. Blocks read their figures from the profile by name; no latency is a
 * literal in code. Typed accessors check the dimension, so asking for a time from a parameter
 * written in bytes is an error naming both.
 *
 * <p>Immutable; {@link #with(String, String)} derives a variant (the command line's overrides).
 */
public final class Profile {
    private final String name;
    private final String description;
    private final Map<String, Param> params;

    Profile(String name, String description, Map<String, Param> params) {
        this.name = name;
        this.description = description;
        this.params = Collections.unmodifiableMap(new LinkedHashMap<>(params));
    }

    public String name() { return name; }
    public String description() { return description; }
    public Map<String, Param> params() { return params; }
    public boolean has(String key) { return params.containsKey(key); }

    public Param param(String key) {
        Param p = params.get(key);
        if (p == null) throw new IllegalArgumentException("profile " + name + " has no parameter '" + key + "'");
        return p;
    }

    private long of(String key, Unit.Dimension d) {
        Param p = param(key);
        if (p.dimension() != d)
            throw new IllegalArgumentException("profile " + name + ": parameter " + key + " = " + p.written()
                    + " is a " + p.dimension() + ", not a " + d);
        return p.value();
    }

    /** A duration in picoseconds. */
    public long picos(String key) { return of(key, Unit.Dimension.TIME); }

    /**
     * A clock period in picoseconds: written either as a period or as a frequency. A frequency
     * whose period is not a whole number of picoseconds (33 MHz) is rounded to the nearest one.
     */
    public long periodPicos(String key) {
        Param p = param(key);
        if (p.dimension() == Unit.Dimension.TIME) return p.value();
        if (p.dimension() == Unit.Dimension.FREQUENCY) {
            if (p.value() <= 0) throw new IllegalArgumentException("profile " + name + ": " + key + " must be > 0 Hz");
            return Math.round(1e12 / p.value());
        }
        throw notA(p, "not a period or frequency");
    }

    public long bytes(String key) { return of(key, Unit.Dimension.SIZE); }
    public int bytesInt(String key) { return Math.toIntExact(bytes(key)); }
    public int bits(String key) { return Math.toIntExact(of(key, Unit.Dimension.WIDTH)); }
    public long bitsPerSecond(String key) { return of(key, Unit.Dimension.RATE); }
    public long cycles(String key) { return of(key, Unit.Dimension.CYCLES); }
    public long count(String key) { return of(key, Unit.Dimension.COUNT); }
    public int countInt(String key) { return Math.toIntExact(count(key)); }

    public boolean bool(String key) {
        Param p = param(key);
        if (p.dimension() != Unit.Dimension.COUNT || !(p.written().equals("true") || p.written().equals("false")))
            throw notA(p, "not true/false");
        return p.value() == 1;
    }

    /** A ratio as {numerator, denominator}. */
    public long[] ratio(String key) {
        Param p = param(key);
        if (p.dimension() != Unit.Dimension.RATIO)
            throw notA(p, "not a ratio a/b");
        return new long[]{p.value(), p.denominator()};
    }

    public String text(String key) {
        Param p = param(key);
        if (p.dimension() != Unit.Dimension.TEXT)
            throw notA(p, "not \"text\"");
        return p.text();
    }

    private IllegalArgumentException notA(Param p, String what) {
        return new IllegalArgumentException("profile " + name + ": parameter " + p.name() + " = " + p.written()
                + " is " + what);
    }

    /** A variant with one parameter replaced (it must exist, and keep its dimension). */
    public Profile with(String key, String valueText) {
        Param old = param(key);
        Param p = Param.parse(key, valueText, old.description(), "override", "override " + key);
        if (p.dimension() != old.dimension()
                && !(old.dimension() == Unit.Dimension.TIME && p.dimension() == Unit.Dimension.FREQUENCY)
                && !(old.dimension() == Unit.Dimension.FREQUENCY && p.dimension() == Unit.Dimension.TIME))
            throw new IllegalArgumentException("override " + key + " = " + valueText + ": a " + p.dimension()
                    + " where the profile has a " + old.dimension() + " (" + old.written() + ")");
        Map<String, Param> m = new LinkedHashMap<>(params);
        m.put(key, p);
        return new Profile(name, description, m);
    }

    /** Prints every parameter with its value, meaning and source. */
    public void print(PrintStream out) {
        out.println("profile " + name + ": " + description);
        int w = params.keySet().stream().mapToInt(String::length).max().orElse(10);
        int vw = params.values().stream().mapToInt(p -> p.display().length()).max().orElse(10);
        for (Param p : params.values())
            out.printf("  %-" + w + "s  %-" + vw + "s  %s%s%n", p.name(), p.display(), p.description(),
                    p.source().isEmpty() ? "" : "  [" + p.source() + "]");
    }

    @Override public String toString() { return "Profile(" + name + ", " + params.size() + " params)"; }
}
