package nicsim.cosim.cli;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import nicsim.serve.Attach;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

@Command(name = "attach", mixinStandardHelpOptions = true,
        description = "Run an unmodified libibverbs program (ibv_devinfo, ibv_rc_pingpong, perftest...) with a "
                + "simulated adapter of a running 'nicsim serve' as its RDMA device; exits with the program's status.")
final class AttachCommand implements Callable<Integer> {
    @Option(names = "--node", defaultValue = "0", description = "the node whose adapter the program uses "
            + "(default: ${DEFAULT-VALUE}); 'rank': the MPI rank the launcher gives the program (OMPI_COMM_WORLD_RANK, "
            + "PMI_RANK or PMIX_RANK), so that 'mpirun -np N ./nicsim attach --node rank -- PROGRAM' runs rank r "
            + "on node r")
    String node;

    @Option(names = "--socket",
            description = "the simulator's socket (default: /tmp/nicsim-<user>/serve.sock, where serve listens)")
    Path socket;

    @Option(names = "--sim-time",
            description = "the program's gettimeofday and clock_gettime read simulated time, so the figures it prints "
            + "from its own clock are simulated ones (perftest's cycle counter cannot be redirected)")
    boolean simTime;

    @Option(names = "--driver", defaultValue = "c", description = "the provider's driver: 'c' (default: libnicsim; "
            + "the program's own process makes its objects by the device's commands, writes WQEs into its rings, rings "
            + "doorbells and polls CQEs) or 'java' (each verb a request to the simulator's Java verbs library, "
            + "for comparison); sets NICSIM_DRIVER")
    String driver;

    @Parameters(arity = "1..*", paramLabel = "PROGRAM", description = "the program and its arguments (after --)")
    List<String> program = new ArrayList<>();

    @Override public Integer call() throws Exception {
        int n = nodeNumber(node, System.getenv());
        List<String> run = Attach.withDriver(driver, program);
        List<String> cmd = Attach.command(socket != null ? socket : Attach.defaultSocket(), n, simTime, run);
        String plan = System.getenv(PLAN);
        if (plan != null && !plan.isEmpty()) {
            // the launcher script execs it in place, so the program keeps the script's descriptors and pid
            Files.write(Path.of(plan), String.join("\0", cmd).concat("\0").getBytes(StandardCharsets.UTF_8));
            return 0;
        }
        return runChild(cmd);
    }

    /**
     * The launcher's file where attach writes the program's command line (NUL-separated) instead of running it:
     * the script then execs it, as a JVM cannot hand a child descriptors beyond 0-2 (MPICH's PMI_FD, LISTEN_FDS).
     */
    static final String PLAN = "NICSIM_ATTACH_PLAN";

    /**
     * Without the launcher script: the program as a child, inheriting stdin/out/err only. SIGTERM, SIGINT or
     * SIGHUP to attach end it and everything it started, and attach waits for them to go (a port and the
     * adapter's objects they held are then free) before it exits.
     */
    private static int runChild(List<String> cmd) throws Exception {
        Process p = new ProcessBuilder(cmd).inheritIO().start();
        Thread stop = new Thread(() -> {
            if (!p.isAlive()) return;
            p.descendants().forEach(ProcessHandle::destroy);
            p.destroy();
            try {
                if (!p.waitFor(5, TimeUnit.SECONDS)) {
                    p.descendants().forEach(ProcessHandle::destroyForcibly);
                    p.destroyForcibly().waitFor();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, "attach-stop");
        Runtime.getRuntime().addShutdownHook(stop);
        int status = p.waitFor();
        try {
            Runtime.getRuntime().removeShutdownHook(stop);
        } catch (IllegalStateException shuttingDown) { // the hook runs: it waits for the program
        }
        return status;
    }

    /** The node {@code --node} names: a number, or "rank" for the MPI rank in {@code env}. */
    static int nodeNumber(String node, Map<String, String> env) {
        if (node.equals("rank")) {
            for (String v : List.of("OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"))
                if (env.get(v) != null) return nodeNumber(env.get(v), Map.of());
            throw new IllegalArgumentException("--node rank: no MPI rank in the environment (OMPI_COMM_WORLD_RANK, "
                    + "PMI_RANK or PMIX_RANK): start attach from mpirun");
        }
        int n;
        try {
            n = Integer.parseInt(node);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("--node '" + node + "' is neither a node number nor 'rank'");
        }
        if (n < 0) throw new IllegalArgumentException("--node " + n + " must be >= 0");
        return n;
    }
}
