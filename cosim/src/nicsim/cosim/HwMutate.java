package nicsim.cosim;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import nicsim.hw.VerilogFile;
import nicsim.profile.Profile;

/**
 * How good the lockstep is at catching RTL bugs: Yosys's {@code mutate} makes single-point mutants
 * of a block's generated RTL (an input or output bit of one cell inverted or tied to 0 or 1), each
 * is run as the user's own RTL against the Java twin on the block's random stimulus
 * ({@link RtlInLoop#lockstep}), and counted as killed (a divergence) or survived. The score is the
 * share killed; survivors are listed by their mutation (cell, port, bit, source line), for the
 * stimulus to be improved or the mutant judged equivalent. Translation-table initial values are not
 * mutated (their zeros are rewritten by the driver before use).
 */
public final class HwMutate {
    private HwMutate() {}

    /** One mutant: the Yosys command that made it, and what became of it. */
    public record Mutant(String mutation, Fate fate, String detail) {}

    public enum Fate { KILLED, SURVIVED, NOT_BUILT }

    /** What a run gave: the mutants, and whether the unmutated netlist agreed with the twin (it must). */
    public record Report(String block, List<Mutant> mutants) {
        public long killed() { return mutants.stream().filter(m -> m.fate() == Fate.KILLED).count(); }
        public long survived() { return mutants.stream().filter(m -> m.fate() == Fate.SURVIVED).count(); }
        /** Killed among those built, as a fraction. */
        public double score() { return killed() + survived() == 0 ? 0 : (double) killed() / (killed() + survived()); }
    }

    /** {@code count} mutants of {@code block} built for {@code profile}, each run for {@code cycles} cycles. */
    public static Report run(Profile profile, String block, int count, long seed, long cycles,
                             Consumer<String> progress) throws IOException, InterruptedException {
        BlockPairs.Pair pair = BlockPairs.get(profile, block);
        Path dir = Files.createTempDirectory("nicsim-mutate-").toAbsolutePath();
        try {
            String top = VerilogFile.write(pair.rtl(), dir);
            String read = "read_verilog " + top + ".v; hierarchy -top " + top + "; proc; opt_clean";
            // the netlist Yosys writes back, unmutated, must agree with the twin: else a kill means nothing
            HwCost.yosys(dir, read + "; write_verilog -noattr base.v", block);
            String base = run(profile, block, dir.resolve("base.v"), top, cycles, seed);
            if (base != null)
                throw new IllegalStateException("Yosys's netlist of " + block + " already differs: " + base);
            List<String> list = mutations(dir, top, count, seed, block);
            List<Mutant> out = new ArrayList<>();
            for (int i = 0; i < list.size(); i++) {
                String m = list.get(i), file = "mutant" + i + ".v";
                Mutant r;
                try {
                    HwCost.yosys(dir, read + "; " + m + "; write_verilog -noattr " + file, file);
                    String d = run(profile, block, dir.resolve(file), top, cycles, seed);
                    r = new Mutant(m, d == null ? Fate.SURVIVED : Fate.KILLED, d == null ? "" : d);
                } catch (IllegalArgumentException | IOException e) {
                    r = new Mutant(m, Fate.NOT_BUILT, e.getMessage().lines().findFirst().orElse(""));
                }
                out.add(r);
                progress.accept(String.format("mutant %d/%d %s: %s", i + 1, list.size(), r.fate(), m));
            }
            return new Report(block, out);
        } finally {
            HwCost.deleteTree(dir);
        }
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

    /**
     * The cells a port contract rests on: the cones of the handshake outputs ({@code _valid} and
     * {@code _ready}, four cells deep: the registers, their enables and the conditions that load them)
     * and every adder and subtractor (the counters' next values, the occupancy). Payload bits, which
     * only {@code _stable} watches and most mutants of which change a payload the same way on every
     * edge, are left out: {@code hw prove --mutants} aims here.
     */
    static final String HANDSHAKES = "o:*_valid o:*_ready %u %ci8 t:$add t:$sub %u %u";

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

    private static String run(Profile p, String block, Path file, String top, long cycles, long seed) {
        return RtlInLoop.lockstep(p, block, new RtlInLoop.Own(List.of(file), top), cycles, seed);
    }
}
