package nicsim.cosim.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import nicsim.cosim.bench.WorkPerMessage.Figure;
import nicsim.cosim.bench.WorkPerMessage.Figures;
import nicsim.cosim.bench.WorkPerMessage.Run;

/**
 * The committed baseline of {@link WorkPerMessage} (cosim/bench-baseline/work-per-message.tsv) and the
 * check against it. A figure that rose beyond its tolerance is a regression; one that fell beyond it is
 * an improvement the baseline must record in the same commit, or the next regression hides behind it.
 */
public final class WorkBaseline {
    private WorkBaseline() {}

    /** Where the baseline lives, from the repository's root. */
    public static final String PATH = "cosim/bench-baseline/work-per-message.tsv";

    /** The command that measures afresh and rewrites the baseline. */
    public static final String UPDATE = "./nicsim bench --sections work --update-baseline";

    /** One row of the baseline: a run's iteration count and its figures. */
    public record Row(int iters, Figures figures) {}

    /** The TSV text of {@code measured}: comment lines, a header, a row per run of {@link WorkPerMessage#RUNS}. */
    public static String format(Map<String, Figures> measured) {
        StringBuilder s = new StringBuilder();
        s.append("# Work the simulator does per message (issue 56), checked by the cosim test ")
                .append("WorkPerMessageTest\n# and by ")
                .append(UPDATE.replace(" --update-baseline", "")).append("; rewritten by ").append(UPDATE)
                .append(".\n# Each figure per message: runs of 2n and n iterations (n = iters), after warm-ups,")
                .append(" differenced.\n")
                .append("# Tolerance either way, percent:");
        for (Figure f : Figure.values()) s.append(' ').append(f.column).append(' ').append(plain(f.tolerance));
        s.append("\nrun\titers");
        for (Figure f : Figure.values()) s.append('\t').append(f.column);
        s.append('\n');
        for (Run r : WorkPerMessage.RUNS) {
            Figures fig = measured.get(r.name());
            if (fig == null) throw new IllegalArgumentException("no figures for run '" + r.name() + "'");
            s.append(r.name()).append('\t').append(r.iters());
            for (Figure f : Figure.values()) s.append('\t').append(String.format(Locale.ROOT, "%.2f", fig.get(f)));
            s.append('\n');
        }
        return s.toString();
    }

    /** {@code d} without a fraction when it has none (15, 0.5). */
    public static String plain(double d) { return d == Math.rint(d) ? String.valueOf((long) d) : String.valueOf(d); }

    /** The baseline in {@code file}, by run name; a malformed line is an error naming the file, line and field. */
    public static Map<String, Row> read(Path file) throws IOException {
        if (!Files.exists(file))
            throw new IllegalArgumentException("baseline " + file + " does not exist; write it with " + UPDATE);
        Map<String, Row> rows = new LinkedHashMap<>();
        List<String> lines = Files.readAllLines(file);
        String[] header = null;
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i);
            if (line.isBlank() || line.startsWith("#")) continue;
            String[] cell = line.split("\t", -1);
            if (header == null) { header = cell; checkHeader(file, i + 1, header); continue; }
            String where = file + " line " + (i + 1);
            if (cell.length != header.length)
                throw new IllegalArgumentException(where + ": " + cell.length + " fields, the header has "
                        + header.length);
            double[] v = new double[Figure.values().length];
            for (int k = 0; k < v.length; k++) v[k] = number(where, header[k + 2], cell[k + 2]);
            int iters = (int) number(where, "iters", cell[1]);
            rows.put(cell[0], new Row(iters, new Figures(v[0], v[1], v[2], v[3], v[4])));
        }
        if (header == null) throw new IllegalArgumentException(file + ": no header line");
        return rows;
    }

    private static void checkHeader(Path file, int line, String[] header) {
        List<String> want = new ArrayList<>(List.of("run", "iters"));
        for (Figure f : Figure.values()) want.add(f.column);
        if (!List.of(header).equals(want))
            throw new IllegalArgumentException(file + " line " + line + ": header " + String.join(",", header)
                    + ", expected " + String.join(",", want) + "; rewrite it with " + UPDATE);
    }

    private static double number(String where, String field, String text) {
        try {
            return Double.parseDouble(text);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(where + ": " + field + " '" + text + "' is not a number");
        }
    }

    /**
     * What moved beyond its tolerance, one line each: a rise is a regression; a fall, a run missing from
     * the baseline or counted over other iterations asks for the baseline to be rewritten. Empty: all held.
     */
    public static List<String> compare(Map<String, Row> baseline, Map<String, Figures> measured) {
        List<String> problems = new ArrayList<>();
        for (Run r : WorkPerMessage.RUNS) {
            Figures now = measured.get(r.name());
            if (now == null) continue;
            Row old = baseline.get(r.name());
            if (old == null || old.iters() != r.iters()) {
                String why = old == null ? "not in the baseline"
                        : "the baseline counted " + old.iters() + " iterations, the run " + r.iters();
                problems.add(r.name() + ": " + why + "; rewrite the baseline in the same commit: " + UPDATE);
                continue;
            }
            for (Figure f : Figure.values()) {
                double was = old.figures().get(f), is = now.get(f);
                double change = was != 0 ? (is - was) / was * 100
                        : is == 0 ? 0 : Double.POSITIVE_INFINITY * Math.signum(is);
                if (Math.abs(change) <= f.tolerance) continue;
                String moved = String.format(Locale.ROOT,
                        "%s: %s %s from %,.2f to %,.2f per message (%+.1f %%, tolerance %s %%)",
                        r.name(), f.column, change > 0 ? "rose" : "fell", was, is, change, plain(f.tolerance));
                problems.add(change > 0 ? moved + ": the simulator does more work per message than the baseline"
                        : moved + ": better; rewrite the baseline in the same commit: " + UPDATE);
            }
        }
        return problems;
    }
}
