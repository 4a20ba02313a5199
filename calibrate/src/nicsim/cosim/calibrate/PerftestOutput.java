package nicsim.cosim.calibrate;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The figures in perftest's output as it prints them (ib_send_lat, ib_write_lat, ib_read_lat,
 * ib_send_bw, ib_write_bw, ib_read_bw; one size or {@code -a}), and in {@code nicsim run}'s, which
 * prints the same tables: for each test, each message size with its typical latency (perftest's
 * t_typical, the median) or its average bandwidth. perftest's MB/sec are 2^20 bytes per second
 * (perftest_parameters.c: format_factor 0x100000), its Gb/sec (--report_gbits) 10^9 bits.
 */
public final class PerftestOutput {
    private PerftestOutput() {}

    /** One measured point: the workload (nicsim run's name for the test), the message size, and the figure. */
    public record Point(String workload, long bytes, double value, String where) {
        public boolean latency() { return workload.endsWith("_lat"); }
        /** The figure's unit: us for a latency, Gb/s for a bandwidth. */
        public String unit() { return latency() ? "us" : "Gb/s"; }
    }

    private static final Pattern TITLE = Pattern.compile(
            "(?i)^\\s*(send|rdma_write|write|rdma_read|read)\\s*(latency|lat|bw)\\b(\\s+test|\\s+\\(nicsim)?");

    /**
     * The points of {@code text} (from {@code source}, which errors name); IllegalArgumentException
     * naming the line when one does not parse, or the source when it holds no table.
     */
    public static List<Point> parse(String text, String source) {
        List<Point> out = new ArrayList<>();
        String workload = null;
        int column = -1;
        double scale = 1;
        String[] lines = text.split("\n", -1);
        for (int i = 0; i < lines.length; i++) {
            String line = lines[i], where = source + ":" + (i + 1);
            Matcher t = TITLE.matcher(line);
            if (t.find() && t.group(3) != null) {
                String op = t.group(1).toLowerCase(Locale.ROOT).replace("rdma_", "");
                workload = op + (t.group(2).equalsIgnoreCase("bw") ? "_bw" : "_lat");
                column = -1;
                continue;
            }
            if (line.strip().startsWith("#bytes")) {
                if (workload == null) throw new IllegalArgumentException(where
                        + ": a table with no test title before it "
                        + "(perftest prints e.g. 'Send Latency Test' or 'RDMA_Write BW Test')");
                List<String> heads = headings(line);
                boolean lat = workload.endsWith("_lat");
                String want = lat ? "t_typical[usec]" : "BW average";
                column = -1;
                for (int c = 0; c < heads.size(); c++) if (heads.get(c).startsWith(want)) column = c;
                if (column < 0) throw new IllegalArgumentException(where + ": no '" + want + "' column in '"
                        + line.strip() + "'");
                scale = lat ? 1 : heads.get(column).contains("Gb/sec") ? 1 : (1 << 20) * 8 / 1e9;
                continue;
            }
            if (column < 0) continue;
            String[] f = line.strip().split("\\s+");
            if (f.length == 0 || !f[0].matches("\\d+")) {
                if (!line.isBlank() && !line.strip().startsWith("-")) column = -1; // the table ended
                continue;
            }
            if (f.length <= column) throw new IllegalArgumentException(where + ": " + f.length
                    + " fields, the table has "
                    + (column + 1) + " or more");
            double v;
            try {
                v = Double.parseDouble(f[column]);
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException(where + ": '" + f[column] + "' is not a number");
            }
            if (!(v > 0)) throw new IllegalArgumentException(where + ": figure " + f[column] + " is not positive");
            out.add(new Point(workload, Long.parseLong(f[0]), v * scale, where));
        }
        if (out.isEmpty()) throw new IllegalArgumentException(source + ": no perftest table found (a test title, "
                + "then '#bytes ...' and its rows)");
        return out;
    }

    /** A header line's column names: perftest separates them by two or more spaces or tabs. */
    private static List<String> headings(String line) {
        List<String> out = new ArrayList<>();
        for (String h : line.strip().split("\\s{2,}|\\t+")) if (!h.isBlank()) out.add(h.strip());
        // "#bytes #iterations" may be one space apart
        List<String> fixed = new ArrayList<>();
        for (String h : out) {
            if (h.startsWith("#bytes ")) {
                fixed.add("#bytes");
                fixed.add(h.substring(7).strip());
            } else {
                fixed.add(h);
            }
        }
        return fixed;
    }
}
