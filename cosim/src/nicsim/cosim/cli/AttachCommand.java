package nicsim.cosim.cli;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import nicsim.cosim.serve.Attach;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

@Command(name = "attach", mixinStandardHelpOptions = true,
        description = "Run an unmodified libibverbs program (ibv_devinfo, ibv_rc_pingpong, perftest...) with a simulated adapter of a "
                + "running 'nicsim serve' as its RDMA device; exits with the program's status.")
final class AttachCommand implements Callable<Integer> {
    @Option(names = "--node", defaultValue = "0", description = "the node whose adapter the program uses (default: ${DEFAULT-VALUE})")
    int node;

    @Option(names = "--socket", description = "the simulator's socket (default: /tmp/nicsim-<user>/serve.sock, where serve listens)")
    Path socket;

    @Option(names = "--sim-time", description = "the program's gettimeofday and clock_gettime read simulated time, so the figures it prints "
            + "from its own clock are simulated ones (perftest's cycle counter cannot be redirected)")
    boolean simTime;

    @Parameters(arity = "1..*", paramLabel = "PROGRAM", description = "the program and its arguments (after --)")
    List<String> program = new ArrayList<>();

    @Override public Integer call() throws Exception {
        if (node < 0) throw new IllegalArgumentException("--node " + node + " must be >= 0");
        List<String> cmd = Attach.command(socket != null ? socket : Attach.defaultSocket(), node, simTime, program);
        Process p = new ProcessBuilder(cmd).inheritIO().start();
        return p.waitFor();
    }
}
