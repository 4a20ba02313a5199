package nicsim.cosim.bench;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Pattern;
import javax.management.ObjectName;
import nicsim.serve.Attach;
import nicsim.serve.ProviderBuild;

/**
 * What a serve keeps of the programs it ran: one serve, nicsim-churn (a short program of nicsim's,
 * built with the provider) run hundreds of times one after another, every other run exiting
 * without destroying anything. The Java heap after a full collection, and the simulated host
 * memory that holds data, are read after a warm-up and again after the run.
 */
public final class ServeBench {
    private ServeBench() {}

    /** Heap and simulated memory before and after {@code programs} runs. */
    public record Churn(int programs, long heapBefore, long heapAfter, int pagesBefore, int pagesAfter,
                        double wallSeconds) {
        public double heapGrowthPercent() { return 100.0 * (heapAfter - heapBefore) / heapBefore; }
    }

    /** Heap before and after {@code verbs} random verbs (nicsim-fuzz) from one program, and how many were refused. */
    public record Fuzz(long verbs, long refused, long heapBefore, long heapAfter, double wallSeconds) {
        public double heapGrowthPercent() { return 100.0 * (heapAfter - heapBefore) / heapBefore; }
    }

    public static Fuzz fuzz(long verbs) throws Exception {
        String program = ProviderBuild.get().resolve(ProviderBuild.FUZZ).toString();
        return BenchServe.with((socket, w) -> {
            runFuzz(socket, program, 1000); // warm-up
            long heapBefore = heap();
            long t0 = System.nanoTime();
            String out = runFuzz(socket, program, verbs);
            double wall = (System.nanoTime() - t0) / 1e9;
            Thread.sleep(500);
            var m = Pattern.compile("fuzz: (\\d+) verbs, (\\d+) refused, 0 bad").matcher(out);
            if (!m.find()) throw new IOException("nicsim-fuzz printed:\n" + out);
            return new Fuzz(Long.parseLong(m.group(1)), Long.parseLong(m.group(2)), heapBefore, heap(), wall);
        });
    }

    private static String runFuzz(Path socket, String program, long verbs) throws IOException, InterruptedException {
        List<String> cmd = Attach.command(socket, 0, List.of(program, Long.toString(verbs), "7"));
        return BenchServe.runToEnd(cmd, 20, "nicsim-fuzz");
    }

    public static Churn churn(int programs) throws Exception {
        String program = ProviderBuild.get().resolve(ProviderBuild.CHURN).toString();
        return BenchServe.with((socket, w) -> {
            for (int i = 0; i < 10; i++) run(socket, program, i); // warm-up: classes loaded, JIT settled
            long heapBefore = heap();
            int pagesBefore = w.host(0).memory.pagesTouched();
            long t0 = System.nanoTime();
            for (int i = 0; i < programs; i++) run(socket, program, i);
            double wall = (System.nanoTime() - t0) / 1e9;
            Thread.sleep(500); // the last program's session closes
            return new Churn(programs, heapBefore, heap(), pagesBefore, w.host(0).memory.pagesTouched(), wall);
        });
    }

    private static void run(Path socket, String program, int i) throws IOException, InterruptedException {
        List<String> args = i % 2 == 0 ? List.of(program) : List.of(program, "leave");
        String out = BenchServe.runToEnd(Attach.command(socket, 0, args), 2, "nicsim-churn run " + i);
        if (!out.contains("ok")) throw new IOException("nicsim-churn run " + i + " failed:\n" + out);
    }

    /**
     * Bytes of live objects: the JVM's class histogram (jcmd GC.class_histogram, through the
     * DiagnosticCommand MBean), which collects fully first and counts what is left.
     */
    private static long heap() throws Exception {
        var server = ManagementFactory.getPlatformMBeanServer();
        var name = new ObjectName("com.sun.management:type=DiagnosticCommand");
        String histogram = (String) server.invoke(name, "gcClassHistogram", new Object[]{null},
                new String[]{String[].class.getName()});
        for (String line : histogram.split("\n"))
            if (line.startsWith("Total")) return Long.parseLong(line.trim().split("\\s+")[2]);
        throw new IllegalStateException("no Total in the class histogram");
    }
}
