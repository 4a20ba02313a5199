package nicsim.profile;

/**
 * The checks a block's {@code Config} makes of the values it took from a profile, as it is made: a run with a bad
 * value stops before any block exists, with an error naming the key, the value and what it must be
 * ({@code "mtt.cache.entries = 3: must be a power of two from 2 to 65536"}). {@code unit} is the canonical unit the
 * value is in ("ps", "B", "b/s"; "" for a count).
 */
public final class Require {
    private Require() {}

    /** The error for {@code key} holding {@code value} (with its unit) that is not what it {@code must} be. */
    public static IllegalArgumentException bad(String key, Object value, String must) {
        return new IllegalArgumentException(key + " = " + value + ": must be " + must);
    }

    /** {@code v}, which must be at least {@code min}. */
    public static long atLeast(String key, long v, long min, String unit) {
        if (v < min) throw bad(key, withUnit(v, unit), "at least " + withUnit(min, unit));
        return v;
    }

    /** {@code v}, which must lie in {@code [lo, hi]}. */
    public static long range(String key, long v, long lo, long hi, String unit) {
        if (v < lo || v > hi)
            throw bad(key, withUnit(v, unit), "from " + withUnit(lo, unit) + " to " + withUnit(hi, unit));
        return v;
    }

    /** {@code v}, which must be a power of two in {@code [lo, hi]}. */
    public static long powerOfTwo(String key, long v, long lo, long hi, String unit) {
        if (v < lo || v > hi || Long.bitCount(v) != 1)
            throw bad(key, withUnit(v, unit),
                    "a power of two from " + withUnit(lo, unit) + " to " + withUnit(hi, unit));
        return v;
    }

    /** The index in {@code accepted} of the text {@code v}. */
    public static int oneOf(String key, String v, String... accepted) {
        for (int i = 0; i < accepted.length; i++) if (accepted[i].equals(v)) return i;
        throw bad(key, "\"" + v + "\"", "one of \"" + String.join("\", \"", accepted) + "\"");
    }

    private static String withUnit(long v, String unit) { return unit.isEmpty() ? Long.toString(v) : v + " " + unit; }
}
