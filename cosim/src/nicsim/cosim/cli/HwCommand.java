package nicsim.cosim.cli;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import nicsim.cosim.HwCost;
import nicsim.profile.Profile;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Parameters;

@Command(name = "hw", mixinStandardHelpOptions = true, description = "What the RTL blocks cost in hardware, and how "
        + "well the lockstep catches their bugs.", subcommands = {HwCommand.Cost.class, HwCommand.Mutate.class, HwProveCommand.class})
final class HwCommand implements Runnable {
    @Override public void run() { System.out.println("nicsim hw: give a subcommand: cost, mutate (nicsim hw --help)"); }

    private static void needYosys() {
        if (!nicsim.hw.rtl.Toolchain.onPath("yosys"))
            throw new IllegalArgumentException("yosys is not installed: run scripts/ensure-tools.sh --rtl "
                    + "(as root it installs it with apt-get) or: sudo apt-get install -y yosys");
    }

    @Command(name = "mutate", mixinStandardHelpOptions = true,
            description = "Make single-point mutants of a block's RTL with Yosys's mutate, run each against the Java "
                    + "twin on the block's lockstep stimulus, and print the mutation score (killed / built) and the "
                    + "survivors by cell and source line.")
    static final class Mutate implements Callable<Integer> {
        @Mixin
        ProfileOption profile = new ProfileOption();

        @Parameters(paramLabel = "BLOCK", description = "doorbell, wqe, mtt, cqe or dma")
        String block;

        @picocli.CommandLine.Option(names = "--mutants", defaultValue = "10",
                description = "mutants to make (default: ${DEFAULT-VALUE})")
        int mutants;

        @picocli.CommandLine.Option(names = "--cycles", defaultValue = "20000",
                description = "lockstep cycles each mutant runs (default: ${DEFAULT-VALUE})")
        long cycles;

        @picocli.CommandLine.Option(names = "--seed", defaultValue = "1",
                description = "seed of the mutants and the stimulus (default: ${DEFAULT-VALUE})")
        long seed;

        @Override public Integer call() throws Exception {
            needYosys();
            if (mutants < 1) throw new IllegalArgumentException("--mutants " + mutants + " must be >= 1");
            if (cycles < 1) throw new IllegalArgumentException("--cycles " + cycles + " must be >= 1");
            Profile p = profile.load();
            nicsim.cosim.BlockPairs.get(p, block);
            var r = nicsim.cosim.HwMutate.run(p, block, mutants, seed, cycles, line -> System.out.println("  " + line));
            System.out.printf("%s: %d mutants, %d killed, %d survived, %d not built: mutation score %.0f %%%n", block,
                    r.mutants().size(), r.killed(), r.survived(), r.mutants().size() - r.killed() - r.survived(),
                    100 * r.score());
            for (var m : r.mutants())
                if (m.fate() == nicsim.cosim.HwMutate.Fate.SURVIVED) System.out.println("  survived: " + m.mutation());
            return 0;
        }
    }

    @Command(name = "cost", mixinStandardHelpOptions = true,
            description = "Synthesize each RTL block for the profile with Yosys (generic gates, memories kept as "
                    + "memories) and print its cells, flip-flops, memories and their bits, its longest logic path "
                    + "in gates, and, as an FPGA estimate, its LUTs and flip-flops from Yosys's Xilinx 7-series flow "
                    + "(synth_xilinx, memories kept apart).")
    static final class Cost implements Callable<Integer> {
        @Mixin
        ProfileOption profile = new ProfileOption();

        @Parameters(arity = "0..*", paramLabel = "BLOCK", description = "doorbell, wqe, mtt, cqe, dma (default: all)")
        List<String> blocks = new ArrayList<>();

        @Override public Integer call() throws Exception {
            needYosys();
            Profile p = profile.load();
            List<String> names = blocks.isEmpty() ? HwCost.blocks(p) : blocks;
            for (String b : names) nicsim.cosim.BlockPairs.get(p, b); // an unknown name is refused before any synthesis
            System.out.printf("RTL blocks of profile %s, synthesized by Yosys (generic gates; memories kept as "
                    + "memories)%n", p.name());
            System.out.printf("%-9s %-18s %9s %10s %8s %12s %6s %9s %9s %9s%n", "block", "module", "cells",
                    "flip-flops", "memories", "memory bits", "depth", "xc7 LUTs", "xc7 FFs", "yosys (s)");
            for (String b : names) {
                HwCost.Cost c = HwCost.of(p, b);
                System.out.printf("%-9s %-18s %,9d %,10d %8d %,12d %6d %,9d %,9d %9.1f%n", c.block(), c.module(),
                        c.cells(), c.flipFlops(), c.memories(), c.memoryBits(), c.depth(), c.luts(), c.fpgaFlipFlops(),
                        c.seconds());
            }
            return 0;
        }
    }
}
