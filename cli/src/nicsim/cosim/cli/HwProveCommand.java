package nicsim.cosim.cli;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.Callable;
import nicsim.cosim.BlockPairs;
import nicsim.cosim.HwCost;
import nicsim.cosim.HwProve;
import nicsim.cosim.RtlInLoop;
import nicsim.cosim.Vacuity;
import nicsim.hw.rtl.Toolchain;
import nicsim.profile.Profile;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code nicsim hw prove}: docs/blocks.md's port contract proved on each block's Verilog (docs/cli.md). */
@Command(name = "prove", mixinStandardHelpOptions = true,
        description = "Prove each block's port contract (handshakes, payload stability, reset values, no "
                + "duplication) on its Verilog with Yosys's SMT flow and Z3: bounded model check to the block's depth, "
                + "then k-induction. A failed property is printed with its counterexample VCD and .gtkw view.")
final class HwProveCommand implements Callable<Integer> {
    @Mixin
    ProfileOption profile = new ProfileOption();

    @Parameters(arity = "0..*", paramLabel = "BLOCK", description = "doorbell, wqe, mtt, cqe, dma (default: all)")
    List<String> blocks = new ArrayList<>();

    @Option(names = "--verilog", arity = "1..*", paramLabel = "FILE",
            description = "prove this Verilog (one BLOCK) against the block's contract instead of the generated RTL")
    List<Path> verilog = new ArrayList<>();

    @Option(names = "--top", description = "the top module of --verilog (default: the first module of the first file)")
    String top;

    @Option(names = "--depth",
            description = "edges the bounded check covers (default: the block's, see docs/blocks.md)")
    Integer depth;

    @Option(names = "--mutants", defaultValue = "0",
            description = "also check every property fails on some Yosys mutant: N aimed at the cone of each "
                    + "property's outputs, beside its outputs' drivers tied (vacuity); default: none")
    int mutants;

    @Option(names = "--mutants-depth",
            description = "edges the mutants' bounded checks cover (default: --depth; a finer model, cqe's event "
                    + "balance, at most 3)")
    Integer mutantsDepth;

    @Option(names = "--seed", defaultValue = "1", description = "seed of the mutants (default: ${DEFAULT-VALUE})")
    long seed;

    @Option(names = "--out", defaultValue = "out/prove",
            description = "folder of the counterexamples (default: ${DEFAULT-VALUE})")
    Path out;

    @Override public Integer call() throws Exception {
        for (String tool : List.of("yosys", "yosys-smtbmc", "z3"))
            if (!Toolchain.onPath(tool))
                throw new IllegalArgumentException(tool + " is not installed: run scripts/ensure-tools.sh --rtl");
        if (depth != null && depth < 1) throw new IllegalArgumentException("--depth " + depth + " must be >= 1");
        if (mutantsDepth != null && mutantsDepth < 1)
            throw new IllegalArgumentException("--mutants-depth " + mutantsDepth + " must be >= 1");
        if (mutants < 0) throw new IllegalArgumentException("--mutants " + mutants + " must be >= 0");
        Profile p = profile.load();
        List<String> names = blocks.isEmpty() ? HwCost.blocks(p) : blocks;
        for (String b : names) BlockPairs.get(p, b);
        if (!verilog.isEmpty() && names.size() != 1)
            throw new IllegalArgumentException("--verilog replaces one block: name it (blocks given: " + names + ")");
        if (top != null && verilog.isEmpty()) throw new IllegalArgumentException("--top names the module of --verilog");
        boolean allHold = true;
        for (String b : names) {
            int d = depth != null ? depth : HwProve.depth(b);
            Path scratch = Files.createTempDirectory("nicsim-prove-rtl-");
            List<HwProve.Result> results;
            try {
                HwProve.Design design;
                if (verilog.isEmpty()) design = HwProve.generated(p, b, scratch);
                else {
                    List<Path> files = verilog.stream().map(Path::toAbsolutePath).toList();
                    for (Path f : files)
                        if (!Files.isRegularFile(f))
                            throw new IllegalArgumentException("--verilog " + f + ": no such file");
                    design = new HwProve.Design(files, top != null ? top : RtlInLoop.Own.firstModule(files.get(0)));
                }
                System.out.printf("%s (%s), depth %d:%n", b, design.top(), d);
                results = HwProve.prove(p, b, design, d, out);
            } finally {
                try (var w = Files.walk(scratch)) {
                    for (Path f : w.sorted(Comparator.reverseOrder()).toList()) Files.deleteIfExists(f);
                }
            }
            for (HwProve.Result r : results) {
                System.out.printf("  %-34s %-58s %6.1f s%n", r.property().label(), r.describe(), r.seconds());
                if (r.status() == HwProve.Status.FAILED) {
                    allHold = false;
                    System.out.println("    property: " + r.property().says());
                }
            }
            if (mutants > 0) {
                long t0 = System.nanoTime();
                int md = mutantsDepth != null ? mutantsDepth : d;
                Vacuity.Report v = Vacuity.run(p, b, mutants, seed, md, l -> System.out.println("  " + l));
                System.out.printf("  vacuity, %d mutants aimed at each property (%s), %.0f s: %d of %d properties "
                        + "broken by some mutant%n", mutants, v.cached() ? "cached"
                        : v.run() + " run of " + v.made() + " made", (System.nanoTime() - t0) / 1e9,
                        v.broken().size() - v.vacuous(), v.broken().size());
                v.broken().forEach((k, m) -> System.out.printf("    %-34s %s%n", k,
                        m == null ? "VACUOUS (none of its mutants breaks it)" : "broken by: " + m));
            }
        }
        return allHold ? 0 : 1;
    }
}
