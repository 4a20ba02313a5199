package nicsim.cosim;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import nicsim.hw.VerilogFile;
import nicsim.profile.Profile;
import nicsim.profile.Profiles;

/**
 * Whether a mutant that survived the lockstep is equivalent to the block, proved by Yosys rather than
 * judged by hand (MCY's "equivalence check"). The original module is {@code gold}, a copy with the one
 * {@code mutate} command applied is {@code gate}; Yosys's equivalence flow pairs every signal of the
 * same name in the two ({@code equiv_make}), proves each pair equal from the pairs around it over two
 * edges ({@code equiv_simple -seq 2}) and then by temporal induction over the whole set
 * ({@code equiv_induct -seq 2}), and the mutant is PROVEN EQUIVALENT only when no pair is left
 * unproven ({@code equiv_status}): then gold and gate, started in the same state, agree on every
 * signal, the outputs included, on every edge, for every input sequence (no assumption on the
 * inputs, reset included). Otherwise it is UNDECIDED: some signal differs in some state the flow
 * cannot rule out, reachable or not (a counterexample from reset is not searched for here).
 *
 * <p>Memories are cut (Yosys's equivalence passes do not model them): each memory's read data
 * becomes an input shared by gold and gate, and its addresses, write data and enables become outputs
 * the flow must prove equal. That is sound: a memory written alike in both, from the same initial
 * contents, reads alike at the same address. A mutant that changes a memory's port is left
 * UNDECIDED. Asynchronous resets are made synchronous first, as {@code hw prove} does.
 */
public final class HwEquiv {
    private HwEquiv() {}

    public enum Verdict { PROVEN_EQUIVALENT, UNDECIDED }

    /** One mutant's outcome; {@code unproven}: signal bits the flow could not prove equal (0 when proven). */
    public record Outcome(String mutation, Verdict verdict, int unproven, double seconds) {
        public String describe() {
            if (verdict == Verdict.PROVEN_EQUIVALENT)
                return "PROVEN EQUIVALENT (Yosys equiv_simple/equiv_induct, every signal, every edge)";
            return "UNDECIDED (" + switch (unproven) {
                case -1 -> "Yosys found no signals to compare";
                case -2 -> "not decided within " + TIMEOUT_MINUTES + " minutes";
                default -> unproven + " signal bits not proven equal at depth " + SEQ;
            } + ")";
        }
    }

    /** Edges the equivalence passes look back over (their {@code -seq}). */
    static final int SEQ = 2;

    /** A mutant whose check runs longer is left UNDECIDED (equiv_induct can iterate long on a large cone). */
    static final int TIMEOUT_MINUTES = 5;

    /** Bumped when the script changes, so cached outcomes of an older script are not reused. */
    /** Raised when a cached outcome may no longer hold; 2: Verilog numbered without SpinalHDL's commit line. */
    private static final String SCRIPT_VERSION = "equiv-2";

    /**
     * The outcome of each of {@code mutations} of module {@code top} (its Verilog in {@code dir}), each a
     * Yosys run of its own, cached under {@code NICSIM_CACHE/equiv} by a hash of the Verilog (without its
     * commit line), the mutation, the script and Yosys's version.
     */
    public static Map<String, Outcome> check(Path dir, String top, List<String> mutations,
                                             Consumer<String> progress)
            throws IOException, InterruptedException {
        String verilog = Files.readString(dir.resolve(top + ".v"), StandardCharsets.UTF_8);
        Path work = Files.createTempDirectory("nicsim-equiv-").toAbsolutePath();
        Map<String, Outcome> out = new LinkedHashMap<>();
        try {
            // the Verilog as hw mutate read it, its tables' $readmem files too: Yosys numbers its cells ($procmux$N)
            // in reading order, so a mutate command names its cell only in the very same text
            try (var files = Files.list(dir)) {
                for (Path f : files.filter(Files::isRegularFile).toList()) Files.copy(f, work.resolve(f.getFileName()));
            }
            String version = HwMutate.yosysVersion();
            for (String m : mutations) {
                // the text exactly: a mutant names its cells by line, and one more line would be another mutant
                String key = HwMutate.sha256(verilog, m, SCRIPT_VERSION, version);
                Path cached = HwMutate.cacheRoot().resolve("equiv").resolve(top + "-" + key.substring(0, 24) + ".txt");
                Outcome o = read(cached, m);
                if (o == null) {
                    long t0 = System.nanoTime();
                    int unproven = unproven(work, top, m);
                    o = new Outcome(m, unproven == 0 ? Verdict.PROVEN_EQUIVALENT : Verdict.UNDECIDED, unproven,
                            (System.nanoTime() - t0) / 1e9);
                    if (unproven != -2) {
                        Files.createDirectories(cached.getParent());
                        Files.writeString(cached, o.verdict() + "\t" + o.unproven() + "\t" + o.seconds() + "\n");
                    }
                }
                out.put(m, o);
                progress.accept(String.format("equivalence of survivor %d/%d: %s (%.1f s)", out.size(),
                        mutations.size(), o.describe(), o.seconds()));
            }
            return out;
        } finally {
            HwCost.deleteTree(work);
        }
    }

    /**
     * Checks the mutants a block's list judges equivalent ({@link HwMutate#equivalents}) without running
     * the lockstep: {@code BLOCK [PROFILE]} (profile cx-gen3x16 by default). Prints one line a mutant.
     */
    public static void main(String[] args) throws Exception {
        if (args.length < 1) throw new IllegalArgumentException("usage: HwEquiv BLOCK [PROFILE]");
        Profile profile = Profiles.load(args.length > 1 ? args[1] : "cx-gen3x16");
        Path dir = Files.createTempDirectory("nicsim-equiv-list-").toAbsolutePath();
        try {
            String top = VerilogFile.write(BlockPairs.get(profile, args[0]).rtl(), dir);
            Map<String, String> listed = HwMutate.equivalents(top);
            check(dir, top, List.copyOf(listed.keySet()), System.out::println)
                    .forEach((m, o) -> System.out.println(o.verdict() + "\t" + m));
        } finally {
            HwCost.deleteTree(dir);
        }
    }

    private static Outcome read(Path cached, String mutation) throws IOException {
        if (!Files.isRegularFile(cached)) return null;
        String[] c = Files.readString(cached).strip().split("\t");
        return new Outcome(mutation, Verdict.valueOf(c[0]), Integer.parseInt(c[1]), Double.parseDouble(c[2]));
    }

    private static final Pattern STATUS = Pattern.compile("Of those cells (\\d+) are proven and (\\d+) are unproven");

    /** The signal bits Yosys's flow leaves unproven for {@code mutation} (0: equivalent); -1 if it did not apply. */
    static int unproven(Path dir, String top, String mutation) throws IOException, InterruptedException {
        Files.writeString(dir.resolve("equiv.ys"), script(top, mutation));
        Path log = dir.resolve("equiv.log");
        Files.deleteIfExists(log);
        Process p = new ProcessBuilder("yosys", "-q", "-l", log.toString(), "equiv.ys").directory(dir.toFile())
                .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        if (!p.waitFor(TIMEOUT_MINUTES, TimeUnit.MINUTES)) {
            p.destroyForcibly().waitFor();
            return -2; // not decided in time: left UNDECIDED, and not cached (a quieter machine may decide it)
        }
        int rc = p.exitValue();
        String text = Files.isRegularFile(log) ? Files.readString(log) : "";
        Matcher m = STATUS.matcher(text);
        if (rc == 0 && m.find()) return Integer.parseInt(m.group(2));
        // a gate with no equivalence cells left (Yosys found nothing to compare) is not a proof either
        if (rc == 0 && text.contains("Found 0 $equiv cells")) return -1;
        int at = text.indexOf("ERROR:");
        throw new IOException("yosys could not check " + mutation + ": "
                + (at < 0 ? "exit " + rc : text.substring(at, Math.min(text.length(), at + 300)).strip()));
    }

    /** The Yosys script: gold, gate = gold with {@code mutation}, memories cut, then the equivalence passes. */
    static String script(String top, String mutation) {
        if (!mutation.startsWith("mutate ") || !mutation.contains(" -module " + top + " "))
            throw new IllegalArgumentException("not a mutate command of module " + top + ": " + mutation);
        return String.join("\n",
                "read_verilog " + top + ".v; hierarchy -top " + top + "; proc; opt_clean",
                "copy " + top + " gate; rename " + top + " gold",
                mutation.replace(" -module " + top + " ", " -module gate "),
                "memory -nomap; opt_clean",
                // read data in from outside, shared by name; every port's address, data and enable out, compared
                "expose -cut t:$mem_v2 %x:+[RD_DATA] t:$mem_v2 %d",
                "expose t:$mem_v2 %x:+[RD_ADDR,RD_EN,WR_ADDR,WR_DATA,WR_EN] t:$mem_v2 %d",
                "delete t:$mem_v2",
                "setundef -zero -undriven",
                "async2sync; dffunmap",
                "equiv_make gold gate equiv; hierarchy -top equiv",
                "equiv_simple -seq " + SEQ,
                "equiv_induct -seq " + SEQ,
                "equiv_status", "");
    }
}
