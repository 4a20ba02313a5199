package nicsim.profile;

import java.math.BigDecimal;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One profile parameter: name, value in its canonical unit (see {@link Unit}), the text it was
 * written as, what it means, and where the figure comes from. Ratios keep numerator and
 * denominator; text values keep their string.
 */
public record Param(String name, Unit.Dimension dimension, long value, long denominator, String text,
                    String written, String description, String source) {

    /** How the value prints: as written, plus the canonical value where it differs. */
    public String display() {
        String canon;
        switch (dimension) {
            case RATIO: canon = value + "/" + denominator; break;
            case TEXT: canon = text; break;
            case COUNT: canon = Long.toString(value); break;
            default: canon = value + " " + Unit.canonicalSymbol(dimension);
        }
        return canon.equals(written) ? written : written + " (= " + canon + ")";
    }

    static Param parse(String name, String valueText, String description, String source, String where) {
        String v = valueText.trim();
        if (v.startsWith("\"") && v.endsWith("\"") && v.length() >= 2)
            return new Param(name, Unit.Dimension.TEXT, 0, 1, v.substring(1, v.length() - 1), v, description, source);
        if (v.equals("true") || v.equals("false"))
            return new Param(name, Unit.Dimension.COUNT, v.equals("true") ? 1 : 0, 1, v, v, description, source);
        if (v.matches("0[xX][0-9a-fA-F_]+")) {
            long hex = Long.parseUnsignedLong(v.substring(2).replace("_", ""), 16);
            return new Param(name, Unit.Dimension.COUNT, hex, 1, null, v, description, source);
        }
        if (v.matches("\\d+\\s*/\\s*\\d+")) {
            String[] p = v.split("/");
            long num = Long.parseLong(p[0].trim()), den = Long.parseLong(p[1].trim());
            if (den == 0) throw new IllegalArgumentException(where + ": ratio " + v + " has a zero denominator");
            return new Param(name, Unit.Dimension.RATIO, num, den, null, v, description, source);
        }
        Matcher m = Pattern.compile("(-?[0-9][0-9_]*(?:\\.[0-9]+)?)\\s*(.*)")
                .matcher(v);
        if (!m.matches())
            throw new IllegalArgumentException(where + ": value '" + v
                    + "' is not a number with a unit, a ratio, true/false or \"text\"");
        BigDecimal number = new BigDecimal(m.group(1).replace("_", ""));
        Unit unit = m.group(2).isEmpty() ? Unit.COUNT : Unit.parse(m.group(2).trim(), where);
        return new Param(name, unit.dimension(), unit.toCanonical(number, where), 1, null, v, description, source);
    }
}
