package nicsim.cosim.cli;

import java.nio.file.Path;
import java.util.concurrent.Callable;
import nicsim.serve.Replay;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

@Command(name = "replay", mixinStandardHelpOptions = true,
        description = "Do again, without its programs, a run that 'nicsim serve --record FILE' kept: the same World, "
                + "the recorded requests at their points, simulated time moved as recorded, the programs' memory "
                + "read from the recording; prints serve's log lines (faults with their simulated time, violations) "
                + "and its summary with the counters.")
final class ReplayCommand implements Callable<Integer> {
    @Parameters(paramLabel = "FILE", description = "a recording of 'nicsim serve --record FILE'")
    Path file;

    @Option(names = "--compare", description = "fail (exit 1) if an answer to a program, or a write into its "
            + "memory, differs from the recorded one, naming the first")
    boolean compare;

    @Option(names = "--beat-by-beat", description = "run every edge of the DMA channels' clocks through the blocks' "
            + "wires, as 'nicsim run --beat-by-beat' does: more simulator events, the same run, so the same replay")
    boolean beatByBeat;

    @Override public Integer call() throws Exception {
        Replay.Result r = Replay.run(file, System.out, beatByBeat);
        if (r.diverged() != null) return 1; // it left the recording: the log says where
        if (compare && r.differing() > 0) {
            System.out.println("nicsim replay: --compare: " + r.firstDifference());
            return 1;
        }
        return 0;
    }
}
