package nicsim.cosim;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import nicsim.hw.rtl.NativeBuild;
import nicsim.profile.Profile;
import nicsim.profile.Profiles;
import nicsim.sim.PortWires;

/**
 * {@code hw prove --mutants}: can each property of a block's contract fail at all? Each property is
 * given Yosys mutants of the generated block aimed at what it rests on ({@link #aims}): the cells
 * driving the outputs it reads tied to what it forbids, the consumer's ready tied to 1 where the block
 * reads it (for a Stream's {@code _holds} and {@code _stable}), and the cone behind its outputs (four
 * cells deep, plus the narrow adders of the whole cone: counters and indexes, not 64-bit address sums).
 * The mutants are then run greedily: for each property not broken yet, its own mutants one by one until
 * one breaks it; each run names every property that mutant breaks ({@code --keep-going}), so most
 * properties are settled by another property's mutant. A property none of its own mutants breaks is vacuous for them.
 *
 * <p>As in {@code hw mutate}, every mutant is in one netlist (Yosys RTLIL here), picked by a
 * select input the wrapper passes up as a free input of its own: Yosys makes one SMT model a group of
 * properties ({@link HwProve#groups}), and each mutant is one yosys-smtbmc run on it with the select
 * held at its number by a constraint file ({@code --smtc}). A model whose properties are all broken
 * is not run again. Results are cached under {@code NICSIM_CACHE/prove} by a hash of the contract, the
 * Verilog (without SpinalHDL's commit line), the aims, the count, seed, depth and Yosys's version.
 */
public final class Vacuity {
    private Vacuity() {}

    /**
     * The outcome: per property (the contract's order), the mutation that first broke it, or null
     * (vacuous for these mutants); the mutants made and the mutants run; {@code cached}: read back.
     */
    public record Report(Map<String, String> broken, int made, int run, boolean cached) {
        public long vacuous() { return broken.values().stream().filter(v -> v == null).count(); }
    }

    /**
     * What property {@code label} rests on, as Yosys selections of the block's cells, each with the
     * {@code mutate} mode it is drawn with ("" for any): first its outputs' drivers, tied to the value
     * the property forbids (a valid or counter to 1 in reset, an extra output transfer; a missing
     * answer for {@code _answered_next}); then the cone.
     */
    record Aim(String selection, String mode, String wires) {
        boolean direct() { return wires != null; }
        /** The payload registers' load enables: the selection's {@code $mux} cells, each one's select tied to 1. */
        boolean enables() { return ENABLES.equals(mode); }
    }

    /** An {@link Aim}'s mode for the load enables of the payload registers (made from the cells, not drawn). */
    static final String ENABLES = "enables";

    static List<Aim> aims(String label, Set<String> reads, List<PortWires.Wire> wires) {
        String outs = String.join(" ", reads.stream().map(r -> "o:" + r).toList()) + " %u".repeat(reads.size() - 1);
        String alternatives = String.join("|", reads.stream().map(Pattern::quote).toList());
        List<Aim> out = new ArrayList<>();
        if (label.endsWith("_holds") || label.endsWith("_stable")) {
            // the output Stream's ready tied to 1 where the block reads it: the block lets go of a transfer the
            // consumer never took (the valid drops, or the next payload shows, while ready is low)
            String ready = "io_" + label.replaceFirst("^p_", "").replaceFirst("_(holds|stable)$", "") + "_ready";
            if (wires.stream().anyMatch(w -> w.input() && w.name().equals(ready)))
                out.add(new Aim("i:" + ready + " %co2", "const1", Pattern.quote(ready)));
            // the payload's registers load on every edge: where the valid is held by two guards at once (wqe's
            // request: neither busy nor a request waiting), no single mutant of one guard lets the payload move
            List<String> payload = reads.stream().filter(r -> r.contains("_payload_")).map(r -> "o:" + r).toList();
            if (label.endsWith("_stable") && !payload.isEmpty())
                out.add(new Aim(String.join(" ", payload) + " %u".repeat(payload.size() - 1) + " %ci4 t:$mux %i",
                        ENABLES, ""));
        } else {
            // a valid or a counter 1 in reset, an output transfer with no input; a missing answer
            out.add(new Aim(outs + " %ci2", label.endsWith("_answered_next") ? "const0" : "const1", alternatives));
        }
        // the cone four cells deep, and the narrow adders anywhere in the whole cone; not the memories, whose read
        // data the proof cuts (a mutant of a memory port is invisible there, and makes Yosys's model slow)
        out.add(new Aim(outs + " %ci8 " + outs + " %ci* " + NARROW_ADDERS + " %i %u t:$mem* %d", "", null));
        return out;
    }

    /** The Yosys script that reads module %s from %s.v in the current folder, as {@code hw mutate} does. */
    private static final String READ = "read_verilog %s.v; hierarchy -top %s; proc; opt_clean";

    /** Adders and subtractors of at most 16 bits: counters, occupancies and indexes, not address sums. */
    static final String NARROW_ADDERS = "t:$add t:$sub %u r:Y_WIDTH<=16 %i";

    /** Direct mutants per property: drivers' bits tied (the first of these that hits a read output). */
    private static final int DIRECT = 2;

    /**
     * The outputs of the module under proof that property {@code label} reads, from the wrapper's text:
     * the {@code io_} names in its assertion, and in the definitions of the balance it reads, if any.
     */
    static Set<String> reads(String wrapper, String label, List<PortWires.Wire> wires) {
        Matcher m = Pattern.compile("(?s)`ifndef SKIP_" + label + "\n(.*?)`endif").matcher(wrapper);
        if (!m.find()) throw new IllegalStateException("the contract wrapper has no property " + label);
        StringBuilder text = new StringBuilder(m.group(1));
        Matcher b = Pattern.compile("f_balance\\d+").matcher(m.group(1));
        Set<String> balances = new LinkedHashSet<>();
        while (b.find()) balances.add(b.group());
        for (String line : wrapper.split("\n"))
            for (String bal : balances)
                if (line.contains(" " + bal + "_sum = ") || line.contains(" " + bal + "_held = ")) text.append(line);
        Set<String> outputs = new LinkedHashSet<>();
        for (PortWires.Wire w : wires) if (!w.input()) outputs.add(w.name());
        Set<String> out = new LinkedHashSet<>();
        Matcher io = Pattern.compile("\\bio_\\w+").matcher(text);
        while (io.find()) if (outputs.contains(io.group())) out.add(io.group());
        if (out.isEmpty()) throw new IllegalStateException(label + " reads no output of the module");
        return out;
    }

    /**
     * Vacuity of {@code block}: {@code count} cone mutants a property beside its direct ones, to {@code depth} (a
     * finer model to at most {@link #FINER_DEPTH}).
     */
    public static Report run(Profile profile, String block, int count, long seed, int depth, Consumer<String> progress)
            throws IOException, InterruptedException {
        Path dir = Files.createTempDirectory("nicsim-prove-mutants-").toAbsolutePath();
        try {
            HwProve.Design d = HwProve.generated(profile, block, dir);
            // mutants are made from the Verilog without the tables' initial contents, which Yosys would write out
            // entry by entry (the proof leaves them free anyway)
            Path top = d.files().get(0);
            Files.writeString(top, Files.readString(top).replaceAll("(?m)^.*\\$readmem[bh].*$", ""));
            List<PortWires.Wire> wires = ProveContract.wires(profile, block);
            ProveContract.Wrapper w = ProveContract.wrapper(block, d.top(), wires, true);
            Map<String, List<Aim>> aims = new LinkedHashMap<>();
            for (ProveContract.Property p : w.properties())
                aims.put(p.label(), aims(p.label(), reads(w.text(), p.label(), wires), wires));
            String key = block + "-" + HwMutate.sha256(w.text(), NativeBuild.withoutRepoHash(Files.readString(top)),
                    aims.toString(), count + "/" + seed + "/" + depth + "/" + FINER_DEPTH, HwMutate.yosysVersion())
                    .substring(0, 24);
            Map<String, String> cached = readCache(key, aims.keySet());
            if (cached != null) return new Report(cached, -1, -1, true);
            Map<String, List<Integer>> own = new LinkedHashMap<>();
            List<String> mutations = mutations(dir, d.top(), aims, count, seed, block, own);
            Report r = runAll(dir, d.top(), w, HwProve.groups(block, true, w.properties()), mutations, own, depth,
                    progress);
            writeCache(key, r.broken());
            return r;
        } finally {
            HwCost.deleteTree(dir);
        }
    }

    /**
     * {@code Vacuity BLOCK DEPTH [MUTANTS] [PROFILE]}: the vacuity check alone, without the proof {@code hw prove
     * --mutants} runs first (3 mutants, seed 1 and cx-gen3x16 by default, as {@code HwProveTest}; cached alike).
     */
    public static void main(String[] args) throws Exception {
        if (args.length < 2) throw new IllegalArgumentException("usage: Vacuity BLOCK DEPTH [MUTANTS] [PROFILE]");
        Profile profile = Profiles.load(args.length > 3 ? args[3] : "cx-gen3x16");
        long t0 = System.nanoTime();
        Report r = run(profile, args[0], args.length > 2 ? Integer.parseInt(args[2]) : 3, 1,
                Integer.parseInt(args[1]), System.out::println);
        System.out.printf("%s, depth %s: %d of %d broken, %s, %.0f s%n", args[0], args[1],
                r.broken().size() - r.vacuous(), r.broken().size(),
                r.cached() ? "cached" : r.run() + " run of " + r.made() + " made", (System.nanoTime() - t0) / 1e9);
        r.broken().forEach((k, m) -> System.out.printf("  %-30s %s%n", k, m == null ? "VACUOUS" : m));
    }

    /**
     * Every property's mutants, made in one Yosys run over module {@code top}: the list of distinct
     * mutations, and in {@code own} each property's mutants as indexes into it, direct ones first.
     */
    private static List<String> mutations(Path dir, String top, Map<String, List<Aim>> aims, int count, long seed,
                                          String what, Map<String, List<Integer>> own)
            throws IOException, InterruptedException {
        StringBuilder script = new StringBuilder(READ.formatted(top, top));
        int i = 0;
        for (List<Aim> list : aims.values())
            for (Aim a : list) {
                if (a.enables()) {
                    script.append("; tee -q -o aim").append(i++).append(".txt select -list ").append(a.selection());
                    continue;
                }
                // direct: several drawn, the first DIRECT that hit an output the property reads are kept
                script.append("; mutate -list ").append(a.direct() ? 8 * DIRECT : count).append(" -seed ").append(seed)
                        .append(a.mode().isEmpty() ? "" : " -mode " + a.mode()).append(" -o aim").append(i++)
                        .append(".txt ").append(a.selection());
            }
        HwCost.yosys(dir, script.toString(), what + "'s aimed mutants");
        List<String> all = new ArrayList<>();
        i = 0;
        for (Map.Entry<String, List<Aim>> e : aims.entrySet()) {
            List<Integer> mine = new ArrayList<>();
            for (Aim a : e.getValue()) {
                Path f = dir.resolve("aim" + i++ + ".txt");
                int kept = 0;
                for (String l : Files.isRegularFile(f) ? Files.readAllLines(f) : List.<String>of()) {
                    // select -list names a cell as module/cell: its select input tied to 1
                    if (a.enables() && l.startsWith(top + "/"))
                        l = "mutate -mode const1 -module " + top + " -cell " + l.substring(top.length() + 1)
                                + " -port S -portbit 0";
                    if (!l.startsWith("mutate ") || l.contains("$meminit")) continue;
                    if (a.direct() && (kept == DIRECT || !a.enables() && !l.matches(".* -wire (" + a.wires() + ") .*")))
                        continue;
                    String m = l.strip();
                    if (!all.contains(m)) all.add(m);
                    mine.add(all.indexOf(m));
                    kept++;
                }
            }
            own.put(e.getKey(), mine);
        }
        return all;
    }

    private static Report runAll(Path dir, String top, ProveContract.Wrapper w, List<HwProve.Group> groups,
                                 List<String> mutations, Map<String, List<Integer>> own, int depth,
                                 Consumer<String> progress) throws IOException, InterruptedException {
        Map<String, String> broken = new LinkedHashMap<>();
        for (ProveContract.Property p : w.properties()) broken.put(p.label(), null);
        int width = HwMutate.selectWidth(mutations.size());
        // written as RTLIL, not Verilog: write_verilog splits a memory's write port bit by bit where its enable is
        // a multiplexer of constants (mtt: 606 write ports), which Yosys's prep then took over 10 minutes to merge
        Path all = dir.resolve(top + "_mutants.il");
        StringBuilder script = new StringBuilder(READ.formatted(top, top));
        for (int i = 0; i < mutations.size(); i++)
            script.append("; ").append(mutations.get(i)).append(" -ctrl ").append(HwMutate.SELECT).append(' ')
                    .append(width).append(' ').append(i + 1);
        HwCost.yosys(dir, script + "; write_rtlil " + all, all.toString());
        Files.writeString(dir.resolve("wrapper.sv"), withSelect(w.text(), width));
        List<Path> dut = List.of(all);
        List<Path> models = new ArrayList<>();
        for (int g = 0; g < groups.size(); g++) {
            Path model = dir.resolve("model" + g + ".smt2");
            HwProve.model(dir, dut, groups.get(g).cut(), groups.get(g).others(w.properties()), model);
            models.add(model);
        }
        Path smtc = dir.resolve("select.smtc");
        // select 0, no mutant, must break nothing: else a broken property means nothing
        select(smtc, 0, width);
        for (int g = 0; g < models.size(); g++) {
            Set<String> f = failures(dir, models.get(g), depth(g, depth), smtc);
            if (!f.isEmpty()) throw new IllegalStateException("Yosys's netlist of " + top + " already breaks " + f);
        }
        // the properties of the finer models first (cqe's event balance: minutes a run), so that once broken
        // their model is left out of every later run
        List<String> order = new ArrayList<>();
        for (int g = groups.size() - 1; g >= 0; g--)
            for (String l : own.keySet()) if (groups.get(g).labels().contains(l)) order.add(l);
        Set<Integer> ran = new LinkedHashSet<>();
        for (String label : order)
            for (int m : own.get(label)) {
                if (broken.get(label) != null) break;
                if (!ran.add(m)) continue;
                select(smtc, m + 1, width);
                List<String> more = new ArrayList<>();
                for (int g = 0; g < groups.size(); g++) {
                    if (groups.get(g).labels().stream().allMatch(l -> broken.get(l) != null)) continue;
                    for (String f : failures(dir, models.get(g), depth(g, depth), smtc))
                        if (broken.containsKey(f) && broken.get(f) == null) {
                            broken.put(f, mutations.get(m));
                            more.add(f);
                        }
                }
                progress.accept(String.format("for %s, mutant %d/%d broke %s: %s", label, m + 1,
                        mutations.size(), more.isEmpty() ? "nothing more" : String.join(" ", more), mutations.get(m)));
            }
        return new Report(broken, mutations.size(), ran.size(), false);
    }

    /**
     * The deepest bounded check a finer model is given ({@link HwProve#groups}: every group but the first):
     * cqe's event balance, whose model with the 64 armed bits costs minutes a run at 3 edges already.
     */
    static final int FINER_DEPTH = 3;

    /** The depth group {@code g}'s model is checked to, for a check to {@code depth}. */
    static int depth(int g, int depth) { return g == 0 ? depth : Math.min(depth, FINER_DEPTH); }

    private static void select(Path smtc, int value, int width) throws IOException {
        Files.writeString(smtc, "always\nassume (= [" + HwMutate.SELECT + "] #b" + bits(value, width) + ")\n");
    }

    /** {@code wrapper} with the mutant select of {@code width} bits as an input, passed to the module under proof. */
    static String withSelect(String wrapper, int width) {
        String port = "\n  input reset", inst = ".reset(reset)";
        if (!wrapper.contains(port) || !wrapper.contains(inst))
            throw new IllegalStateException("the contract wrapper has no reset port to put the mutant select beside");
        return wrapper.replaceFirst(port, port + ",\n  input [" + (width - 1) + ":0] " + HwMutate.SELECT)
                .replace(inst, inst + ",\n    ." + HwMutate.SELECT + "(" + HwMutate.SELECT + ")");
    }

    /** {@code value} as {@code width} binary digits, for an SMT-LIB bit-vector literal. */
    static String bits(int value, int width) {
        StringBuilder b = new StringBuilder();
        for (int k = width - 1; k >= 0; k--) b.append((value >> k & 1) == 1 ? '1' : '0');
        return b.toString();
    }

    private static final Pattern FAILED = Pattern.compile("Assert failed in \\S+: (p_\\w+)");

    /** Every property the bounded check of {@code model} to {@code depth} breaks under the constraints {@code smtc}. */
    private static Set<String> failures(Path dir, Path model, int depth, Path smtc)
            throws IOException, InterruptedException {
        String text = HwProve.run(dir, List.of("yosys-smtbmc", "-s", "z3", "--unroll", "-t", Integer.toString(depth),
                "--keep-going", "--smtc", smtc.toString(), model.toString()));
        Set<String> out = new LinkedHashSet<>();
        if (text.contains("Status: PASSED")) return out;
        Matcher m = FAILED.matcher(text);
        while (m.find()) out.add(m.group(1));
        if (!text.contains("Status: FAILED") || out.isEmpty())
            throw new IOException("yosys-smtbmc gave no verdict:\n" + text);
        return out;
    }

    private static Path cacheFile(String key) { return HwProve.Cache.dir().resolve("vacuity-" + key + ".txt"); }

    /** A cached report's properties: label, then the mutation that broke it or "-" (vacuous). */
    private static Map<String, String> readCache(String key, Set<String> labels) throws IOException {
        Path f = cacheFile(key);
        if (!Files.isRegularFile(f)) return null;
        Map<String, String> out = new LinkedHashMap<>();
        for (String line : Files.readAllLines(f, StandardCharsets.UTF_8)) {
            String[] c = line.split("\t", 2);
            if (c.length == 2) out.put(c[0], c[1].equals("-") ? null : c[1]);
        }
        return out.keySet().equals(labels) ? out : null;
    }

    private static void writeCache(String key, Map<String, String> broken) throws IOException {
        Files.createDirectories(HwProve.Cache.dir());
        StringBuilder b = new StringBuilder();
        broken.forEach((k, v) -> b.append(k).append('\t').append(v == null ? "-" : v).append('\n'));
        Path tmp = Files.createTempFile(HwProve.Cache.dir(), ".vacuity-", ".txt");
        Files.writeString(tmp, b.toString());
        Files.move(tmp, cacheFile(key), StandardCopyOption.ATOMIC_MOVE,
                StandardCopyOption.REPLACE_EXISTING);
    }
}
