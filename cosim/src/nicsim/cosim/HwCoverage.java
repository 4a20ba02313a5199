package nicsim.cosim;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import nicsim.hw.VerilogFile;
import nicsim.hw.rtl.Toolchain;
import nicsim.profile.Profile;

/**
 * What the lockstep stimulus exercises of a block's RTL: Verilator's line coverage (each statement
 * block, and each arm of every if and case) and toggle coverage (each bit of each signal, counted
 * each time it changes) of a coverage build of the block (cached apart from the plain one), over the
 * block's random stimulus ({@link RtlInLoop#lockstep}) for a few seeds. Each run's data is kept in
 * {@code OUT/<block>/runs}, and {@code verilator_coverage --write} merges every run there, this
 * invocation's and earlier ones' (while the Verilog stays the same), into {@code merged.dat}; from it
 * come {@code merged.info} ({@code --write-info}) and, through lcov's {@code genhtml}, {@code html/}:
 * the Verilog with each line's hit count.
 */
public final class HwCoverage {
    private HwCoverage() {}

    /** One coverage point: where it is, what kind, what it names (the signal and edge for a toggle), its hits. */
    public record Point(String file, int line, String kind, String what, long count) {
        @Override public String toString() {
            return file + ":" + line + " " + kind + " " + what;
        }
    }

    /** A block's merged coverage; {@code html} is null when genhtml is not installed. */
    public record Report(String block, String module, int runs, List<Point> points, Path dir, Path info, Path html) {
        public long total(String kind) { return points.stream().filter(p -> p.kind().equals(kind)).count(); }

        public long hit(String kind) {
            return points.stream().filter(p -> p.kind().equals(kind) && p.count() > 0).count();
        }

        /** Hit over total of one kind, in percent (0 when the block has none of that kind). */
        public double percent(String kind) { return total(kind) == 0 ? 0 : 100.0 * hit(kind) / total(kind); }

        /** The points never hit, by file, line and name. */
        public List<Point> missed() {
            return points.stream().filter(p -> p.count() == 0).sorted(Comparator.comparing(Point::file)
                    .thenComparingInt(Point::line).thenComparing(Point::kind).thenComparing(Point::what)).toList();
        }
    }

    public static final String LINE = "line", TOGGLE = "toggle";

    /**
     * Runs {@code block}'s stimulus for {@code cycles} cycles with each of {@code seeds} against a coverage
     * build of its generated RTL, or of {@code own} (the user's files) when not null, and merges the
     * result with earlier runs in {@code out/<block>}. A run whose RTL diverges from the twin is an
     * IllegalStateException naming the divergence: what a wrong design covers means nothing.
     */
    public static Report run(Profile profile, String block, RtlInLoop.Own own, long cycles, List<Long> seeds, Path out,
                             Consumer<String> progress) throws IOException, InterruptedException {
        BlockPairs.Pair pair = BlockPairs.get(profile, block);
        Path dir = Files.createDirectories(out.resolve(block)).toAbsolutePath();
        Path runs = dir.resolve("runs");
        String module = sources(pair, own, dir);
        // runs of another Verilog have other points: they are dropped, not merged
        String key = hash(dir, own == null ? List.of(dir.resolve(module + ".v")) : own.files());
        Path keyFile = dir.resolve("verilog.sha256");
        if (!Files.exists(keyFile) || !Files.readString(keyFile).equals(key)) {
            if (Files.exists(runs)) HwCost.deleteTree(runs);
            Files.writeString(keyFile, key);
        }
        Files.createDirectories(runs);
        for (long seed : seeds) {
            Path dat = runs.resolve("seed" + seed + "-cycles" + cycles + ".dat");
            String d = RtlInLoop.lockstep(profile, block, own, cycles, seed, dat);
            if (d != null) {
                Files.deleteIfExists(dat);
                throw new IllegalStateException(block + ": the RTL diverged from its Java twin (seed " + seed + "), "
                        + "so its coverage is not taken: " + d);
            }
            progress.accept(block + ": seed " + seed + ", " + cycles + " cycles covered");
        }
        List<String> merge = new ArrayList<>(List.of("verilator_coverage", "--write", "merged.dat"));
        try (var s = Files.list(runs)) {
            s.map(p -> "runs/" + p.getFileName()).filter(n -> n.endsWith(".dat")).sorted().forEach(merge::add);
        }
        int count = merge.size() - 3;
        exec(dir, merge);
        exec(dir, List.of("verilator_coverage", "--write-info", "merged.info", "merged.dat"));
        Path html = null;
        if (Toolchain.onPath("genhtml")) {
            html = dir.resolve("html");
            if (Files.exists(html)) HwCost.deleteTree(html);
            exec(dir, List.of("genhtml", "--quiet", "--title", "nicsim " + block + " (" + module + ")",
                    "--output-directory", "html", "merged.info"));
            // the report opens on the Verilog itself (genhtml's page of it), not on the index of one file
            try (var w = Files.walk(html)) {
                html = w.filter(f -> f.getFileName().toString().matches(".*\\.s?v\\.gcov\\.html")).sorted().findFirst()
                        .orElse(html.resolve("index.html"));
            }
        }
        return new Report(block, module, count, parse(dir.resolve("merged.dat")), dir, dir.resolve("merged.info"),
                html);
    }

    /** Puts the Verilog the coverage build was made from in {@code dir} (the report's sources); its top module. */
    private static String sources(BlockPairs.Pair pair, RtlInLoop.Own own, Path dir) throws IOException {
        if (own == null) return VerilogFile.write(pair.rtl(), dir);
        for (Path f : own.files()) {
            if (!Files.isRegularFile(f)) throw new IllegalArgumentException("--verilog " + f + ": no such file");
            Files.copy(f, dir.resolve(f.getFileName()), StandardCopyOption.REPLACE_EXISTING);
        }
        return own.top();
    }

    private static String hash(Path dir, List<Path> files) throws IOException {
        try {
            var md = MessageDigest.getInstance("SHA-256");
            for (Path f : files) md.update(Files.readAllBytes(dir.resolve(f.getFileName())));
            return HexFormat.of().formatHex(md.digest());
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * The points of Verilator's coverage data: a line {@code C '<fields>' <count>}, whose fields are
     * key/value pairs (each key after \001, its value after \002): {@code f} file, {@code l} line,
     * {@code page} {@code v_line/...}, {@code v_branch/...} or {@code v_toggle/...}, {@code o} what the point
     * names (a toggle's signal bit and edge). Branch points count as lines (lcov shows both per line).
     */
    static List<Point> parse(Path dat) throws IOException {
        List<Point> out = new ArrayList<>();
        for (String l : Files.readAllLines(dat, StandardCharsets.ISO_8859_1)) {
            if (!l.startsWith("C '")) continue;
            int end = l.lastIndexOf('\'');
            Map<String, String> f = new HashMap<>();
            for (String kv : l.substring(3, end).split("\u0001")) {
                int i = kv.indexOf('\u0002');
                if (i > 0) f.put(kv.substring(0, i), kv.substring(i + 1));
            }
            String page = f.getOrDefault("page", "");
            String kind = page.startsWith("v_toggle") ? TOGGLE : LINE;
            out.add(new Point(f.getOrDefault("f", "?"), Integer.parseInt(f.getOrDefault("l", "0")), kind,
                    f.getOrDefault("o", ""), Long.parseLong(l.substring(end + 1).strip())));
        }
        return out;
    }

    private static void exec(Path dir, List<String> cmd) throws IOException, InterruptedException {
        Path log = Files.createTempFile("nicsim-coverage-", ".log");
        try {
            Process p = new ProcessBuilder(cmd).directory(dir.toFile()).redirectErrorStream(true)
                    .redirectOutput(log.toFile()).start();
            if (!p.waitFor(10, TimeUnit.MINUTES)) {
                p.destroyForcibly();
                throw new IOException(cmd.get(0) + " ran over 10 minutes in " + dir);
            }
            if (p.exitValue() != 0)
                throw new IOException(String.join(" ", cmd) + " failed in " + dir + ":\n" + Files.readString(log));
        } finally {
            Files.deleteIfExists(log);
        }
    }
}
