package nicsim.profile;

import java.math.BigDecimal;
import java.util.Locale;

/**
 * The units a profile parameter may be written in. Each converts to one canonical integer unit per
 * dimension: picoseconds, hertz, bytes, bits, bits per second, or a plain count. Conversions must
 * be exact (7.5 ns is 7500 ps; 0.1 ps is an error), so a profile never smuggles rounding into time.
 */
public enum Unit {
    PS(Dimension.TIME, "ps", 1), NS(Dimension.TIME, "ns", 1_000), US(Dimension.TIME, "us", 1_000_000),
    MS(Dimension.TIME, "ms", 1_000_000_000L), S(Dimension.TIME, "s", 1_000_000_000_000L),
    HZ(Dimension.FREQUENCY, "Hz", 1), KHZ(Dimension.FREQUENCY, "kHz", 1_000),
    MHZ(Dimension.FREQUENCY, "MHz", 1_000_000), GHZ(Dimension.FREQUENCY, "GHz", 1_000_000_000L),
    BYTE(Dimension.SIZE, "B", 1), KIB(Dimension.SIZE, "KiB", 1024), MIB(Dimension.SIZE, "MiB", 1024 * 1024),
    GIB(Dimension.SIZE, "GiB", 1024L * 1024 * 1024),
    BIT(Dimension.WIDTH, "bit", 1),
    BPS(Dimension.RATE, "b/s", 1), KBPS(Dimension.RATE, "Kb/s", 1_000), MBPS(Dimension.RATE, "Mb/s", 1_000_000),
    GBPS(Dimension.RATE, "Gb/s", 1_000_000_000L),
    // a PCIe lane moves one bit per transfer, so GT/s per lane is a raw bit rate before encoding
    GTPS(Dimension.RATE, "GT/s", 1_000_000_000L),
    BYTES_PS(Dimension.RATE, "MB/s", 8_000_000L),
    CYCLES(Dimension.CYCLES, "cycles", 1),
    COUNT(Dimension.COUNT, "", 1);

    /** What a unit measures. */
    public enum Dimension { TIME, FREQUENCY, SIZE, WIDTH, RATE, CYCLES, COUNT, RATIO, TEXT }

    private final Dimension dimension;
    private final String symbol;
    private final long factor;

    Unit(Dimension d, String symbol, long factor) { this.dimension = d; this.symbol = symbol; this.factor = factor; }

    public Dimension dimension() { return dimension; }
    public String symbol() { return symbol; }

    /** Converts a decimal in this unit to the canonical integer; throws if not exact. */
    long toCanonical(BigDecimal value, String where) {
        BigDecimal c = value.multiply(BigDecimal.valueOf(factor));
        try {
            return c.longValueExact();
        } catch (ArithmeticException e) {
            throw new IllegalArgumentException(where + ": " + value.toPlainString() + " " + symbol
                    + " is not a whole number of " + canonicalSymbol(dimension));
        }
    }

    public static String canonicalSymbol(Dimension d) {
        switch (d) {
            case TIME: return "ps";
            case FREQUENCY: return "Hz";
            case SIZE: return "B";
            case WIDTH: return "bit";
            case RATE: return "b/s";
            case CYCLES: return "cycles";
            default: return "";
        }
    }

    public static Unit parse(String symbol, String where) {
        for (Unit u : values()) if (u.symbol.equals(symbol)) return u;
        String lower = symbol.toLowerCase(Locale.ROOT);
        for (Unit u : values())
            if (u.symbol.toLowerCase(Locale.ROOT).equals(lower) && u != MBPS && u != BYTES_PS) return u;
        throw new IllegalArgumentException(where + ": unknown unit '" + symbol + "' (known: ps ns us ms s,"
                + " Hz kHz MHz GHz, B KiB MiB GiB, bit, b/s Kb/s Mb/s Gb/s GT/s MB/s, cycles; a ratio as a/b;"
                + " text in quotes; or none)");
    }
}
