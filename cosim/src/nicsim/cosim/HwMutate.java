package nicsim.cosim;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import nicsim.hw.VerilogFile;
import nicsim.hw.rtl.NativeBuild;
import nicsim.profile.Profile;
import nicsim.sim.PortWires;

/**
 * How good the lockstep is at catching RTL bugs: Yosys's {@code mutate} makes single-point mutants
 * of a block's generated RTL (an input or output bit of one cell inverted or tied to 0 or 1), each
 * is run as the user's own RTL against the Java twin on the block's random stimulus
 * ({@link RtlInLoop#lockstep}), and counted as killed (a divergence) or survived. The score is the
 * share killed; survivors are listed by their mutation (cell, port, bit, source line), for the
 * stimulus to be improved or the mutant judged equivalent. Translation-table initial values are not
 * mutated (their zeros are rewritten by the driver before use).
 *
 * <p>All the mutants live in one netlist, Verilated once: each {@code mutate} command gets
 * {@code -ctrl nicsim_mutant W i} (as MCY does), which makes the mutation a multiplexer enabled only
 * while the new input {@code nicsim_mutant} equals i, so select 0 is the unmutated design and select i
 * mutant i alone. The lockstep then runs once per select value on the same library (cached by the
 * netlist's hash like any RTL), where a build per mutant cost a Verilator and C++ compile each.
 */
public final class HwMutate {
    private HwMutate() {}

    /** The input port Yosys adds to select a mutant (0: none). */
    static final String SELECT = "nicsim_mutant";

    /** One mutant: the Yosys command that made it (without its select), and what became of it. */
    public record Mutant(String mutation, Fate fate, String detail) {}

    public enum Fate { KILLED, SURVIVED }

    /**
     * What a run gave: the mutants; the seconds the netlist of all of them took to make and Verilate
     * (near 0 when cached), and the seconds of lockstep per mutant, on average; the block's list of
     * mutants judged equivalent ({@link #equivalents}: mutation to the reason), kept with its RTL; and
     * Yosys's equivalence check of every survivor ({@link HwEquiv}), by mutation.
     */
    public record Report(String block, List<Mutant> mutants, double buildSeconds, double secondsPerMutant,
                         Map<String, String> judged, Map<String, HwEquiv.Outcome> proofs) {
        public Report(String block, List<Mutant> mutants, double buildSeconds, double secondsPerMutant,
                      Map<String, String> judged) {
            this(block, mutants, buildSeconds, secondsPerMutant, judged, Map.of());
        }

        public long killed() { return mutants.stream().filter(m -> m.fate() == Fate.KILLED).count(); }
        public long survived() { return mutants.stream().filter(m -> m.fate() == Fate.SURVIVED).count(); }
        /** Killed among those run, as a fraction. */
        public double score() { return mutants.isEmpty() ? 0 : (double) killed() / mutants.size(); }
        /** The survivors the block's list judges equivalent: no stimulus can kill them. */
        public List<Mutant> equivalent() {
            return mutants.stream().filter(m -> m.fate() == Fate.SURVIVED && judged.containsKey(m.mutation())).toList();
        }
        /** Mutants the list calls equivalent that the lockstep killed: the list is wrong about them. */
        public List<Mutant> wronglyJudged() {
            return mutants.stream().filter(m -> m.fate() == Fate.KILLED && judged.containsKey(m.mutation())).toList();
        }
        /** Killed among the mutants not judged equivalent, as a fraction (the usual mutation score). */
        public double scoreOfNonEquivalent() {
            long n = mutants.size() - equivalent().size();
            return n == 0 ? 0 : (double) killed() / n;
        }
        /** The survivors Yosys proved equivalent: left out of {@link #scoreOfNotProven}. */
        public List<Mutant> provenEquivalent() {
            return mutants.stream().filter(m -> m.fate() == Fate.SURVIVED && proofs.containsKey(m.mutation())
                    && proofs.get(m.mutation()).verdict() == HwEquiv.Verdict.PROVEN_EQUIVALENT).toList();
        }
        /** Listed as equivalent by hand but not proved so by Yosys: the list must say why (bounded only). */
        public List<Mutant> listedNotProven() {
            return equivalent().stream().filter(m -> !provenEquivalent().contains(m)).toList();
        }
        /**
         * Killed among the mutants not proven equivalent, as a fraction: the issue's score (MCY leaves
         * mutants its equivalence check proves out of the score the same way).
         */
        public double scoreOfNotProven() {
            long n = mutants.size() - provenEquivalent().size();
            return n == 0 ? 0 : (double) killed() / n;
        }
    }

    /**
     * The survivors of {@code top}'s mutants judged equivalent, each with its reason: resource
     * {@code nicsim/hw/<top>.equivalent-mutants} (beside the RTL in {@code hw/resources}), empty if it
     * has none, read by {@link #equivalents(String, String)}. A changed RTL renumbers Yosys's cells, so
     * a stale entry matches no mutant and counts for nothing (the judgement must be made again).
     */
    public static Map<String, String> equivalents(String top) throws IOException {
        String res = "/nicsim/hw/" + top + ".equivalent-mutants";
        try (InputStream in = HwMutate.class.getResourceAsStream(res)) {
            if (in == null) return new LinkedHashMap<>();
            return equivalents(res, new String(in.readAllBytes(), StandardCharsets.UTF_8));
        }
    }

    /**
     * The entries of list {@code text} (named {@code res} in errors), by mutation: an entry is a {@code mutate}
     * command as {@code hw mutate} prints it, then one or more indented lines of reason; {@code #} starts a
     * comment line. A command line that ends in " \" goes on in the next line, whose indent is dropped: the
     * command is the lines joined, so a list keeps its lines short and still names the exact command.
     */
    static Map<String, String> equivalents(String res, String text) {
        Map<String, String> out = new LinkedHashMap<>();
        String mutation = null;
        StringBuilder why = new StringBuilder();
        String[] lines = text.split("\n");
        for (int i = 0; i < lines.length; i++) {
            String l = lines[i];
            if (l.isBlank() || l.startsWith("#")) continue;
            if (l.startsWith("mutate ")) {
                put(out, res, mutation, why);
                StringBuilder command = new StringBuilder(l.strip());
                while (command.toString().endsWith(" \\")) {
                    if (++i == lines.length || lines[i].isBlank())
                        throw new IllegalStateException(res + ": the command goes on (\" \\\") but no line follows: "
                                + command);
                    command.setLength(command.length() - 1);
                    command.append(lines[i].strip());
                }
                mutation = command.toString();
                why.setLength(0);
            } else if (Character.isWhitespace(l.charAt(0)) && mutation != null) {
                why.append(why.length() == 0 ? "" : " ").append(l.strip());
            } else {
                throw new IllegalStateException(res + ": expected a mutate command or an indented reason, got: " + l);
            }
        }
        put(out, res, mutation, why);
        return out;
    }

    private static void put(Map<String, String> out, String res, String mutation, StringBuilder why) {
        if (mutation == null) return;
        if (why.length() == 0) throw new IllegalStateException(res + ": no reason given for " + mutation);
        out.put(mutation, why.toString());
    }

    /**
     * {@code count} mutants of {@code block} built for {@code profile}, each run for {@code cycles} cycles, and
     * each survivor's equivalence checked by Yosys ({@link HwEquiv}).
     */
    public static Report run(Profile profile, String block, int count, long seed, long cycles,
                             Consumer<String> progress) throws IOException, InterruptedException {
        return run(profile, block, count, seed, cycles, true, progress);
    }

    /**
     * As {@link #run(Profile, String, int, long, long, Consumer)}; {@code proveSurvivors} false leaves out Yosys's
     * equivalence checks (minutes a survivor, cold), as CI's mutation floors do: {@link Report#proofs} is empty.
     */
    public static Report run(Profile profile, String block, int count, long seed, long cycles, boolean proveSurvivors,
                             Consumer<String> progress) throws IOException, InterruptedException {
        BlockPairs.Pair pair = BlockPairs.get(profile, block);
        Path dir = Files.createTempDirectory("nicsim-mutate-").toAbsolutePath();
        try {
            long t0 = System.nanoTime();
            String top = VerilogFile.write(pair.rtl(), dir);
            Netlist n = netlist(dir, top, count, seed, block, "");
            List<String> list = n.mutations();
            long t1 = System.nanoTime();
            List<PortWires.Wire> wires = ProveContract.wires(profile, block);
            NativeBuild.Compiled rtl = NativeBuild.compileVerilog(pair.rtlName(), pair.rtl(), List.of(n.file()), top,
                    wires.stream().filter(PortWires.Wire::input).map(PortWires.Wire::name).toList(),
                    wires.stream().filter(w -> !w.input()).map(PortWires.Wire::name).toList(), false,
                    Map.of(SELECT, selectWidth(list.size())), true); // quick: a short stimulus a mutant
            double build = (System.nanoTime() - t0) / 1e9;
            progress.accept(String.format("netlist of %d mutants: Yosys %.1f s%s, Verilator and g++ %.1f s",
                    list.size(), (t1 - t0) / 1e9, n.cached() ? " (cached)" : "", (System.nanoTime() - t1) / 1e9));
            // the netlist Yosys writes back, unmutated, must agree with the twin: else a kill means nothing
            String base = RtlInLoop.lockstep(profile, block, rtl, new long[] {0}, cycles, seed);
            if (base != null)
                throw new IllegalStateException("Yosys's netlist of " + block + " already differs: " + base);
            long t2 = System.nanoTime();
            List<Mutant> out = new ArrayList<>();
            for (int i = 0; i < list.size(); i++) {
                String d = RtlInLoop.lockstep(profile, block, rtl, new long[] {i + 1}, cycles, seed);
                Mutant r = new Mutant(list.get(i), d == null ? Fate.SURVIVED : Fate.KILLED, d == null ? "" : d);
                out.add(r);
                progress.accept(String.format("mutant %d/%d %s: %s", i + 1, list.size(), r.fate(), r.mutation()));
            }
            double each = list.isEmpty() ? 0 : (System.nanoTime() - t2) / 1e9 / list.size();
            List<String> survivors = out.stream().filter(m -> m.fate() == Fate.SURVIVED).map(Mutant::mutation).toList();
            return new Report(block, out, build, each, equivalents(top),
                    proveSurvivors ? HwEquiv.check(dir, top, survivors, progress) : Map.of());
        } finally {
            HwCost.deleteTree(dir);
        }
    }

    /** Raised when cached netlists may no longer hold; 2: Verilog numbered without SpinalHDL's commit line. */
    private static final String NETLIST_VERSION = "netlist-2";

    /** Yosys's mutations of a module and the netlist holding them all; {@code cached}: found, not made. */
    record Netlist(List<String> mutations, Path file, boolean cached) {}

    /**
     * {@link #mutations} and {@link #writeAll} of module {@code top} (its Verilog in {@code dir}), cached under
     * {@code NICSIM_CACHE/mutate} by a hash of the Verilog, the count, seed and selection and Yosys's version:
     * Yosys elaborates a large block for tens of seconds, twice, and the same inputs give the same netlist.
     */
    static Netlist netlist(Path dir, String top, int count, long seed, String what, String selection)
            throws IOException, InterruptedException {
        // the text exactly, as Yosys numbers the mutants by its lines; NETLIST_VERSION drops results made before
        String key = sha256(Files.readString(dir.resolve(top + ".v")), Integer.toString(count), Long.toString(seed),
                selection, yosysVersion(), NETLIST_VERSION);
        Path cache = cacheRoot().resolve("mutate").resolve(top + "-" + key.substring(0, 24));
        Path list = cache.resolve("mutations.txt"), file = cache.resolve(top + "_mutants.v");
        if (Files.isRegularFile(list) && Files.isRegularFile(file))
            return new Netlist(Files.readAllLines(list), file, true);
        List<String> made = mutations(dir, top, count, seed, what, selection);
        // made beside its place in the cache, so the move into place is a rename (/tmp may be another file system)
        Path work = Files.createTempDirectory(Files.createDirectories(cache.getParent()), ".netlist-");
        try {
            writeAll(dir, top, made, work.resolve(file.getFileName()));
            Files.write(work.resolve(list.getFileName()), made);
            Files.move(work, cache, StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            // another process may have made it meanwhile: same inputs, same files, either copy will do
            if (!Files.isRegularFile(file)) throw e;
        } finally {
            if (Files.exists(work)) HwCost.deleteTree(work);
        }
        return new Netlist(made, file, false);
    }

    /** Where nicsim keeps what it builds once: NICSIM_CACHE, else ~/.cache/nicsim. */
    static Path cacheRoot() {
        String env = System.getenv("NICSIM_CACHE");
        return env != null && !env.isEmpty() ? Path.of(env) : Path.of(System.getProperty("user.home"), ".cache",
                "nicsim");
    }

    static String yosysVersion() throws IOException, InterruptedException {
        Process p = new ProcessBuilder("yosys", "-V").redirectErrorStream(true).start();
        String v = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
        if (p.waitFor() != 0) throw new IOException("yosys -V failed: " + v);
        return v;
    }

    static String sha256(String... parts) {
        try {
            var md = MessageDigest.getInstance("SHA-256");
            for (String s : parts) md.update((s + "\u0000").getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(md.digest());
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Bits of a select that numbers {@code count} mutants from 1 (0 is the unmutated design). */
    static int selectWidth(int count) { return Math.max(1, 32 - Integer.numberOfLeadingZeros(count)); }

    /**
     * Writes module {@code top} (its Verilog in {@code dir}) with every one of {@code mutations} in it
     * as {@code file}, mutation i enabled while input {@link #SELECT} is i + 1.
     */
    static void writeAll(Path dir, String top, List<String> mutations, Path file)
            throws IOException, InterruptedException {
        int w = selectWidth(mutations.size());
        StringBuilder script = new StringBuilder(read(top));
        for (int i = 0; i < mutations.size(); i++)
            script.append("; ").append(mutations.get(i)).append(" -ctrl ").append(SELECT).append(' ').append(w)
                    .append(' ').append(i + 1);
        HwCost.yosys(dir, script + "; write_verilog -noattr " + file, file.toString());
    }

    /** The Yosys script that reads module {@code top} from {@code top}.v in the current folder. */
    private static String read(String top) {
        return "read_verilog " + top + ".v; hierarchy -top " + top + "; proc; opt_clean";
    }

    /** {@code count} {@code mutate} commands for module {@code top} (its Verilog in {@code dir}), by {@code seed}. */
    static List<String> mutations(Path dir, String top, int count, long seed, String what)
            throws IOException, InterruptedException {
        return mutations(dir, top, count, seed, what, "");
    }

    /**
     * The cells next to the ports: those within two cells of an output port's driver (Yosys's
     * {@code %ci4}, alternating wires and cells), where the handshakes, the payload registers' loads
     * and the counters' registers are. A port property no random mutant reaches is aimed at here.
     */
    static final String NEAR_PORTS = "o:* %ci4";

    /** As above, mutating only the cells of Yosys {@code selection} ("" for all). */
    static List<String> mutations(Path dir, String top, int count, long seed, String what, String selection)
            throws IOException, InterruptedException {
        HwCost.yosys(dir, read(top) + "; mutate -list " + count * 4 + " -seed " + seed + " -o mutants.txt"
                + (selection.isEmpty() ? "" : " " + selection), what);
        List<String> list = new ArrayList<>();
        for (String l : Files.readAllLines(dir.resolve("mutants.txt")))
            if (l.startsWith("mutate ") && !l.contains("$meminit") && list.size() < count) list.add(l.strip());
        return list;
    }

    /** Writes module {@code top} (its Verilog in {@code dir}) with {@code mutation} applied, as {@code file}. */
    static void writeMutant(Path dir, String top, String mutation, Path file) throws IOException, InterruptedException {
        HwCost.yosys(dir, read(top) + "; " + mutation + "; write_verilog -noattr " + file, file.toString());
    }
}
