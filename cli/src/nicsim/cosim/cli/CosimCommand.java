package nicsim.cosim.cli;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import nicsim.cosim.BlockPairs;
import nicsim.cosim.CosimRun;
import nicsim.cosim.Lockstep;
import nicsim.cosim.RtlInLoop;
import nicsim.profile.Profile;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

@Command(name = "cosim", mixinStandardHelpOptions = true,
        description = "Random-stimulus lockstep check of a block's Java twin against its Verilated RTL. "
                + "Ends with 'divergences: N'; exits 1 when N > 0.")
final class CosimCommand implements Callable<Integer> {
    @Parameters(paramLabel = "BLOCK", description = "doorbell, wqe, mtt, dma, cqe, or all")
    String block;

    @Option(names = "--cycles", defaultValue = "100000", description = "cycles per block (default: ${DEFAULT-VALUE})")
    long cycles;

    @Option(names = "--seed", defaultValue = "1",
            description = "stimulus seed (default: ${DEFAULT-VALUE}); a failing seed reproduces exactly")
    long seed;

    @Mixin
    ProfileOption profile = new ProfileOption();

    @Option(names = "--verilog", arity = "1..*", paramLabel = "FILE",
            description = "your own Verilog/SystemVerilog for BLOCK in place of the generated one, keeping its port "
                    + "contract (docs/blocks.md); run against the Java twin through nicsim's Verilator binding")
    List<Path> verilog = new ArrayList<>();

    @Option(names = "--top", description = "the top module of --verilog (default: the first module of the first file)")
    String top;

    @Option(names = "--window-dir", defaultValue = "out/cosim",
            description = "where a divergence's waveform window goes (default: ${DEFAULT-VALUE})")
    Path windowDir;

    @Override public Integer call() throws Exception {
        if (cycles < 1) throw new IllegalArgumentException("--cycles " + cycles + " must be >= 1");
        Profile p = profile.load();
        if (!verilog.isEmpty()) return own(p);
        if (top != null) throw new IllegalArgumentException("--top names the module of --verilog; give --verilog too");
        List<String> blocks = block.equals("all") ? new ArrayList<>(BlockPairs.all(p).keySet()) : List.of(block);
        for (String b : blocks) BlockPairs.get(p, b); // reject unknown names before any Verilator build
        Files.createDirectories(windowDir);
        int divergences = 0;
        for (String b : blocks) {
            long t0 = System.nanoTime();
            Lockstep.Result r = CosimRun.run(p, b, cycles, seed, windowDir);
            double secs = (System.nanoTime() - t0) / 1e9;
            String verdict = r.divergence().map(Object::toString).orElse("RTL and Java model agree on every edge");
            System.out.printf("%-10s %,d cycles, seed %d, profile %s: %s  (%.1f s wall, transfers %s)%n", b, r.cycles(),
                    seed, p.name(), verdict, secs, r.transfers());
            r.windowFiles().forEach(f -> System.out.println("  waveform window: " + f.toAbsolutePath()));
            divergences += r.divergences();
        }
        System.out.println("divergences: " + divergences);
        return divergences == 0 ? 0 : 1;
    }

    /** The user's module for the block, against its Java twin, on the block's stimulus. */
    private int own(Profile p) throws Exception {
        if (block.equals("all")) throw new IllegalArgumentException("--verilog replaces one block: name it, not all");
        BlockPairs.get(p, block);
        List<Path> files = verilog.stream().map(Path::toAbsolutePath).toList();
        for (Path f : files)
            if (!Files.isRegularFile(f)) throw new IllegalArgumentException("--verilog " + f + ": no such file");
        String module = top != null ? top : RtlInLoop.Own.firstModule(files.get(0));
        long t0 = System.nanoTime();
        var own = new RtlInLoop.Own(files, module);
        String d = RtlInLoop.lockstep(p, block, own, cycles, seed);
        System.out.printf("%-10s %,d cycles, seed %d, profile %s, your module %s: %s  (%.1f s wall)%n", block, cycles,
                seed, p.name(), module, d == null ? "RTL and Java model agree on every edge" : d,
                (System.nanoTime() - t0) / 1e9);
        System.out.println("divergences: " + (d == null ? 0 : 1));
        return d == null ? 0 : 1;
    }
}
