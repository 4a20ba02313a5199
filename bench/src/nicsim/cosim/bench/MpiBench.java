package nicsim.cosim.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * A run across processes against the same run in one (issue 56 §3): {@code run pairs_write_bw --mpi} under
 * Open MPI's {@code mpirun} on this machine (shared memory between the ranks, mpirun's own wiring on
 * loopback: nothing leaves the machine), its output compared byte for byte with one process's but for the
 * lines of wall time and of how the hosts ran, and what the ranks spent in their collectives.
 */
public final class MpiBench {
    private MpiBench() {}

    /**
     * mpirun's options for ranks on this machine: shared memory (vader) and loopback only; no binding to a
     * core, and the ranks' own waiting yields (a rank that polls takes the core the rank it waits for needs).
     */
    public static final List<String> LOCAL = List.of("--allow-run-as-root", "--oversubscribe", "--bind-to", "none",
            "--mca", "btl", "self,vader", "--mca", "oob_tcp_if_include", "lo", "--mca", "mpi_yield_when_idle", "1");

    /** The run: pairs_write_bw on {@code nodes} hosts, {@code iters} writes of {@code size} bytes a pair. */
    public static List<String> run(int nodes, int iters, int size) {
        return List.of("run", "pairs_write_bw", "--nodes", String.valueOf(nodes), "--iters", String.valueOf(iters),
                "--size", String.valueOf(size), "--threads", "1", "--seed", "5");
    }

    /**
     * One comparison: the two outputs, each process's wall time start to exit (setup, and the JVM's start,
     * included), and what the ranked run said of its windows and collectives (rank 0's).
     */
    public record Comparison(int nodes, int ranks, String alone, String ranked, double aloneSeconds,
            double rankedSeconds, long windows, long collectives, double collectiveSeconds, double simulatedUs) {
        /**
         * Whether the outputs agree but for the wall time and the ranks: every other line byte for byte, the same
         * windows, the same simulated time and clock edges.
         */
        public boolean identical() {
            return figures(alone).equals(figures(ranked)) && same(alone).equals(same(ranked));
        }

        /** Rank 0's mean wall time in collectives per window, in ms (waits for the other ranks included). */
        public double collectiveMsPerWindow() { return collectiveSeconds * 1e3 / Math.max(1, windows); }

        /** Rank 0's mean wall time per collective, in ms. */
        public double msPerCollective() { return collectiveSeconds * 1e3 / Math.max(1, collectives); }
    }

    /** The output but for the lines that must differ: wall time, and how the hosts ran. */
    public static String figures(String out) {
        return out.lines().filter(l -> !l.startsWith("simulated ") && !l.startsWith("hosts ran apart"))
                .collect(Collectors.joining("\n"));
    }

    /** What the lines of wall time and of how the hosts ran must still agree on: windows, simulated time, edges. */
    public static String same(String out) {
        return out.lines().filter(l -> l.startsWith("simulated ") || l.startsWith("hosts ran apart"))
                .map(l -> l.replaceAll(" on \\d+ (ranks|threads).*", "")
                        .replaceAll(" in [\\d.]+ s of wall time \\(slowdown \\d+x;", ""))
                .collect(Collectors.joining("\n"));
    }

    private static final Pattern APART = Pattern.compile(
            "hosts ran apart in ([\\d,]+) windows .* on (\\d+) ranks .*rank 0: ([\\d.]+) s in ([\\d,]+) collectives");
    private static final Pattern SIMULATED = Pattern.compile("^simulated ([\\d.]+) us in ", Pattern.MULTILINE);

    /**
     * {@code nicsim} (the command that runs nicsim: the script, or a launcher) with {@code run} in one process, then
     * under {@code mpirun -n ranks} with {@link #LOCAL} and {@code --mpi}.
     */
    public static Comparison compare(String nicsim, int ranks, List<String> run) throws IOException,
            InterruptedException {
        List<String> one = new ArrayList<>(List.of(nicsim));
        one.addAll(run);
        long t0 = System.nanoTime();
        String alone = exec(one);
        double aloneSeconds = (System.nanoTime() - t0) / 1e9;
        List<String> many = new ArrayList<>(List.of("mpirun", "-n", String.valueOf(ranks)));
        many.addAll(LOCAL);
        many.add(nicsim);
        many.addAll(run);
        many.add("--mpi");
        t0 = System.nanoTime();
        String ranked = exec(many);
        double rankedSeconds = (System.nanoTime() - t0) / 1e9;
        Matcher m = APART.matcher(ranked);
        if (!m.find()) throw new IllegalStateException("no line of windows and collectives in:\n" + ranked);
        Matcher s = SIMULATED.matcher(ranked);
        if (!s.find()) throw new IllegalStateException("no line of simulated time in:\n" + ranked);
        return new Comparison(nodesOf(run), Integer.parseInt(m.group(2)), alone, ranked, aloneSeconds,
                rankedSeconds, count(m.group(1)), count(m.group(4)), Double.parseDouble(m.group(3)),
                Double.parseDouble(s.group(1)));
    }

    private static long count(String s) { return Long.parseLong(s.replace(",", "")); }

    private static int nodesOf(List<String> run) {
        int i = run.indexOf("--nodes");
        return i < 0 ? 2 : Integer.parseInt(run.get(i + 1));
    }

    /** The command's output (stdout and stderr); IllegalStateException with it if it fails or takes 30 minutes. */
    static String exec(List<String> cmd) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        byte[] out = p.getInputStream().readAllBytes();
        String text = new String(out, StandardCharsets.UTF_8);
        if (!p.waitFor(30, TimeUnit.MINUTES)) {
            p.destroyForcibly();
            throw new IllegalStateException("still running after 30 minutes: " + String.join(" ", cmd));
        }
        if (p.exitValue() != 0)
            throw new IllegalStateException(String.join(" ", cmd) + " failed (exit " + p.exitValue() + "):\n" + text);
        return text;
    }

    /**
     * The bench's section ({@code bench --sections mpi}): pairs_write_bw on 64 nodes and (but with {@code quick}) on
     * 1,024, 2 writes of 64 B a pair, in one process and on 2 ranks, through the nicsim script in {@code root}
     * (NICSIM_ROOT; null: not measured, the section says so).
     */
    public static String section(String root, boolean quick) throws IOException, InterruptedException {
        if (root == null) return "## Across processes\n\nNot measured: bench was not run through ./nicsim.\n\n";
        String nicsim = Path.of(root).resolve("nicsim").toString();
        List<Comparison> rows = new ArrayList<>();
        List<String> runs = new ArrayList<>();
        for (int nodes : quick ? new int[]{64} : new int[]{64, 1024}) {
            List<String> run = run(nodes, 2, 64);
            System.err.println("bench: across processes, " + nodes + " nodes ...");
            rows.add(compare(nicsim, 2, run));
            runs.add(String.join(" ", run));
        }
        return markdown(rows, runs);
    }

    /** The bench report's section: one row per comparison. */
    public static String markdown(List<Comparison> rows, List<String> runs) {
        StringBuilder md = new StringBuilder(
                "## Across processes (run pairs_write_bw --mpi, Open MPI on this machine)\n\n"
                + "| nodes | ranks | simulated (us) | wall, 1 process (s) | wall, ranks (s) | windows | collectives "
                + "| in collectives (s) | per window (ms) | identical |\n"
                + "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n");
        for (Comparison c : rows)
            md.append(String.format("| %d | %d | %.3f | %.1f | %.1f | %,d | %,d | %.2f | %.2f | %s |%n", c.nodes(),
                    c.ranks(), c.simulatedUs(), c.aloneSeconds(), c.rankedSeconds(), c.windows(), c.collectives(),
                    c.collectiveSeconds(), c.collectiveMsPerWindow(), c.identical() ? "yes" : "NO"));
        md.append("\nWall times are each process's start to exit (the JVM's start and the setup included); the "
                + "collectives' time is rank 0's, waits for the other rank included. Runs: ");
        md.append(runs.stream().map(r -> "`" + r + "`").collect(Collectors.joining(", ")));
        md.append(", each in one process and under `mpirun -n 2 ").append(String.join(" ", LOCAL))
                .append(" ... --mpi`.\n\n");
        return md.toString();
    }
}
