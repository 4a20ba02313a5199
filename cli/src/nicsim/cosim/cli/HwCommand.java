package nicsim.cosim.cli;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import nicsim.cosim.BlockPairs;
import nicsim.cosim.HwCost;
import nicsim.cosim.HwMutate;
import nicsim.cosim.RtlInLoop;
import nicsim.hw.rtl.Toolchain;
import nicsim.profile.Profile;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine;

@Command(name = "hw", mixinStandardHelpOptions = true, description = "What the RTL blocks cost in hardware, and how "
        + "well the lockstep catches their bugs.", subcommands = {HwCommand.Cost.class, HwCommand.Mutate.class,
        HwCoverageCommand.class, HwProveCommand.class})
final class HwCommand implements Runnable {
    @Override public void run() {
        System.out.println("nicsim hw: give a subcommand: cost, mutate, coverage, prove (nicsim hw --help)");
    }

    static void needYosys() {
        if (!Toolchain.onPath("yosys"))
            throw new IllegalArgumentException("yosys is not installed: run scripts/ensure-tools.sh --rtl "
                    + "(as root it installs it with apt-get) or: sudo apt-get install -y yosys");
    }

    @Command(name = "mutate", mixinStandardHelpOptions = true,
            description = "Make single-point mutants of a block's RTL with Yosys's mutate, run each against the Java "
                    + "twin on the block's lockstep stimulus (all mutants in one Verilated netlist, picked by a "
                    + "select input), check each survivor's equivalence to the block with Yosys's equivalence flow, "
                    + "and print the mutation score (killed / run), the score over the mutants not proven "
                    + "equivalent, the score over those not judged equivalent by hand (a list kept beside the "
                    + "block's RTL, each with its reason) and the survivors by cell and source line with their "
                    + "outcome.")
    static final class Mutate implements Callable<Integer> {
        @Mixin
        ProfileOption profile = new ProfileOption();

        @Parameters(paramLabel = "BLOCK", description = "doorbell, wqe, mtt, cqe or dma")
        String block;

        @CommandLine.Option(names = "--mutants", defaultValue = "10",
                description = "mutants to make (default: ${DEFAULT-VALUE})")
        int mutants;

        @CommandLine.Option(names = "--cycles", defaultValue = "20000",
                description = "lockstep cycles each mutant runs (default: ${DEFAULT-VALUE})")
        long cycles;

        @CommandLine.Option(names = "--seed", defaultValue = "1",
                description = "seed of the mutants and the stimulus (default: ${DEFAULT-VALUE})")
        long seed;

        @Override public Integer call() throws Exception {
            needYosys();
            if (mutants < 1) throw new IllegalArgumentException("--mutants " + mutants + " must be >= 1");
            if (cycles < 1) throw new IllegalArgumentException("--cycles " + cycles + " must be >= 1");
            Profile p = profile.load();
            BlockPairs.get(p, block);
            var r = HwMutate.run(p, block, mutants, seed, cycles, line -> System.out.println("  " + line));
            System.out.printf("%s: %d mutants, %d killed, %d survived: mutation score %.0f %% (one build of all: "
                    + "%.0f s; %.2f s a mutant)%n", block, r.mutants().size(), r.killed(), r.survived(),
                    100 * r.score(), r.buildSeconds(), r.secondsPerMutant());
            int proven = r.provenEquivalent().size();
            System.out.printf("%s: %d of the %d survivors proven equivalent by Yosys (the equivalence flow, "
                    + "docs/blocks.md): %d / %d mutants not proven equivalent killed: score %.0f %%%n", block, proven,
                    r.survived(), r.killed(), r.mutants().size() - proven, 100 * r.scoreOfNotProven());
            int eq = r.equivalent().size();
            System.out.printf("%s: %d of the survivors judged equivalent by hand (the block's list, %d entries): "
                    + "%d / %d non-equivalent mutants killed: score %.0f %%%n", block, eq, r.judged().size(),
                    r.killed(), r.mutants().size() - eq, 100 * r.scoreOfNonEquivalent());
            for (var m : r.mutants())
                if (m.fate() == HwMutate.Fate.SURVIVED) {
                    var o = r.proofs().get(m.mutation());
                    System.out.println("  survived: " + m.mutation() + "\n    "
                            + (o == null ? "not checked" : o.describe())
                            + (r.judged().containsKey(m.mutation()) ? "\n    judged equivalent: "
                            + r.judged().get(m.mutation()) : ""));
                }
            for (var m : r.listedNotProven())
                System.out.println("  listed as equivalent but not proven so (only its reason says why): "
                        + m.mutation());
            for (var m : r.wronglyJudged())
                System.out.println("  listed as equivalent but killed (the list is wrong): " + m.mutation());
            return 0;
        }
    }

    @Command(name = "cost", mixinStandardHelpOptions = true,
            description = "Synthesize each RTL block for the profile with Yosys (generic gates, memories kept as "
                    + "memories) and print its cells, flip-flops, memories and their bits, its longest logic path "
                    + "in gates, and, as an FPGA estimate, its LUTs and flip-flops from Yosys's Xilinx 7-series flow "
                    + "(synth_xilinx, memories kept apart), its depth in LUT levels there, the Fmax that depth "
                    + "allows and the clock the block runs at in the profile; a block that cannot meet it is flagged.")
    static final class Cost implements Callable<Integer> {
        @Mixin
        ProfileOption profile = new ProfileOption();

        @Parameters(arity = "0..*", paramLabel = "BLOCK", description = "doorbell, wqe, mtt, cqe, dma (default: all)")
        List<String> blocks = new ArrayList<>();

        @Option(names = "--verilog", arity = "1..*", paramLabel = "FILE",
                description = "cost your own Verilog/SystemVerilog in place of the one BLOCK named, at its clock")
        List<Path> verilog = new ArrayList<>();

        @Option(names = "--top", description = "the module of --verilog to cost (default: the first of the first file)")
        String top;

        @Override public Integer call() throws Exception {
            needYosys();
            Profile p = profile.load();
            List<String> names = blocks.isEmpty() ? HwCost.blocks(p) : blocks;
            for (String b : names) BlockPairs.get(p, b); // an unknown name is refused before any synthesis
            if (!verilog.isEmpty() && names.size() != 1)
                throw new IllegalArgumentException("--verilog takes exactly one BLOCK (whose clock it is timed "
                        + "against); given: " + (blocks.isEmpty() ? "none" : String.join(" ", blocks)));
            if (verilog.isEmpty() && top != null)
                throw new IllegalArgumentException("--top " + top + " needs --verilog");
            System.out.printf("RTL blocks of profile %s, synthesized by Yosys (generic gates; memories kept as "
                    + "memories); timing: xc7 LUT levels at %d ps a LUT and %d ps a net (docs/blocks.md)%n", p.name(),
                    HwCost.LUT_PS, HwCost.ROUTE_PS);
            System.out.printf("%-9s %-18s %9s %10s %8s %12s %6s %9s %9s %6s %8s %8s %9s%n", "block", "module", "cells",
                    "flip-flops", "memories", "memory bits", "depth", "xc7 LUTs", "xc7 FFs", "levels", "Fmax MHz",
                    "clock MHz", "yosys (s)");
            List<HwCost.Cost> late = new ArrayList<>();
            for (String b : names) {
                HwCost.Cost c = verilog.isEmpty() ? HwCost.of(p, b) : HwCost.ofVerilog(p, b, verilog,
                        top != null ? top : RtlInLoop.Own.firstModule(verilog.get(0)));
                System.out.printf("%-9s %-18s %,9d %,10d %8d %,12d %6d %,9d %,9d %6d %8.0f %8.0f%s %9.1f%n", c.block(),
                        c.module(), c.cells(), c.flipFlops(), c.memories(), c.memoryBits(), c.depth(), c.luts(),
                        c.fpgaFlipFlops(), c.lutLevels(), c.fmaxMhz(), c.clockMhz(), c.meetsClock() ? " " : "!",
                        c.seconds());
                if (!c.meetsClock()) late.add(c);
            }
            for (HwCost.Cost c : late)
                System.out.printf("! %s (%s) misses its clock: %d LUT levels (deepest path ends at %s) take about "
                        + "%d ps; %s is %d ps (%.0f MHz)%n", c.block(), c.module(), c.lutLevels(), c.deepest(),
                        c.pathPicos(), HwCost.clockKey(c.block()), c.clockPicos(), c.clockMhz());
            return 0;
        }
    }
}
