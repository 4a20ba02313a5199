package nicsim.cosim.cli;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.stream.LongStream;
import nicsim.cosim.BlockPairs;
import nicsim.cosim.HwCost;
import nicsim.cosim.HwCoverage;
import nicsim.cosim.RtlInLoop;
import nicsim.hw.rtl.Toolchain;
import nicsim.profile.Profile;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

@Command(name = "coverage", mixinStandardHelpOptions = true,
        description = "Verilator's line and toggle coverage of each RTL block over its lockstep stimulus (a few "
                + "seeds), merged with earlier runs in OUT/<block>, printed as a table with the points never hit, "
                + "and written as lcov data and an HTML report of the Verilog with hit counts (genhtml).")
final class HwCoverageCommand implements Callable<Integer> {
    @Mixin
    ProfileOption profile = new ProfileOption();

    @Parameters(arity = "0..*", paramLabel = "BLOCK", description = "doorbell, wqe, mtt, cqe, dma (default: all)")
    List<String> blocks = new ArrayList<>();

    @Option(names = "--cycles", defaultValue = "20000", description = "cycles each run (default: ${DEFAULT-VALUE})")
    long cycles;

    @Option(names = "--seed", defaultValue = "1", description = "the first run's seed (default: ${DEFAULT-VALUE})")
    long seed;

    @Option(names = "--runs", defaultValue = "3",
            description = "runs per block, seeds SEED, SEED+1, ... (default: ${DEFAULT-VALUE})")
    int runs;

    @Option(names = "--out", defaultValue = "coverage", description = "where the data and reports go "
            + "(default: ${DEFAULT-VALUE}); runs already there for the same Verilog are merged in")
    Path out;

    @Option(names = "--show", defaultValue = "8", description = "never-hit points listed per block "
            + "(default: ${DEFAULT-VALUE}; all are in OUT/<block>/missed.txt)")
    int show;

    @Option(names = "--verilog", arity = "1..*", paramLabel = "FILE",
            description = "cover your own Verilog/SystemVerilog in place of the one BLOCK named")
    List<Path> verilog = new ArrayList<>();

    @Option(names = "--top", description = "the module of --verilog (default: the first of the first file)")
    String top;

    @Override public Integer call() throws Exception {
        if (cycles < 1) throw new IllegalArgumentException("--cycles " + cycles + " must be >= 1");
        if (runs < 1) throw new IllegalArgumentException("--runs " + runs + " must be >= 1");
        if (show < 0) throw new IllegalArgumentException("--show " + show + " must be >= 0");
        Profile p = profile.load();
        List<String> names = blocks.isEmpty() ? HwCost.blocks(p) : blocks;
        for (String b : names) BlockPairs.get(p, b); // an unknown name is refused before any build
        RtlInLoop.requireKnown(Set.copyOf(names));
        if (!Toolchain.onPath("verilator_coverage"))
            throw new IllegalArgumentException("verilator_coverage is not installed: it comes with Verilator "
                    + "(scripts/ensure-tools.sh --rtl)");
        RtlInLoop.Own own = null;
        if (!verilog.isEmpty()) {
            if (names.size() != 1 || blocks.isEmpty())
                throw new IllegalArgumentException("--verilog replaces exactly one BLOCK: name it");
            List<Path> files = verilog.stream().map(Path::toAbsolutePath).toList();
            for (Path f : files)
                if (!Files.isRegularFile(f)) throw new IllegalArgumentException("--verilog " + f + ": no such file");
            own = new RtlInLoop.Own(files, top != null ? top : RtlInLoop.Own.firstModule(files.get(0)));
        } else if (top != null) throw new IllegalArgumentException("--top " + top + " needs --verilog");
        List<Long> seeds = LongStream.range(seed, seed + runs).boxed().toList();
        List<HwCoverage.Report> reports = new ArrayList<>();
        for (String b : names)
            reports.add(HwCoverage.run(p, b, own, cycles, seeds, out, line -> System.out.println("  " + line)));
        System.out.printf("RTL coverage of profile %s, %,d cycles a run (Verilator line and toggle coverage, merged "
                + "per block with the runs already in %s)%n", p.name(), cycles, out);
        System.out.printf("%-9s %-22s %5s %14s %8s %16s %9s %8s%n", "block", "module", "runs", "line points",
                "lines %", "toggle points", "toggles %", "never hit");
        for (HwCoverage.Report r : reports)
            System.out.printf("%-9s %-22s %5d %,6d / %,-6d %8.1f %,7d / %,-7d %9.1f %8d%n", r.block(), r.module(),
                    r.runs(), r.hit(HwCoverage.LINE), r.total(HwCoverage.LINE), r.percent(HwCoverage.LINE),
                    r.hit(HwCoverage.TOGGLE), r.total(HwCoverage.TOGGLE), r.percent(HwCoverage.TOGGLE),
                    r.missed().size());
        for (HwCoverage.Report r : reports) {
            List<HwCoverage.Point> missed = r.missed();
            Files.write(r.dir().resolve("missed.txt"), missed.stream().map(HwCoverage.Point::toString).toList());
            System.out.printf("%s: never hit (%d; all in %s):%n", r.block(), missed.size(),
                    r.dir().resolve("missed.txt"));
            // lines first: an unreached statement says more than an unflipped bit
            List<HwCoverage.Point> first = new ArrayList<>(missed.stream()
                    .filter(m -> m.kind().equals(HwCoverage.LINE)).limit(show).toList());
            missed.stream().filter(m -> m.kind().equals(HwCoverage.TOGGLE)).limit(show - first.size())
                    .forEach(first::add);
            for (HwCoverage.Point m : first) System.out.println("  " + m);
            System.out.println("  report: " + (r.html() != null ? r.html() : r.info() + " (no HTML: genhtml, from "
                    + "Debian's lcov, is not installed; scripts/ensure-tools.sh --rtl installs it)"));
        }
        return 0;
    }
}
