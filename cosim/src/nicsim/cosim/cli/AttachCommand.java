package nicsim.cosim.cli;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import nicsim.serve.Attach;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

@Command(name = "attach", mixinStandardHelpOptions = true,
        description = "Run an unmodified libibverbs program (ibv_devinfo, ibv_rc_pingpong, perftest...) with a simulated adapter of a "
                + "running 'nicsim serve' as its RDMA device; exits with the program's status.")
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
        Process p = new ProcessBuilder(cmd).inheritIO().start();
        return p.waitFor();
    }

    /** The node {@code --node} names: a number, or "rank" for the MPI rank in {@code env}. */
    static int nodeNumber(String node, java.util.Map<String, String> env) {
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
