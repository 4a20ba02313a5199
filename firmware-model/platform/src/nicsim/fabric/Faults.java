package nicsim.fabric;

/**
 * Seeded fault injection on every link: each packet is independently dropped, corrupted (then
 * dropped by the receiver's ICRC check), duplicated, or delayed behind later packets (reordered),
 * with these probabilities. Parsed from "drop=0.01,dup=0.001,reorder=0.01,corrupt=0.001".
 */
public record Faults(double drop, double duplicate, double reorder, double corrupt) {
    public static final Faults NONE = new Faults(0, 0, 0, 0);

    public Faults {
        check("drop", drop);
        check("dup", duplicate);
        check("reorder", reorder);
        check("corrupt", corrupt);
    }

    private static void check(String name, double p) {
        if (!(p >= 0 && p < 1))
            throw new IllegalArgumentException("fault rate " + name + " = " + p + " must be in [0, 1)");
    }

    public boolean any() { return drop > 0 || duplicate > 0 || reorder > 0 || corrupt > 0; }

    public static Faults parse(String spec) {
        double d = 0, u = 0, r = 0, c = 0;
        if (spec == null || spec.isBlank() || spec.equals("none")) return NONE;
        for (String part : spec.split(",")) {
            String[] kv = part.trim().split("=");
            if (kv.length != 2)
                throw new IllegalArgumentException(
                        "fault '" + part + "' must be name=rate (drop, dup, reorder, corrupt)");
            double v;
            try {
                v = Double.parseDouble(kv[1].trim());
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("fault rate '" + kv[1] + "' of " + kv[0] + " is not a number");
            }
            switch (kv[0].trim()) {
                case "drop" -> d = v;
                case "dup" -> u = v;
                case "reorder" -> r = v;
                case "corrupt" -> c = v;
                default -> throw new IllegalArgumentException(
                        "fault '" + kv[0] + "' unknown; accepted: drop, dup, reorder, corrupt");
            }
        }
        return new Faults(d, u, r, c);
    }

    @Override public String toString() {
        if (!any()) return "none";
        return String.format("drop=%s,dup=%s,reorder=%s,corrupt=%s", drop, duplicate, reorder, corrupt);
    }
}
