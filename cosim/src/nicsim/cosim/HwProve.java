package nicsim.cosim;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import nicsim.hw.VerilogFile;
import nicsim.hw.rtl.NativeBuild;
import nicsim.profile.Profile;
import nicsim.sim.PortWires;

/**
 * {@code nicsim hw prove}: a block's port contract ({@link ProveContract}) proved on its Verilog by
 * Yosys's SMT flow: {@code read -formal}, {@code prep}, {@code write_smt2}, then yosys-smtbmc with Z3
 * (Debian's Boolector 3.2 breaks yosys-smtbmc 0.23's pipe, so Z3 it is): a bounded model check to the
 * block's depth, then k-induction over the properties that passed. A property the check breaks is
 * FAILED, with its counterexample as a VCD and a GTKWave view; one induction closes is proved for
 * every depth; the others hold to the depth checked.
 *
 * <p>Two abstractions keep the proofs small and sound for safety properties: the memories' read data
 * is free on every edge (Yosys's {@code cutpoint}: whatever a table holds, the contract holds), and
 * their initial contents ({@code $readmem}) are dropped with them. The asynchronous reset is made
 * synchronous ({@code async2sync}), as the contract's reset sequence allows. The generated blocks
 * are reduced further ({@link ProveContract#cut}: queue tables read as free values, and narrowed
 * pass-through words; docs/blocks.md argues both); a user's own Verilog is proved whole.
 */
public final class HwProve {
    private HwProve() {}

    public enum Status { PROVED, BOUNDED, FAILED }

    /** One property's outcome; {@code vcd} is the counterexample of a FAILED one. */
    public record Result(ProveContract.Property property, Status status, int depth, double seconds, Path vcd) {
        public String describe() {
            return switch (status) {
                case PROVED -> "proved by induction (k=" + depth + ")";
                case BOUNDED -> "holds to depth " + depth + " (BMC; induction does not close)";
                case FAILED -> "FAILED at step " + depth + ": counterexample " + vcd;
            };
        }
    }

    /** The bounded model check's depth per block, in edges: the longest the block needs to show its contract. */
    public static int depth(String block) {
        return switch (block) {
            case "doorbell" -> 10;
            case "cqe" -> 3; // "no event without an arm" keeps 64 armed bits: 511 s at 3, loaded (docs/blocks.md)
            default -> 6;
        };
    }

    /** The Verilog to prove: the generated block, or the user's own files with their top module. */
    public record Design(List<Path> files, String top, boolean generated) {
        /** A user's own Verilog: proved whole, with no reduction of the generated blocks'. */
        public Design(List<Path> files, String top) { this(files, top, false); }
    }

    /** Writes {@code block}'s generated Verilog into {@code dir}. */
    public static Design generated(Profile profile, String block, Path dir) {
        String top = VerilogFile.write(BlockPairs.get(profile, block).rtl(), dir);
        return new Design(List.of(dir.resolve(top + ".v")), top, true);
    }

    /** Proves {@code block}'s contract on {@code design}; counterexamples go into {@code out}. */
    public static List<Result> prove(Profile profile, String block, Design design, int depth, Path out)
            throws IOException, InterruptedException {
        List<PortWires.Wire> wires = ProveContract.wires(profile, block);
        ProveContract.Wrapper w = ProveContract.wrapper(block, design.top(), wires, design.generated());
        List<Group> groups = groups(block, design.generated(), w.properties());
        Path dir = Files.createTempDirectory("nicsim-prove-").toAbsolutePath();
        try {
            List<Path> dut = stage(design, dir);
            Files.writeString(dir.resolve("wrapper.sv"), w.text());
            String key = block + "-" + hash(w.text() + groups, dut, depth);
            List<Result> cached = Cache.read(key, w.properties());
            if (cached != null) return cached;
            Map<String, Result> done = new LinkedHashMap<>();
            for (Group g : groups) {
                Set<String> skip = g.others(w.properties());
                double bmc = 0;
                while (!g.settledBy(skip)) { // the bounded check: a failure settles one property, the rest go again
                    long t0 = System.nanoTime();
                    Outcome o = check(dir, dut, g.cut(), skip, depth, false);
                    bmc = secs(t0);
                    if (o.failed == null) break;
                    ProveContract.Property p = find(w.properties(), o.failed);
                    Files.createDirectories(out);
                    Path vcd = out.resolve(block + "-" + o.failed + ".vcd");
                    Files.copy(dir.resolve("cex.vcd"), vcd, StandardCopyOption.REPLACE_EXISTING);
                    ProveView.write(vcd, wires);
                    done.put(o.failed, new Result(p, Status.FAILED, o.step, secs(t0), vcd));
                    skip.add(o.failed);
                }
                Set<String> induct = new LinkedHashSet<>(skip);
                if (!g.induction()) // not tried (ProveContract.Finer): what passed the bounded check holds to its depth
                    for (ProveContract.Property p : w.properties())
                        if (!induct.contains(p.label()))
                            done.put(p.label(), new Result(p, Status.BOUNDED, depth, bmc, null));
                // induction: a property it cannot close stays bounded, the others are tried again
                while (g.induction() && !g.settledBy(induct)) {
                    long t0 = System.nanoTime();
                    Outcome o = check(dir, dut, g.cut(), induct, depth, true);
                    double s = secs(t0);
                    if (o.failed == null) {
                        for (ProveContract.Property p : w.properties())
                            if (!induct.contains(p.label()))
                                done.put(p.label(), new Result(p, Status.PROVED, depth, s, null));
                        break;
                    }
                    done.put(o.failed, new Result(find(w.properties(), o.failed), Status.BOUNDED, depth, s, null));
                    induct.add(o.failed);
                }
            }
            List<Result> results = w.properties().stream().map(p -> done.get(p.label())).toList();
            if (results.stream().noneMatch(r -> r.status() == Status.FAILED)) Cache.write(key, results);
            return results;
        } finally {
            HwCost.deleteTree(dir);
        }
    }

    /** Properties proved on one model, cut by {@code cut}: the others are left out of its runs. */
    record Group(String cut, Set<String> labels, boolean induction) {
        Set<String> others(List<ProveContract.Property> all) {
            Set<String> out = new LinkedHashSet<>();
            for (ProveContract.Property p : all) if (!labels.contains(p.label())) out.add(p.label());
            return out;
        }

        /** Whether every property of the group is in {@code skip} (nothing left to check). */
        boolean settledBy(Set<String> skip) { return skip.containsAll(labels); }
    }

    /**
     * The models {@code block}'s properties are proved on: a user's Verilog whole; the generated RTL
     * cut by {@link ProveContract#cut}, but for the properties that need a finer model
     * ({@link ProveContract#finer}), each proved on its own.
     */
    static List<Group> groups(String block, boolean generated, List<ProveContract.Property> props) {
        Set<String> all = new LinkedHashSet<>();
        for (ProveContract.Property p : props) all.add(p.label());
        if (!generated) return List.of(new Group("", all, true));
        Map<String, ProveContract.Finer> finer = new TreeMap<>(ProveContract.finer(block));
        finer.keySet().retainAll(all);
        Set<String> main = new LinkedHashSet<>(all);
        main.removeAll(finer.keySet());
        List<Group> out = new ArrayList<>(List.of(new Group(ProveContract.cut(block), main, true)));
        finer.forEach((label, f) -> out.add(new Group(f.cut(), Set.of(label), f.induction())));
        return out;
    }

    private static ProveContract.Property find(List<ProveContract.Property> ps, String label) {
        return ps.stream().filter(p -> p.label().equals(label)).findFirst()
                .orElseThrow(() -> new IllegalStateException("yosys-smtbmc names an unknown property " + label));
    }

    /** Copies the design into {@code dir} without its memories' initial contents (see the class comment). */
    static List<Path> stage(Design d, Path dir) throws IOException {
        List<Path> out = new ArrayList<>();
        for (int i = 0; i < d.files().size(); i++) {
            Path f = d.files().get(i);
            if (!Files.isRegularFile(f)) throw new IllegalArgumentException("--verilog " + f + ": no such file");
            String text = Files.readString(f, StandardCharsets.UTF_8).replaceAll("(?m)^.*\\$readmem[bh].*$", "");
            Path to = dir.resolve("dut" + i + "_" + f.getFileName());
            Files.writeString(to, text);
            out.add(to);
        }
        return out;
    }

    private record Outcome(String failed, int step) {}

    private static final Pattern FAILED = Pattern.compile("Assert failed in \\S+: (p_\\w+)");
    private static final Pattern STEP = Pattern.compile("Checking assertions in step (\\d+)");

    /** One Yosys + yosys-smtbmc run over the properties not in {@code skip}; the first failing one, if any. */
    private static Outcome check(Path dir, List<Path> dut, String cut, Set<String> skip, int depth, boolean induction)
            throws IOException, InterruptedException {
        model(dir, dut, cut, skip, dir.resolve("model.smt2"));
        Files.deleteIfExists(dir.resolve("cex.vcd"));
        List<String> cmd = new ArrayList<>(
                List.of("yosys-smtbmc", "-s", "z3", "--unroll", "-t", Integer.toString(depth)));
        if (induction) cmd.add("-i");
        else cmd.addAll(List.of("--dump-vcd", dir.resolve("cex.vcd").toString()));
        cmd.add(dir.resolve("model.smt2").toString());
        String text = run(dir, cmd);
        if (text.contains("Status: PASSED")) return new Outcome(null, depth);
        Matcher m = FAILED.matcher(text);
        if (!text.contains("Status: FAILED") || !m.find())
            throw new IOException("yosys-smtbmc gave no verdict:\n" + text);
        int step = 0;
        Matcher s = STEP.matcher(text);
        while (s.find()) step = Integer.parseInt(s.group(1));
        return new Outcome(m.group(1), step);
    }

    /** Yosys's SMT model of the wrapper in {@code dir} over {@code dut}, cut by {@code cut}, without {@code skip}. */
    static void model(Path dir, List<Path> dut, String cut, Set<String> skip, Path model)
            throws IOException, InterruptedException {
        StringBuilder defs = new StringBuilder();
        for (String s : skip) defs.append(" -DSKIP_").append(s);
        // a netlist in Yosys's RTLIL (Vacuity's mutants) is read as it is: its memories keep their write ports whole
        String rtlil = String.join("", dut.stream().filter(f -> f.toString().endsWith(".il"))
                .map(f -> "read_rtlil " + f + "; ").toList());
        String files = String.join(" ", dut.stream().filter(f -> !f.toString().endsWith(".il")).map(Path::toString)
                .toList());
        String script = rtlil + (defs.isEmpty() ? "" : "verilog_defines" + defs + "; ")
                + "read -formal " + files + " " + dir.resolve("wrapper.sv") + "; prep -flatten -top "
                + ProveContract.TOP + "; cutpoint t:$mem_v2 t:$mem " + cut + "; opt_clean; async2sync; dffunmap; "
                + "write_smt2 -wires " + model;
        HwCost.yosys(dir, script, "the contract wrapper");
    }

    static String run(Path dir, List<String> cmd) throws IOException, InterruptedException {
        Path log = Files.createTempFile(dir, "smtbmc-", ".log");
        Process p = new ProcessBuilder(cmd).directory(dir.toFile()).redirectErrorStream(true)
                .redirectOutput(log.toFile()).start();
        if (!p.waitFor(20, TimeUnit.MINUTES)) {
            p.destroyForcibly();
            throw new IOException("yosys-smtbmc ran over 20 minutes: " + String.join(" ", cmd));
        }
        return Files.readString(log);
    }

    private static double secs(long t0) { return (System.nanoTime() - t0) / 1e9; }

    private static String hash(String wrapper, List<Path> dut, int depth) throws IOException {
        try {
            var md = MessageDigest.getInstance("SHA-256");
            md.update(wrapper.getBytes(StandardCharsets.UTF_8));
            // without SpinalHDL's "// Git hash" line: a commit that leaves the Verilog alone keeps the key
            for (Path p : dut)
                md.update(NativeBuild.withoutRepoHash(Files.readString(p)).getBytes(StandardCharsets.UTF_8));
            md.update(Integer.toString(depth).getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(md.digest()).substring(0, 24);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Passing results by a hash of the wrapper, the Verilog and the depth: CI proves a block once. */
    static final class Cache {
        private Cache() {}

        static Path dir() {
            String env = System.getenv("NICSIM_CACHE");
            return (env != null && !env.isEmpty() ? Path.of(env) : Path.of(System.getProperty("user.home"), ".cache",
                    "nicsim")).resolve("prove");
        }

        static List<Result> read(String key, List<ProveContract.Property> props) throws IOException {
            Path f = dir().resolve(key + ".txt");
            if (!Files.isRegularFile(f)) return null;
            List<Result> out = new ArrayList<>();
            for (String line : Files.readAllLines(f)) {
                String[] c = line.split("\t");
                out.add(new Result(find(props, c[0]), Status.valueOf(c[1]), Integer.parseInt(c[2]),
                        Double.parseDouble(c[3]), null));
            }
            return out.size() == props.size() ? out : null;
        }

        static void write(String key, List<Result> results) throws IOException {
            Files.createDirectories(dir());
            StringBuilder b = new StringBuilder();
            for (Result r : results)
                b.append(r.property().label()).append('\t').append(r.status()).append('\t').append(r.depth())
                        .append('\t').append(r.seconds()).append('\n');
            Files.writeString(dir().resolve(key + ".txt"), b.toString());
        }
    }
}
