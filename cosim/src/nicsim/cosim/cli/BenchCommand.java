package nicsim.cosim.cli;

import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import nicsim.cosim.BlockPairs;
import nicsim.cosim.bench.BlockSpeed;
import nicsim.host.PcieEfficiency;
import nicsim.profile.Profile;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

@Command(name = "bench", mixinStandardHelpOptions = true, description = "Measure simulation speed (Java twin vs Verilated RTL per block, JNI cost) and host-link "
        + "efficiency side by side in one run; print the tables and write bench-report/report.md and .csv files.")
final class BenchCommand implements Callable<Integer> {
    @Option(names = "--cycles", defaultValue = "100000", description = "cycles per block (default: ${DEFAULT-VALUE})")
    long cycles;

    @Mixin
    ProfileOption profile = new ProfileOption();

    @Option(names = "--out", defaultValue = "bench-report", description = "report folder (default: ${DEFAULT-VALUE})")
    Path out;

    @Override public Integer call() throws Exception {
        if (cycles < 1000) throw new IllegalArgumentException("--cycles " + cycles + " must be >= 1000");
        Profile p = profile.load();
        Files.createDirectories(out);
        List<BlockSpeed.Row> rows = new ArrayList<>();
        for (String b : BlockPairs.all(p).keySet()) {
            System.err.println("bench: " + b + " ...");
            rows.add(BlockSpeed.measure(p, b, cycles, 1));
        }
        double[] jni = BlockSpeed.jniCost(p);
        StringBuilder md = new StringBuilder();
        md.append("# nicsim benchmark report\n\nProfile ").append(p.name()).append(", ").append(cycles)
                .append(" cycles per block, measured side by side in one run on this machine (wall clock: compare ratios, not absolutes).\n\n");
        md.append("## Simulated adapter cycles per second, per block\n\n");
        md.append("| block | Java twin (cycles/s) | Verilated RTL via JNI (cycles/s) | Java / RTL | RTL ports poked / peeked per cycle |\n|---|---:|---:|---:|---:|\n");
        try (PrintWriter csv = new PrintWriter(Files.newBufferedWriter(out.resolve("blocks.csv")))) {
            csv.println("block,cycles,java_cycles_per_s,rtl_cycles_per_s,ratio,input_wires,output_wires");
            for (BlockSpeed.Row r : rows) {
                md.append(String.format("| %s | %,.0f | %,.0f | %.1fx | %d / %d |%n", r.block(), r.javaCyclesPerSec(), r.rtlCyclesPerSec(),
                        r.ratio(), r.inputWires(), r.outputWires()));
                csv.printf("%s,%d,%.0f,%.0f,%.2f,%d,%d%n", r.block(), r.cycles(), r.javaCyclesPerSec(), r.rtlCyclesPerSec(), r.ratio(),
                        r.inputWires(), r.outputWires());
            }
        }
        md.append(String.format("%nJNI crossing through SpinalSim: %.0f ns per poke, %.0f ns per peek of one signal.%n", jni[0], jni[1]));
        md.append("\nTarget (issue 7): the Java model at >= 20x the cycles/s of the same block in Verilator through JNI.\n");
        md.append("\n## Host link DMA efficiency (simulated, exact)\n\n```\n");
        java.io.StringWriter sw = new java.io.StringWriter();
        PcieEfficiency.print(p, new java.io.PrintStream(new java.io.ByteArrayOutputStream()) {
            @Override public void println(String x) { sw.write(x + "\n"); }
            @Override public java.io.PrintStream printf(String f, Object... a) { sw.write(String.format(f, a)); return this; }
        });
        md.append(sw).append("```\n");
        Files.writeString(out.resolve("report.md"), md.toString());
        System.out.print(md);
        System.out.println("\nreport: " + out.resolve("report.md").toAbsolutePath());
        return 0;
    }
}
